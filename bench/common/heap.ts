/**
 * Heap figures of a benchmark's process under test, by component, in bounded time at any size.
 *
 * A heap snapshot gives exact retained sizes but takes minutes and gigabytes at 100,000 pods;
 * instead each component (a cache of many similar records) is measured as its record count times
 * the heap one record takes, where that is measured by deep-copying a sample of records
 * (`structuredClone`) between two forced collections. A copy owns all its strings, so the figure
 * is an upper bound where records share strings (keys, interned names); it does not count the
 * container (a Map's table: a few dozen bytes per record). The process must run with
 * `--expose-gc`; without it the figures are undefined.
 */
import v8 from 'node:v8';

/** Records measured per component: enough for a stable mean, bounded whatever the size. */
const SAMPLE = 1_000;

const collect = (globalThis as { gc?: () => void }).gc;

/** Whether forced collections are available (`node --expose-gc`). */
export const canCollect = collect !== undefined;

/** Collects garbage twice (the second pass frees what the first one's finalisers released). */
export function fullGc(): void {
  collect?.();
  collect?.();
}

/** Heap in use after a full collection, in bytes; undefined without `--expose-gc`. */
export function liveHeap(): number | undefined {
  if (!collect) return undefined;
  fullGc();
  return v8.getHeapStatistics().used_heap_size;
}

/** One component's figure: its records and the heap they take (estimated, see above). */
export interface ComponentHeap {
  name: string;
  records: number;
  bytes: number | undefined;
}

/**
 * `records` records, of which `sample` is an evenly spread selection (up to 1,000 are used):
 * the heap per record, times the count.
 */
export function componentHeap(name: string, records: number, sample: Iterable<unknown>): ComponentHeap {
  const picked: unknown[] = [];
  const stride = Math.max(1, Math.floor(records / SAMPLE));
  let i = 0;
  for (const record of sample) {
    if (i % stride === 0 && picked.length < SAMPLE) picked.push(record);
    i += 1;
  }
  if (picked.length === 0 || !collect) return { name, records, bytes: picked.length === 0 ? 0 : undefined };
  const before = liveHeap() ?? 0;
  const copies = picked.map((r) => structuredClone(r));
  const after = liveHeap() ?? 0;
  // Keeps the copies alive until `after` was read.
  if (copies.length !== picked.length) throw new Error('structuredClone lost records');
  return { name, records, bytes: Math.max(0, ((after - before) / picked.length) * records) };
}
