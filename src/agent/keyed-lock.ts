/**
 * One lock per key (the CNI sandbox: container id). Requests for one sandbox run one after
 * the other in arrival order (an ADD and the DEL that follows a timed-out ADD must never
 * interleave); requests for different sandboxes run in parallel.
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `fn` once every earlier holder of `key` has finished. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Whether some request for `key` is running or waiting. */
  isHeld(key: string): boolean {
    return this.tails.has(key);
  }
}
