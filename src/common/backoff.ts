/**
 * Jittered exponential backoff, shared by RESTCONF retries, informer reconnects, the work
 * queue and the agent's wait for its subnet. "Full jitter" on the upper half of the window:
 * delays spread out (no thundering herd after an ODL election) but never collapse to zero.
 */
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  factor?: number;
  /** 0 = no jitter; 1 = delay drawn from [d/2, d]. */
  jitter?: number;
  random?: () => number;
}

export class Backoff {
  private attempt = 0;
  constructor(private readonly options: BackoffOptions) {
    if (!(options.initialMs > 0) || !(options.maxMs >= options.initialMs)) {
      throw new Error(`invalid backoff: initialMs ${options.initialMs}, maxMs ${options.maxMs}`);
    }
  }

  /** The delay before the next attempt; each call grows the window. */
  next(): number {
    const delay = backoffDelay(this.attempt, this.options);
    this.attempt += 1;
    return delay;
  }

  get attempts(): number {
    return this.attempt;
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** The delay for a given 0-based attempt number. */
export function backoffDelay(attempt: number, options: BackoffOptions): number {
  const { initialMs, maxMs, factor = 2, jitter = 1, random = Math.random } = options;
  const ceiling = Math.min(maxMs, initialMs * factor ** Math.min(attempt, 64));
  return Math.round(ceiling - (ceiling / 2) * jitter * random());
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
