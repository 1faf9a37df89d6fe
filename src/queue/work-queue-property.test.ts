import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { within } from '../../test/helpers/wait.js';
import type { ReconcileResult } from './work-queue.js';
import { WorkQueue } from './work-queue.js';

/**
 * The queue never loses a key: under random interleavings of add / addAfter /
 * addRateLimited with reconciles that fail (thrown, rejected, non-Error), requeue or succeed
 * at random, every key ends with a successful reconcile that *started after its last add*,
 * and no key is ever reconciled twice at once. A logical clock (one tick per add and per
 * reconcile start) orders events, so the check is about causality, never about time.
 */

/** mulberry32: a tiny seeded PRNG so a failing seed can be replayed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function runScenario(seed: number): Promise<void> {
  const random = seeded(seed);
  const tick = (): Promise<void> =>
    new Promise((resolve) => (random() < 0.5 ? setImmediate(resolve) : setTimeout(resolve, 1)));
  const workers = 1 + Math.floor(random() * 4);
  let clock = 0;
  const lastAdd = new Map<string, number>();
  const lastGoodStart = new Map<string, number>();
  const requeues = new Map<string, number>();
  const active = new Set<string>();
  const violations: string[] = [];
  let maxActive = 0;

  const queue = new WorkQueue({
    name: `property-${seed}`,
    workers,
    backoff: { baseDelayMs: 1, maxDelayMs: 4 },
    rateLimit: { perSecond: 1_000_000, burst: 1_000_000 },
    reconcile: (key) => {
      const startedAt = ++clock;
      if (active.has(key)) violations.push(`${key} reconciled twice at once`);
      active.add(key);
      maxActive = Math.max(maxActive, active.size);
      if (random() < 0.05) {
        active.delete(key);
        throw new Error('synchronous failure');
      }
      return (async (): Promise<ReconcileResult | undefined> => {
        for (let i = Math.floor(random() * 3); i > 0; i--) await tick();
        const roll = random();
        active.delete(key);
        if (roll < 0.25) throw new Error('odl unavailable');
        if (roll < 0.3) throw 'a string, not an Error';
        lastGoodStart.set(key, startedAt);
        if (roll < 0.38 && (requeues.get(key) ?? 0) < 2) {
          requeues.set(key, (requeues.get(key) ?? 0) + 1);
          return { requeueAfterMs: 1 + Math.floor(random() * 3) };
        }
        return undefined;
      })();
    },
  });

  try {
    queue.start();
    for (let op = 0; op < 600; op++) {
      const key = `ns/pod-${Math.floor(random() * 25)}`;
      lastAdd.set(key, ++clock);
      const how = random();
      if (how < 0.7) queue.add(key);
      else if (how < 0.85) queue.addAfter(key, Math.floor(random() * 4));
      else queue.addRateLimited(key);
      if (random() < 0.3) await tick();
    }
    await within(`seed ${seed}: idle`, queue.idle(), 30_000);

    assert.deepEqual(violations, [], `seed ${seed}`);
    assert.ok(maxActive <= workers, `seed ${seed}: ${maxActive} reconciles at once with ${workers} workers`);
    assert.equal(queue.length + queue.inFlight + queue.delayed, 0);
    for (const [key, added] of lastAdd) {
      const good = lastGoodStart.get(key);
      assert.ok(
        good !== undefined && good > added,
        `seed ${seed}: ${key} last added at ${added}, last successful reconcile started at ${String(good)}`,
      );
    }
  } finally {
    await queue.shutdown({ timeoutMs: 1000 });
  }
}

describe('work queue never loses a key', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) {
    it(`random add/fail interleavings, seed ${seed}`, () => runScenario(seed));
  }
});
