import type { KubernetesObject } from '@kubernetes/client-node';
import { objectKey, resourceVersionOf } from './object-key.js';

/** What one change did to the cache, so the informer knows which handlers to call. */
export type StoreChange<T> =
  | { kind: 'add'; obj: T }
  | { kind: 'update'; obj: T; old: T }
  | { kind: 'delete'; obj: T }
  | { kind: 'unchanged' };

/** What a relist did: everything consumers must hear about to catch up with the gap. */
export interface ReplaceResult<T> {
  added: T[];
  updated: { obj: T; old: T }[];
  deleted: T[];
}

/**
 * An informer's cache, keyed by `namespace/name`. An update counts only when the
 * resourceVersion differs (a re-delivered or re-listed object is not a change); versions are
 * compared for equality only, never ordered.
 */
export class ObjectStore<T extends KubernetesObject> {
  private objects = new Map<string, T>();

  get size(): number {
    return this.objects.size;
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  list(): T[] {
    return [...this.objects.values()];
  }

  /** Stores an added or modified object. */
  upsert(obj: T): StoreChange<T> {
    const key = objectKey(obj);
    const old = this.objects.get(key);
    this.objects.set(key, obj);
    if (!old) return { kind: 'add', obj };
    if (resourceVersionOf(old) === resourceVersionOf(obj)) return { kind: 'unchanged' };
    return { kind: 'update', obj, old };
  }

  /** Removes a deleted object; the event's copy is the last state the server had. */
  remove(obj: T): StoreChange<T> {
    const key = objectKey(obj);
    if (!this.objects.has(key)) return { kind: 'unchanged' };
    this.objects.delete(key);
    return { kind: 'delete', obj };
  }

  /**
   * Swaps in a complete list in one step and reports the difference: objects missing from
   * the list are deleted (delivered with their last cached state), changed ones updated,
   * new ones added. Throws before touching the cache if any item has no name.
   */
  replace(items: T[]): ReplaceResult<T> {
    const next = new Map<string, T>();
    for (const obj of items) next.set(objectKey(obj), obj);
    const result: ReplaceResult<T> = { added: [], updated: [], deleted: [] };
    for (const [key, old] of this.objects) {
      if (!next.has(key)) result.deleted.push(old);
    }
    for (const [key, obj] of next) {
      const old = this.objects.get(key);
      if (!old) result.added.push(obj);
      else if (resourceVersionOf(old) !== resourceVersionOf(obj)) result.updated.push({ obj, old });
    }
    this.objects = next;
    return result;
  }
}
