import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_MAX_DELAY_MS, RetryRateLimiter } from './retry-rate-limiter.js';

const frozenClock = () => 0;

describe('retry rate limiter', () => {
  it('backs a failing key off exponentially from 5 ms (client-go defaults)', () => {
    const limiter = new RetryRateLimiter({ now: frozenClock, burst: 1000 });
    assert.deepEqual(
      Array.from({ length: 6 }, () => limiter.when('ns/a')),
      [5, 10, 20, 40, 80, 160],
    );
    assert.equal(limiter.numRequeues('ns/a'), 6);
  });

  it('caps the per-key delay at about 17 minutes by default', () => {
    const limiter = new RetryRateLimiter({ now: frozenClock, burst: 1000 });
    let last = 0;
    for (let i = 0; i < 100; i++) last = limiter.when('k');
    assert.equal(last, DEFAULT_MAX_DELAY_MS);
  });

  it('keeps each key on its own backoff', () => {
    const limiter = new RetryRateLimiter({ now: frozenClock, baseDelayMs: 1, burst: 1000 });
    limiter.when('a');
    limiter.when('a');
    assert.equal(limiter.when('a'), 4);
    assert.equal(limiter.when('b'), 1);
    assert.equal(limiter.numRequeues('a'), 3);
    assert.equal(limiter.numRequeues('b'), 1);
  });

  it('forget restarts a key from the base delay', () => {
    const limiter = new RetryRateLimiter({ now: frozenClock, baseDelayMs: 10, maxDelayMs: 1000 });
    limiter.when('k');
    limiter.when('k');
    limiter.forget('k');
    assert.equal(limiter.numRequeues('k'), 0);
    assert.equal(limiter.when('k'), 10);
  });

  it('returns the larger of the per-key delay and the overall bucket', () => {
    // 1 retry/s, burst 2: the third retry of any key waits for the bucket, not its backoff.
    const limiter = new RetryRateLimiter({ now: frozenClock, baseDelayMs: 5, perSecond: 1, burst: 2 });
    assert.equal(limiter.when('a'), 5);
    assert.equal(limiter.when('b'), 5);
    assert.equal(limiter.when('c'), 1000);
    assert.equal(limiter.when('d'), 2000);
  });

  it('charges the bucket even when the per-key delay wins', () => {
    const limiter = new RetryRateLimiter({ now: frozenClock, baseDelayMs: 5000, perSecond: 1, burst: 1 });
    assert.equal(limiter.when('a'), 5000); // takes the only token
    assert.equal(limiter.when('b'), 5000); // bucket says 1000, backoff says 5000
    assert.equal(limiter.when('c'), 5000); // bucket says 2000: b's reservation counted
    assert.equal(limiter.when('d'), 5000);
    assert.equal(limiter.when('e'), 5000);
    assert.equal(limiter.when('f'), 5000);
    assert.equal(limiter.when('g'), 6000); // the bucket's debt finally exceeds the backoff
  });

  it('rejects a backoff window that cannot work, naming the field', () => {
    assert.throws(() => new RetryRateLimiter({ baseDelayMs: 0 }), /baseDelayMs must be a finite number > 0/);
    assert.throws(() => new RetryRateLimiter({ baseDelayMs: Number.NaN }), /baseDelayMs/);
    assert.throws(
      () => new RetryRateLimiter({ baseDelayMs: 100, maxDelayMs: 10 }),
      /maxDelayMs must be a finite number >= baseDelayMs \(100\)/,
    );
    assert.throws(() => new RetryRateLimiter({ perSecond: 0 }), /perSecond/);
    assert.throws(() => new RetryRateLimiter({ burst: 0 }), /burst/);
  });
});
