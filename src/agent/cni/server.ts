/**
 * The unix socket the shim talks to: odlcoe's plugin binary is a thin shim (cni/odlcoe.ts), so
 * the work runs in the long-lived agent, which keeps its OVSDB connection, informer and locks
 * between requests. This is the HTTP end of that socket, root-only; cni/service.ts answers.
 */
import { chmod, lstat, mkdir, rename, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { dirname } from 'node:path';
import type { Logger } from '../../common/log.js';
import { errorMessage } from '../../common/log.js';
import type { CniErrorJson } from './error.js';
import type { CniEnv } from './request.js';
import { CNI_ENV_KEYS } from './request.js';

/**
 * The agent end of the shim's socket protocol (docs/cni.md): `POST /v1/cni` with
 * `{"env": {CNI_*}, "config": "<stdin text>"}`; the answer is always HTTP 200 with
 * `{"result": {...}}`, `{}` (success without output) or `{"error": {cniVersion, code, msg,
 * details}}`. Anything else (400, 404, 405, 413) is a protocol error between shim and agent.
 */
export type CniAnswer = { result?: unknown } | { error: CniErrorJson };

export type CniRequestHandler = (env: CniEnv, stdin: string) => Promise<CniAnswer>;

export interface CniServerOptions {
  socketPath: string;
  handle: CniRequestHandler;
  logger: Logger;
}

export interface CniServer {
  close(): Promise<void>;
}

/** Network configs are a few KiB; this only stops a runaway client. */
const MAX_BODY_BYTES = 1024 * 1024;

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The envelope, checked; a string describing the problem when it is malformed. */
export function parseEnvelope(text: string): { env: CniEnv; config: string } | string {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return 'body is not JSON';
  }
  const o = (typeof doc === 'object' && doc !== null ? doc : {}) as { env?: unknown; config?: unknown };
  if (typeof o.env !== 'object' || o.env === null || Array.isArray(o.env)) return 'env must be an object';
  if (typeof o.config !== 'string') return 'config must be the network config text';
  const env: CniEnv = {};
  for (const key of CNI_ENV_KEYS) {
    const value = (o.env as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (typeof value !== 'string') return `env.${key} must be a string`;
    env[key] = value;
  }
  return { env, config: o.config };
}

/**
 * Listens on the unix socket, readable and writable by root only. The socket is bound under
 * a temporary name, chmod-ed to 0600 and then renamed into place, so that no other user can
 * connect in the moment between bind and chmod. A socket left by an earlier agent is
 * replaced; any other kind of file at the path is an error (never deleted).
 */
export async function startCniServer(options: CniServerOptions): Promise<CniServer> {
  const { socketPath, handle, logger } = options;
  await mkdir(dirname(socketPath), { recursive: true, mode: 0o700 });
  try {
    const st = await lstat(socketPath);
    if (!st.isSocket()) throw new Error(`${socketPath} exists and is not a socket; refusing to replace it`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const server: Server = createServer((req, res) => {
    if (req.url !== '/v1/cni') return send(res, 404, { message: 'not found' });
    if (req.method !== 'POST') return send(res, 405, { message: 'method not allowed' });
    readBody(req)
      .then(async (text) => {
        if (text === undefined)
          return send(res, 413, { message: `request body over ${MAX_BODY_BYTES} bytes` });
        const envelope = parseEnvelope(text);
        if (typeof envelope === 'string') return send(res, 400, { message: envelope });
        send(res, 200, await handle(envelope.env, envelope.config));
      })
      .catch((err: unknown) => {
        logger.error('CNI request failed outside the handler', { error: errorMessage(err) });
        if (!res.headersSent) send(res, 500, { message: errorMessage(err) });
      });
  });
  // Requests may legitimately take long (an ADD waiting on OVS): the service has its own deadline.
  server.requestTimeout = 0;
  server.headersTimeout = 10_000;
  const tmp = `${socketPath}.${process.pid}.tmp`;
  await rm(tmp, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(tmp, () => {
      server.off('error', reject);
      resolve();
    });
  });
  await chmod(tmp, 0o600);
  await rename(tmp, socketPath);
  const { ino } = await lstat(socketPath);
  logger.info('CNI server listening', { socket: socketPath });
  return {
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // The socket file was renamed, so the server cannot unlink it itself; remove it unless
      // a newer agent has put its own socket there meanwhile.
      try {
        if ((await lstat(socketPath)).ino === ino) await rm(socketPath, { force: true });
      } catch {
        // Already gone.
      }
      await closed;
    },
  };
}
