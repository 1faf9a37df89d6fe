import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage, RequestOptions } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { abortScope } from './abort-scope.js';

/**
 * The thin HTTP layer under the informers and the leader elector.
 *
 * Authentication, TLS and proxies come from client-node's `KubeConfig.applyToHTTPSOptions`
 * (token files are re-read, exec plugins refreshed, client certificates and CA applied, an
 * `http:` server refused unless the kubeconfig says `insecure-skip-tls-verify`), so this
 * honours every kubeconfig client-node understands. The requests themselves are plain
 * `node:http(s)` because client-node 1.x gives no handle on them: its `Watch` cannot be
 * aborted until response headers arrive (a half-dead API server hangs it forever), drops
 * undecodable lines silently, and its generated clients need one typed class per resource
 * and serialize Lease `MicroTime` fields in a format the API server rejects. Here every
 * request has an abort signal and a deadline, and every failure says what went wrong.
 */

/** An error answer from the API server, with the `Status` it sent when there was one. */
export class KubeApiError extends Error {
  override name = 'KubeApiError';
  constructor(
    readonly status: number,
    /** `Status.reason`, e.g. `Expired`, `Conflict`, `AlreadyExists`, `NotFound`. */
    readonly reason: string,
    message: string,
    /** The server's `Retry-After` (429, 503), in milliseconds. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** 410 Gone: the resourceVersion (or list continue token) is older than the server's history. */
export function isGone(err: unknown): boolean {
  return err instanceof KubeApiError && err.status === 410;
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptionsK8s {
  query?: Query;
  body?: unknown;
  /** Content type of `body`; default `application/json` (patches need their own). */
  contentType?: string;
  signal?: AbortSignal;
  /** Whole-request deadline (headers and body); default 60 s, the API server's own limit. */
  timeoutMs?: number;
}

/** A Kubernetes `Status` object as the API server sends it in error bodies and watch ERROR events. */
export interface KubeStatus {
  kind?: string;
  code?: number;
  reason?: string;
  message?: string;
}

export class KubeClient {
  static readonly DEFAULT_TIMEOUT_MS = 60_000;
  private readonly server: URL;

  constructor(private readonly kubeConfig: KubeConfig) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster (check current-context)');
    try {
      this.server = new URL(cluster.server);
    } catch {
      throw new Error(`kubeconfig cluster "${cluster.name}" has an invalid server URL`);
    }
  }

  /** The API server's base URL (scheme, host, port and any path prefix). */
  get serverUrl(): string {
    return this.server.href;
  }

  /** One JSON request/response. Non-2xx answers throw `KubeApiError`. */
  async request<T>(method: string, path: string, options: RequestOptionsK8s = {}): Promise<T> {
    const timeoutMs = Math.max(1, options.timeoutMs ?? KubeClient.DEFAULT_TIMEOUT_MS);
    const scope = abortScope(options.signal, timeoutMs);
    let res: IncomingMessage;
    let text: string;
    try {
      res = await this.send(method, path, options, scope.signal);
      text = await readBody(res, scope.signal);
    } catch (err) {
      if (scope.timedOut()) {
        throw new Error(`${method} ${path}: no complete answer within ${Math.round(timeoutMs)} ms`, {
          cause: err,
        });
      }
      throw err;
    } finally {
      scope.dispose();
    }
    if (res.statusCode === undefined || res.statusCode < 200 || res.statusCode > 299) {
      throw apiError(method, path, res, text);
    }
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new Error(`${method} ${path}: response is not JSON (${text.length} bytes)`);
    }
  }

  /**
   * Opens a streaming GET (a watch) and resolves once the server answered 200; the caller
   * reads the body and ends it through `signal`. Non-200 answers throw `KubeApiError`.
   */
  async stream(path: string, query: Query, signal: AbortSignal): Promise<IncomingMessage> {
    const res = await this.send('GET', path, { query }, signal);
    if (res.statusCode !== 200) {
      throw apiError('GET', path, res, await readBody(res, signal));
    }
    res.setEncoding('utf8');
    return res;
  }

  private async send(
    method: string,
    path: string,
    {
      query,
      body,
      contentType = 'application/json',
    }: Pick<RequestOptionsK8s, 'query' | 'body' | 'contentType'>,
    signal: AbortSignal,
  ): Promise<IncomingMessage> {
    signal.throwIfAborted();
    const url = this.url(path, query);
    // Rebuilt per request on purpose: token files rotate and exec credentials expire.
    const auth: https.RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(auth);
    signal.throwIfAborted();
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string | string[] | number> = { accept: 'application/json' };
    for (const [name, value] of Object.entries(auth.headers ?? {})) {
      if (value !== undefined) headers[name] = value;
    }
    if (payload) {
      headers['content-type'] = contentType;
      headers['content-length'] = payload.length;
    }
    const requestOptions: RequestOptions = { method, headers, signal };
    if (auth.agent !== undefined) requestOptions.agent = auth.agent;
    if (auth.auth) requestOptions.auth = auth.auth;
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = transport.request(url, requestOptions, resolve);
      req.on('error', (err) => reject(signal.aborted ? signal.reason : err));
      req.end(payload);
    });
  }

  private url(path: string, query: Query | undefined): URL {
    if (!path.startsWith('/')) throw new Error(`API path must start with "/": ${path}`);
    const base = this.server.href.replace(/\/+$/, '');
    const url = new URL(base + path);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }
}

function readBody(res: IncomingMessage, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', (err) => reject(signal.aborted ? signal.reason : err));
    // A connection cut mid-body ends in 'close' without 'end'.
    res.on('close', () => {
      if (!res.complete) reject(signal.aborted ? signal.reason : new Error('connection closed mid-response'));
    });
  });
}

function apiError(method: string, path: string, res: IncomingMessage, text: string): KubeApiError {
  const status = res.statusCode ?? 0;
  const retryAfter = Number(res.headers['retry-after']);
  let parsed: KubeStatus | undefined;
  try {
    parsed = JSON.parse(text) as KubeStatus;
  } catch {
    parsed = undefined;
  }
  const reason = parsed?.reason ?? http.STATUS_CODES[status] ?? 'Unknown';
  const detail = parsed?.message ?? (text.trim().slice(0, 200) || reason);
  return new KubeApiError(
    status,
    reason,
    `${method} ${path.split('?')[0]}: ${status} ${reason}: ${detail}`,
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined,
  );
}
