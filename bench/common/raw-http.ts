/**
 * The least an HTTP client can do, as a benchmark's baseline: node:http on a keep-alive agent,
 * prebuilt headers, no queue, no retries, no decoding.
 */
import http from 'node:http';
import type { Dialect } from '../../src/restconf/path.js';

/** The RESTCONF data root (config datastore) and media type of `dialect`, as ODL serves them. */
export function restconfData(baseUrl: string, dialect: Dialect): { root: string; contentType: string } {
  return dialect === 'bierman02'
    ? { root: `${baseUrl}/restconf/config/`, contentType: 'application/json' }
    : { root: `${baseUrl}/rests/data/`, contentType: 'application/yang-data+json' };
}

/** One request; resolves with the status once the answer is read (and discarded), rejects on a socket error. */
export function rawRequest(
  url: string,
  options: { method: string; agent: http.Agent; headers: http.OutgoingHttpHeaders },
  body?: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, options, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** One JSON request (seeding the simulator, reading the emulator's counters); rejects on a status ≥ 300. */
export function requestJson(
  url: string,
  method: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<unknown> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        headers: {
          ...headers,
          ...(payload !== undefined
            ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(payload)) }
            : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 0) >= 300)
            reject(new Error(`${method} ${url}: ${res.statusCode} ${text.slice(0, 300)}`));
          else
            try {
              resolve(text === '' ? undefined : JSON.parse(text));
            } catch (err) {
              reject(err instanceof Error ? err : new Error(String(err)));
            }
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
