/**
 * What the work-queue tests share (not part of the build: tsconfig.build.json excludes
 * testing.ts): queues with fast test defaults that an afterEach hook shuts down, and gates
 * it opens, so a failed test never leaves a worker waiting and the file never hangs.
 */
import { gate, type Gate } from '../../test/helpers/wait.js';
import type { WorkQueueOptions } from './work-queue.js';
import { WorkQueue } from './work-queue.js';

export type TestQueueOptions = Partial<WorkQueueOptions> & Pick<WorkQueueOptions, 'reconcile'>;

export interface TestQueues {
  /** A queue with one worker, millisecond backoff and no effective rate limit, unless overridden. */
  make(options: TestQueueOptions): WorkQueue;
  /** A gate that `closeAll` opens if the test has not. */
  gate(): Gate;
  /** Opens every gate, then shuts every queue down (aborting what still runs after 1 s). */
  closeAll(): Promise<void>;
}

export function testQueues(name = 'test'): TestQueues {
  const queues: WorkQueue[] = [];
  const gates: Gate[] = [];
  return {
    make(options) {
      const queue = new WorkQueue({
        name,
        workers: 1,
        backoff: { baseDelayMs: 1, maxDelayMs: 10 },
        rateLimit: { perSecond: 10_000, burst: 10_000 },
        ...options,
      });
      queues.push(queue);
      return queue;
    },
    gate() {
      const g = gate();
      gates.push(g);
      return g;
    },
    async closeAll() {
      for (const g of gates.splice(0)) g.open();
      await Promise.all(queues.splice(0).map((q) => q.shutdown({ timeoutMs: 1000 })));
    },
  };
}

/** Polls a queue's state every 2 ms: some states last only milliseconds (a 1 ms backoff). */
export const QUEUE_POLL = { intervalMs: 2, timeoutMs: 10_000 } as const;
