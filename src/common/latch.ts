/**
 * A condition that becomes true once and stays true ("OVS is set up", "the subnet is known"),
 * to wait for instead of polling it with sleeps.
 */
export class Latch<T = void> {
  private value: { v: T } | undefined;
  private readonly waiters = new Set<(v: T) => void>();

  get isOpen(): boolean {
    return this.value !== undefined;
  }

  open(v: T): void {
    if (this.value) return;
    this.value = { v };
    for (const resolve of this.waiters) resolve(v);
    this.waiters.clear();
  }

  /** Resolves once open (at once when it is); rejects with the signal's reason when it aborts first. */
  wait(signal?: AbortSignal): Promise<T> {
    if (this.value) return Promise.resolve(this.value.v);
    return new Promise<T>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        this.waiters.delete(done);
        reject(signal?.reason);
      };
      const done = (v: T) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(v);
      };
      this.waiters.add(done);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
