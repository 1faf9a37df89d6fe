/**
 * Losing the lease stops writing at once, including a write already started. A DELETE that
 * began just before the lease was lost and is retrying through an ODL outage (the client's
 * own retries: up to 10 attempts, waits up to 15 s) must be abandoned with the term, not land
 * once ODL recovers, possibly after the new leader wrote the same entry.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createRegistry } from '../../src/common/metrics.js';
import type { Watcher } from '../../src/watcher/watcher.js';
import {
  createNamespace,
  createNode,
  createPod,
  deletePod,
  metricValue,
  readOdl,
  setPodIp,
  startEnv,
  startTestWatcher,
  waitFor,
  writeCount,
  type Env,
} from './testing.js';

const LEASE = 'odlcoe-lease-loss';

describe('watcher losing its lease during a retried write', () => {
  let env: Env;
  let proxy: http.Server;
  let watcher: Watcher | undefined;
  const registry = createRegistry();
  /** While set, the proxy in front of ODL answers every DELETE 503 (an ODL outage). */
  let failDeletes = false;
  let refusedDeletes = 0;

  before(async () => {
    env = await startEnv({ profile: 'sodium', dialect: 'rfc8040' });
    const target = new URL(env.emu.url);
    proxy = http.createServer((req, res) => {
      if (failDeletes && req.method === 'DELETE') {
        refusedDeletes += 1;
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end('{}');
        return;
      }
      const upstream = http.request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  });

  after(async () => {
    await watcher?.close({ abrupt: true });
    proxy?.closeAllConnections();
    await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
    await env?.close();
  });

  it('abandons the retrying DELETE when another replica takes the lease', async () => {
    watcher = await startTestWatcher(
      env,
      { gracePeriodMs: 60_000 },
      {
        // The production retry policy: without the term's signal its retries outlive the term.
        odl: {
          baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
          auth: { kind: 'basic', user: 'admin', password: 'admin' },
          timeoutMs: 10_000,
        },
        registry,
        leaderElection: {
          namespace: 'default',
          name: LEASE,
          identity: 'me',
          leaseDurationMs: 3_000,
          renewDeadlineMs: 2_000,
          retryPeriodMs: 500,
        },
      },
    );
    const w = watcher;
    await createNode(env, 'node-a', '192.168.1.1', '10.244.1.0/24');
    await createNamespace(env, 'alpha');
    await w.ready();
    await createPod(env, 'alpha', 'p1', 'node-a');
    await setPodIp(env, 'alpha', 'p1', '10.244.1.2');
    await waitFor(async () => (await readOdl(env))['vpn-interface'].length === 1, {
      what: 'p1 converged',
      timeoutMs: 20_000,
    });
    await w.idle();

    // ODL starts refusing DELETEs; deleting the pod puts a DELETE into the client's retries.
    failDeletes = true;
    const podReconciles = () => metricValue(registry, 'odlcoe_watcher_reconciles_total', { kind: 'pod' });
    const podErrors = () =>
      metricValue(registry, 'odlcoe_watcher_reconciles_total', { kind: 'pod', result: 'error' });
    await deletePod(env, 'alpha', 'p1');
    await waitFor(() => refusedDeletes >= 1, { what: 'the DELETE to meet the outage', timeoutMs: 20_000 });
    const reconcilesBefore = await podReconciles();
    const errorsBefore = await podErrors();

    // Another replica takes the lease.
    const lease = await env.coordination.readNamespacedLease({ name: LEASE, namespace: 'default' });
    assert.equal(lease.spec?.holderIdentity, 'me');
    lease.spec = {
      ...lease.spec,
      holderIdentity: 'other-replica',
      renewTime: new Date(),
      leaseDurationSeconds: 3600,
    };
    await env.coordination.replaceNamespacedLease({ name: LEASE, namespace: 'default', body: lease });
    await waitFor(() => !w.isLeader(), { what: 'leadership lost', timeoutMs: 20_000 });
    const writesAtLoss = writeCount(env);

    // The reconcile ends while ODL still refuses the DELETE: its write was abandoned, not
    // left retrying. (Without the term's signal in the client it keeps retrying until ODL
    // recovers, and only then ends, with the DELETE landed.)
    await waitFor(async () => (await podReconciles()) > reconcilesBefore, {
      what: 'the pod reconcile to end after leadership was lost',
      timeoutMs: 20_000,
    });
    assert.equal(await podErrors(), errorsBefore + 1, 'the abandoned reconcile ended as an error');
    const refusedAtEnd = refusedDeletes;

    // ODL recovers. Nothing of the old term reaches it: the entry stays for the new leader.
    failDeletes = false;
    assert.equal(writeCount(env), writesAtLoss, 'no write reached ODL after leadership was lost');
    assert.equal(refusedDeletes, refusedAtEnd, 'no DELETE attempt after the reconcile ended');
    assert.equal((await readOdl(env))['vpn-interface'].length, 1, 'the vpn-interface is still in ODL');
    assert.equal(w.isLeader(), false);
  });
});
