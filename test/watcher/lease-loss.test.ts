/**
 * Losing the lease stops writing at once, including a write already started. A DELETE that
 * began just before the lease was lost and is retrying through an ODL outage (the client's
 * own retries: up to 10 attempts, waits up to 15 s) must be abandoned with the term, not land
 * once ODL recovers, possibly after the new leader wrote the same entry.
 *
 * A term that loses the lease while it still reads ODL (its start) starts no work queue when
 * the read answers: the next term, once the lease is back, is the only one that runs.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createRegistry } from '../../src/common/metrics.js';
import type { Watcher, WatcherOptions } from '../../src/watcher/watcher.js';
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

/**
 * A proxy in front of ODL: `intercept` answers or keeps a request itself (returns true), or
 * lets it through (false); `forward` sends one on to ODL, also later.
 */
async function startOdlProxy(
  odlUrl: string,
  intercept: (req: http.IncomingMessage, res: http.ServerResponse, forward: () => void) => boolean,
): Promise<http.Server> {
  const target = new URL(odlUrl);
  const proxy = http.createServer((req, res) => {
    const forward = () => {
      const upstream = http.request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    };
    if (!intercept(req, res, forward)) forward();
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return proxy;
}

async function stopProxy(proxy: http.Server | undefined): Promise<void> {
  proxy?.closeAllConnections();
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
}

function viaProxy(proxy: http.Server): WatcherOptions['odl'] {
  return {
    baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    auth: { kind: 'basic', user: 'admin', password: 'admin' },
    timeoutMs: 30_000,
  };
}

/**
 * Another replica holds the Lease (for an hour), or nobody does (released). Read and replaced
 * again when the watcher renewed it in between (409).
 */
async function setHolder(env: Env, name: string, holder: 'other-replica' | ''): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    const lease = await env.coordination.readNamespacedLease({ name, namespace: 'default' });
    lease.spec = {
      ...lease.spec,
      holderIdentity: holder,
      renewTime: new Date(),
      leaseDurationSeconds: holder === '' ? 1 : 3600,
    };
    try {
      await env.coordination.replaceNamespacedLease({ name, namespace: 'default', body: lease });
      return;
    } catch (err) {
      if ((err as { code?: number }).code !== 409 || attempt >= 10) throw err;
    }
  }
}

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
    proxy = await startOdlProxy(env.emu.url, (req, res) => {
      if (!failDeletes || req.method !== 'DELETE') return false;
      refusedDeletes += 1;
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{}');
      return true;
    });
  });

  after(async () => {
    await watcher?.close({ abrupt: true });
    await stopProxy(proxy);
    await env?.close();
  });

  it('abandons the retrying DELETE when another replica takes the lease', async () => {
    watcher = await startTestWatcher(
      env,
      { gracePeriodMs: 60_000 },
      {
        // The production retry policy: without the term's signal its retries outlive the term.
        odl: { ...viaProxy(proxy), timeoutMs: 10_000 },
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
    await setHolder(env, LEASE, 'other-replica');
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

describe('watcher losing its lease while its term reads ODL', () => {
  const LEASE_AT_START = 'odlcoe-lease-loss-at-start';
  let env: Env;
  let proxy: http.Server;
  let watcher: Watcher | undefined;
  /**
   * While set, the proxy keeps the term's read of ODL (GETs of its lists; the module list read
   * at start-up passes) unanswered in `held`.
   */
  let holdReads = true;
  const held: (() => void)[] = [];

  before(async () => {
    env = await startEnv({ profile: 'sodium', dialect: 'rfc8040' });
    proxy = await startOdlProxy(env.emu.url, (req, _res, forward) => {
      if (!holdReads || req.method !== 'GET' || req.url?.includes('ietf-yang-library')) return false;
      held.push(forward);
      return true;
    });
  });

  after(async () => {
    await watcher?.close({ abrupt: true });
    await stopProxy(proxy);
    await env?.close();
  });

  it(
    'starts no work queue for the ended term, and the next term converges',
    { timeout: 120_000 },
    async () => {
      const fatal: Error[] = [];
      watcher = await startTestWatcher(
        env,
        {},
        {
          odl: viaProxy(proxy),
          registry: createRegistry(),
          leaderElection: {
            namespace: 'default',
            name: LEASE_AT_START,
            identity: 'me',
            leaseDurationMs: 3_000,
            renewDeadlineMs: 2_000,
            retryPeriodMs: 500,
          },
          onFatal: (err) => fatal.push(err),
        },
      );
      const w = watcher;
      await createNode(env, 'node-a', '192.168.2.1', '10.244.2.0/24');
      await createNamespace(env, 'beta');
      await waitFor(() => held.length > 0, { what: 'the first term to read ODL', timeoutMs: 20_000 });

      // The lease goes to another replica while the read is unanswered, and comes back.
      await setHolder(env, LEASE_AT_START, 'other-replica');
      await waitFor(() => !w.isLeader(), { what: 'leadership lost', timeoutMs: 20_000 });
      await setHolder(env, LEASE_AT_START, '');
      await waitFor(() => w.isLeader(), { what: 'leadership regained', timeoutMs: 20_000 });

      // The first term's read answers only now, after its term ended.
      holdReads = false;
      for (const forward of held.splice(0)) forward();
      await w.ready();
      await createPod(env, 'beta', 'p1', 'node-a');
      await setPodIp(env, 'beta', 'p1', '10.244.2.2');
      const converged = async () => (await readOdl(env))['vpn-interface'].length === 1;
      await waitFor(async () => fatal.length > 0 || (await converged()), {
        what: 'p1 converged by the second term',
        timeoutMs: 20_000,
      });
      assert.deepEqual(
        fatal.map((e) => e.message),
        [],
        'the second term started (no queue of the first one in its way)',
      );
      assert.ok(await converged(), 'p1 in ODL');
      assert.equal(w.isLeader(), true);
    },
  );
});
