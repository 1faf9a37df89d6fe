import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TokenBucket } from './token-bucket.js';

function fakeClock(start = 1000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe('token bucket', () => {
  it('serves a full burst immediately', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket({ perSecond: 10, burst: 5, now: clock.now });
    assert.deepEqual(
      Array.from({ length: 5 }, () => bucket.reserve()),
      [0, 0, 0, 0, 0],
    );
    assert.equal(bucket.available, 0);
  });

  it('spaces reservations beyond the burst at 1/perSecond, each behind the previous one', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket({ perSecond: 10, burst: 2, now: clock.now });
    const delays = Array.from({ length: 5 }, () => bucket.reserve());
    assert.deepEqual(delays, [0, 0, 100, 200, 300]);
    assert.equal(bucket.available, -3);
  });

  it('refills with time, paying off debt before serving again', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket({ perSecond: 10, burst: 1, now: clock.now });
    assert.equal(bucket.reserve(), 0);
    assert.equal(bucket.reserve(), 100);
    clock.advance(100); // pays the debt of the second reservation
    assert.equal(bucket.reserve(), 100);
    clock.advance(250); // debt paid, 1.5 tokens earned but capped at burst 1
    assert.equal(bucket.reserve(), 0);
    assert.equal(bucket.reserve(), 100);
  });

  it('never holds more than burst tokens after a long quiet period', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket({ perSecond: 100, burst: 3, now: clock.now });
    clock.advance(3_600_000);
    assert.equal(bucket.available, 3);
    assert.deepEqual([bucket.reserve(), bucket.reserve(), bucket.reserve(), bucket.reserve()], [0, 0, 0, 10]);
  });

  it('ignores a clock that steps backwards', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket({ perSecond: 1, burst: 1, now: clock.now });
    bucket.reserve();
    clock.advance(-10_000);
    assert.equal(bucket.available, 0);
    clock.advance(10_000 + 1000);
    assert.equal(bucket.available, 1);
  });

  it('supports fractional rates', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket({ perSecond: 0.5, burst: 1, now: clock.now });
    assert.deepEqual([bucket.reserve(), bucket.reserve()], [0, 2000]);
  });

  it('rejects a rate or burst that cannot work, naming the field', () => {
    for (const perSecond of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => new TokenBucket({ perSecond, burst: 1 }), /perSecond must be a finite number > 0/);
    }
    for (const burst of [0, -1, 1.5, Number.NaN]) {
      assert.throws(() => new TokenBucket({ perSecond: 1, burst }), /burst must be an integer >= 1/);
    }
  });
});
