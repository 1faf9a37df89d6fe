/**
 * The acceptance scenario, for both NetVirt profiles and both RESTCONF dialects: 3 nodes,
 * 3 namespaces, 20 pods, IPs through pod status, two pods and one namespace deleted. ODL must
 * then hold exactly the hand-written expected set: every entry, every leaf (ODL's own
 * write-backs included), nothing more.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Profile } from '../../src/netvirt/profile.js';
import type { Dialect } from '../../src/restconf/path.js';
import type { Watcher } from '../../src/watcher/watcher.js';
import { metricValue, startEnv, startTestWatcher, waitFor, writeCount, type Env } from './testing.js';
import { assertConverges, createCluster, createPods, deleteSome, emptyUids } from './scenario.js';
import { expectedOdl } from './scenario-data.js';

const BATCH = { maxEdits: 50, windowMs: 5 };

const COMBINATIONS: [Profile, Dialect][] = [
  ['sodium', 'bierman02'],
  ['sodium', 'rfc8040'],
  ['aluminium', 'bierman02'],
  ['aluminium', 'rfc8040'],
];

describe('watcher scenario: 3 nodes, 3 namespaces, 20 pods', () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  // Every combination with single writes and with batched writes (YANG Patch).
  for (const [[profile, dialect], batch] of COMBINATIONS.flatMap((c) =>
    [undefined, BATCH].map((b) => [c, b] as const),
  )) {
    it(`converges to exactly the expected ODL config (${profile}, ${dialect}${batch ? ', batched' : ''})`, async () => {
      const env: Env = await startEnv({ profile, dialect });
      cleanups.push(() => env.close());
      const watcher: Watcher = await startTestWatcher(
        env,
        { gracePeriodMs: 300, workers: batch ? 16 : 4 },
        {},
        batch,
      );
      cleanups.push(() => watcher.close());
      const uids = emptyUids();
      await createCluster(env, uids);
      await watcher.ready();
      await createPods(env, uids);
      await deleteSome(env);

      const expected = expectedOdl(profile, uids);
      await assertConverges(env, expected);
      if (batch) assert.ok((env.emu.counters().requests['PATCH 200'] ?? 0) > 0, 'writes went as YANG Patch');

      // Converged and idle: reconciling everything again writes nothing.
      await watcher.idle();
      const writes = writeCount(env);
      await watcher.resync();
      await watcher.idle();
      assert.equal(writeCount(env), writes, 'a resync of a converged cluster must not write');
      // The resync was a convergence pass of its own (progress gauges), and it converged.
      const gauge = (name: string, labels: Record<string, string> = {}) =>
        metricValue(watcher.registry, `odlcoe_watcher_${name}`, labels);
      await waitFor(
        async () =>
          (await gauge('converging', { pass: 'resync' })) === 0 &&
          (await gauge('convergence_keys', { state: 'pending' })) === 0 &&
          (await gauge('convergence_keys', { state: 'settled' })) > 0,
        { what: 'the resync pass to show as converged in the progress gauges', timeoutMs: 5_000 },
      );
    });
  }
});
