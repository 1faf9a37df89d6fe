import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { afterEach, describe, it } from 'node:test';
import winston from 'winston';
import type { Logger } from '../common/log.js';
import { waitFor, within } from '../../test/helpers/wait.js';
import { QUEUE_POLL, testQueues } from './testing.js';

/** A real winston logger whose JSON lines land in an array. */
function capturingLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const logger = winston.createLogger({
    level: 'debug',
    format: winston.format.json(),
    transports: [new winston.transports.Stream({ stream })],
  });
  return { logger, lines };
}

/** Settles when the signal aborts, like a RESTCONF call honouring it. */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

const queues = testQueues();
const makeQueue = queues.make;

afterEach(() => queues.closeAll());

describe('work queue shutdown', () => {
  it('with drain finishes queued and in-flight work and refuses new adds (logged, not thrown)', async () => {
    const release = queues.gate();
    const { logger, lines } = capturingLogger();
    const runs: string[] = [];
    const signals: AbortSignal[] = [];
    const queue = makeQueue({
      logger,
      reconcile: async (key, signal) => {
        runs.push(key);
        signals.push(signal);
        if (key === 'a') await release.promise;
      },
    });
    queue.start();
    for (const key of ['a', 'b', 'c']) queue.add(key);
    await waitFor(() => queue.inFlight === 1, { ...QUEUE_POLL, what: 'a in flight' });
    const stopped = queue.shutdown({ drain: true });
    queue.add('d');
    queue.addAfter('e', 1);
    queue.addRateLimited('f');
    assert.equal(queue.length, 2, 'refused keys are not queued');
    release.open();
    await within('drained shutdown', stopped);
    assert.deepEqual(runs, ['a', 'b', 'c']);
    assert.ok(
      signals.every((s) => !s.aborted),
      'a drain never aborts',
    );
    const refused = lines
      .filter((l) => l.message === 'work queue is shut down; dropping key')
      .map((l) => l.key);
    assert.deepEqual(refused, ['d', 'e', 'f']);
  });

  it('with drain runs once more a key that was re-added while in flight', async () => {
    const release = queues.gate();
    let runs = 0;
    const queue = makeQueue({
      reconcile: async () => {
        runs += 1;
        if (runs === 1) await release.promise;
      },
    });
    queue.start();
    queue.add('k');
    await waitFor(() => queue.inFlight === 1, { ...QUEUE_POLL, what: 'k in flight' });
    queue.add('k');
    const stopped = queue.shutdown({ drain: true });
    release.open();
    await within('drained shutdown', stopped);
    assert.equal(runs, 2);
  });

  it('with drain drops delayed keys and does not retry failures', async () => {
    const release = queues.gate();
    const runs: string[] = [];
    const queue = makeQueue({
      reconcile: async (key) => {
        runs.push(key);
        await release.promise;
        throw new Error('odl unavailable');
      },
    });
    queue.start();
    queue.add('a');
    queue.addAfter('later', 600_000);
    await waitFor(() => queue.inFlight === 1, { ...QUEUE_POLL, what: 'a in flight' });
    const stopped = queue.shutdown({ drain: true });
    assert.equal(queue.delayed, 0);
    release.open();
    await within('drained shutdown', stopped);
    assert.deepEqual(runs, ['a']);
    assert.equal(queue.delayed, 0);
    await within('idle', queue.idle());
  });

  it('without drain aborts in-flight signals, drops ready keys and waits for the aborted work', async () => {
    const runs: string[] = [];
    let settled = false;
    let seenSignal: AbortSignal | undefined;
    const queue = makeQueue({
      reconcile: async (key, signal) => {
        runs.push(key);
        seenSignal = signal;
        try {
          await untilAborted(signal);
        } finally {
          settled = true;
        }
      },
    });
    queue.start();
    queue.add('a');
    queue.add('b');
    await waitFor(() => queue.inFlight === 1, { ...QUEUE_POLL, what: 'a in flight' });
    await within('shutdown', queue.shutdown());
    assert.equal(seenSignal?.aborted, true);
    assert.match(String((seenSignal?.reason as Error).message), /work queue "test" shut down/);
    assert.equal(settled, true, 'shutdown resolved only after the aborted reconcile settled');
    assert.deepEqual(runs, ['a']);
    assert.equal(queue.length, 0);
    assert.equal(queue.inFlight, 0);
    assert.equal(queue.numRequeues('a'), 0, 'an aborted reconcile is not counted as a failure to retry');
  });

  it('a timeout aborts a drain that takes too long and returns without the stuck reconcile', async () => {
    const release = queues.gate();
    let seenSignal: AbortSignal | undefined;
    const queue = makeQueue({
      reconcile: async (_key, signal) => {
        seenSignal = signal;
        await release.promise; // ignores its signal on purpose
      },
    });
    queue.start();
    queue.add('stuck');
    queue.add('next');
    await waitFor(() => queue.inFlight === 1, { ...QUEUE_POLL, what: 'stuck in flight' });
    await within('shutdown with timeout', queue.shutdown({ drain: true, timeoutMs: 20 }));
    assert.equal(seenSignal?.aborted, true);
    assert.equal(queue.inFlight, 1, 'the stuck reconcile is still running');
    assert.equal(queue.length, 0, 'ready keys were dropped');
    release.open();
    await within('idle', queue.idle());
  });

  it('a second shutdown without drain escalates a drain to an abort', async () => {
    let seenSignal: AbortSignal | undefined;
    const queue = makeQueue({
      reconcile: async (_key, signal) => {
        seenSignal = signal;
        await untilAborted(signal);
      },
    });
    queue.start();
    queue.add('k');
    await waitFor(() => queue.inFlight === 1, { ...QUEUE_POLL, what: 'k in flight' });
    const draining = queue.shutdown({ drain: true });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(seenSignal?.aborted, false);
    await within('abort', queue.shutdown({ drain: false }));
    await within('drain promise', draining);
    assert.equal(seenSignal?.aborted, true);
  });

  it('before start drops queued keys and never reconciles them', async () => {
    let runs = 0;
    const queue = makeQueue({ reconcile: async () => void (runs += 1) });
    queue.add('a');
    queue.addAfter('b', 600_000);
    await within('shutdown', queue.shutdown({ drain: true }));
    assert.equal(runs, 0);
    assert.equal(queue.length, 0);
    assert.equal(queue.delayed, 0);
  });

  it('start twice or after shutdown is a precise error', async () => {
    const queue = makeQueue({ reconcile: async () => undefined });
    queue.start();
    assert.throws(() => queue.start(), /work queue "test" is already started/);
    await queue.shutdown();
    assert.throws(() => queue.start(), /work queue "test" was shut down and cannot start again/);
  });

  it('drops requeueAfterMs results of work finished during a drain', async () => {
    const release = queues.gate();
    const queue = makeQueue({
      reconcile: async () => {
        await release.promise;
        return { requeueAfterMs: 1 };
      },
    });
    queue.start();
    queue.add('k');
    await waitFor(() => queue.inFlight === 1, { ...QUEUE_POLL, what: 'k in flight' });
    const stopped = queue.shutdown({ drain: true });
    release.open();
    await within('shutdown', stopped);
    assert.equal(queue.delayed, 0);
  });

  it('rejects a nonsensical timeout', async () => {
    const queue = makeQueue({ reconcile: async () => undefined });
    await assert.rejects(
      queue.shutdown({ timeoutMs: -1 }),
      /shutdown timeoutMs must be a number >= 0, got -1/,
    );
  });
});
