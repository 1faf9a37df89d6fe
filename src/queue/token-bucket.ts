import { performance } from 'node:perf_hooks';

/**
 * A token bucket that never refuses: `reserve()` takes a token now, or one that will only
 * exist in the future, and says how long to wait for it. That is the semantics of Go's
 * `rate.Limiter.Reserve()` that client-go's `BucketRateLimiter` uses: the bucket may run
 * into debt, and each later caller waits behind the earlier ones, so a storm of N retries is
 * spread over N / perSecond seconds instead of being dropped or bunched together.
 */
export interface TokenBucketOptions {
  /** Refill rate in tokens per second. */
  perSecond: number;
  /** Capacity: how many reservations may be served at once after a quiet period. */
  burst: number;
  /** Monotonic clock in milliseconds; tests pass a fake one. */
  now?: () => number;
}

export class TokenBucket {
  readonly perSecond: number;
  readonly burst: number;
  private readonly now: () => number;
  /** May go negative: that is the debt later reservations wait off. */
  private tokens: number;
  private refilledAt: number;

  constructor(options: TokenBucketOptions) {
    const { perSecond, burst } = options;
    if (typeof perSecond !== 'number' || !Number.isFinite(perSecond) || perSecond <= 0) {
      throw new RangeError(`token bucket perSecond must be a finite number > 0, got ${String(perSecond)}`);
    }
    if (typeof burst !== 'number' || !Number.isInteger(burst) || burst < 1) {
      throw new RangeError(`token bucket burst must be an integer >= 1, got ${String(burst)}`);
    }
    this.perSecond = perSecond;
    this.burst = burst;
    this.now = options.now ?? (() => performance.now());
    this.tokens = burst;
    this.refilledAt = this.now();
  }

  /** Takes one token and returns the milliseconds until it is really there (0 = now). */
  reserve(): number {
    this.refill();
    this.tokens -= 1;
    // Multiply before dividing so 3 tokens of debt at 10/s is exactly 300 ms, not 300.00000000000006.
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.perSecond;
  }

  /** Tokens available now; negative while reservations are outstanding. */
  get available(): number {
    this.refill();
    return this.tokens;
  }

  private refill(): void {
    const now = this.now();
    const elapsedMs = now - this.refilledAt;
    // A clock that stands still or steps back adds nothing (and never removes tokens).
    if (elapsedMs <= 0) return;
    this.tokens = Math.min(this.burst, this.tokens + (elapsedMs * this.perSecond) / 1000);
    this.refilledAt = now;
  }
}
