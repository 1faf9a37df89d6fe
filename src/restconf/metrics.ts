import { Counter, Histogram, LATENCY_BUCKETS, metric, type Registry } from '../common/metrics.js';
import type { RequestSample } from './client.js';

export const REQUEST_DURATION_METRIC = 'odlcoe_restconf_request_duration_seconds';
export const RETRIES_METRIC = 'odlcoe_restconf_retries_total';

/**
 * The `onRequest` hook that records every attempt: a latency histogram labelled by method,
 * path template (keys replaced by `{key}`, so cardinality stays bounded) and status (`200`,
 * `503`, `timeout`, `network`), and a counter of retries (attempts after the first).
 * Several clients may share one registry.
 */
export function restconfMetrics(registry: Registry): (sample: RequestSample) => void {
  const duration = metric(
    registry,
    REQUEST_DURATION_METRIC,
    () =>
      new Histogram({
        name: REQUEST_DURATION_METRIC,
        help: 'Duration of RESTCONF request attempts to OpenDaylight, by method, path template and status',
        labelNames: ['method', 'path', 'status'],
        buckets: LATENCY_BUCKETS,
        registers: [],
      }),
  );
  const retries = metric(
    registry,
    RETRIES_METRIC,
    () =>
      new Counter({
        name: RETRIES_METRIC,
        help: 'RESTCONF request attempts that retried an earlier failed attempt, by method and path template',
        labelNames: ['method', 'path'],
        registers: [],
      }),
  );
  return (sample) => {
    duration.observe(
      { method: sample.method, path: sample.pathTemplate, status: String(sample.status) },
      sample.seconds,
    );
    if (sample.attempt > 1) retries.inc({ method: sample.method, path: sample.pathTemplate });
  };
}
