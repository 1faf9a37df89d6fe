import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Latch } from './latch.js';
import { Liveness } from './liveness.js';
import { silentLogger } from './log.js';
import { supervise } from './supervise.js';

describe('liveness', () => {
  it('is unhealthy once a part has been down longer than the limit, and names it', () => {
    let now = 1_000;
    const l = new Liveness(5_000, () => now);
    assert.deepEqual(l.report(), { healthy: true, parts: [] });
    l.up('ovs');
    l.down('subnet', new Error('disk full'));
    now += 5_000;
    l.down('subnet', new Error('still full'));
    assert.equal(l.report().healthy, true, 'not longer than the limit yet');
    now += 1;
    const report = l.report();
    assert.equal(report.healthy, false);
    assert.equal(report.reason, 'subnet down for 5s: still full');
    assert.deepEqual(report.parts, [
      { part: 'ovs', up: true },
      { part: 'subnet', up: false, downSince: 1_000, downForMs: 5_001, error: 'still full' },
    ]);
    l.up('subnet');
    assert.equal(l.report().healthy, true);
  });
});

describe('supervise', () => {
  const backoff = { initialMs: 5, maxMs: 20, jitter: 0 };

  it('starts a failing task again with backoff, and reports it down until it is up', async () => {
    const abort = new AbortController();
    const liveness = new Liveness(60_000);
    let runs = 0;
    const states: boolean[] = [];
    await supervise(
      'task',
      async (_signal, up) => {
        runs += 1;
        states.push(liveness.report().parts.every((p) => p.up));
        if (runs < 3) throw new Error(`failure ${runs}`);
        up();
      },
      { signal: abort.signal, logger: silentLogger(), liveness, backoff },
    );
    assert.equal(runs, 3);
    assert.deepEqual(states, [true, false, false]);
    assert.deepEqual(liveness.report().parts, [{ part: 'task', up: true }]);
  });

  it('ends when the signal aborts, without counting that as a failure', async () => {
    const abort = new AbortController();
    const liveness = new Liveness(60_000);
    const done = supervise(
      'task',
      (signal) =>
        new Promise((_, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
        ),
      { signal: abort.signal, logger: silentLogger(), liveness, backoff },
    );
    abort.abort(new Error('stopping'));
    await done;
    assert.deepEqual(liveness.report().parts, []);
  });
});

describe('latch', () => {
  it('lets waiters through once open, and stops waiting on abort', async () => {
    const latch = new Latch<number>();
    const abort = new AbortController();
    const waiting = latch.wait();
    const aborted = latch.wait(abort.signal);
    abort.abort(new Error('gone'));
    await assert.rejects(aborted, /gone/);
    latch.open(7);
    latch.open(8);
    assert.equal(await waiting, 7);
    assert.equal(await latch.wait(), 7);
    assert.equal(latch.isOpen, true);
  });
});
