import type { LeafValue } from './leaf-types.js';
import type { ListNode } from './schema.js';

/**
 * Stored data. Which shape a child has follows from its schema node:
 * - container / list entry: `Instance` (children by qname);
 * - keyed list: `KeyedList` (entries by their key string), so lookups never scan;
 * - keyless list: `Instance[]` (ordered, replaced whole);
 * - leaf-list: `LeafValue[]`;
 * - leaf: `LeafValue`.
 */
export type Instance = Map<string, Child>;
export type KeyedList = Map<string, Instance>;
export type Child = LeafValue | LeafValue[] | Instance | KeyedList | Instance[];

/** The map key of a list entry: its key values (normalised) joined by NUL. */
export function entryKey(values: readonly LeafValue[]): string {
  return values.length === 1 ? String(values[0]) : values.map(String).join('\u0000');
}

/** The key values of a stored entry, in key order. */
export function entryKeyValues(list: ListNode, entry: Instance): LeafValue[] {
  return list.keys.map((key) => entry.get(`${list.module}:${key}`) as LeafValue);
}
