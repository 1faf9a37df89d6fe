/**
 * Restarts: a watcher that starts over a correct ODL writes nothing; one killed in the middle
 * of converging is finished by the next without orphans or duplicates; pods and namespaces
 * deleted while no watcher ran are cleaned up (instances after their grace period).
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { Watcher } from '../../src/watcher/watcher.js';
import { readOdl, startEnv, startTestWatcher, waitFor, writeCount, type Env } from './testing.js';
import { assertConverges, createCluster, createPods, deleteSome, emptyUids } from './scenario.js';
import { expectedOdl } from './scenario-data.js';

describe('watcher restarts', () => {
  let cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    cleanups = [];
  });
  const started = async (env: Env, grace = 300): Promise<Watcher> => {
    const w = await startTestWatcher(env, { gracePeriodMs: grace });
    cleanups.push(() => w.close());
    return w;
  };

  it('writes nothing when it starts over an ODL that is already right', async () => {
    const env = await startEnv({ profile: 'aluminium', dialect: 'rfc8040' });
    cleanups.push(() => env.close());
    const uids = emptyUids();
    await createCluster(env, uids);
    const first = await started(env);
    await createPods(env, uids);
    await deleteSome(env);
    await assertConverges(env, expectedOdl(env.profile, uids));
    await first.idle();
    await first.close();

    const before = env.emu.counters().requests;
    const writes = writeCount(env);
    const second = await started(env);
    await second.ready();
    await second.idle();
    assert.equal(
      writeCount(env),
      writes,
      `writes after restart: ${JSON.stringify(env.emu.counters().requests)} (before ${JSON.stringify(before)})`,
    );
    await assertConverges(env, expectedOdl(env.profile, uids));
  });

  it('finishes the work of a watcher killed mid-convergence: no orphan, no duplicate', async () => {
    const env = await startEnv({
      profile: 'sodium',
      dialect: 'bierman02',
      // Slow enough that the kill lands mid-way whatever the machine's speed: about 70 creates
      // by 8 workers take ~9 round trips, and the kill follows the 25th write by one poll.
      emulator: { faults: { latencyMs: 50 } },
    });
    cleanups.push(() => env.close());
    const uids = emptyUids();
    await createCluster(env, uids);
    // The whole cluster exists before the first watcher starts: it has about 70 entries to create.
    await createPods(env, uids, { waitForVpns: false });
    const first = await started(env);
    await waitFor(() => writeCount(env) >= 25, { what: '25 writes' });
    await first.close({ abrupt: true });
    const writesAtKill = writeCount(env);
    const partial = await readOdl(env);
    assert.ok(partial['vpn-interface'].length < 19, 'killed before it finished');

    await deleteSome(env);
    const second = await started(env);
    await second.ready();
    await assertConverges(env, expectedOdl(env.profile, uids));
    await second.idle();
    assert.ok(writeCount(env) > writesAtKill);
  });

  it('removes what belonged to pods and namespaces deleted while it was down', async () => {
    const env = await startEnv({ profile: 'sodium', dialect: 'rfc8040' });
    cleanups.push(() => env.close());
    const uids = emptyUids();
    await createCluster(env, uids);
    const first = await started(env);
    await createPods(env, uids);
    await waitFor(async () => (await readOdl(env))['vpn-interface'].length === 19, {
      what: 'all 19 vpn-interfaces',
    });
    await first.idle();
    await first.close();
    const full = await readOdl(env);
    assert.equal(full['vpn-instance'].length, 3);
    assert.equal(full['elan-instance'].length, 9);

    await deleteSome(env); // while no watcher runs
    await started(env, 1_000);
    await assertConverges(env, expectedOdl(env.profile, uids));
  });
});
