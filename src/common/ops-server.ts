import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { LivenessReport } from './liveness.js';
import type { Logger } from './log.js';
import { errorMessage } from './log.js';

/** One named readiness condition: `ok` plus a short human reason when it is not. */
export interface ReadinessCheck {
  name: string;
  check: () => boolean | Promise<boolean>;
}

export interface OpsServerOptions {
  host?: string;
  port: number;
  registry: Registry;
  readiness?: ReadinessCheck[];
  /**
   * Liveness: false (or an unhealthy report) when the daemon is wedged and should be
   * restarted. A report is served as JSON, naming the parts that are down.
   */
  liveness?: () => boolean | LivenessReport;
  logger: Logger;
}

export interface OpsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * The operations endpoint every daemon serves: `/metrics` (Prometheus text format),
 * `/healthz` (the process can still do its job) and `/readyz` (every readiness check passes; the body
 * names each check so `curl` tells an operator what is missing).
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const { registry, readiness = [], liveness = () => true, logger } = options;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', 'method not allowed\n');
    if (path === '/metrics') {
      registry
        .metrics()
        .then((text) => send(200, registry.contentType, text))
        .catch((err: unknown) => send(500, 'text/plain', `${errorMessage(err)}\n`));
      return;
    }
    if (path === '/healthz') {
      const live = liveness();
      if (typeof live !== 'boolean')
        return send(live.healthy ? 200 : 503, 'application/json', `${JSON.stringify(live)}\n`);
      return live ? send(200, 'text/plain', 'ok\n') : send(503, 'text/plain', 'unhealthy\n');
    }
    if (path === '/readyz') {
      Promise.all(
        readiness.map(async ({ name, check }) => {
          try {
            return { name, ok: await check() };
          } catch (err) {
            return { name, ok: false, error: errorMessage(err) };
          }
        }),
      )
        .then((results) => {
          const ready = results.every((r) => r.ok);
          send(ready ? 200 : 503, 'application/json', `${JSON.stringify({ ready, checks: results })}\n`);
        })
        .catch((err: unknown) => send(500, 'text/plain', `${errorMessage(err)}\n`));
      return;
    }
    send(404, 'text/plain', 'not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  logger.info('ops server listening', { port, paths: ['/metrics', '/healthz', '/readyz'] });
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
