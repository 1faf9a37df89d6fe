import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export { Counter, Gauge, Histogram, Registry };

/**
 * The process metrics (prom-client's defaults), once per prefix for the whole process: their
 * GC histogram is fed by a PerformanceObserver that is never disconnected, so a registry they
 * were collected into stays reachable for ever, and with it every metric registered there and
 * whatever the metrics' collect functions hold (a watcher's caches, through its progress
 * gauges). Shared, they hold nothing of any one daemon.
 */
const processMetrics = new Map<string, Registry>();

/**
 * A registry for one daemon, with the process metrics Prometheus users expect (shared, see
 * `processMetrics`: a daemon's registry is garbage once the daemon is).
 */
export function createRegistry(prefix = 'odlcoe_'): Registry {
  let defaults = processMetrics.get(prefix);
  if (!defaults) {
    defaults = new Registry();
    collectDefaultMetrics({ register: defaults, prefix });
    processMetrics.set(prefix, defaults);
  }
  return Registry.merge([defaults]);
}

/**
 * Returns the metric already registered under `name`, or registers the one `make` builds.
 * Components that take an optional registry call this so that two instances sharing a
 * registry (two informers, two queues) share one metric family instead of throwing.
 */
export function metric<T extends Counter | Gauge | Histogram>(
  registry: Registry,
  name: string,
  make: () => T,
): T {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as T;
  const created = make();
  registry.registerMetric(created);
  return created;
}

/** Latency buckets in seconds, from 1 ms to 60 s. */
export const LATENCY_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];
