/**
 * The ready keys in arrival order. An array with a moving head: `Array.prototype.shift` is
 * O(n), which turns draining 10,000 ready keys into 50 million moves. The consumed prefix is
 * dropped once it is at least half the array, so memory stays proportional to what waits.
 * Uniqueness is the caller's job (the work queue's dirty set).
 */
export class KeyFifo<K> {
  private items: K[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(key: K): void {
    this.items.push(key);
  }

  shift(): K | undefined {
    if (this.head >= this.items.length) return undefined;
    const key = this.items[this.head] as K;
    this.head += 1;
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    } else if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    }
    return key;
  }

  /** Empties the queue and returns what was in it, in order. */
  drain(): K[] {
    const rest = this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    return rest;
  }
}
