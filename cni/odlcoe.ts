#!/usr/bin/env node
/**
 * `odlcoe`: the CNI plugin the container runtime execs. It owns no state and does no
 * networking: it forwards the request (the `CNI_*` environment and the network config from
 * stdin) to the node agent over its root-only unix socket and prints the agent's answer.
 *
 * It runs on every pod start and stop, so it imports only `node:` built-ins (importing the
 * Kubernetes client alone costs ~0.8 s) and does the least work that keeps it correct: it
 * speaks the one HTTP/1.1 exchange of the socket protocol over `node:net` itself, since
 * loading and setting up `node:http`'s client cost ~10 ms of CPU per run, a sixth of the
 * shim's total.
 *
 * When the agent cannot be reached:
 *   ADD     error 11 (try again later): kubelet retries the sandbox.
 *   DEL     success. A failing DEL blocks pod termination (and namespace deletion) for as
 *           long as the agent is down (or hung: a DEL without an answer within
 *           DEL_TIMEOUT_MS counts as unreachable); instead the request is written to `pendingDelDir`,
 *           which the agent replays when it is back, and its start-up reconcile frees what
 *           belonged to pods that no longer exist in any case.
 *   CHECK   error 11: nothing can be verified.
 *   STATUS  error 50 (plugin not available).
 *   GC      error 11: the runtime runs GC again later; nothing is lost.
 *   VERSION answered here, without the agent.
 */
import { appendFileSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SUPPORTED_VERSIONS = ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'];
const LATEST_VERSION = '1.1.0';
export const DEFAULT_SOCKET = '/run/odlcoe/cni.sock';
/**
 * The agent's default `cni.pendingDelDir`. A NetworkAttachmentDefinition's config (an extra
 * interface under Multus) is written by a user and names neither the socket nor the spool
 * dir: both default to the agent's, so a DEL while the agent is away is queued there too.
 */
export const DEFAULT_PENDING_DEL_DIR = '/var/lib/odlcoe/pending-del';
/** Longer than the agent's own request timeout (90 s), shorter than kubelet's 2 min. */
export const REQUEST_TIMEOUT_MS = 110_000;
/**
 * A DEL gets an answer within this or is queued for the agent to replay. A hung agent (alive
 * but not answering: stopped, deadlocked, swapping) would otherwise hold every pod's
 * termination for the whole request timeout, about two minutes per pod of a node drain. The
 * agent's DEL takes well under a second; one that takes longer still finishes in the agent,
 * and the replayed copy then finds nothing left to do (DEL is idempotent).
 */
export const DEL_TIMEOUT_MS = 8_000;

export interface ShimTimeouts {
  /** ADD, CHECK, STATUS, GC. */
  requestMs: number;
  delMs: number;
}

const DEFAULT_TIMEOUTS: ShimTimeouts = { requestMs: REQUEST_TIMEOUT_MS, delMs: DEL_TIMEOUT_MS };
const CNI_ENV_KEYS = ['CNI_COMMAND', 'CNI_CONTAINERID', 'CNI_NETNS', 'CNI_IFNAME', 'CNI_ARGS', 'CNI_PATH'];
const COMMANDS = ['ADD', 'DEL', 'CHECK', 'STATUS', 'GC', 'VERSION'];
/** The CNI spec's container id rule; it also keeps spool file names inside their directory. */
const CONTAINER_ID = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;
const IF_NAME = /^[^\s/:]{1,15}$/;

export interface CniErrorJson {
  cniVersion: string;
  code: number;
  msg: string;
  details?: string;
}

/** What the shim prints and how it exits. */
export interface ShimOutcome {
  exitCode: number;
  stdout?: unknown;
  /** A line for the log. */
  log?: string;
}

/** The plugin's fields of the network config. */
export interface ShimConfig {
  cniVersion: string;
  socket: string;
  logFile?: string;
  pendingDelDir?: string;
}

export class ShimError extends Error {
  constructor(
    readonly code: number,
    msg: string,
    readonly details?: string,
  ) {
    super(msg);
  }
}

export function errorOutcome(cniVersion: string, err: ShimError): ShimOutcome {
  const stdout: CniErrorJson = {
    cniVersion,
    code: err.code,
    msg: err.message,
    ...(err.details ? { details: err.details } : {}),
  };
  return {
    exitCode: 1,
    stdout,
    log: `error ${err.code}: ${err.message}${err.details ? ` (${err.details})` : ''}`,
  };
}

/** Reads the fields the shim needs from stdin; the agent validates the rest. */
export function parseShimConfig(stdin: string): ShimConfig {
  let doc: unknown;
  try {
    doc = JSON.parse(stdin);
  } catch (err) {
    throw new ShimError(6, 'network config on stdin is not valid JSON', (err as Error).message);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new ShimError(6, 'network config on stdin must be a JSON object');
  }
  const o = doc as Record<string, unknown>;
  const cniVersion = typeof o.cniVersion === 'string' ? o.cniVersion : '';
  const socket = o.socket === undefined ? DEFAULT_SOCKET : o.socket;
  if (typeof socket !== 'string' || !socket.startsWith('/')) {
    throw new ShimError(7, 'invalid network config: socket must be an absolute path');
  }
  const config: ShimConfig = { cniVersion, socket };
  // Only with the default socket: an agent on another socket may spool elsewhere too.
  if (o.socket === undefined && o.pendingDelDir === undefined) config.pendingDelDir = DEFAULT_PENDING_DEL_DIR;
  for (const key of ['logFile', 'pendingDelDir'] as const) {
    const value = o[key];
    if (value === undefined) continue;
    if (typeof value !== 'string' || !value.startsWith('/')) {
      throw new ShimError(7, `invalid network config: ${key} must be an absolute path`);
    }
    config[key] = value;
  }
  return config;
}

/** The VERSION answer, given locally (it needs no agent and must work before one runs). */
export function versionOutcome(): ShimOutcome {
  return { exitCode: 0, stdout: { cniVersion: LATEST_VERSION, supportedVersions: SUPPORTED_VERSIONS } };
}

/** The agent's answer (see docs/cni.md, "Socket protocol") turned into output and exit code. */
export function agentOutcome(status: number, body: string, cniVersion: string): ShimOutcome {
  let doc: { result?: unknown; error?: CniErrorJson };
  try {
    doc = JSON.parse(body) as typeof doc;
  } catch {
    return errorOutcome(
      cniVersion,
      new ShimError(100, `odlcoe agent answered HTTP ${status} with a body that is not JSON`),
    );
  }
  if (doc.error && typeof doc.error.code === 'number') {
    return { exitCode: 1, stdout: doc.error, log: `error ${doc.error.code}: ${doc.error.msg}` };
  }
  if (status !== 200) {
    return errorOutcome(cniVersion, new ShimError(100, `odlcoe agent answered HTTP ${status}`));
  }
  return doc.result === undefined ? { exitCode: 0 } : { exitCode: 0, stdout: doc.result };
}

/** Why the agent gave no answer. */
export interface AgentUnreachable {
  reason: string;
}

/**
 * The outcome when the agent gave no answer (socket missing, connection refused or reset,
 * timeout). `spoolDel` records a DEL for the agent to replay; it returns false when it could
 * not (the DEL still succeeds: see the file comment).
 */
export function unreachableOutcome(
  command: string,
  cniVersion: string,
  failure: AgentUnreachable,
  spoolDel: () => boolean,
): ShimOutcome {
  const why = `odlcoe agent unreachable: ${failure.reason}`;
  switch (command) {
    case 'DEL': {
      const spooled = spoolDel();
      return {
        exitCode: 0,
        log: `${why}; DEL ${spooled ? 'queued for the agent to replay' : 'could not be queued; the agent reconcile frees it'}`,
      };
    }
    case 'STATUS':
      return errorOutcome(cniVersion, new ShimError(50, why));
    default:
      return errorOutcome(cniVersion, new ShimError(11, `${why}; try again later`));
  }
}

/** The CNI variables of the environment; nothing else is forwarded. */
export function cniEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of CNI_ENV_KEYS) {
    const value = env[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/** Writes a DEL request the agent could not take into `dir` (atomically; one file per attachment). */
export function spoolDel(dir: string, env: Record<string, string>, stdin: string): boolean {
  const containerId = env.CNI_CONTAINERID ?? '';
  const ifName = env.CNI_IFNAME ?? '';
  if (!CONTAINER_ID.test(containerId) || !IF_NAME.test(ifName)) return false;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // `:` is in neither alphabet (both allow `.`), so two attachments never share a file.
  const file = join(dir, `${containerId}:${ifName}.json`);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ env, config: stdin, queuedAt: new Date().toISOString() }), {
    mode: 0o600,
  });
  renameSync(tmp, file);
  return true;
}

/**
 * Sends the request over the unix socket; resolves with the HTTP status and body. Rejects
 * when there is no complete answer (connection refused, reset or closed early, deadline).
 */
export function callAgent(
  socket: string,
  payload: string,
  timeoutMs: number,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const body = Buffer.from(payload, 'utf8');
    const conn = connect({ path: socket });
    const response = new HttpResponseReader();
    const timer = setTimeout(
      () => conn.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    let settled = false;
    const settle = (outcome: { status: number; body: string } | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      conn.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    conn.on('connect', () => {
      conn.write(
        `POST /v1/cni HTTP/1.1\r\nHost: odlcoe-agent\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      );
      conn.write(body);
    });
    conn.on('data', (chunk: Buffer) => {
      try {
        const done = response.push(chunk);
        if (done) settle(done);
      } catch (err) {
        settle(err as Error);
      }
    });
    conn.on('end', () => {
      try {
        settle(response.end());
      } catch (err) {
        settle(err as Error);
      }
    });
    conn.on('error', (err) => settle(err));
  });
}

/**
 * The agent's HTTP/1.1 answer, read incrementally: status line, headers, and a body framed by
 * Content-Length, chunked transfer coding, or the end of the connection.
 */
export class HttpResponseReader {
  private buffer = Buffer.alloc(0);
  private head: { status: number; length?: number; chunked: boolean; bodyStart: number } | undefined;

  /** Adds bytes; returns the answer once it is complete. Throws on a malformed answer. */
  push(chunk: Buffer): { status: number; body: string } | undefined {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    if (this.buffer.length > MAX_ANSWER_BYTES) throw new Error('answer larger than 16 MiB');
    if (!this.head) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return undefined;
      this.head = parseHead(this.buffer.subarray(0, end).toString('latin1'), end + 4);
    }
    const rest = this.buffer.subarray(this.head.bodyStart);
    if (this.head.chunked) {
      const decoded = decodeChunked(rest);
      return decoded === undefined ? undefined : { status: this.head.status, body: decoded };
    }
    if (this.head.length !== undefined && rest.length >= this.head.length) {
      return { status: this.head.status, body: rest.subarray(0, this.head.length).toString('utf8') };
    }
    return undefined;
  }

  /** The connection ended: the answer if it is complete (or delimited by the close). */
  end(): { status: number; body: string } {
    if (!this.head) throw new Error('connection closed before an HTTP answer');
    const rest = this.buffer.subarray(this.head.bodyStart);
    if (this.head.chunked || this.head.length !== undefined) {
      const done = this.push(Buffer.alloc(0));
      if (!done) throw new Error('connection closed in the middle of the answer');
      return done;
    }
    return { status: this.head.status, body: rest.toString('utf8') };
  }
}

const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

function parseHead(
  head: string,
  bodyStart: number,
): { status: number; length?: number; chunked: boolean; bodyStart: number } {
  const [statusLine = '', ...headers] = head.split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(statusLine)?.[1];
  if (!status) throw new Error(`malformed HTTP status line ${JSON.stringify(statusLine.slice(0, 80))}`);
  let length: number | undefined;
  let chunked = false;
  for (const h of headers) {
    const colon = h.indexOf(':');
    if (colon <= 0) throw new Error(`malformed HTTP header ${JSON.stringify(h.slice(0, 80))}`);
    const name = h.slice(0, colon).trim().toLowerCase();
    const value = h.slice(colon + 1).trim();
    if (name === 'content-length') {
      if (!/^\d{1,9}$/.test(value)) throw new Error(`malformed Content-Length ${JSON.stringify(value)}`);
      length = Number(value);
    } else if (name === 'transfer-encoding') {
      chunked = /(^|,)\s*chunked\s*$/i.test(value);
    }
  }
  return {
    status: Number(status),
    ...(length !== undefined && !chunked ? { length } : {}),
    chunked,
    bodyStart,
  };
}

/** The body of a complete chunked transfer coding, or undefined while it is incomplete. */
function decodeChunked(data: Buffer): string | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd < 0) return undefined;
    const size = /^([0-9a-fA-F]{1,8})(;.*)?$/.exec(data.subarray(at, lineEnd).toString('latin1'))?.[1];
    if (size === undefined) throw new Error('malformed chunk size in the answer');
    const n = parseInt(size, 16);
    const start = lineEnd + 2;
    if (n === 0) return Buffer.concat(parts).toString('utf8');
    if (data.length < start + n + 2) return undefined;
    parts.push(data.subarray(start, start + n));
    at = start + n + 2;
  }
}

/** One CNI invocation, end to end, without touching process state (testable). */
export async function runShim(
  env: NodeJS.ProcessEnv,
  stdin: string,
  timeouts: ShimTimeouts = DEFAULT_TIMEOUTS,
): Promise<ShimOutcome & { logFile?: string }> {
  const command = env.CNI_COMMAND ?? '';
  if (command === 'VERSION') return versionOutcome();
  let config: ShimConfig;
  try {
    config = parseShimConfig(stdin);
  } catch (err) {
    return errorOutcome(LATEST_VERSION, err as ShimError);
  }
  // Errors are answered in the version the runtime asked for, when it asked for one.
  const version = config.cniVersion || LATEST_VERSION;
  if (command === '')
    return errorOutcome(version, new ShimError(4, 'required environment variable CNI_COMMAND is missing'));
  if (!COMMANDS.includes(command)) {
    return errorOutcome(
      version,
      new ShimError(4, `unknown CNI_COMMAND ${command}`, 'expected ADD, DEL, CHECK, STATUS, GC or VERSION'),
    );
  }
  const forwarded = cniEnv(env);
  const withLog = (o: ShimOutcome) => (config.logFile ? { ...o, logFile: config.logFile } : o);
  try {
    const answer = await callAgent(
      config.socket,
      JSON.stringify({ env: forwarded, config: stdin }),
      command === 'DEL' ? timeouts.delMs : timeouts.requestMs,
    );
    return withLog(agentOutcome(answer.status, answer.body, version));
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const reason = `${config.socket}: ${e.code ?? e.message}`;
    return withLog(
      unreachableOutcome(command, version, { reason }, () => {
        if (!config.pendingDelDir) return false;
        try {
          return spoolDel(config.pendingDelDir, forwarded, stdin);
        } catch {
          return false;
        }
      }),
    );
  }
}

function writeLog(logFile: string | undefined, env: NodeJS.ProcessEnv, line: string): void {
  const entry = `${JSON.stringify({ time: new Date().toISOString(), component: 'cni-shim', command: env.CNI_COMMAND, containerId: env.CNI_CONTAINERID, msg: line })}\n`;
  try {
    if (logFile) appendFileSync(logFile, entry, { mode: 0o600 });
    else process.stderr.write(entry);
  } catch {
    process.stderr.write(entry);
  }
}

async function main(): Promise<void> {
  let stdin = '';
  try {
    stdin = process.env.CNI_COMMAND === 'VERSION' ? '' : readFileSync(0, 'utf8');
  } catch (err) {
    const outcome = errorOutcome(
      LATEST_VERSION,
      new ShimError(5, 'cannot read the network config from stdin', (err as Error).message),
    );
    process.stdout.write(`${JSON.stringify(outcome.stdout)}\n`);
    process.exitCode = 1;
    return;
  }
  const outcome = await runShim(process.env, stdin);
  if (outcome.log) writeLog(outcome.logFile, process.env, outcome.log);
  if (outcome.stdout !== undefined) process.stdout.write(`${JSON.stringify(outcome.stdout)}\n`);
  process.exitCode = outcome.exitCode;
}

function invokedDirectly(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (invokedDirectly()) void main();
