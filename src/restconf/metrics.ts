import { Counter, Histogram, LATENCY_BUCKETS, metric, type Registry } from '../common/metrics.js';
import type { BatchSample, RequestSample } from './client.js';

export const REQUEST_DURATION_METRIC = 'odlcoe_restconf_request_duration_seconds';
export const RETRIES_METRIC = 'odlcoe_restconf_retries_total';
export const PATCH_EDITS_METRIC = 'odlcoe_restconf_patch_edits';
export const EDITS_METRIC = 'odlcoe_restconf_patch_edits_total';

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

/** Edits per YANG-Patch request: 1, 2, 5, … 1,000. */
const PATCH_SIZE_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];

/**
 * The `onBatch` hook of batched writes: a histogram of edits per YANG-Patch request (its
 * `_count` is the number of patches sent) and a counter of edits sent in patches by the
 * patch's result (`rate()` of `result="ok"` is edits applied per second).
 */
export function restconfBatchMetrics(registry: Registry): (sample: BatchSample) => void {
  const size = metric(
    registry,
    PATCH_EDITS_METRIC,
    () =>
      new Histogram({
        name: PATCH_EDITS_METRIC,
        help: 'Edits per YANG-Patch request sent to OpenDaylight, by result',
        labelNames: ['result'],
        buckets: PATCH_SIZE_BUCKETS,
        registers: [],
      }),
  );
  const edits = metric(
    registry,
    EDITS_METRIC,
    () =>
      new Counter({
        name: EDITS_METRIC,
        help: 'Edits sent in YANG-Patch requests, by the result of their patch (ok: applied)',
        labelNames: ['result'],
        registers: [],
      }),
  );
  return (sample) => {
    size.observe({ result: sample.result }, sample.edits);
    edits.inc({ result: sample.result }, sample.edits);
  };
}
