/**
 * Keys waiting for a time, earliest first: a binary min-heap with a key → slot index so a
 * key is waiting at most once and can be moved earlier in O(log n). The work queue arms one
 * timer for the top of this heap instead of one timer per key, so 10,000 keys in backoff
 * cost 10,000 small records and a single setTimeout.
 */
interface Entry<K> {
  key: K;
  readyAt: number;
  /** Insertion order, so keys due at the same instant leave in the order they came. */
  seq: number;
}

export class DelayHeap<K> {
  private readonly heap: Entry<K>[] = [];
  private readonly slot = new Map<K, number>();
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  /**
   * Makes `key` due at `readyAt`, unless it is already due earlier (client-go's delaying
   * queue: a shorter delay moves a waiting key earlier, a longer one never postpones it).
   * Returns true when the key was inserted or moved.
   */
  schedule(key: K, readyAt: number): boolean {
    const index = this.slot.get(key);
    if (index === undefined) {
      this.heap.push({ key, readyAt, seq: this.seq++ });
      this.slot.set(key, this.heap.length - 1);
      this.siftUp(this.heap.length - 1);
      return true;
    }
    const entry = this.at(index);
    if (readyAt >= entry.readyAt) return false;
    entry.readyAt = readyAt;
    this.siftUp(index);
    return true;
  }

  /** When `key` becomes due, or undefined when it is not waiting. */
  readyAt(key: K): number | undefined {
    const index = this.slot.get(key);
    return index === undefined ? undefined : this.at(index).readyAt;
  }

  /** The earliest due time, or undefined when nothing waits. */
  peekReadyAt(): number | undefined {
    return this.heap[0]?.readyAt;
  }

  /** Removes and returns every key due at or before `now`, earliest first. */
  popDue(now: number): K[] {
    const due: K[] = [];
    while (this.heap.length > 0 && this.at(0).readyAt <= now) due.push(this.popTop());
    return due;
  }

  clear(): void {
    this.heap.length = 0;
    this.slot.clear();
  }

  private popTop(): K {
    const top = this.at(0);
    const last = this.heap.pop() as Entry<K>;
    this.slot.delete(top.key);
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.slot.set(last.key, 0);
      this.siftDown(0);
    }
    return top.key;
  }

  private at(index: number): Entry<K> {
    return this.heap[index] as Entry<K>;
  }

  private before(a: Entry<K>, b: Entry<K>): boolean {
    return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
  }

  private swap(i: number, j: number): void {
    const a = this.at(i);
    const b = this.at(j);
    this.heap[i] = b;
    this.heap[j] = a;
    this.slot.set(b.key, i);
    this.slot.set(a.key, j);
  }

  private siftUp(index: number): void {
    let i = index;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(this.at(i), this.at(parent))) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(index: number): void {
    let i = index;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < this.heap.length && this.before(this.at(left), this.at(smallest))) smallest = left;
      if (right < this.heap.length && this.before(this.at(right), this.at(smallest))) smallest = right;
      if (smallest === i) return;
      this.swap(i, smallest);
      i = smallest;
    }
  }
}
