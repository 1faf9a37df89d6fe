import { timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from '../common/log.js';
import { createLogger, errorMessage } from '../common/log.js';
import { PROFILES, type Profile } from '../netvirt/profile.js';
import type { Dialect } from '../restconf/path.js';
import { Datastore } from './datastore.js';
import { RestconfError } from './errors.js';
import {
  checkFaultSettings,
  checkSeconds,
  FaultState,
  type FaultSettings,
  type FaultStatus,
  type OutageMode,
} from './faults.js';
import { biermanModulesBody, modulesStateInstance } from './module-list.js';
import {
  defaultFeatures,
  EMULATOR_FEATURES,
  featureProblem,
  moduleList,
  netvirtSchema,
  type EmulatorFeature,
} from './netvirt-schema.js';
import { OdlWriteBacks } from './odl-writebacks.js';
import { RecordFile } from './record-file.js';
import { RestconfHandler } from './restconf-handler.js';
import { loadStateFile, StateFile } from './state-file.js';
import { dataRootOf } from './url.js';

export type { FaultSettings } from './faults.js';

export interface EmulatorOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8181; 0 picks a free port. */
  port?: number;
  profile: Profile;
  /**
   * Optional features installed (default: the release's usual set, `defaultFeatures`): `coe`
   * serves the COE models (k8s-node, pod, service), which only Sodium had.
   */
  features?: readonly EmulatorFeature[];
  /** Basic auth, default admin/admin. */
  user?: string;
  password?: string;
  tls?: { certFile: string; keyFile: string };
  /** Every accepted write appended as one JSON line `{"method","url","status","body"}`. */
  recordFile?: string;
  /** The config datastore survives restarts in this file. */
  stateFile?: string;
  /** ODL write-back: fill `odl-interface:parent-interface` of l2vlan interfaces. */
  fillParentInterface?: boolean;
  /**
   * ODL write-back: interfaces-state (operational, oper-status up) of an interface with a parent
   * appears this many ms after it got the parent (default 0: with the other write-backs).
   */
  operDelayMs?: number;
  /** false: never publish interfaces-state, as an ODL whose Genius never sees the port. */
  operStatus?: boolean;
  /** Accept YANG Patch (default true); false answers it 415, as a controller without it. */
  yangPatch?: boolean;
  /**
   * What a commit costs, in ms: every write transaction (a single write or a YANG Patch that
   * applied) holds the datastore for `transactionMs` + `editMs` per edit, one commit after the
   * other (as one shard leader commits), before it is answered. Default 0.
   */
  costs?: { transactionMs?: number; editMs?: number };
  faults?: FaultSettings;
  logger?: Logger;
}

export interface FaultController {
  /** Replaces the latency/error settings. */
  set(settings: FaultSettings): void;
  /** `refuse`: stop listening for `seconds`, then listen again on the same port; `503`: data requests get 503. */
  outage(seconds: number, mode: 'refuse' | '503'): void;
  /** For `seconds`, data requests answer 500 operation-failed after `delayMs` (shard-leader election). */
  election(seconds: number, delayMs?: number): void;
  clear(): void;
}

export interface EmulatorCounters {
  /** Data requests (and module-list reads) by `"<METHOD> <status>"`, e.g. `"PUT 201"`. */
  requests: Record<string, number>;
  /**
   * Data requests by the module of the URL's first node (`k8s-node`, `elan`, …), whether the
   * module exists or not: what a client asked of each model.
   */
  modules: Record<string, number>;
  /** Data writes (PUT, PATCH, POST, DELETE), accepted or not, by the module of the URL's first node. */
  writes: Record<string, number>;
  /** TCP connections accepted (to check that clients keep connections alive). */
  connections: number;
  /** Edits applied: one per accepted single write, each edit of an applied YANG Patch. */
  edits: number;
}

export interface Emulator {
  url: string;
  port: number;
  faults: FaultController;
  counters(): EmulatorCounters;
  /** Stops serving, applies pending write-backs and flushes the state and record files. */
  close(): Promise<void>;
}

const CONTROL_PREFIX = '/odlcoe-emulator/';
const MAX_BODY_BYTES = 64 * 1024 * 1024;
// Longer than common client pool idle times, so a client never reuses a socket we just closed.
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** How long `close` lets requests in flight finish. */
const GRACE_MS = 5_000;

const DEFAULT_TYPES: Record<Dialect, string> = {
  bierman02: 'application/yang.data+json',
  rfc8040: 'application/yang-data+json',
};
const PRODUCED_TYPES = new Set([
  'application/json',
  'application/yang.data+json',
  'application/yang-data+json',
]);

/** The response media type for an Accept header, or undefined when nothing acceptable is produced. */
function negotiate(accept: string | undefined, dialect: Dialect): string | undefined {
  if (!accept || accept.trim() === '') return DEFAULT_TYPES[dialect];
  for (const part of accept.split(',')) {
    const type = part.split(';')[0]!.trim().toLowerCase();
    if (PRODUCED_TYPES.has(type)) return type;
    if (type === '*/*' || type === 'application/*') return DEFAULT_TYPES[dialect];
  }
  return undefined;
}

function checkOptions(options: EmulatorOptions): void {
  if (!PROFILES.includes(options.profile))
    throw new Error(`profile must be one of ${PROFILES.join(', ')}, not ${String(options.profile)}`);
  const port = options.port ?? 8181;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`port must be an integer in 0..65535, not ${port}`);
  if (options.user !== undefined && options.user === '') throw new Error('user must not be empty');
  if (options.password !== undefined && options.password === '')
    throw new Error('password must not be empty');
  if (options.faults) checkFaultSettings(options.faults);
  for (const feature of options.features ?? []) {
    if (!EMULATOR_FEATURES.includes(feature))
      throw new Error(`feature must be one of ${EMULATOR_FEATURES.join(', ')}, not ${String(feature)}`);
    const problem = featureProblem(options.profile, feature);
    if (problem) throw new Error(`feature ${feature}: ${problem}`);
  }
}

/** The module of a data path's first node (`/rests/data/k8s-node:k8s-nodes-info` → `k8s-node`). */
function topModule(rest: string): string | undefined {
  const first = rest.replace(/^\/+/, '').split('/')[0] ?? '';
  let head = first.split('=')[0] ?? '';
  try {
    head = decodeURIComponent(head);
  } catch {
    // Counted as written.
  }
  const colon = head.indexOf(':');
  return colon > 0 ? head.slice(0, colon) : undefined;
}

const MODULES_PATH = '/restconf/modules';

function readPem(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new Error(
      `cannot read TLS ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}`,
    );
  }
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new RestconfError('protocol', 'too-big', `Request body larger than ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function startEmulator(options: EmulatorOptions): Promise<Emulator> {
  checkOptions(options);
  const logger = options.logger ?? createLogger('emulator');
  const host = options.host ?? '127.0.0.1';
  const user = options.user ?? 'admin';
  const password = options.password ?? 'admin';
  const schema = netvirtSchema(options.profile, options.features ?? defaultFeatures(options.profile));
  const config = new Datastore();
  const operational = new Datastore();
  const modules = moduleList(schema);
  const modulesState = schema.children.byQName.get('ietf-yang-library:modules-state');
  if (modulesState) operational.put([{ node: modulesState }], modulesStateInstance(modules));

  const recordFile = options.recordFile ? await RecordFile.open(options.recordFile, logger) : undefined;
  let stateFile: StateFile | undefined;
  if (options.stateFile) {
    try {
      loadStateFile(options.stateFile, schema, options.profile, config);
    } catch (err) {
      await recordFile?.close();
      throw err;
    }
    const file = new StateFile(options.stateFile, schema, options.profile, config, logger);
    config.onMutate = () => file.markDirty();
    stateFile = file;
  }
  const writeBacks = new OdlWriteBacks(schema, config, operational, {
    fillParentInterface: options.fillParentInterface ?? false,
    operDelayMs: options.operDelayMs ?? 0,
    operStatus: options.operStatus ?? true,
    logger,
  });
  writeBacks.rebuild();
  const handler = new RestconfHandler(schema, config, operational, writeBacks, {
    profile: options.profile,
    yangPatch: options.yangPatch ?? true,
  });
  const transactionMs = options.costs?.transactionMs ?? 0;
  const editMs = options.costs?.editMs ?? 0;
  if (!(transactionMs >= 0 && editMs >= 0)) throw new Error('costs must be ≥ 0 ms');
  let edits = 0;
  /** Write requests applied so far: the record's `request` number. */
  let recordedRequests = 0;
  // Commits one after the other, as a shard leader makes them.
  let commits: Promise<void> = Promise.resolve();
  const commit = (count: number): Promise<void> => {
    const ms = transactionMs + editMs * count;
    if (ms <= 0) return Promise.resolve();
    commits = commits.then(() => sleep(ms));
    return commits;
  };
  const faultState = new FaultState(options.faults ?? {});

  const requestCounts = new Map<string, number>();
  const moduleCounts = new Map<string, number>();
  const writeCounts = new Map<string, number>();
  let connections = 0;
  const sockets = new Set<Socket>();
  const count = (method: string, status: number): void => {
    const key = `${method} ${status}`;
    requestCounts.set(key, (requestCounts.get(key) ?? 0) + 1);
  };
  const expectedAuth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

  function send(
    res: ServerResponse,
    status: number,
    body: string | undefined,
    headers: Record<string, string> = {},
  ): void {
    if (res.headersSent) return;
    res.writeHead(
      status,
      body === undefined ? headers : { ...headers, 'Content-Length': Buffer.byteLength(body) },
    );
    res.end(body);
  }

  function sendError(res: ServerResponse, err: RestconfError, type: string): void {
    send(res, err.status, err.body(), { 'Content-Type': type });
  }

  /** The configured faults for one request: a delay, then maybe an error answered (its status returned). */
  async function injectFault(res: ServerResponse, type: string): Promise<number | undefined> {
    const decision = faultState.decide();
    if (decision.delayMs > 0) await sleep(decision.delayMs);
    if (!decision.error) return undefined;
    sendError(res, decision.error, type);
    return decision.error.status;
  }

  async function serveData(
    req: IncomingMessage,
    res: ServerResponse,
    pathname: string,
    query: string,
    dialect: Dialect,
  ): Promise<number> {
    const method = req.method ?? 'GET';
    const type = negotiate(req.headers.accept, dialect);
    const body = await readBody(req);
    if (!type) {
      const err = new RestconfError(
        'protocol',
        'operation-not-supported',
        'Not Acceptable: the emulator produces JSON only',
        { status: 406 },
      );
      sendError(res, err, 'application/json');
      return err.status;
    }
    const faulted = await injectFault(res, type);
    if (faulted !== undefined) return faulted;
    try {
      const result = handler.handle({
        method,
        pathname,
        query: new URLSearchParams(query),
        contentType: req.headers['content-type'],
        body,
      });
      if (result.edits) {
        edits += result.edits;
        await commit(result.edits);
      }
      const headers: Record<string, string> = {};
      if (result.body !== undefined) headers['Content-Type'] = result.contentType ?? type;
      if (result.location) headers.Location = result.location;
      send(res, result.status, result.body, headers);
      // The edits of one YANG Patch share its request number: tests tell what rode one patch.
      const request = result.edits ? (recordedRequests += 1) : 0;
      for (const edit of result.patchEdits ?? []) {
        if (edit.module) writeCounts.set(edit.module, (writeCounts.get(edit.module) ?? 0) + 1);
        if (result.edits && recordFile)
          recordFile.append({
            method: edit.method,
            url: edit.url,
            status: result.status,
            body: edit.body,
            request,
          });
      }
      if (result.accepted && recordFile)
        recordFile.append({
          method,
          url: req.url ?? pathname,
          status: result.status,
          body: result.accepted.body,
          request,
        });
      return result.status;
    } catch (err) {
      const error =
        err instanceof RestconfError
          ? err
          : new RestconfError(
              'application',
              'operation-failed',
              `Internal emulator error: ${errorMessage(err)}`,
            );
      if (!(err instanceof RestconfError))
        logger.error('request failed', { method, path: pathname, error: errorMessage(err) });
      sendError(res, error, type);
      return error.status;
    }
  }

  async function serveControl(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<void> {
    const json = (status: number, value: unknown): void =>
      send(res, status, JSON.stringify(value), { 'Content-Type': 'application/json' });
    const resource = pathname.slice(CONTROL_PREFIX.length);
    const body = await readBody(req);
    if (resource === 'ready' && req.method === 'GET') return json(200, { ready: true });
    if (resource === 'counters' && req.method === 'GET') return json(200, counters());
    if (resource === 'faults') {
      if (req.method === 'GET') return json(200, faultState.status());
      if (req.method === 'DELETE') {
        faults.clear();
        return send(res, 204, undefined);
      }
      if (req.method === 'PUT') {
        let refuseSeconds: number | undefined;
        try {
          refuseSeconds = applyFaultRequest(body);
        } catch (err) {
          return json(400, { error: errorMessage(err) });
        }
        json(200, faultState.status());
        // Stop listening only once the answer has left, or the caller would see a reset.
        if (refuseSeconds !== undefined) res.on('finish', () => faults.outage(refuseSeconds!, 'refuse'));
        return;
      }
      return json(405, { error: `${req.method} is not allowed on ${pathname}` });
    }
    return json(404, { error: `no control resource ${pathname}` });
  }

  /** Applies a PUT /odlcoe-emulator/faults body; returns the seconds of a refuse outage to start after answering. */
  function applyFaultRequest(text: string): number | undefined {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new Error('the body is not JSON');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new Error('the body must be a JSON object');
    const { outage, election, ...rest } = value as Record<string, unknown>;
    const allowed = new Set(['latencyMs', 'latencyJitterMs', 'errorRate', 'errorStatus']);
    for (const key of Object.keys(rest))
      if (!allowed.has(key)) throw new Error(`unknown fault setting "${key}"`);
    const settings = checkFaultSettings(rest);
    let outageRequest: { seconds: number; mode: OutageMode } | undefined;
    if (outage !== undefined) {
      const o = outage as Record<string, unknown> | null;
      if (typeof o !== 'object' || o === null)
        throw new Error('outage must be {"seconds": n, "mode": "refuse"|"503"}');
      if (o.mode !== 'refuse' && o.mode !== '503') throw new Error('outage mode must be "refuse" or "503"');
      outageRequest = { seconds: checkSeconds(o.seconds, 'outage seconds'), mode: o.mode };
    }
    let electionRequest: { seconds: number; delayMs: number } | undefined;
    if (election !== undefined) {
      const e = election as Record<string, unknown> | null;
      if (typeof e !== 'object' || e === null)
        throw new Error('election must be {"seconds": n, "delayMs": n}');
      const delayMs = e.delayMs ?? 0;
      if (typeof delayMs !== 'number' || !(delayMs >= 0 && delayMs <= 600_000))
        throw new Error('election delayMs must be a number in 0..600000');
      electionRequest = { seconds: checkSeconds(e.seconds, 'election seconds'), delayMs };
    }
    faultState.set(settings);
    if (electionRequest) faultState.election(electionRequest.seconds, electionRequest.delayMs);
    if (outageRequest?.mode === '503') faultState.unavailableFor(outageRequest.seconds);
    return outageRequest?.mode === 'refuse' ? outageRequest.seconds : undefined;
  }

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    const pathname = q === -1 ? raw : raw.slice(0, q);
    const query = q === -1 ? '' : raw.slice(q + 1);
    const root = dataRootOf(pathname);
    const method = req.method ?? 'GET';
    const authorized =
      req.headers.authorization !== undefined && sameSecret(req.headers.authorization, expectedAuth);
    if (!authorized) {
      req.resume();
      send(res, 401, '', { 'WWW-Authenticate': 'Basic realm="opendaylight"' });
      if (root) count(method, 401);
      return;
    }
    if (pathname.startsWith(CONTROL_PREFIX)) return serveControl(req, res, pathname);
    if (pathname === MODULES_PATH || pathname === `${MODULES_PATH}/`) {
      count(method, await serveModules(req, res));
      return;
    }
    if (!root) {
      req.resume();
      const err = new RestconfError('protocol', 'unknown-element', `No resource at ${pathname}`, {
        status: 404,
      });
      return send(res, 404, err.body(), { 'Content-Type': 'application/json' });
    }
    const module = topModule(root.rest);
    if (module !== undefined) {
      moduleCounts.set(module, (moduleCounts.get(module) ?? 0) + 1);
      if (method !== 'GET') writeCounts.set(module, (writeCounts.get(module) ?? 0) + 1);
    }
    count(method, await serveData(req, res, pathname, query, root.dialect));
  }

  /** bierman02 `GET /restconf/modules`: the modules the controller has loaded. */
  async function serveModules(req: IncomingMessage, res: ServerResponse): Promise<number> {
    await readBody(req);
    const type = negotiate(req.headers.accept, 'bierman02') ?? 'application/json';
    const faulted = await injectFault(res, type);
    if (faulted !== undefined) return faulted;
    if (req.method !== 'GET') {
      const err = new RestconfError(
        'protocol',
        'operation-not-supported',
        `Method not allowed: ${req.method ?? '?'} on ${MODULES_PATH}`,
        { status: 405 },
      );
      sendError(res, err, type);
      return err.status;
    }
    send(res, 200, biermanModulesBody(modules), { 'Content-Type': type });
    return 200;
  }

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    onRequest(req, res).catch((err: unknown) => {
      const error =
        err instanceof RestconfError
          ? err
          : new RestconfError('application', 'operation-failed', errorMessage(err));
      if (!(err instanceof RestconfError)) logger.error('request failed', { error: errorMessage(err) });
      send(res, error.status, error.body(), { 'Content-Type': 'application/json' });
    });
  };

  const server: Server = options.tls
    ? createHttpsServer(
        { cert: readPem(options.tls.certFile, 'certificate'), key: readPem(options.tls.keyFile, 'key') },
        listener,
      )
    : createHttpServer(listener);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1000;
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  let closed = false;
  let listening = false;
  let relistenTimer: NodeJS.Timeout | undefined;

  function listen(port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      server.once('error', onError);
      server.listen(port, host, () => {
        server.off('error', onError);
        listening = true;
        resolve((server.address() as AddressInfo).port);
      });
    });
  }

  /**
   * Stops accepting connections. `crash` resets every connection at once (an ODL that goes
   * away); otherwise idle connections close now and busy ones get `GRACE_MS` to finish.
   */
  function stopListening(crash: boolean): Promise<void> {
    if (!listening) return Promise.resolve();
    listening = false;
    const done = new Promise<void>((resolve) => server.close(() => resolve()));
    if (crash) {
      for (const socket of sockets) socket.destroy();
    } else {
      server.closeIdleConnections();
      const force = setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, GRACE_MS);
      void done.then(() => clearTimeout(force));
    }
    return done;
  }

  let port: number;
  try {
    port = await listen(options.port ?? 8181);
  } catch (err) {
    writeBacks.cancel();
    stateFile?.discard();
    await recordFile?.close();
    throw new Error(`cannot listen on ${host}:${options.port ?? 8181}: ${errorMessage(err)}`);
  }

  async function relisten(): Promise<void> {
    relistenTimer = undefined;
    if (closed || listening) return;
    faultState.endRefusing();
    try {
      await listen(port);
      logger.info('emulator listening again after outage', { port });
    } catch (err) {
      logger.error('cannot listen again after outage, retrying', { port, error: errorMessage(err) });
      if (!closed) relistenTimer = setTimeout(() => void relisten(), 1000);
    }
  }

  const faults: FaultController = {
    set: (settings) => faultState.set(settings),
    outage(seconds, mode) {
      checkSeconds(seconds, 'outage seconds');
      if (mode === '503') return faultState.unavailableFor(seconds);
      if (mode !== 'refuse') throw new Error('outage mode must be "refuse" or "503"');
      faultState.refusingFor(seconds);
      if (relistenTimer) clearTimeout(relistenTimer);
      const stopped = stopListening(true);
      relistenTimer = setTimeout(() => void stopped.then(relisten), seconds * 1000);
    },
    election: (seconds, delayMs) => faultState.election(seconds, delayMs),
    clear() {
      faultState.clear();
      if (relistenTimer) {
        clearTimeout(relistenTimer);
        void relisten();
      }
    },
  };

  function counters(): EmulatorCounters {
    return {
      requests: Object.fromEntries(requestCounts),
      modules: Object.fromEntries(moduleCounts),
      writes: Object.fromEntries(writeCounts),
      connections,
      edits,
    };
  }

  const scheme = options.tls ? 'https' : 'http';
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `${scheme}://${urlHost}:${port}`,
    port,
    faults,
    counters,
    async close() {
      if (closed) return;
      closed = true;
      if (relistenTimer) clearTimeout(relistenTimer);
      await stopListening(false);
      writeBacks.flush();
      await stateFile?.flush();
      await recordFile?.close();
    },
  };
}

export type { FaultStatus };
