import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { Registry } from '../common/metrics.js';
import { waitFor, within } from '../../test/helpers/wait.js';
import { QUEUE_POLL, testQueues } from './testing.js';
import { WorkQueue } from './work-queue.js';
import type { ReconcileResult } from './work-queue.js';

const queues = testQueues();
const makeQueue = queues.make;

afterEach(() => queues.closeAll());

describe('work queue', () => {
  it('dedup: a key is queued at most once at a time', async () => {
    const runs: string[] = [];
    const queue = makeQueue({ reconcile: async (key) => void runs.push(key) });
    for (const key of ['a', 'a', 'b', 'a', 'b']) queue.add(key);
    assert.equal(queue.length, 2);
    queue.start();
    await within('idle', queue.idle());
    assert.deepEqual(runs, ['a', 'b']);
  });

  it('a key being processed is never processed by a second worker', async () => {
    const release = queues.gate();
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    const queue = makeQueue({
      workers: 4,
      reconcile: async () => {
        runs += 1;
        active += 1;
        maxActive = Math.max(maxActive, active);
        await release.promise;
        active -= 1;
      },
    });
    queue.start();
    queue.add('ns/pod');
    await waitFor(() => queue.inFlight === 1, { ...QUEUE_POLL, what: 'the first reconcile' });
    for (let i = 0; i < 5; i++) queue.add('ns/pod');
    // Three workers are free, yet the key is held back until its own reconcile ends.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(queue.inFlight, 1);
    assert.equal(queue.length, 0);
    release.open();
    await within('idle', queue.idle());
    assert.equal(maxActive, 1);
    assert.equal(runs, 2);
  });

  it('a key re-added while processing runs again afterwards, once', async () => {
    const release = queues.gate();
    let state = 'v1';
    const seen: string[] = [];
    const queue = makeQueue({
      reconcile: async () => {
        const first = seen.length === 0;
        seen.push(state);
        if (first) await release.promise;
      },
    });
    queue.start();
    queue.add('k');
    await waitFor(() => seen.length === 1, { ...QUEUE_POLL, what: 'the first reconcile' });
    state = 'v2';
    for (let i = 0; i < 10; i++) queue.add('k');
    release.open();
    await within('idle', queue.idle());
    // The second run happened after the change it was added for, and only once.
    assert.deepEqual(seen, ['v1', 'v2']);
  });

  it('failure requeues with per-key exponential backoff until success', async () => {
    const attempts: number[] = [];
    const queue = makeQueue({
      reconcile: async (key) => {
        attempts.push(queue.numRequeues(key));
        if (attempts.length <= 3) throw new Error('odl unavailable');
      },
    });
    queue.start();
    queue.add('k');
    await within('idle', queue.idle());
    // The reconcile saw its own failure count grow, one per retry.
    assert.deepEqual(attempts, [0, 1, 2, 3]);
  });

  it('retries are held back by the global rate limit even when the key backoff is short', async () => {
    let runs = 0;
    const queue = makeQueue({
      backoff: { baseDelayMs: 1, maxDelayMs: 1 },
      // One token, then one every 1000 s: the second retry must wait for the bucket.
      rateLimit: { perSecond: 0.001, burst: 1 },
      reconcile: async () => {
        runs += 1;
        throw new Error('still failing');
      },
    });
    queue.start();
    queue.add('k');
    await waitFor(() => runs === 2 && queue.inFlight === 0 && queue.delayed === 1, {
      ...QUEUE_POLL,
      what: 'two failures',
    });
    assert.ok(
      (queue.delayRemainingMs('k') ?? 0) > 100_000,
      'the retry waits for the bucket, not the 1 ms backoff',
    );
    assert.equal(queue.numRequeues('k'), 2);
  });

  it('success forgets the failure count', async () => {
    const outcomes = ['fail', 'ok', 'fail', 'ok'];
    const seenRequeues: number[] = [];
    const queue = makeQueue({
      reconcile: async (key) => {
        seenRequeues.push(queue.numRequeues(key));
        if (outcomes.shift() === 'fail') throw new Error('boom');
      },
    });
    queue.start();
    queue.add('k');
    await within('first round', queue.idle());
    assert.equal(queue.numRequeues('k'), 0);
    queue.add('k');
    await within('second round', queue.idle());
    // The second failure starts from zero again instead of continuing at one.
    assert.deepEqual(seenRequeues, [0, 1, 0, 1]);
  });

  it('requeueAfterMs re-adds after that delay without counting as a failure', async () => {
    const seenRequeues: number[] = [];
    const results: Array<ReconcileResult | undefined> = [{ requeueAfterMs: 60_000 }, undefined];
    const queue = makeQueue({
      reconcile: async (key) => {
        seenRequeues.push(queue.numRequeues(key));
        return results.shift();
      },
    });
    queue.start();
    queue.add('k');
    await waitFor(() => queue.delayed === 1 && queue.inFlight === 0, { ...QUEUE_POLL, what: 'the requeue' });
    const remaining = queue.delayRemainingMs('k') ?? 0;
    assert.ok(remaining > 30_000 && remaining <= 60_000, `requeued for the asked delay, got ${remaining}`);
    assert.equal(queue.numRequeues('k'), 0);
    queue.addAfter('k', 1); // pull it in so the test need not wait a minute
    await within('idle', queue.idle());
    assert.deepEqual(seenRequeues, [0, 0]);
  });

  it('requeueAfterMs after failures restarts the backoff', async () => {
    const steps: Array<() => ReconcileResult | undefined> = [
      () => {
        throw new Error('one');
      },
      () => {
        throw new Error('two');
      },
      () => ({ requeueAfterMs: 1 }),
      () => {
        throw new Error('three');
      },
      () => undefined,
    ];
    const seenRequeues: number[] = [];
    const queue = makeQueue({
      reconcile: async (key) => {
        seenRequeues.push(queue.numRequeues(key));
        return (steps.shift() as () => ReconcileResult | undefined)();
      },
    });
    queue.start();
    queue.add('k');
    await within('idle', queue.idle());
    assert.deepEqual(seenRequeues, [0, 1, 2, 0, 1]);
  });

  it('N workers run different keys concurrently', async () => {
    const release = queues.gate();
    const started: string[] = [];
    const queue = makeQueue({
      workers: 3,
      reconcile: async (key) => {
        started.push(key);
        await release.promise;
      },
    });
    queue.start();
    for (const key of ['a', 'b', 'c', 'd']) queue.add(key);
    await waitFor(() => queue.inFlight === 3, { ...QUEUE_POLL, what: 'three reconciles at once' });
    assert.deepEqual(started, ['a', 'b', 'c']);
    assert.equal(queue.length, 1);
    release.open();
    await within('idle', queue.idle());
    assert.deepEqual(started, ['a', 'b', 'c', 'd']);
  });

  it('FIFO among ready keys, a re-added key going to the back', async () => {
    const order: string[] = [];
    const queue = makeQueue({
      reconcile: async (key) => {
        order.push(key);
        if (order.length === 1) {
          queue.add('c'); // in flight: runs again after the keys already waiting
          queue.add('d');
        }
      },
    });
    for (const key of ['c', 'a', 'b']) queue.add(key);
    queue.start();
    await within('idle', queue.idle());
    assert.deepEqual(order, ['c', 'a', 'b', 'd', 'c']);
  });

  it('addAfter with a shorter delay moves an already-delayed key earlier', async () => {
    let runs = 0;
    const queue = makeQueue({ reconcile: async () => void (runs += 1) });
    queue.start();
    queue.addAfter('k', 600_000);
    assert.ok((queue.delayRemainingMs('k') ?? 0) > 500_000);
    queue.addAfter('k', 1);
    assert.ok((queue.delayRemainingMs('k') ?? Infinity) <= 1);
    await within('idle', queue.idle());
    assert.equal(runs, 1);
    assert.equal(queue.delayed, 0);
  });

  it('addAfter with a longer delay never postpones an already-delayed key', async () => {
    let runs = 0;
    const queue = makeQueue({ reconcile: async () => void (runs += 1) });
    queue.start();
    queue.addAfter('k', 1);
    queue.addAfter('k', 600_000);
    assert.equal(queue.delayed, 1);
    await within('idle', queue.idle());
    assert.equal(runs, 1);
  });

  it('addAfter with a zero or negative delay is a plain add', () => {
    const queue = makeQueue({ reconcile: async () => undefined });
    queue.addAfter('a', 0);
    queue.addAfter('b', -5);
    assert.equal(queue.length, 2);
    assert.equal(queue.delayed, 0);
  });

  it('delayed keys become ready in due order through one timer', async () => {
    const order: string[] = [];
    const queue = makeQueue({ reconcile: async (key) => void order.push(key) });
    queue.start();
    queue.addAfter('third', 30);
    queue.addAfter('first', 5);
    queue.addAfter('second', 15);
    await within('idle', queue.idle());
    assert.deepEqual(order, ['first', 'second', 'third']);
  });

  it('a key that is delayed and added now runs now and again when the delay passes', async () => {
    let runs = 0;
    const queue = makeQueue({ reconcile: async () => void (runs += 1) });
    queue.start();
    queue.addAfter('k', 20);
    queue.add('k');
    await waitFor(() => runs === 1, { ...QUEUE_POLL, what: 'the immediate run' });
    await within('idle', queue.idle());
    assert.equal(runs, 2);
  });

  it('a reconcile that throws synchronously is retried', async () => {
    let calls = 0;
    const queue = makeQueue({
      reconcile: () => {
        calls += 1;
        if (calls === 1) throw new Error('thrown before any await');
        return Promise.resolve();
      },
    });
    queue.start();
    queue.add('k');
    await within('idle', queue.idle());
    assert.equal(calls, 2);
    assert.equal(queue.numRequeues('k'), 0);
  });

  it('a reconcile that rejects with a non-Error is retried', async () => {
    const failures: unknown[] = ['a string', undefined, null, 42, { code: 'E' }];
    let calls = 0;
    const queue = makeQueue({
      reconcile: () => {
        calls += 1;
        return failures.length > 0 ? Promise.reject(failures.shift()) : Promise.resolve();
      },
    });
    queue.start();
    queue.add('k');
    await within('idle', queue.idle());
    assert.equal(calls, 6);
  });

  it('a malformed reconcile result is a failure, not a silent success', async () => {
    const results: unknown[] = [{ requeueAfterMs: -1 }, { requeueAfterMs: Number.NaN }, 'done', undefined];
    const seenRequeues: number[] = [];
    const queue = makeQueue({
      reconcile: async (key) => {
        seenRequeues.push(queue.numRequeues(key));
        return results.shift() as ReconcileResult | undefined;
      },
    });
    queue.start();
    queue.add('k');
    await within('idle', queue.idle());
    assert.deepEqual(seenRequeues, [0, 1, 2, 3]);
  });

  it('keys added before start wait for it', async () => {
    let runs = 0;
    const queue = makeQueue({ reconcile: async () => void (runs += 1) });
    queue.add('k');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(runs, 0);
    assert.equal(queue.length, 1);
    queue.start();
    await within('idle', queue.idle());
    assert.equal(runs, 1);
  });

  it('passes a live abort signal to every reconcile', async () => {
    const signals: AbortSignal[] = [];
    const queue = makeQueue({ reconcile: async (_key, signal) => void signals.push(signal) });
    queue.start();
    queue.add('a');
    queue.add('b');
    await within('idle', queue.idle());
    assert.equal(signals.length, 2);
    assert.ok(signals.every((s) => !s.aborted));
  });

  it('idle resolves at once on an empty queue and waits for delayed keys', async () => {
    const queue = makeQueue({ reconcile: async () => undefined });
    await within('idle of an empty queue', queue.idle(), 1000);
    queue.start();
    queue.addAfter('k', 5);
    let idle = false;
    const done = queue.idle().then(() => (idle = true));
    assert.equal(idle, false);
    await within('idle', done);
    assert.equal(queue.delayed, 0);
  });

  it('handles 10,000 delayed keys', async () => {
    const seen = new Set<string>();
    const queue = makeQueue({ workers: 8, reconcile: async (key) => void seen.add(key) });
    queue.start();
    for (let i = 0; i < 10_000; i++) queue.addAfter(`ns/pod-${i}`, 1 + (i % 20));
    assert.equal(queue.delayed, 10_000);
    await within('idle', queue.idle(), 30_000);
    assert.equal(seen.size, 10_000);
  });

  it('rejects bad options and keys with precise errors', () => {
    const reconcile = async (): Promise<void> => undefined;
    assert.throws(
      () => new WorkQueue({ name: '', workers: 1, reconcile }),
      /name must be a non-empty string/,
    );
    assert.throws(
      () => new WorkQueue({ name: 'q', workers: 0, reconcile }),
      /workers must be an integer >= 1, got 0/,
    );
    assert.throws(
      () => new WorkQueue({ name: 'q', workers: 1.5, reconcile }),
      /workers must be an integer >= 1/,
    );
    assert.throws(
      () => new WorkQueue({ name: 'q', workers: 1, reconcile, backoff: { baseDelayMs: -1 } }),
      /work queue "q": backoff baseDelayMs must be a finite number > 0/,
    );
    assert.throws(
      () => new WorkQueue({ name: 'q', workers: 1, reconcile, rateLimit: { perSecond: 0, burst: 1 } }),
      /work queue "q": token bucket perSecond/,
    );
    const queue = new WorkQueue({ name: 'q', workers: 1, reconcile, registry: new Registry() });
    assert.throws(() => queue.add(''), /a key must be a non-empty string/);
    assert.throws(() => queue.addAfter('k', Number.NaN), /addAfter\("k"\) needs a finite delay, got NaN/);
    assert.throws(() => queue.addAfter('k', Number.POSITIVE_INFINITY), /needs a finite delay/);
    assert.equal(queue.length, 0);
  });
});
