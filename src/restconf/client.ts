import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import axios, { type AxiosInstance, type AxiosResponse } from 'axios';
import PQueue from 'p-queue';
import { backoffDelay, sleep } from '../common/backoff.js';
import { ConfigError } from '../common/config-file.js';
import { silentLogger, type Logger } from '../common/log.js';
import { assertValidAuth, authorizationHeader, type RestconfAuth } from './auth.js';
import { bodySnippet, decodeErrorBody, RestconfError } from './errors.js';
import { listEntries, listEntriesFromParent, parseRestconfJson } from './json-body.js';
import {
  DIALECTS,
  encodePath,
  instanceIdentifier,
  parentPath,
  pathTemplate,
  type DataPath,
  type Datastore,
  type Dialect,
} from './path.js';
import {
  isRetryableNetworkCode,
  isRetryableStatus,
  outcomeUnknownAfterNetworkError,
  outcomeUnknownAfterStatus,
  retryAfterMs,
} from './retry-policy.js';
import {
  afterWrites,
  editError,
  WriteBatcher,
  type BatchedWrite,
  type BatchOptions,
  type BatchSample,
} from './write-batcher.js';
import {
  bufferSafe,
  patchDocument,
  statusOfTag,
  YANG_PATCH_MEDIA_TYPE,
  YANG_PATCH_STATUS_ACCEPT,
  type PatchEdit,
} from './yang-patch.js';

export type { RestconfAuth } from './auth.js';
export type { BatchOptions, BatchSample } from './write-batcher.js';
export { PrerequisiteNotWritten, RestconfError } from './errors.js';

/** One attempt of one request, for metrics: reported once per attempt, retries included. */
export interface RequestSample {
  method: string;
  /** The data path with keys replaced by `{key}` (bounded label cardinality). */
  pathTemplate: string;
  status: number | 'timeout' | 'network';
  seconds: number;
  /** 1 for the first attempt. */
  attempt: number;
}

export interface RestconfRetryOptions {
  /** Attempts in total, the first included; 1 disables retries. */
  maxAttempts?: number;
  initialMs?: number;
  maxMs?: number;
}

export interface RestconfClientOptions {
  /** `http(s)://host:port`, optionally with a path prefix when ODL sits behind a proxy. */
  baseUrl: string;
  /** `bierman02`: `/restconf/config|operational/...`; `rfc8040`: `/rests/data/...`. */
  dialect: Dialect;
  auth?: RestconfAuth;
  /** Per attempt. Above 30 s because an ODL shard election can hold a request that long. */
  timeoutMs?: number;
  retry?: RestconfRetryOptions;
  /** Attempts in flight at once (waiting for a retry does not count). */
  concurrency?: number;
  /** Verification is on unless `insecureSkipVerify` is set. */
  tls?: { caFile?: string; insecureSkipVerify?: boolean };
  onRequest?: (sample: RequestSample) => void;
  /**
   * Batched writes: concurrent put/post/merge/delete calls go to ODL as YANG-Patch requests
   * of up to `maxEdits` edits, each sent at most `windowMs` after its first edit. Absent, or
   * `maxEdits` 1: every write is its own request. See docs/restconf-client.md.
   */
  batch?: BatchOptions;
  /** Called once per YANG-Patch request the batcher sends (metrics). */
  onBatch?: (sample: BatchSample) => void;
  logger?: Logger;
}

/** Per-request options of the data methods. */
export interface RequestOptions {
  /**
   * Stops the request: no attempt starts after it fires, the attempt in flight is cut off and
   * a wait for a retry ends at once. The request then rejects with a non-retryable
   * `RestconfError` of code `aborted` (a RestconfError rather than the signal's reason, so
   * that callers handle every client failure alike; the reason is in its message and
   * `cause`). `mayHaveApplied` says whether an attempt may have reached ODL before that.
   */
  signal?: AbortSignal;
  /**
   * Writes this one needs applied first (promises of this client's writes, e.g. the create of
   * an instance before the create of its interface). It is sent once they were, or behind
   * them in the same YANG Patch; when one of them fails it is not sent at all and rejects with
   * `PrerequisiteNotWritten`. For writes only.
   */
  after?: readonly Promise<unknown>[];
}

export const DEFAULT_TIMEOUT_MS = 45_000;
export const DEFAULT_CONCURRENCY = 16;
/**
 * Ten attempts with delays doubling from 250 ms up to 15 s: the waits add up to 30–60 s,
 * enough to ride out a shard election that fails requests quickly instead of holding them.
 */
export const DEFAULT_RETRY: Required<RestconfRetryOptions> = {
  maxAttempts: 10,
  initialMs: 250,
  maxMs: 15_000,
};

const MEDIA_TYPE: Record<Dialect, { contentType: string; accept: string }> = {
  // The old /restconf consumes application/json and the draft's application/yang.data+json,
  // not RFC 8040's application/yang-data+json.
  bierman02: {
    contentType: 'application/json',
    accept: 'application/json, application/yang-data+json;q=0.9',
  },
  rfc8040: {
    contentType: 'application/yang-data+json',
    accept: 'application/yang-data+json, application/json;q=0.9',
  },
};

export type RestconfMethod = 'GET' | 'PUT' | 'PATCH' | 'POST' | 'DELETE';

interface Prepared {
  method: RestconfMethod;
  url: string;
  template: string;
  body?: string;
  /** Replace the dialect's media types (YANG Patch). */
  contentType?: string;
  accept?: string;
}

interface HttpAnswer {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
  attempts: number;
  mayHaveApplied: boolean;
}

type AttemptResult =
  | { kind: 'response'; response: AxiosResponse<string> }
  | { kind: 'timeout' }
  | { kind: 'network'; code: string; message: string }
  | { kind: 'closed' }
  | { kind: 'aborted' };

/**
 * The RESTCONF client every odlcoe component uses to talk to ODL. It addresses data by
 * `DataPath` and spells the URL for the configured dialect, caps the attempts in flight,
 * retries transient failures (5xx, timeouts, dropped connections) with jittered exponential
 * backoff, and turns everything else into a `RestconfError` carrying ODL's error tag.
 */
export class RestconfClient {
  private readonly http: AxiosInstance;
  private readonly agent: http.Agent;
  private readonly queue: PQueue;
  private readonly closing = new AbortController();
  private readonly root: string;
  private readonly dialect: Dialect;
  private readonly timeoutMs: number;
  private readonly retry: Required<RestconfRetryOptions>;
  private readonly onRequest?: (sample: RequestSample) => void;
  private readonly logger: Logger;
  private readonly batcher: WriteBatcher | undefined;
  private patches = 0;

  constructor(options: RestconfClientOptions) {
    this.logger = options.logger ?? silentLogger();
    if (!DIALECTS.includes(options.dialect)) {
      throw new ConfigError(
        `RESTCONF dialect "${String(options.dialect)}" is not one of ${DIALECTS.join(', ')}`,
      );
    }
    this.dialect = options.dialect;
    const base = parseBaseUrl(options.baseUrl);
    this.root = base.root;
    this.timeoutMs = positiveInteger(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, 'timeoutMs');
    const concurrency = positiveInteger(options.concurrency ?? DEFAULT_CONCURRENCY, 'concurrency');
    this.retry = {
      maxAttempts: positiveInteger(
        options.retry?.maxAttempts ?? DEFAULT_RETRY.maxAttempts,
        'retry.maxAttempts',
      ),
      initialMs: positiveInteger(options.retry?.initialMs ?? DEFAULT_RETRY.initialMs, 'retry.initialMs'),
      maxMs: positiveInteger(
        options.retry?.maxMs ?? Math.max(DEFAULT_RETRY.maxMs, options.retry?.initialMs ?? 0),
        'retry.maxMs',
      ),
    };
    if (this.retry.maxMs < this.retry.initialMs) {
      throw new ConfigError(
        `retry.maxMs (${this.retry.maxMs}) is below retry.initialMs (${this.retry.initialMs})`,
      );
    }
    this.onRequest = options.onRequest;
    if (options.auth) assertValidAuth(options.auth);

    // The queue lets at most `concurrency` attempts through, so that many sockets suffice;
    // keeping them all when idle lets the next burst reuse them instead of reconnecting.
    const agentOptions = { keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency };
    if (base.tls) {
      const tls = options.tls ?? {};
      const ca = tls.caFile !== undefined ? readCaFile(tls.caFile) : undefined;
      if (tls.insecureSkipVerify === true) {
        this.logger.warn('TLS certificate verification of OpenDaylight is DISABLED (insecureSkipVerify)', {
          baseUrl: this.root,
        });
      }
      this.agent = new https.Agent({
        ...agentOptions,
        ca,
        rejectUnauthorized: tls.insecureSkipVerify !== true,
      });
    } else {
      if (options.tls?.caFile !== undefined || options.tls?.insecureSkipVerify !== undefined) {
        throw new ConfigError(`TLS options are set but the RESTCONF base URL ${this.root} is plain http`);
      }
      this.agent = new http.Agent(agentOptions);
    }

    const media = MEDIA_TYPE[this.dialect];
    const headers: Record<string, string> = { Accept: media.accept };
    if (options.auth) headers.Authorization = authorizationHeader(options.auth);
    this.http = axios.create({
      httpAgent: base.tls ? undefined : this.agent,
      httpsAgent: base.tls ? this.agent : undefined,
      headers,
      timeout: this.timeoutMs,
      maxRedirects: 0,
      // Status handling is ours: every answer resolves, and bodies stay text so that an
      // HTML error page or a truncated body can be reported rather than half-parsed.
      validateStatus: () => true,
      responseType: 'text',
      transformResponse: [(data: unknown) => data],
      transitional: { clarifyTimeoutError: true, silentJSONParsing: false, forcedJSONParsing: false },
      // Talk to ODL directly: HTTP(S)_PROXY variables meant for other traffic would
      // otherwise reroute (and for https, break) the controller connection.
      proxy: false,
    });
    this.queue = new PQueue({ concurrency });
    // Every attempt in flight listens for close(); there can be `concurrency` of them.
    setMaxListeners(concurrency + 10, this.closing.signal);
    if (options.batch && options.batch.maxEdits > 1) {
      positiveInteger(options.batch.maxEdits, 'batch.maxEdits');
      if (!(Number.isFinite(options.batch.windowMs) && options.batch.windowMs >= 0))
        throw new ConfigError(
          `RESTCONF client option batch.windowMs must be ≥ 0, got ${options.batch.windowMs}`,
        );
      this.batcher = new WriteBatcher(
        options.batch,
        { send: (body, signal) => this.sendPatch(body, signal) },
        (edits) => patchDocument(`odlcoe-${++this.patches}`, edits, this.dialect),
        this.logger,
        options.onBatch,
      );
    }
  }

  /** Whether ODL refused YANG Patch, so that batched writes go single (per client). */
  get patchRefused(): boolean {
    return this.batcher?.patchRefused ?? false;
  }

  /**
   * The data at `path`, parsed; undefined when ODL has none (404). On bierman02 a list path
   * without keys is also 404 ("Missing key for list"): read lists with getEntries.
   */
  async get(
    path: DataPath,
    store: Datastore = 'config',
    options: RequestOptions = {},
  ): Promise<unknown | undefined> {
    const req = this.prepare('GET', path, store);
    const answer = await this.execute(req, options.signal);
    if (answer.status === 404 || answer.status === 204) return undefined;
    if (answer.status !== 200) throw this.errorFromAnswer(req, answer);
    if (answer.body.trim() === '') return undefined;
    return this.parseBody(req, answer);
  }

  /** A 200 answer's JSON; an answer that is not JSON is a non-retryable error. */
  private parseBody(req: Prepared, answer: HttpAnswer): unknown {
    try {
      return parseRestconfJson(answer.body);
    } catch (err) {
      throw this.unexpected(req, answer, `response is not valid JSON (${(err as Error).message})`);
    }
  }

  private unexpected(req: Prepared, answer: HttpAnswer, why: string): RestconfError {
    return new RestconfError({
      method: req.method,
      url: req.url,
      status: answer.status,
      reason: `${why}: ${bodySnippet(answer.body)}`,
      retryable: false,
      attempts: answer.attempts,
    });
  }

  /**
   * The list entries at a list path (`.../elan-instance`) or entry path; [] when there are
   * none (404). The top member is unwrapped whether ODL qualified it (RFC 8040) or not. On
   * bierman02 a list path is read through its parent (the old API cannot read a bare list).
   */
  async getEntries(
    path: DataPath,
    store: Datastore = 'config',
    options: RequestOptions = {},
  ): Promise<Record<string, unknown>[]> {
    const last = path[path.length - 1];
    // The old /restconf answers 404 "Missing key for list" to a list path without keys,
    // which would read as "no entries": read the parent and pick the list out of it.
    const viaParent = this.dialect === 'bierman02' && (last?.keys === undefined || last.keys.length === 0);
    if (viaParent && path.length < 2) {
      throw new TypeError(
        `bierman02 cannot read the top-level list ${last?.name ?? '(empty path)'} without keys`,
      );
    }
    const readPath = viaParent ? parentPath(path) : path;
    const body = await this.get(readPath, store, options);
    try {
      return viaParent ? listEntriesFromParent(body, path) : listEntries(body, path);
    } catch (err) {
      throw new RestconfError({
        method: 'GET',
        url: this.dataUrl(readPath, store, 'GET'),
        status: 200,
        reason: `unexpected response: ${(err as Error).message}`,
        retryable: false,
        attempts: 1,
      });
    }
  }

  /**
   * The modules ODL has loaded, as its module listing of this client's dialect gives them:
   * RFC 8040 reads ietf-yang-library `modules-state` (operational), bierman02 `GET
   * /restconf/modules`. Undefined when ODL has no such listing (404). Each entry as ODL wrote it
   * (`name`, `revision`, `namespace`, …).
   */
  async getModules(options: RequestOptions = {}): Promise<Record<string, unknown>[] | undefined> {
    const req: Prepared = { method: 'GET', url: this.modulesUrl(), template: '/modules' };
    const answer = await this.execute(req, options.signal);
    if (answer.status === 404) return undefined;
    if (answer.status !== 200) throw this.errorFromAnswer(req, answer);
    const top = (this.parseBody(req, answer) ?? {}) as Record<string, unknown>;
    const container = (top['ietf-yang-library:modules-state'] ??
      top['modules-state'] ??
      top['ietf-restconf:modules'] ??
      top.modules) as { module?: unknown } | undefined;
    const list = container?.module;
    if (!Array.isArray(list)) throw this.unexpected(req, answer, 'unexpected module listing');
    return list.filter((m): m is Record<string, unknown> => typeof m === 'object' && m !== null);
  }

  /**
   * Creates or replaces the node at `path`. `body` holds the node itself, for a list entry
   * as a one-element list: `{"elan:elan-instance":[{...}]}`.
   */
  put(path: DataPath, body: unknown, options: RequestOptions = {}): Promise<'created' | 'replaced'> {
    return this.write(
      'replace',
      path,
      body,
      'PUT',
      () => this.putNow(path, body, options),
      () => 'replaced',
      options,
    );
  }

  private async putNow(
    path: DataPath,
    body: unknown,
    options: RequestOptions,
  ): Promise<'created' | 'replaced'> {
    const req = this.prepare('PUT', path, 'config', body);
    const answer = await this.execute(req, options.signal);
    if (answer.status === 201) return 'created';
    if (answer.status === 200 || answer.status === 204) return 'replaced';
    throw this.errorFromAnswer(req, answer);
  }

  /** Merges `body` into the node at `path` (plain PATCH): leaves not in `body` stay as they are. */
  merge(path: DataPath, body: unknown, options: RequestOptions = {}): Promise<void> {
    return this.write(
      'merge',
      path,
      body,
      'PATCH',
      () => this.mergeNow(path, body, options),
      () => undefined,
      options,
    );
  }

  private async mergeNow(path: DataPath, body: unknown, options: RequestOptions): Promise<void> {
    const req = this.prepare('PATCH', path, 'config', body);
    const answer = await this.execute(req, options.signal);
    if (answer.status === 200 || answer.status === 201 || answer.status === 204) return;
    throw this.errorFromAnswer(req, answer);
  }

  /**
   * Creates a child of `parent` (an empty parent means the datastore root). Never replaces:
   * an existing node fails with `RestconfError` tag `data-exists` (409). When a retried POST
   * meets 409 after an attempt whose outcome was unknown, the data may be this request's own
   * earlier write: the error then has `mayHaveApplied` set, and only a read can tell.
   */
  post(parent: DataPath, body: unknown, options: RequestOptions = {}): Promise<void> {
    return this.write(
      'create',
      parent,
      body,
      'POST',
      () => this.postNow(parent, body, options),
      () => undefined,
      options,
    );
  }

  private async postNow(parent: DataPath, body: unknown, options: RequestOptions): Promise<void> {
    const req = this.prepare('POST', parent, 'config', body);
    const answer = await this.execute(req, options.signal);
    if (answer.status === 200 || answer.status === 201 || answer.status === 204) return;
    throw this.errorFromAnswer(req, answer);
  }

  /**
   * Deletes the node at `path`. Missing data is success (`absent`). After a retry,
   * `absent` can also mean an earlier attempt deleted it: either way it is gone.
   */
  delete(path: DataPath, options: RequestOptions = {}): Promise<'deleted' | 'absent'> {
    return this.write(
      'delete',
      path,
      undefined,
      'DELETE',
      () => this.deleteNow(path, options),
      (outcome) => (outcome === 'data-missing' ? 'absent' : 'deleted'),
      options,
    );
  }

  private async deleteNow(path: DataPath, options: RequestOptions): Promise<'deleted' | 'absent'> {
    const req = this.prepare('DELETE', path, 'config');
    const answer = await this.execute(req, options.signal);
    if (answer.status === 200 || answer.status === 204) return 'deleted';
    if (answer.status === 404) return 'absent';
    throw this.errorFromAnswer(req, answer);
  }

  /**
   * Destroys the keep-alive sockets and fails requests still queued, waiting for a retry or
   * in flight with a non-retryable `RestconfError` (code `closed`).
   */
  close(): void {
    if (this.closing.signal.aborted) return;
    this.closing.abort();
    this.batcher?.flush();
    this.agent.destroy();
  }

  /**
   * A write, batched when it can be (the promise returned is the batcher's own, so that it can
   * stand in another write's `after`), else single once what it follows was applied.
   */
  private write<T>(
    operation: 'create' | 'replace' | 'merge' | 'delete',
    path: DataPath,
    body: unknown,
    method: RestconfMethod,
    single: () => Promise<T>,
    ok: (tag?: 'data-missing') => T,
    options: RequestOptions,
  ): Promise<T> {
    let edit: BatchedWrite<T> | undefined;
    try {
      edit = this.batchable(operation, path, body, method, single, ok);
    } catch (err) {
      return Promise.reject(err);
    }
    if (edit) return this.batcher!.submit(edit, options.signal, options.after);
    return options.after?.length ? afterWrites(options.after).then(single) : single();
  }

  /**
   * The write as a YANG-Patch edit, when batching is on and the write can be one: its target
   * can be spelled as an instance-identifier (list entries with their key names) and, on
   * bierman02, its value survives ODL's value buffer. `ok` gives the caller's result for an
   * applied edit (or, for a delete, one that failed with `data-missing`).
   */
  private batchable<T>(
    operation: 'create' | 'replace' | 'merge' | 'delete',
    path: DataPath,
    body: unknown,
    method: RestconfMethod,
    single: () => Promise<T>,
    ok: (tag?: 'data-missing') => T,
  ): BatchedWrite<T> | undefined {
    if (!this.batcher || this.batcher.patchRefused) return undefined;
    if (body !== undefined && this.dialect === 'bierman02' && !bufferSafe(body)) return undefined;
    const edit = this.patchEdit(operation, path, body);
    if (!edit) return undefined;
    return {
      edit,
      single,
      settle: (outcome) => {
        if (outcome.ok) return ok();
        if (operation === 'delete' && outcome.errors[0]?.errorTag === 'data-missing')
          return ok('data-missing');
        throw editError(method, this.dataUrl(path, 'config', method), outcome, statusOfTag);
      },
    };
  }

  /**
   * The edit for a write. A value for a list entry is addressed through its list (ODL's
   * reader does the same with an entry target): `create`/`replace` of
   * `/m:top/m:list` with `{"m:list":[entry]}` creates or replaces that entry alone.
   */
  private patchEdit(
    operation: PatchEdit['operation'],
    path: DataPath,
    body: unknown,
  ): Omit<PatchEdit, 'editId'> | undefined {
    if (operation === 'delete') {
      const target = instanceIdentifier(path);
      return target === undefined ? undefined : { operation, target };
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
    const members = Object.keys(body);
    if (members.length !== 1) return undefined;
    let listPath: DataPath;
    if (operation === 'create') {
      const member = members[0]!;
      const colon = member.indexOf(':');
      const module = colon === -1 ? undefined : member.slice(0, colon);
      if (path.length === 0 && module === undefined) return undefined;
      listPath = [
        ...path,
        { name: colon === -1 ? member : member.slice(colon + 1), ...(module ? { module } : {}) },
      ];
    } else {
      const last = path[path.length - 1];
      if (!last) return undefined;
      listPath =
        last.keys && last.keys.length > 0
          ? [...parentPath(path), { name: last.name, ...(last.module ? { module: last.module } : {}) }]
          : path;
    }
    const target = instanceIdentifier(listPath);
    return target === undefined ? undefined : { operation, target, value: body };
  }

  /** Sends a YANG-Patch document to the datastore root, with the retry policy. */
  private async sendPatch(
    body: string,
    signal: AbortSignal,
  ): Promise<{ status: number; body: string; attempts: number; mayHaveApplied: boolean }> {
    const url = this.dialect === 'bierman02' ? `${this.root}/restconf/config` : `${this.root}/rests/data`;
    const req: Prepared = {
      method: 'PATCH',
      url,
      template: '/yang-patch',
      body,
      contentType: YANG_PATCH_MEDIA_TYPE,
      accept: YANG_PATCH_STATUS_ACCEPT,
    };
    return this.execute(req, signal);
  }

  /** Where this client's dialect lists ODL's modules (see getModules). */
  modulesUrl(): string {
    return this.dialect === 'rfc8040'
      ? this.dataUrl([{ module: 'ietf-yang-library', name: 'modules-state' }], 'operational', 'GET')
      : `${this.root}/restconf/modules`;
  }

  /** The URL for `path` in this client's dialect (also for logs and errors). */
  dataUrl(path: DataPath, store: Datastore, method: RestconfMethod): string {
    const encoded = path.length === 0 ? '' : `/${encodePath(path, this.dialect)}`;
    if (this.dialect === 'bierman02') return `${this.root}/restconf/${store}${encoded}`;
    const query = method === 'GET' ? `?content=${store === 'config' ? 'config' : 'nonconfig'}` : '';
    return `${this.root}/rests/data${encoded}${query}`;
  }

  private prepare(method: RestconfMethod, path: DataPath, store: Datastore, body?: unknown): Prepared {
    if (path.length === 0 && method !== 'POST') throw new TypeError(`${method} needs a non-empty data path`);
    if (store === 'operational' && method !== 'GET')
      throw new TypeError('only GET reads the operational datastore');
    const prepared: Prepared = {
      method,
      url: this.dataUrl(path, store, method),
      template: path.length === 0 ? '/' : pathTemplate(path),
    };
    if (method === 'PUT' || method === 'PATCH' || method === 'POST') {
      const text = body === undefined ? undefined : JSON.stringify(body);
      if (text === undefined) throw new TypeError(`${method} ${prepared.url}: the body must be a JSON value`);
      prepared.body = text;
    }
    return prepared;
  }

  /**
   * Sends `req` until it gets an answer that is not worth retrying, and returns that answer
   * (success or final error status) for the caller to interpret. Each attempt waits for a
   * queue slot; waits between attempts hold none, so a failing ODL does not block requests
   * that are ready to go, and retries jump ahead of new work so that they are not starved.
   * The caller's `signal` is checked before every attempt and ends an attempt in flight or a
   * wait for a retry at once (see `RequestOptions.signal`).
   */
  private async execute(req: Prepared, signal?: AbortSignal): Promise<HttpAnswer> {
    let mayHaveApplied = false;
    for (let attempt = 1; ; attempt += 1) {
      if (signal?.aborted) throw this.abortedError(req, attempt - 1, mayHaveApplied, signal);
      let result: AttemptResult;
      let started = false;
      try {
        // The signal also takes a request still waiting for a queue slot out of the queue.
        // p-queue rejects at once on abort even while the attempt runs; the attempt then
        // cuts its own request off (it listens to the signal too).
        result = await this.queue.add(
          () => {
            started = true;
            return this.attemptOnce(req, attempt, signal);
          },
          { priority: attempt > 1 ? 1 : 0, signal },
        );
      } catch (err) {
        if (!signal?.aborted) throw err;
        // An attempt that started may have been sent: ODL may have applied it.
        const applied = mayHaveApplied || (started && req.method !== 'GET');
        throw this.abortedError(req, started ? attempt : attempt - 1, applied, signal);
      }
      if (result.kind === 'closed') throw this.closedError(req, attempt, mayHaveApplied);
      if (result.kind === 'aborted') {
        // The attempt was cut off after it was sent: ODL may have applied it.
        throw this.abortedError(req, attempt, mayHaveApplied || req.method !== 'GET', signal);
      }

      let failure: { retryable: boolean; describe: string; retryAfter?: number; error: () => RestconfError };
      if (result.kind === 'response') {
        const { response } = result;
        const answer: HttpAnswer = {
          status: response.status,
          headers: headerRecord(response.headers),
          body: typeof response.data === 'string' ? response.data : '',
          attempts: attempt,
          mayHaveApplied,
        };
        if (!isRetryableStatus(response.status)) return answer;
        failure = {
          retryable: true,
          describe: `status ${response.status}`,
          retryAfter: response.status === 503 ? retryAfterMs(answer.headers['retry-after']) : undefined,
          error: () => this.errorFromAnswer(req, answer),
        };
        mayHaveApplied ||= req.method !== 'GET' && outcomeUnknownAfterStatus(response.status);
      } else if (result.kind === 'timeout') {
        mayHaveApplied ||= req.method !== 'GET';
        const applied = mayHaveApplied;
        failure = {
          retryable: true,
          describe: `no answer within ${this.timeoutMs} ms`,
          error: () =>
            new RestconfError({
              method: req.method,
              url: req.url,
              code: 'timeout',
              reason: `no answer within ${this.timeoutMs} ms`,
              retryable: true,
              attempts: attempt,
              mayHaveApplied: applied,
            }),
        };
      } else {
        mayHaveApplied ||= req.method !== 'GET' && outcomeUnknownAfterNetworkError(result.code);
        const applied = mayHaveApplied;
        const retryable = isRetryableNetworkCode(result.code);
        failure = {
          retryable,
          describe: result.code,
          error: () =>
            new RestconfError({
              method: req.method,
              url: req.url,
              code: result.code,
              reason: result.message,
              retryable,
              attempts: attempt,
              mayHaveApplied: applied,
            }),
        };
      }

      if (!failure.retryable || attempt >= this.retry.maxAttempts) throw failure.error();
      const backoff = backoffDelay(attempt - 1, { initialMs: this.retry.initialMs, maxMs: this.retry.maxMs });
      const delayMs = Math.max(backoff, failure.retryAfter ?? 0);
      this.logger.warn('RESTCONF request failed, retrying', {
        method: req.method,
        url: req.url,
        attempt,
        maxAttempts: this.retry.maxAttempts,
        failure: failure.describe,
        delayMs,
      });
      await this.waitToRetry(delayMs, signal);
      if (this.closing.signal.aborted) throw this.closedError(req, attempt, mayHaveApplied);
      if (signal?.aborted) throw this.abortedError(req, attempt, mayHaveApplied, signal);
    }
  }

  /** Sleeps `ms`, or until close() or the caller's signal fires (the caller then checks which). */
  private async waitToRetry(ms: number, signal: AbortSignal | undefined): Promise<void> {
    // A plain controller per wait: AbortSignal.any() retains its sources' listeners on Node 20.
    const wake = new AbortController();
    const onAbort = () => wake.abort();
    this.closing.signal.addEventListener('abort', onAbort, { once: true });
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (this.closing.signal.aborted || signal?.aborted) return;
      await sleep(ms, wake.signal);
    } catch {
      // Woken early: the caller looks at which signal fired.
    } finally {
      this.closing.signal.removeEventListener('abort', onAbort);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  private async attemptOnce(req: Prepared, attempt: number, signal?: AbortSignal): Promise<AttemptResult> {
    if (this.closing.signal.aborted) return { kind: 'closed' };
    if (signal?.aborted) return { kind: 'aborted' };
    // axios' `timeout` is a socket inactivity timer; the abort bounds the whole attempt,
    // including an answer that trickles in, and lets close() cut it short. (A plain
    // controller per attempt: AbortSignal.any() retains its sources' listeners on Node 20.)
    const abort = new AbortController();
    const deadline = setTimeout(() => abort.abort(), this.timeoutMs);
    const onClose = () => abort.abort();
    this.closing.signal.addEventListener('abort', onClose, { once: true });
    signal?.addEventListener('abort', onClose, { once: true });
    const started = performance.now();
    let result: AttemptResult;
    try {
      const response = await this.http.request<string>({
        method: req.method,
        url: req.url,
        data: req.body,
        headers: {
          ...(req.body !== undefined
            ? { 'Content-Type': req.contentType ?? MEDIA_TYPE[this.dialect].contentType }
            : {}),
          ...(req.accept ? { Accept: req.accept } : {}),
        },
        signal: abort.signal,
      });
      result = { kind: 'response', response };
    } catch (err) {
      result = this.classifyFailure(err, signal);
    } finally {
      clearTimeout(deadline);
      this.closing.signal.removeEventListener('abort', onClose);
      signal?.removeEventListener('abort', onClose);
    }
    if (result.kind !== 'closed' && result.kind !== 'aborted') {
      const status = result.kind === 'response' ? result.response.status : result.kind;
      this.report({
        method: req.method,
        pathTemplate: req.template,
        status,
        seconds: (performance.now() - started) / 1000,
        attempt,
      });
    }
    return result;
  }

  private classifyFailure(err: unknown, signal: AbortSignal | undefined): AttemptResult {
    if (this.closing.signal.aborted) return { kind: 'closed' };
    if (signal?.aborted) return { kind: 'aborted' };
    if (axios.isCancel(err)) return { kind: 'timeout' };
    const code = errorCode(err);
    if (code === 'ETIMEDOUT' || code === 'ECONNABORTED' || code === 'ERR_CANCELED')
      return { kind: 'timeout' };
    return { kind: 'network', code: code ?? 'ERR_UNKNOWN', message: (err as Error)?.message ?? String(err) };
  }

  private report(sample: RequestSample): void {
    if (!this.onRequest) return;
    try {
      this.onRequest(sample);
    } catch (err) {
      // A broken metrics hook must not fail the request it measures.
      this.logger.warn('RESTCONF onRequest hook threw', { error: (err as Error)?.message ?? String(err) });
    }
  }

  private errorFromAnswer(req: Prepared, answer: HttpAnswer): RestconfError {
    const decoded = decodeErrorBody(answer.body);
    let reason = decoded.snippet;
    if (answer.status >= 300 && answer.status < 400) {
      reason = `unexpected redirect to ${answer.headers.location ?? '(no Location)'}; check baseUrl and dialect`;
    } else if (decoded.details.length === 0 && (answer.status === 401 || answer.status === 403)) {
      reason = `${answer.status === 401 ? 'authentication failed' : 'not authorised'}; check the ODL credentials${reason ? `: ${reason}` : ''}`;
    } else if (
      answer.status === 415 &&
      req.method === 'PATCH' &&
      this.dialect === 'bierman02' &&
      decoded.details.length === 0
    ) {
      reason = `the bierman02 API accepts PATCH only as YANG-Patch; write the leaves with put instead${reason ? `: ${reason}` : ''}`;
    } else if (answer.status < 400) {
      reason = `unexpected status for ${req.method}${reason ? `: ${reason}` : ''}`;
    }
    return new RestconfError({
      method: req.method,
      url: req.url,
      status: answer.status,
      details: decoded.details,
      reason,
      retryable: isRetryableStatus(answer.status),
      attempts: answer.attempts,
      mayHaveApplied: answer.mayHaveApplied,
    });
  }

  private abortedError(
    req: Prepared,
    attempts: number,
    mayHaveApplied: boolean,
    signal: AbortSignal | undefined,
  ): RestconfError {
    const why = signal?.reason instanceof Error ? signal.reason.message : String(signal?.reason ?? 'aborted');
    const error = new RestconfError({
      method: req.method,
      url: req.url,
      code: 'aborted',
      reason: `the request was aborted (${why})`,
      retryable: false,
      attempts,
      mayHaveApplied,
    });
    if (signal?.reason !== undefined) Object.defineProperty(error, 'cause', { value: signal.reason });
    return error;
  }

  private closedError(req: Prepared, attempts: number, mayHaveApplied: boolean): RestconfError {
    return new RestconfError({
      method: req.method,
      url: req.url,
      code: 'closed',
      reason: 'the RESTCONF client was closed',
      retryable: false,
      attempts,
      mayHaveApplied,
    });
  }
}

function parseBaseUrl(baseUrl: string): { root: string; tls: boolean } {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ConfigError(`RESTCONF base URL "${baseUrl}" is not a URL (expected http(s)://host:port)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`RESTCONF base URL must be http or https, got ${url.protocol}`);
  }
  // Credentials in the URL would end up in every log line and error message that names it.
  if (url.username !== '' || url.password !== '') {
    throw new ConfigError(
      'RESTCONF base URL must not contain credentials; configure a user and password file instead',
    );
  }
  if (url.search !== '' || url.hash !== '')
    throw new ConfigError(`RESTCONF base URL ${url.origin} must not have a query or fragment`);
  return { root: `${url.origin}${url.pathname.replace(/\/+$/, '')}`, tls: url.protocol === 'https:' };
}

function readCaFile(path: string): Buffer {
  try {
    const ca = readFileSync(path);
    if (!ca.toString('latin1').includes('-----BEGIN CERTIFICATE-----')) {
      throw new ConfigError(`TLS CA file ${path} holds no PEM certificate`);
    }
    return ca;
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(
      `cannot read TLS CA file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1)
    throw new ConfigError(`RESTCONF client option ${name} must be a positive integer, got ${value}`);
  return value;
}

function headerRecord(headers: AxiosResponse['headers']): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value === undefined || value === null) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}

/** The Node/axios error code; for axios the cause's code is the specific one. */
function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const cause = (err as { cause?: unknown }).cause;
  const causeCode =
    typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
  if (typeof causeCode === 'string') return causeCode;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}
