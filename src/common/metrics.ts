import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export { Counter, Gauge, Histogram, Registry };

/** A registry for one daemon, with the process metrics Prometheus users expect. */
export function createRegistry(prefix = 'odlcoe_'): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix });
  return registry;
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
