import { backoffDelay } from '../common/backoff.js';
import { TokenBucket } from './token-bucket.js';

/**
 * client-go's `DefaultControllerRateLimiter`: the larger of a per-key exponential backoff
 * (one key that keeps failing backs off on its own, without slowing the others) and an
 * overall token bucket (when ODL goes away and every key fails at once, retries are spread
 * out instead of hammering it the moment it returns).
 */
export interface RetryRateLimiterOptions {
  baseDelayMs?: number;
  maxDelayMs?: number;
  perSecond?: number;
  burst?: number;
  /** Monotonic clock in milliseconds for the bucket; tests pass a fake one. */
  now?: () => number;
}

/** client-go's defaults: 5 ms doubling to 1000 s (about 17 minutes). */
export const DEFAULT_BASE_DELAY_MS = 5;
export const DEFAULT_MAX_DELAY_MS = 1_000_000;
/** client-go's defaults for the overall bucket: 10 retries a second, bursts of 100. */
export const DEFAULT_RETRIES_PER_SECOND = 10;
export const DEFAULT_RETRY_BURST = 100;

export class RetryRateLimiter<K extends string = string> {
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly bucket: TokenBucket;
  private readonly failures = new Map<K, number>();

  constructor(options: RetryRateLimiterOptions = {}) {
    const { baseDelayMs = DEFAULT_BASE_DELAY_MS, maxDelayMs = DEFAULT_MAX_DELAY_MS } = options;
    if (typeof baseDelayMs !== 'number' || !Number.isFinite(baseDelayMs) || baseDelayMs <= 0) {
      throw new RangeError(`backoff baseDelayMs must be a finite number > 0, got ${String(baseDelayMs)}`);
    }
    if (typeof maxDelayMs !== 'number' || !Number.isFinite(maxDelayMs) || maxDelayMs < baseDelayMs) {
      throw new RangeError(
        `backoff maxDelayMs must be a finite number >= baseDelayMs (${baseDelayMs}), got ${String(maxDelayMs)}`,
      );
    }
    this.baseDelayMs = baseDelayMs;
    this.maxDelayMs = maxDelayMs;
    this.bucket = new TokenBucket({
      perSecond: options.perSecond ?? DEFAULT_RETRIES_PER_SECOND,
      burst: options.burst ?? DEFAULT_RETRY_BURST,
      ...(options.now ? { now: options.now } : {}),
    });
  }

  /**
   * Records one more failure of `key` and returns how long to wait before retrying it.
   * Like client-go, the bucket is charged even when the per-key delay is the larger one, so
   * the overall rate bounds every retry, not only the early ones.
   */
  when(key: K): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    const perKey = backoffDelay(failures, { initialMs: this.baseDelayMs, maxMs: this.maxDelayMs, jitter: 0 });
    return Math.max(perKey, this.bucket.reserve());
  }

  /** Clears the failure count after a success, so the next failure starts from the base delay. */
  forget(key: K): void {
    this.failures.delete(key);
  }

  /** How many times `key` has failed since it was last forgotten. */
  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}
