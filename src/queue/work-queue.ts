import { performance } from 'node:perf_hooks';
import type { Logger } from '../common/log.js';
import { errorMessage, silentLogger } from '../common/log.js';
import { Registry } from '../common/metrics.js';
import { DelayHeap } from './delay-heap.js';
import { KeyFifo } from './key-fifo.js';
import { RetryRateLimiter } from './retry-rate-limiter.js';
import type { ReconcileOutcome } from './work-queue-metrics.js';
import { WorkQueueMetrics } from './work-queue-metrics.js';

/**
 * The keyed work queue that drives every reconciler, with client-go's semantics:
 *
 * - a key is queued at most once (dedup), and never processed by two workers at once;
 * - a key added while it is being processed is processed once more afterwards;
 * - a failed reconcile is retried after max(per-key exponential backoff, overall bucket);
 *   a successful one forgets the key's failures;
 * - ready keys are taken in arrival order by up to `workers` concurrent reconciles.
 *
 * Informer handlers only call `add`; `reconcile(key)` reads the current state and makes ODL
 * right, so running a key more often than needed is harmless and running it too rarely is
 * the only real bug. Every choice below errs towards running a key again.
 */

/** Success, but look at the key again after this many milliseconds (e.g. a grace period). */
export interface ReconcileResult {
  requeueAfterMs?: number;
}

export interface WorkQueueOptions<K extends string = string> {
  /** The `name` label of the queue's metrics and the `queue` field of its logs. */
  name: string;
  /** How many keys may be reconciled at once. */
  workers: number;
  /** Throwing (or rejecting) means: retry this key with backoff. */
  reconcile: (key: K, signal: AbortSignal) => Promise<ReconcileResult | void>;
  /** Per-key exponential backoff for retries; default 5 ms doubling to 1000 s (client-go). */
  backoff?: { baseDelayMs?: number; maxDelayMs?: number };
  /** Overall token bucket for retries; default 10 per second, bursts of 100 (client-go). */
  rateLimit?: { perSecond: number; burst: number };
  registry?: Registry;
  logger?: Logger;
}

export interface ShutdownOptions {
  /** true: finish the ready keys and the reconciles in flight; false (default): abort them. */
  drain?: boolean;
  /** Bound on the whole shutdown; when it passes, in-flight reconciles are aborted and not awaited. */
  timeoutMs?: number;
}

/** setTimeout fires at once for delays above 2^31-1 ms; longer waits are armed in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

type Outcome = { kind: 'success' } | { kind: 'requeue'; afterMs: number } | { kind: 'error'; error: unknown };

export class WorkQueue<K extends string = string> {
  readonly name: string;
  private readonly workers: number;
  private readonly reconcileKey: WorkQueueOptions<K>['reconcile'];
  private readonly logger: Logger;
  private readonly limiter: RetryRateLimiter<K>;
  private readonly metrics: WorkQueueMetrics;

  /** Keys that need a reconcile: those in `ready` plus those re-added while processing. */
  private readonly dirty = new Set<K>();
  private readonly ready = new KeyFifo<K>();
  /** Key → when its current reconcile started (monotonic ms). */
  private readonly processing = new Map<K, number>();
  /** Key → when it became dirty, for the queue duration histogram. */
  private readonly addedAt = new Map<K, number>();
  private readonly delays = new DelayHeap<K>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private pumpScheduled = false;

  private started = false;
  private shuttingDown = false;
  /** Aborted by shutdown without drain or a shutdown timeout; every reconcile gets its signal. */
  private readonly abort = new AbortController();
  private readonly stopped: Promise<void>;
  private readonly resolveStopped: () => void;
  private isStopped = false;
  private idleWaiters: Array<() => void> = [];

  constructor(options: WorkQueueOptions<K>) {
    if (typeof options.name !== 'string' || options.name === '') {
      throw new TypeError('work queue name must be a non-empty string');
    }
    if (!Number.isInteger(options.workers) || options.workers < 1) {
      throw new RangeError(
        `work queue "${options.name}": workers must be an integer >= 1, got ${String(options.workers)}`,
      );
    }
    if (typeof options.reconcile !== 'function') {
      throw new TypeError(`work queue "${options.name}": reconcile must be a function`);
    }
    let resolveStopped = (): void => undefined;
    this.stopped = new Promise<void>((resolve) => (resolveStopped = resolve));
    this.resolveStopped = resolveStopped;
    this.name = options.name;
    this.workers = options.workers;
    this.reconcileKey = options.reconcile;
    this.logger = options.logger ?? silentLogger();
    try {
      this.limiter = new RetryRateLimiter<K>({ ...options.backoff, ...options.rateLimit });
    } catch (err) {
      throw new RangeError(`work queue "${options.name}": ${errorMessage(err)}`);
    }
    this.metrics = new WorkQueueMetrics(options.registry ?? new Registry(), this.name, {
      unfinishedWorkSeconds: () => this.unfinishedWorkSeconds(),
      longestRunningSeconds: () => this.longestRunningSeconds(),
    });
  }

  /** Keys ready and waiting for a worker. */
  get length(): number {
    return this.ready.length;
  }

  /** Keys being reconciled right now. */
  get inFlight(): number {
    return this.processing.size;
  }

  /** Keys waiting for a delay (addAfter, retry backoff, requeueAfterMs) to pass. */
  get delayed(): number {
    return this.delays.size;
  }

  /** Milliseconds until a delayed key becomes ready; undefined when it is not delayed. */
  delayRemainingMs(key: K): number | undefined {
    const at = this.delays.readyAt(key);
    return at === undefined ? undefined : Math.max(0, at - performance.now());
  }

  /** Queues `key` unless it is already queued; a key being processed runs again afterwards. */
  add(key: K): void {
    this.checkKey(key);
    if (this.refuseAfterShutdown(key, 'add')) return;
    this.enqueue(key);
  }

  /**
   * Queues `key` after `delayMs`. A key already waiting keeps the earlier of its two due
   * times (a shorter delay moves it earlier, a longer one never postpones it). A delay of
   * zero or less is a plain `add`. A waiting key stays waiting when it is also added now, so
   * it may run once more than strictly needed, never less.
   */
  addAfter(key: K, delayMs: number): void {
    this.checkKey(key);
    if (typeof delayMs !== 'number' || !Number.isFinite(delayMs)) {
      throw new RangeError(
        `work queue "${this.name}": addAfter("${key}") needs a finite delay, got ${String(delayMs)}`,
      );
    }
    if (this.refuseAfterShutdown(key, 'addAfter')) return;
    this.schedule(key, delayMs);
  }

  /** Queues `key` after its retry delay: max(per-key backoff, overall bucket). Counts a failure. */
  addRateLimited(key: K): void {
    this.checkKey(key);
    if (this.refuseAfterShutdown(key, 'addRateLimited')) return;
    this.metrics.retried();
    this.schedule(key, this.limiter.when(key));
  }

  /** Clears the key's failure count (the queue does this itself after a successful reconcile). */
  forget(key: K): void {
    this.limiter.forget(key);
  }

  /** Failures of `key` since its last success. */
  numRequeues(key: K): number {
    return this.limiter.numRequeues(key);
  }

  /** Starts the workers. Keys added before start wait for it. */
  start(): void {
    if (this.shuttingDown) throw new Error(`work queue "${this.name}" was shut down and cannot start again`);
    if (this.started) throw new Error(`work queue "${this.name}" is already started`);
    this.started = true;
    this.logger.debug('work queue started', {
      queue: this.name,
      workers: this.workers,
      queued: this.ready.length,
    });
    this.schedulePump();
  }

  /**
   * Stops the queue. New adds are refused from now on (logged at debug, not thrown:
   * informer handlers and in-flight reconciles race with shutdown and must not crash on
   * it). Delayed keys are dropped: a retry 15 minutes away is not work to wait for, and the
   * next leader or process reconciles every key anyway.
   *
   * - `drain: true`: ready keys and in-flight reconciles finish (a key re-added while in
   *   flight before the shutdown runs once more); their retries and requeues are dropped.
   * - `drain: false`: in-flight signals are aborted and ready keys dropped; the call resolves
   *   when the aborted reconciles have settled.
   * - `timeoutMs`: when it passes first, in-flight signals are aborted, ready keys dropped,
   *   and the call resolves without waiting for reconciles that ignore their signal.
   *
   * A queue that was never started has no work in flight: it drops its keys and stops.
   * Calling again escalates a drain to an abort when `drain` is false.
   */
  async shutdown(options: ShutdownOptions = {}): Promise<void> {
    const { drain = false, timeoutMs } = options;
    if (
      timeoutMs !== undefined &&
      (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs < 0)
    ) {
      throw new RangeError(
        `work queue "${this.name}": shutdown timeoutMs must be a number >= 0, got ${String(timeoutMs)}`,
      );
    }
    if (!this.shuttingDown) {
      this.shuttingDown = true;
      const droppedDelayed = this.delays.size;
      this.delays.clear();
      this.disarmTimer();
      this.logger.info('work queue shutting down', {
        queue: this.name,
        drain,
        queued: this.ready.length,
        inFlight: this.processing.size,
        droppedDelayed,
      });
      if (!this.started) this.dropReady();
    }
    if (!drain) this.abortInFlight('shut down');
    this.checkStopped();
    if (timeoutMs === undefined || timeoutMs === Number.POSITIVE_INFINITY) return this.stopped;

    let deadline: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>(
      (resolve) => (deadline = setTimeout(() => resolve('timeout'), timeoutMs)),
    );
    try {
      if ((await Promise.race([this.stopped, timedOut])) === 'timeout') {
        this.abortInFlight(`shutdown timed out after ${timeoutMs} ms`);
        this.checkStopped();
        if (!this.isStopped) {
          this.logger.warn('work queue shutdown timed out; reconciles still running after abort', {
            queue: this.name,
            timeoutMs,
            keys: [...this.processing.keys()],
          });
        }
      }
    } finally {
      clearTimeout(deadline);
    }
  }

  /**
   * Resolves when nothing is ready, delayed or in flight. Keys added before `start` keep a
   * queue busy until it starts; a key in backoff keeps it busy until the retry has run.
   */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private checkKey(key: K): void {
    if (typeof key !== 'string' || key === '') {
      throw new TypeError(
        `work queue "${this.name}": a key must be a non-empty string, got ${JSON.stringify(key)}`,
      );
    }
  }

  private refuseAfterShutdown(key: K, via: string): boolean {
    if (!this.shuttingDown) return false;
    this.logger.debug('work queue is shut down; dropping key', { queue: this.name, key, via });
    return true;
  }

  private schedule(key: K, delayMs: number): void {
    if (delayMs <= 0) {
      this.enqueue(key);
      return;
    }
    if (this.delays.schedule(key, performance.now() + delayMs)) this.armTimer();
  }

  private enqueue(key: K): void {
    if (this.dirty.has(key)) return;
    this.dirty.add(key);
    this.addedAt.set(key, performance.now());
    this.metrics.added();
    // A key in flight goes back to `ready` when its reconcile ends, so one worker owns it.
    if (this.processing.has(key)) return;
    this.ready.push(key);
    this.metrics.depth(this.ready.length);
    this.schedulePump();
  }

  /**
   * Workers are taken in a microtask rather than inside `add`, so an informer handler never
   * runs a reconcile's synchronous part, and keys added in one burst start in their order.
   */
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    queueMicrotask(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    if (!this.started || this.abort.signal.aborted) return;
    while (this.processing.size < this.workers) {
      const key = this.ready.shift();
      if (key === undefined) break;
      const startedAt = performance.now();
      this.dirty.delete(key);
      this.processing.set(key, startedAt);
      this.metrics.waited((startedAt - (this.addedAt.get(key) ?? startedAt)) / 1000);
      this.addedAt.delete(key);
      void this.process(key, startedAt);
    }
    this.metrics.depth(this.ready.length);
  }

  private async process(key: K, startedAt: number): Promise<void> {
    let outcome: Outcome;
    try {
      // Inside the try: a reconcile that throws synchronously is a failure like a rejection.
      outcome = interpret(await this.reconcileKey(key, this.abort.signal));
    } catch (error) {
      outcome = { kind: 'error', error };
    }
    this.metrics.worked((performance.now() - startedAt) / 1000);
    this.processing.delete(key);
    this.finish(key, outcome);

    if (this.dirty.has(key)) {
      this.ready.push(key);
      this.metrics.depth(this.ready.length);
    }
    this.schedulePump();
    this.checkStopped();
    this.checkIdle();
  }

  private finish(key: K, outcome: Outcome): void {
    const result: ReconcileOutcome = outcome.kind;
    this.metrics.finished(result);
    switch (outcome.kind) {
      case 'success':
        this.limiter.forget(key);
        return;
      case 'requeue':
        // Not a failure: the backoff starts over, as controller-runtime does for RequeueAfter.
        this.limiter.forget(key);
        if (!this.refuseAfterShutdown(key, 'requeueAfterMs')) this.schedule(key, outcome.afterMs);
        return;
      case 'error': {
        if (this.abort.signal.aborted) {
          this.logger.debug('reconcile ended after abort', {
            queue: this.name,
            key,
            error: errorMessage(outcome.error),
          });
          return;
        }
        if (this.shuttingDown) {
          this.logger.warn('reconcile failed while draining; not retried', {
            queue: this.name,
            key,
            error: errorMessage(outcome.error),
          });
          return;
        }
        this.metrics.retried();
        const retryInMs = this.limiter.when(key);
        this.logger.warn('reconcile failed; will retry', {
          queue: this.name,
          key,
          failures: this.limiter.numRequeues(key),
          retryInMs: Math.round(retryInMs),
          error: errorMessage(outcome.error),
        });
        this.schedule(key, retryInMs);
        return;
      }
    }
  }

  private armTimer(): void {
    const next = this.delays.peekReadyAt();
    if (next === undefined) {
      this.disarmTimer();
      return;
    }
    if (this.timer !== undefined && this.timerAt <= next) return;
    this.disarmTimer();
    const now = performance.now();
    const wait = Math.min(MAX_TIMER_MS, Math.max(0, next - now));
    this.timerAt = now + wait;
    // Not unref'd: a delayed key is pending work, and letting the process exit under it
    // would lose a retry (and leave `await idle()` hanging on an empty event loop). An idle
    // queue arms no timer, and shutdown disarms it, so a stopped queue holds nothing open.
    this.timer = setTimeout(() => this.onTimer(), wait);
  }

  private disarmTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private onTimer(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    // Timers may fire a little early against performance.now(); such keys re-arm below.
    for (const key of this.delays.popDue(performance.now())) this.enqueue(key);
    this.armTimer();
  }

  private abortInFlight(why: string): void {
    if (this.abort.signal.aborted) return;
    this.abort.abort(new Error(`work queue "${this.name}" ${why}`));
    this.dropReady();
  }

  private dropReady(): void {
    const dropped = this.ready.drain();
    // Keys in flight that were re-added lose their second run too: the queue is stopping.
    this.dirty.clear();
    this.addedAt.clear();
    this.metrics.depth(0);
    if (dropped.length > 0) {
      this.logger.info('work queue dropped ready keys', { queue: this.name, dropped: dropped.length });
    }
  }

  private checkStopped(): void {
    if (this.isStopped || !this.shuttingDown) return;
    if (this.processing.size > 0 || this.ready.length > 0) return;
    this.isStopped = true;
    this.metrics.close();
    this.logger.info('work queue stopped', { queue: this.name });
    this.resolveStopped();
    this.checkIdle();
  }

  private isIdle(): boolean {
    return this.ready.length === 0 && this.processing.size === 0 && this.delays.size === 0;
  }

  private checkIdle(): void {
    if (this.idleWaiters.length === 0 || !this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private unfinishedWorkSeconds(): number {
    const now = performance.now();
    let total = 0;
    for (const startedAt of this.processing.values()) total += now - startedAt;
    return total / 1000;
  }

  private longestRunningSeconds(): number {
    const now = performance.now();
    let oldest = now;
    for (const startedAt of this.processing.values()) oldest = Math.min(oldest, startedAt);
    return (now - oldest) / 1000;
  }
}

/** What a reconcile's return value asks for; a malformed one is a failure, not a silent success. */
function interpret(result: unknown): Outcome {
  if (result === undefined || result === null) return { kind: 'success' };
  if (typeof result !== 'object') {
    return {
      kind: 'error',
      error: new TypeError(`reconcile returned a ${typeof result}; expected a ReconcileResult or nothing`),
    };
  }
  const afterMs = (result as ReconcileResult).requeueAfterMs;
  if (afterMs === undefined || afterMs === 0) return { kind: 'success' };
  if (typeof afterMs !== 'number' || !Number.isFinite(afterMs) || afterMs < 0) {
    return {
      kind: 'error',
      error: new RangeError(
        `reconcile returned requeueAfterMs ${String(afterMs)}; expected a finite number >= 0`,
      ),
    };
  }
  return { kind: 'requeue', afterMs };
}
