import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { readConvergence } from '../common/convergence.js';
import type { Logger } from '../common/log.js';
import { createRegistry } from '../common/metrics.js';
import { ConvergenceProgress, type ProgressSource } from './progress.js';

function harness(intervalMs = 0) {
  const lines: { message: string; [k: string]: unknown }[] = [];
  const logger = {
    info: (message: string, meta: object) => lines.push({ message, ...meta }),
  } as unknown as Logger;
  const clock = { ms: 1_000 };
  const keys = { settled: 0, pending: 0 };
  const source: ProgressSource = { settled: () => keys.settled, pending: () => keys.pending };
  const objects = { desired: 0, applied: 0 };
  const registry = createRegistry();
  const progress = new ConvergenceProgress({
    registry,
    logger,
    intervalMs,
    objects: () => objects,
    now: () => clock.ms,
  });
  return { lines, clock, keys, source, objects, registry, progress };
}

describe('ConvergenceProgress', () => {
  it('logs keys settled and pending, the rate over the last interval and the ETA', () => {
    const h = harness();
    h.keys.settled = 5; // settled in an earlier pass of the term: not this pass's
    h.keys.pending = 1_000;
    h.progress.begin('start-up', h.source);
    h.clock.ms += 2_000;
    h.keys.settled = 205;
    h.keys.pending = 800;
    h.objects.desired = 2_400;
    h.objects.applied = 600;
    assert.deepEqual(h.progress.tick(), {
      pass: 'start-up',
      keys: 1_000,
      keysSettled: 200,
      keysPending: 800,
      objectsDesired: 2_400,
      objectsApplied: 600,
      objectsPending: 1_800,
      ratePerSecond: 100,
      etaSeconds: 8,
      elapsedSeconds: 2,
    });
    assert.equal(h.lines.at(-1)?.message, 'convergence progress');
    // The rate is the last interval's, not the pass's average.
    h.clock.ms += 1_000;
    h.keys.settled = 605;
    h.keys.pending = 400;
    assert.equal(h.progress.tick()?.ratePerSecond, 400);
    assert.equal(h.lines.at(-1)?.etaSeconds, 1);
  });

  it('logs one line when the pass converged and keeps showing it in the gauges', async () => {
    const h = harness();
    h.keys.pending = 300;
    h.progress.begin('start-up', h.source);
    let figures = readConvergence(await h.registry.metrics());
    assert.equal(figures?.pass, 'start-up');
    assert.equal(figures?.pending, 300);
    assert.equal(figures?.etaSeconds, null, 'no rate yet: no ETA');
    h.clock.ms += 3_000;
    h.keys.settled = 300;
    h.keys.pending = 0;
    h.progress.converged(h.source);
    const done = h.lines.at(-1);
    assert.equal(done?.message, 'converged');
    assert.equal(done?.keysSettled, 300);
    assert.equal(done?.ratePerSecond, 100);
    assert.equal(done?.etaSeconds, 0);
    figures = readConvergence(await h.registry.metrics());
    assert.deepEqual(figures, {
      pass: null,
      total: 300,
      settled: 300,
      pending: 0,
      ratePerSecond: 100,
      etaSeconds: 0,
      elapsedSeconds: 3,
    });
  });

  it('lets a resync join a pass of the same term, and forgets a pass whose term ended', () => {
    const h = harness();
    h.keys.pending = 10;
    h.progress.begin('start-up', h.source);
    h.progress.begin('resync', h.source);
    assert.equal(h.progress.tick()?.pass, 'start-up');
    h.progress.stop();
    h.progress.converged(h.source);
    assert.ok(!h.lines.some((l) => l.message === 'converged'));
    assert.equal(h.progress.tick(), undefined);
    const next: ProgressSource = { settled: () => 0, pending: () => 4 };
    h.progress.begin('resync', next);
    assert.equal(h.progress.tick()?.pass, 'resync');
  });

  it('logs on its own every interval while the pass runs', async () => {
    const h = harness(20);
    h.keys.pending = 5;
    h.progress.begin('resync', h.source);
    const deadline = Date.now() + 5_000;
    while (h.lines.filter((l) => l.message === 'convergence progress').length < 2) {
      assert.ok(Date.now() < deadline, `two progress lines within 5 s, got ${h.lines.length}`);
      await sleep(10);
    }
    h.progress.stop();
  });
});
