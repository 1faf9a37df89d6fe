/**
 * The retained change history: a fixed-size ring of the most recent events, indexed by
 * resourceVersion. Every write bumps the one global resourceVersion by exactly one and records
 * exactly one event, so the event for version `rv` lives in slot `rv % limit` and a watch (or a
 * paged list) can start from any retained version in O(1).
 */
import type { KubeObject, ResourceType } from './resources.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  rv: number;
  type: EventType;
  resource: ResourceType;
  /** The object after the change; for DELETED the last state, stamped with the deletion's version. */
  object: KubeObject;
  /** The object before the change (undefined for ADDED): lets a list be rebuilt as of an older version. */
  previous: KubeObject | undefined;
}

export class EventHistory {
  private readonly ring: (StoreEvent | undefined)[];
  private last = 0;
  /** Events with rv <= compacted are gone; a watch or list needs `rv >= compacted`. */
  private compacted = 0;

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new Error(`historyLimit must be a positive integer, got ${limit}`);
    this.ring = new Array<StoreEvent | undefined>(limit);
  }

  /** The oldest resourceVersion a watch or consistent list may start from. */
  get oldestStart(): number {
    return this.compacted;
  }

  append(event: StoreEvent): void {
    if (event.rv !== this.last + 1)
      throw new Error(`history: event ${event.rv} does not follow ${this.last}`);
    this.ring[event.rv % this.limit] = event;
    this.last = event.rv;
    if (this.last - this.compacted > this.limit) this.compacted = this.last - this.limit;
  }

  /** Forgets every retained event, as an etcd compaction at the current revision does. */
  compact(): void {
    this.ring.fill(undefined);
    this.compacted = this.last;
  }

  /** Whether every event after `rv` is still retained. */
  covers(rv: number): boolean {
    return rv >= this.compacted;
  }

  /** The retained events after `rv`, oldest first. Callers check `covers(rv)` first. */
  *after(rv: number): Generator<StoreEvent> {
    for (let at = Math.max(rv, this.compacted) + 1; at <= this.last; at++) {
      const event = this.ring[at % this.limit];
      if (event) yield event;
    }
  }
}
