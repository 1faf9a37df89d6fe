/**
 * Time a process spends in V8's garbage collector, from the `gc` performance entries: what a
 * heap cap too close to the live heap costs (more, longer major collections) shows here first.
 */
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

export interface GcTime {
  /** All pauses, in ms, and how many. */
  ms: number;
  count: number;
  /** Major (mark-compact) collections alone. */
  majorMs: number;
  majors: number;
}

/** Starts summing GC pauses; `stop` ends it and returns the sums. */
export function startGcClock(): { stop(): GcTime } {
  const sums: GcTime = { ms: 0, count: 0, majorMs: 0, majors: 0 };
  const add = (entry: PerformanceEntry) => {
    sums.ms += entry.duration;
    sums.count += 1;
    if (
      (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ===
      constants.NODE_PERFORMANCE_GC_MAJOR
    ) {
      sums.majorMs += entry.duration;
      sums.majors += 1;
    }
  };
  const observer = new PerformanceObserver((list) => list.getEntries().forEach(add));
  observer.observe({ entryTypes: ['gc'] });
  return {
    stop() {
      // Entries are delivered asynchronously: take what is buffered before disconnecting.
      observer.takeRecords().forEach(add);
      observer.disconnect();
      return { ...sums };
    },
  };
}
