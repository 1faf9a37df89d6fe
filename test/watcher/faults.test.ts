/**
 * ODL misbehaving: a refused-connection outage and a shard-leader election window during a
 * burst of 200 pod creations (everything converges afterwards, nothing is lost), and a write
 * ODL refuses with 400 (retried with growing per-key backoff, never in a hot loop, never by
 * the RESTCONF client itself).
 */
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { createRegistry } from '../../src/common/metrics.js';
import {
  createNamespace,
  createNode,
  createPod,
  metricValue,
  readOdl,
  startEnv,
  startTestWatcher,
  waitFor,
  writeCount,
} from './testing.js';

/** A proxy in front of the emulator that answers 400 to writes mentioning `needle`. */
async function rejectingProxy(
  target: string,
  needle: string,
): Promise<{ url: string; rejected: number[]; close(): Promise<void> }> {
  const rejected: number[] = [];
  const targetUrl = new URL(target);
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method !== 'GET' && `${req.url}${body.toString()}`.includes(needle)) {
        rejected.push(Date.now());
        const error = {
          errors: {
            error: [
              { 'error-type': 'protocol', 'error-tag': 'invalid-value', 'error-message': 'rejected by test' },
            ],
          },
        };
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify(error));
        return;
      }
      const upstream = request(
        {
          host: targetUrl.hostname,
          port: targetUrl.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    rejected,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('watcher under ODL faults', () => {
  let cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    cleanups = [];
  });

  it('converges after an outage and an election window during a 200-pod burst, losing nothing', async () => {
    const env = await startEnv({ profile: 'aluminium', dialect: 'rfc8040' });
    cleanups.push(() => env.close());
    await createNode(env, 'node-a', '192.168.20.1', '10.245.1.0/24');
    await createNode(env, 'node-b', '192.168.20.2', '10.245.2.0/24');
    await createNamespace(env, 'burst');
    const watcher = await startTestWatcher(env, { workers: 8 });
    cleanups.push(() => watcher.close());
    await watcher.ready();

    const pods = Array.from({ length: 200 }, (_, i) => ({
      name: `p${i}`,
      node: i % 2 === 0 ? 'node-a' : 'node-b',
      ip: `10.245.${i % 2 === 0 ? 1 : 2}.${10 + Math.floor(i / 2)}`,
    }));
    const creating = (async () => {
      for (const p of pods) await createPod(env, 'burst', p.name, p.node, { ip: p.ip });
    })();
    // ODL goes away (connections refused) while pods are being created ...
    await waitFor(() => writeCount(env) > 10, { what: 'the first writes of the burst' });
    env.emu.faults.outage(2, 'refuse');
    await creating;
    // ... comes back, then its shards elect a leader (500 operation-failed, slowly).
    const before = writeCount(env);
    await waitFor(() => writeCount(env) > before, { what: 'ODL to answer again', timeoutMs: 30_000 });
    env.emu.faults.election(2, 50);

    await waitFor(async () => (await readOdl(env))['vpn-interface'].length === 200, {
      what: '200 vpn-interfaces',
      timeoutMs: 45_000,
    });
    await watcher.idle();
    const odl = await readOdl(env);
    const names = pods.map((p) => `burst:${p.name}`).sort();
    assert.deepEqual(
      odl.interface.map((e) => e.name),
      names,
    );
    assert.deepEqual(
      odl['elan-interface'].map((e) => e.name),
      names,
    );
    assert.deepEqual(
      odl['vpn-interface'].map((e) => [e.name, (e.adjacency as { ip_address: string }[])[0]?.ip_address]),
      pods
        .map((p) => [`burst:${p.name}`, `${p.ip}/32`])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    assert.deepEqual(
      odl['elan-instance'].map((e) => e['elan-instance-name']),
      ['192.168.20.1:burst', '192.168.20.2:burst'],
    );
    assert.deepEqual(
      odl['vpn-instance'].map((e) => e['vpn-instance-name']),
      ['burst'],
    );
    // The faults were really felt: reconciles failed and were retried.
    assert.ok(
      (await metricValue(watcher.registry, 'odlcoe_watcher_reconciles_total', { result: 'error' })) > 0,
    );
  });

  it('retries a write ODL refuses with 400 with growing backoff, not in a hot loop', async () => {
    const env = await startEnv({ profile: 'sodium', dialect: 'rfc8040' });
    cleanups.push(() => env.close());
    const proxy = await rejectingProxy(env.emu.url, 'reject-me');
    cleanups.push(() => proxy.close());
    await createNode(env, 'node-a', '192.168.30.1', '10.246.1.0/24');
    await createNamespace(env, 'apps');
    const registry = createRegistry();
    const watcher = await startTestWatcher(
      env,
      {},
      {
        registry,
        odl: {
          baseUrl: proxy.url,
          auth: { kind: 'basic', user: 'admin', password: 'admin' },
          retry: { maxAttempts: 3, initialMs: 50, maxMs: 200 },
        },
      },
    );
    cleanups.push(() => watcher.close());
    await watcher.ready();
    for (let i = 0; i < 5; i += 1)
      await createPod(env, 'apps', `good-${i}`, 'node-a', { ip: `10.246.1.${10 + i}` });
    await createPod(env, 'apps', 'reject-me', 'node-a', { ip: '10.246.1.99' });

    await waitFor(async () => (await readOdl(env))['vpn-interface'].length === 5, { what: 'the good pods' });
    // Let the refused key fail a few times, then look at how often it was tried.
    await waitFor(() => proxy.rejected.length >= 7, { what: 'seven refusals', timeoutMs: 30_000 });
    const first = proxy.rejected[0] ?? Date.now();
    const elapsedMs = Date.now() - first;
    const refusals = proxy.rejected.length;
    // Per-key backoff doubles from 5 ms: n refusals need at least 5·(2^(n-1)−1) ms. A hot loop
    // would have made hundreds in that time.
    assert.ok(refusals <= Math.log2(elapsedMs / 5 + 1) + 3, `${refusals} refusals in ${elapsedMs} ms`);
    // The queue counted the retries; the RESTCONF client never retried a 400 on its own.
    const queueRetries = await metricValue(registry, 'odlcoe_workqueue_retries_total');
    assert.ok(queueRetries >= refusals - 1, `queue retries ${queueRetries}, refusals ${refusals}`);
    assert.equal(await metricValue(registry, 'odlcoe_restconf_retries_total', { method: 'POST' }), 0);
    const odl = await readOdl(env);
    assert.ok(!odl.interface.some((e) => e.name === 'apps:reject-me'));
  });
});
