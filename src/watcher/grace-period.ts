/**
 * When an instance (VPN, ELAN) stopped being needed. It is deleted only after a grace period
 * without need, so a rolling update (last pod gone, new one a second later) does not delete and
 * re-create a VPN. The clock lives in memory on purpose: after a restart or a leader change
 * the grace period starts over, which can only delay a deletion, never make one early.
 */
export class GracePeriods {
  private readonly since = new Map<string, number>();

  constructor(
    private readonly periodMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The key is needed again (or gone): forget its clock. */
  needed(key: string): void {
    this.since.delete(key);
  }

  /** Milliseconds left before the unneeded key may be deleted (0: now); starts its clock. */
  remaining(key: string): number {
    const now = this.now();
    let since = this.since.get(key);
    if (since === undefined) {
      since = now;
      this.since.set(key, since);
    }
    return Math.max(0, since + this.periodMs - now);
  }

  /** The keys whose clock runs (unneeded, not deleted yet), sorted. */
  running(): string[] {
    return [...this.since.keys()].sort();
  }

  clear(): void {
    this.since.clear();
  }
}
