import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Backoff, backoffDelay, sleep } from './backoff.js';

describe('backoff', () => {
  it('doubles up to the ceiling without jitter', () => {
    const b = new Backoff({ initialMs: 100, maxMs: 1000, jitter: 0 });
    assert.deepEqual([b.next(), b.next(), b.next(), b.next(), b.next()], [100, 200, 400, 800, 1000]);
    b.reset();
    assert.equal(b.next(), 100);
  });

  it('keeps jittered delays within the upper half of the window', () => {
    for (let attempt = 0; attempt < 10; attempt++) {
      const low = backoffDelay(attempt, { initialMs: 10, maxMs: 5000, random: () => 1 });
      const high = backoffDelay(attempt, { initialMs: 10, maxMs: 5000, random: () => 0 });
      assert.equal(low, Math.round(high / 2));
    }
  });

  it('rejects a nonsensical window', () => {
    assert.throws(() => new Backoff({ initialMs: 0, maxMs: 10 }), /invalid backoff/);
    assert.throws(() => new Backoff({ initialMs: 100, maxMs: 10 }), /invalid backoff/);
  });

  it('sleep aborts with the signal reason', async () => {
    const ac = new AbortController();
    const p = sleep(10_000, ac.signal);
    ac.abort(new Error('stop'));
    await assert.rejects(p, /stop/);
  });
});
