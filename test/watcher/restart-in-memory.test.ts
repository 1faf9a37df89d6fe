/**
 * The pass over every key at a term's start and on a resync settles the keys the caches show
 * in sync without queueing them: a restart over a correct ODL writes nothing and leaves what a
 * pass that queues every key leaves (object states, progress, reconciles, grace clocks); keys
 * out of sync are queued and fixed; a watch event during the pass is not lost.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { CONVERGENCE_METRICS } from '../../src/common/convergence.js';
import { createRegistry, type Registry } from '../../src/common/metrics.js';
import { vpnKey } from '../../src/netvirt/keys.js';
import { ownershipMarker, vpnName } from '../../src/netvirt/names.js';
import { netvirtPaths } from '../../src/netvirt/paths.js';
import type { BackendContext } from '../../src/watcher/backend.js';
import { NetvirtBackend } from '../../src/watcher/netvirt-backend.js';
import type { Watcher } from '../../src/watcher/watcher.js';
import { assertConverges, createCluster, createPods, deleteSome, emptyUids } from './scenario.js';
import { expectedOdl, type Uids } from './scenario-data.js';
import { createPod, readOdl, startEnv, startTestWatcher, waitFor, writeCount, type Env } from './testing.js';

/** A netvirt backend whose pass settles in memory or not (`inMemory`), with its grace clocks in view. */
class ProbeBackend extends NetvirtBackend {
  /** While set, the pass goes on (settling this key) until it returns false: see the event test. */
  holdPass: (() => boolean) | undefined;
  /** Every key the caches name was gone over (the pass goes over held keys now). */
  realKeysDone = false;
  /** Whether the held pass ended because `holdPass` let it (not at its deadline). */
  released = false;

  constructor(
    ctx: BackendContext,
    private readonly inMemory: boolean,
  ) {
    super(ctx);
  }

  /** Keys the pass asked about (other than the held key). */
  settleCalls = 0;

  override settleIfInSync(key: string): boolean {
    if (key === HELD) return true;
    this.settleCalls += 1;
    return this.inMemory && super.settleIfInSync(key);
  }

  override *allKeys(): Iterable<string> {
    yield* super.allKeys();
    if (!this.holdPass) return;
    this.realKeysDone = true;
    // Keeps the pass running (and yielding to the event loop) until the test lets it end.
    const deadline = Date.now() + 20_000;
    while (this.holdPass() && Date.now() < deadline) yield HELD;
    this.released = !this.holdPass();
  }

  /** A grace clock left running for a key (as if the instance had been unneeded for a while). */
  startClock(key: string): void {
    this.grace.remaining(key);
  }

  clocks(): string[] {
    return this.grace.running();
  }
}

/** The key the held pass goes over while it waits (settled at once, never queued). */
const HELD = 'vpn/held-pass';

/** What a pass leaves that a reconcile would have left: object states, progress, reconciles. */
async function passState(registry: Registry): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const name of [
    'odlcoe_watcher_objects_desired',
    'odlcoe_watcher_objects_applied',
    'odlcoe_watcher_objects_foreign',
    'odlcoe_watcher_reconciles_total',
    CONVERGENCE_METRICS.keys,
  ]) {
    const m = registry.getSingleMetric(name);
    assert.ok(m, `metric ${name} is registered`);
    out[name] = (await m.get()).values
      .map((v) => ({ labels: v.labels, value: v.value }))
      .sort((a, b) => JSON.stringify(a.labels).localeCompare(JSON.stringify(b.labels)));
  }
  return out;
}

describe('the pass over every key settles in-sync keys in memory', () => {
  let cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    cleanups = [];
  });

  const probe = async (
    env: Env,
    inMemory: boolean,
  ): Promise<{ watcher: Watcher; backend: ProbeBackend; registry: Registry }> => {
    let backend: ProbeBackend | undefined;
    const registry = createRegistry();
    const watcher = await startTestWatcher(
      env,
      { gracePeriodMs: 300 },
      {
        registry,
        backend: (ctx) => (backend = new ProbeBackend(ctx, inMemory)),
      },
    );
    cleanups.push(() => watcher.close());
    assert.ok(backend, 'the watcher made its backend');
    return { watcher, backend, registry };
  };

  const converged = (env: Env, uids: Uids) => assertConverges(env, expectedOdl(env.profile, uids));

  /** The scenario's cluster converged by a first watcher, closed (`deleted`: with its deletions). */
  const convergedCluster = async (deleted: boolean): Promise<{ env: Env; uids: Uids }> => {
    const env = await startEnv({ profile: 'sodium', dialect: 'rfc8040' });
    cleanups.push(() => env.close());
    const uids = emptyUids();
    await createCluster(env, uids);
    const first = await probe(env, true);
    await first.watcher.ready();
    assert.equal(
      first.backend.settleCalls,
      0,
      'a first start on an empty ODL queues every key without planning it in memory first',
    );
    await createPods(env, uids);
    if (deleted) {
      await deleteSome(env);
      await converged(env, uids);
    }
    await first.watcher.idle();
    await first.watcher.close();
    return { env, uids };
  };

  it('writes nothing over a correct ODL and leaves what a pass that queues every key leaves', async () => {
    const { env, uids } = await convergedCluster(true);

    const states: Record<string, unknown>[] = [];
    for (const inMemory of [true, false, true]) {
      const writes = writeCount(env);
      const { watcher, backend, registry } = await probe(env, inMemory);
      await watcher.idle();
      if (inMemory)
        assert.ok(backend.settleCalls > 0, 'a restart over an ODL that holds entries settles keys in memory');
      assert.equal(
        writeCount(env),
        writes,
        `a restart (in memory: ${inMemory}) over a correct ODL writes nothing`,
      );
      const atStart = await passState(registry);
      // A resync over a VPN whose grace clock runs (as if it had been unneeded a while): the
      // clocks it leaves are compared below.
      backend.startClock(vpnKey(vpnName('alpha')));
      await watcher.resync();
      await watcher.idle();
      assert.equal(
        writeCount(env),
        writes,
        `a resync (in memory: ${inMemory}) over a correct ODL writes nothing`,
      );
      assert.ok(
        !backend.clocks().includes(vpnKey(vpnName('alpha'))),
        `the needed VPN's grace clock is forgotten by the resync (in memory: ${inMemory}): ${backend.clocks().join(', ')}`,
      );
      states.push({ atStart, afterResync: await passState(registry), clocks: backend.clocks() });
      await watcher.close();
    }
    const [inMemory, queued, again] = states;
    assert.deepEqual(inMemory, queued, 'settling in memory leaves what queueing every key leaves');
    assert.deepEqual(queued, again, 'and the other way round');
    await converged(env, uids);
  });

  it('queues and fixes an edited entry, a missing one and entries nothing needs any more', async () => {
    const { env, uids } = await convergedCluster(false);

    // While no watcher runs: one owned leaf edited, one entry deleted, pods and a namespace gone.
    const paths = netvirtPaths(env.profile);
    const lists = await readOdl(env);
    const ifaceOf = (pod: string) => {
      const marker = ownershipMarker('test', 'pod', uids.pods[pod] ?? '');
      const iface = lists.interface.find((e) => e['description'] === marker);
      assert.ok(iface, `pod ${pod} has its interface`);
      return iface;
    };
    const edited = ifaceOf('alpha/a0');
    const name = String(edited['name']);
    await env.odl.put(paths.interface(name), {
      'ietf-interfaces:interface': [{ ...edited, enabled: false }],
    });
    const missing = String(ifaceOf('alpha/a1')['name']);
    await env.odl.delete(paths.vpnInterface(missing));
    await deleteSome(env);

    const writes = writeCount(env);
    const { watcher } = await probe(env, true);
    await watcher.idle();
    await converged(env, uids);
    assert.ok(writeCount(env) > writes, 'the restart wrote the fixes');
  });

  it('queues the key of a watch event that arrives during the pass', async () => {
    const { env } = await convergedCluster(true);

    let backend: ProbeBackend | undefined;
    const registry = createRegistry();
    let podSeen = false;
    const watcherStarted = startTestWatcher(
      env,
      { gracePeriodMs: 300 },
      {
        registry,
        backend: (ctx) => {
          const b = new ProbeBackend(ctx, true);
          // The pass goes on until the view has the new pod: its event arrives during the pass.
          b.holdPass = () => !podSeen;
          ctx.view.onChange((change) => {
            if (change.kind === 'pod' && change.obj.metadata?.name === 'late') podSeen = true;
          });
          return (backend = b);
        },
      },
    );
    const watcher = await watcherStarted;
    cleanups.push(() => watcher.close());
    // After every key the caches name was gone over: only the event can queue this pod's key.
    await waitFor(() => backend?.realKeysDone === true, { what: 'the pass to go over every real key' });
    const writes = writeCount(env);
    await createPod(env, 'alpha', 'late', 'node-a', { ip: '10.244.1.99' });
    await watcher.idle();
    assert.ok(backend?.released, 'the pod was seen while the pass was still going on');
    const lists = await readOdl(env);
    const marker = ownershipMarker(
      'test',
      'pod',
      (await env.core.readNamespacedPod({ namespace: 'alpha', name: 'late' })).metadata?.uid ?? '',
    );
    assert.ok(
      lists.interface.some((e) => e['description'] === marker),
      'the pod created during the pass has its interface',
    );
    assert.ok(writeCount(env) > writes, 'its entries were written');
  });
});
