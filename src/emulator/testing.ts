import { request as httpRequest, Agent as HttpAgent } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import { silentLogger } from '../common/log.js';
import { startEmulator, type Emulator, type EmulatorOptions } from './server.js';

/**
 * A plain HTTP client for the emulator's own tests (real sockets, keep-alive, optional CA for
 * TLS), and a start helper with a silent logger. Not used by production code.
 */
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): unknown;
}

export interface CallOptions {
  /** `user:password`; `false` sends no Authorization header. Default admin:admin. */
  auth?: string | false;
  headers?: Record<string, string>;
  ca?: Buffer;
}

const httpAgent = new HttpAgent({ keepAlive: true });

export function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  options: CallOptions = {},
): Promise<Reply> {
  const url = new URL(path, base);
  const headers: Record<string, string> = { ...options.headers };
  if (options.auth !== false)
    headers.Authorization = `Basic ${Buffer.from(options.auth ?? 'admin:admin').toString('base64')}`;
  let payload: string | undefined;
  if (body !== undefined) {
    payload = typeof body === 'string' ? body : JSON.stringify(body);
    headers['Content-Type'] ??= 'application/json';
  }
  const https = url.protocol === 'https:';
  const send = https ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      url,
      {
        method,
        headers,
        agent: https ? new HttpsAgent({ ca: options.ca }) : httpAgent,
        // Paths are sent exactly as written (percent-encoding included).
        path: path,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: () => JSON.parse(text) as unknown,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

export function startQuiet(options: Partial<EmulatorOptions> = {}): Promise<Emulator> {
  return startEmulator({ profile: 'sodium', port: 0, logger: silentLogger(), ...options });
}

/** The error-tag of an ODL error body. */
export function errorTag(reply: Reply): string | undefined {
  const body = reply.json() as { errors?: { error?: { 'error-tag'?: string }[] } };
  return body.errors?.error?.[0]?.['error-tag'];
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}
