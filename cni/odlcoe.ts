#!/usr/bin/env node
/**
 * `odlcoe`: the CNI plugin the container runtime execs. It owns no state and does no
 * networking: it forwards the request (the `CNI_*` environment and the network config from
 * stdin) to the node agent over its root-only unix socket and prints the agent's answer.
 *
 * It runs on every pod start and stop, so it imports only `node:` built-ins (importing the
 * Kubernetes client alone costs ~0.8 s) and does the least work that keeps it correct.
 *
 * When the agent cannot be reached:
 *   ADD     error 11 (try again later): kubelet retries the sandbox.
 *   DEL     success. A failing DEL blocks pod termination (and namespace deletion) for as
 *           long as the agent is down; instead the request is written to `pendingDelDir`,
 *           which the agent replays when it is back, and its start-up reconcile frees what
 *           belonged to pods that no longer exist in any case.
 *   CHECK   error 11: nothing can be verified.
 *   STATUS  error 50 (plugin not available).
 *   GC      error 11: the runtime runs GC again later; nothing is lost.
 *   VERSION answered here, without the agent.
 */
import { appendFileSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SUPPORTED_VERSIONS = ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'];
const LATEST_VERSION = '1.1.0';
export const DEFAULT_SOCKET = '/run/odlcoe/cni.sock';
/** Longer than the agent's own request timeout (90 s), shorter than kubelet's 2 min. */
export const REQUEST_TIMEOUT_MS = 110_000;
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
  const file = join(dir, `${containerId}.${ifName}.json`);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ env, config: stdin, queuedAt: new Date().toISOString() }), {
    mode: 0o600,
  });
  renameSync(tmp, file);
  return true;
}

/** Sends the request over the unix socket; resolves with the HTTP status and body. */
export function callAgent(
  socket: string,
  payload: string,
  timeoutMs: number,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath: socket,
        path: '/v1/cni',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** One CNI invocation, end to end, without touching process state (testable). */
export async function runShim(
  env: NodeJS.ProcessEnv,
  stdin: string,
  timeoutMs = REQUEST_TIMEOUT_MS,
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
      timeoutMs,
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
