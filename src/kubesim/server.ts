/**
 * odlcoe-kubesim: a Kubernetes API server for tests and the sandbox. It keeps objects in
 * memory and serves the core, discovery, networking and coordination resources odlcoe reads
 * with the API server's semantics for resourceVersion, optimistic concurrency, selectors,
 * paging, watches, bookmarks and 410 Gone, plus fault injection for the failures informers
 * must survive. See docs/kubesim.md.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { sleep } from '../common/backoff.js';
import type { Logger } from '../common/log.js';
import { errorMessage, silentLogger } from '../common/log.js';
import type { Reply } from './api.js';
import { serveResource, verbOf } from './api.js';
import { coreVersions, groupList, versionInfo } from './discovery.js';
import type { KubeSimFault } from './faults.js';
import { FaultState, parseFault } from './faults.js';
import { kubeconfigText } from './kubeconfig.js';
import { openApiRoot } from './openapi.js';
import { isObject } from './patch.js';
import { NAMESPACE_TYPE } from './resources.js';
import { routePath } from './route.js';
import { ObjectStore } from './store.js';
import { ApiError, badRequest, notFoundPath, unauthorized } from './status.js';
import { selfSignedCertificate } from './tls.js';
import { WatchHub } from './watch.js';

export type { KubeSimFault } from './faults.js';

export interface KubeSimOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (an ephemeral port, for tests); the CLI defaults to 6443. */
  port?: number;
  /** Bearer token every request must carry (401 without it); unset: no authentication. */
  token?: string;
  /** Serve HTTPS with a fresh self-signed certificate (needs `openssl`); the kubeconfig trusts it. */
  tls?: boolean;
  /** Watch events retained (default 10,000); a watch or continuation from an older version gets 410 Gone. */
  historyLimit?: number;
  /** Interval of BOOKMARK events on watches that allow them (default 3000 ms). */
  bookmarkIntervalMs?: number;
  logger?: Logger;
  /**
   * API groups not served, as in a cluster without their CRDs (`k8s.cni.cncf.io`: no Multus):
   * discovery leaves them out and every path under `/apis/<group>` is 404.
   */
  withoutGroups?: readonly string[];
}

export interface KubeSimStats {
  /** Watch streams open now (silent ones included). */
  watches: number;
  /** Requests served since start, by `<verb> <resource>[/<subresource>]` or `<METHOD> <path>`. */
  requests: Record<string, number>;
}

export interface KubeSim {
  url: string;
  port: number;
  /** The PEM certificate to trust when serving TLS, else undefined. */
  ca: string | undefined;
  /** YAML kubeconfig pointing at this server (with the token when one is set). */
  kubeconfig(): string;
  writeKubeconfig(path: string): void;
  /** Same as POST /_sim/faults; throws on an invalid fault. */
  fault(f: KubeSimFault): void;
  stats(): KubeSimStats;
  /** Same as POST /_sim/seed: creates every item in order, all or nothing. */
  seed(items: readonly unknown[]): void;
  close(): Promise<void>;
}

export const DEFAULT_HISTORY_LIMIT = 10_000;
export const DEFAULT_BOOKMARK_INTERVAL_MS = 3_000;
/** The namespaces every cluster starts with. */
export const INITIAL_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'] as const;

/** The API server's request body limit; a seed may be much larger. */
const MAX_BODY_BYTES = 3 * 1024 * 1024;
const MAX_SEED_BYTES = 512 * 1024 * 1024;
const MAX_WATCH_BUFFER_BYTES = 64 * 1024 * 1024;
/** Paths answered without a token, as the API server's public-info role allows. */
const PUBLIC_PATHS = new Set(['/version', '/healthz', '/livez', '/readyz']);

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new ApiError(413, 'RequestEntityTooLarge', `the request body is larger than ${limit} bytes`));
        request.resume();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function sendJson(
  response: ServerResponse,
  code: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(code, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-cache, private',
    ...headers,
  });
  response.end(text);
}

export async function startKubeSim(options: KubeSimOptions = {}): Promise<KubeSim> {
  const host = options.host ?? '127.0.0.1';
  const logger = options.logger ?? silentLogger();
  const token = options.token;
  const withoutGroups = new Set(options.withoutGroups ?? []);
  if (token !== undefined && token === '') throw new Error('kubesim: token must not be empty');
  const bookmarkIntervalMs = options.bookmarkIntervalMs ?? DEFAULT_BOOKMARK_INTERVAL_MS;
  if (!Number.isInteger(bookmarkIntervalMs) || bookmarkIntervalMs < 10)
    throw new Error(`kubesim: bookmarkIntervalMs must be an integer >= 10, got ${bookmarkIntervalMs}`);

  const store = new ObjectStore(options.historyLimit ?? DEFAULT_HISTORY_LIMIT);
  for (const name of INITIAL_NAMESPACES) store.create(NAMESPACE_TYPE, '', { metadata: { name } });
  const hub = new WatchHub(store, { bookmarkIntervalMs, maxBufferedBytes: MAX_WATCH_BUFFER_BYTES, logger });
  const faults = new FaultState();
  const requests: Record<string, number> = {};
  const closing = new AbortController();
  let serverAddress = '';

  const tokenDigest = token === undefined ? undefined : digest(token);
  const authorized = (request: IncomingMessage): boolean => {
    if (tokenDigest === undefined) return true;
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header);
    return match !== null && timingSafeEqual(digest((match[1] as string).trim()), tokenDigest);
  };

  const applyFault = (value: unknown): void => {
    const fault = parseFault(value);
    faults.apply(fault);
    if (fault.action === 'close-watches') hub.closeAll();
    if (fault.action === 'compact') store.compact();
    logger.info('kubesim fault', { fault });
  };

  const seed = (items: readonly unknown[]): number => store.seed(items).length;

  const stats = (): KubeSimStats => ({ watches: hub.count, requests: { ...requests } });

  async function serveControl(request: IncomingMessage, path: string): Promise<Reply> {
    const method = request.method ?? 'GET';
    if (path === '/_sim/stats' && method === 'GET') return { code: 200, body: stats() };
    if (path === '/_sim/faults' && method === 'GET') return { code: 200, body: faults.describe() };
    if (path === '/_sim/faults' && method === 'POST') {
      applyFault(parseBody(await readBody(request, MAX_BODY_BYTES)));
      return { code: 200, body: faults.describe() };
    }
    if (path === '/_sim/seed' && method === 'POST') {
      const body = parseBody(await readBody(request, MAX_SEED_BYTES));
      if (!isObject(body) || !Array.isArray(body.items))
        throw badRequest('seed body must be {"items": [objects...]}');
      const created = seed(body.items);
      return { code: 200, body: { created, resourceVersion: String(store.resourceVersion) } };
    }
    throw notFoundPath();
  }

  function parseBody(body: Buffer): unknown {
    try {
      return JSON.parse(body.toString('utf8'));
    } catch (err) {
      throw badRequest(`the request body is not valid JSON: ${errorMessage(err)}`);
    }
  }

  async function serveApi(
    request: IncomingMessage,
    response: ServerResponse,
    url: URL,
  ): Promise<Reply | undefined> {
    const method = request.method ?? 'GET';
    const group = /^\/apis\/([^/]+)/.exec(url.pathname)?.[1];
    if (group !== undefined && withoutGroups.has(group)) {
      requests[`${method} ${url.pathname}`] = (requests[`${method} ${url.pathname}`] ?? 0) + 1;
      throw notFoundPath();
    }
    const route = routePath(url.pathname);
    let key: string;
    let verb: ReturnType<typeof verbOf> | undefined;
    if (route.kind === 'resource') {
      verb = verbOf(route, method, url.searchParams);
      key = `${verb} ${route.resource.plural}${route.subresource ? `/${route.subresource}` : ''}`;
    } else {
      key = `${method} ${url.pathname}`;
    }
    requests[key] = (requests[key] ?? 0) + 1;

    if (faults.latencyMs > 0) await sleep(faults.latencyMs, closing.signal);
    const forced = faults.forcedError();
    if (forced?.status === 429) {
      throw new ApiError(429, 'TooManyRequests', 'Too many requests, please try again later.', {
        retryAfterSeconds: forced.remainingSeconds,
      });
    }
    if (forced?.status === 500)
      throw new ApiError(
        500,
        'InternalError',
        'Internal error occurred: injected by kubesim fault "errors"',
        {},
      );

    if (route.kind === 'resource' && verb !== undefined) {
      return serveResource(
        store,
        hub,
        {
          route,
          verb,
          query: url.searchParams,
          contentType: request.headers['content-type'],
          accept: request.headers.accept,
          body: () => readBody(request, MAX_BODY_BYTES),
          silentWatch: faults.silentWatches(),
        },
        response,
      );
    }
    if (method !== 'GET')
      throw new ApiError(
        405,
        'MethodNotAllowed',
        `the server does not allow this method on the requested resource (${method})`,
        {},
      );
    switch (route.kind) {
      case 'version':
        return { code: 200, body: versionInfo() };
      case 'core-versions':
        return { code: 200, body: coreVersions(serverAddress) };
      case 'groups':
        return { code: 200, body: groupList(withoutGroups) };
      case 'document':
        return { code: 200, body: route.body };
      case 'openapi-v3-root':
        return { code: 200, body: openApiRoot() };
    }
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const started = performance.now();
    const url = new URL(request.url ?? '/', 'http://kubesim.invalid');
    const path = url.pathname;
    try {
      let reply: Reply | undefined;
      if (path === '/healthz' || path === '/livez' || path === '/readyz') {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end('ok');
        return;
      }
      if (!PUBLIC_PATHS.has(path) && !authorized(request)) throw unauthorized();
      if (path.startsWith('/_sim/')) reply = await serveControl(request, path);
      else reply = await serveApi(request, response, url);
      if (reply) sendJson(response, reply.code, reply.body);
    } catch (err) {
      if (response.headersSent) {
        response.destroy();
      } else if (err instanceof ApiError) {
        const retry =
          err.code === 429 && err.details?.retryAfterSeconds !== undefined
            ? { 'retry-after': String(err.details.retryAfterSeconds) }
            : undefined;
        sendJson(response, err.code, err.toStatus(), retry);
      } else if (closing.signal.aborted) {
        response.destroy();
      } else {
        logger.error('kubesim request failed', { method: request.method, path, error: errorMessage(err) });
        sendJson(
          response,
          500,
          new ApiError(500, 'InternalError', `Internal error occurred: ${errorMessage(err)}`, {}).toStatus(),
        );
      }
    } finally {
      logger.debug('kubesim request', {
        method: request.method,
        path,
        query: url.search,
        code: response.statusCode,
        ms: Math.round(performance.now() - started),
      });
    }
  }

  const certificate = options.tls === true ? await selfSignedCertificate(host) : undefined;
  const listener = (request: IncomingMessage, response: ServerResponse) => {
    void handle(request, response);
  };
  const server: Server = certificate
    ? createTlsServer({ cert: certificate.cert, key: certificate.key }, listener)
    : createServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const url = `${certificate ? 'https' : 'http'}://${urlHost}:${port}`;
  const ca = certificate?.cert;
  serverAddress = `${urlHost}:${port}`;

  let closed: Promise<void> | undefined;
  return {
    url,
    port,
    ca,
    kubeconfig: () => kubeconfigText(url, token, ca),
    writeKubeconfig: (path: string) => writeFileSync(path, kubeconfigText(url, token, ca), { mode: 0o600 }),
    fault: applyFault,
    stats,
    seed: (items) => {
      seed(items);
    },
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        closing.abort(new Error('kubesim closing'));
        hub.dispose();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
