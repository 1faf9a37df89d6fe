import type { Registry } from '../common/metrics.js';
import { Counter, Gauge, Histogram, LATENCY_BUCKETS, metric } from '../common/metrics.js';

/**
 * client-go's workqueue metrics under `odlcoe_workqueue_`, one label `name` per queue, plus
 * a reconcile outcome counter. Queues on one registry share the metric families.
 */
export type ReconcileOutcome = 'success' | 'error' | 'requeue';

/** What the queue reports at scrape time about the work it is doing right now. */
export interface InFlightView {
  /** Seconds spent so far by every reconcile still running, summed. */
  unfinishedWorkSeconds(): number;
  /** Seconds the oldest reconcile still running has taken so far. */
  longestRunningSeconds(): number;
}

const PREFIX = 'odlcoe_workqueue_';

/**
 * The scrape-time gauges read live queues through these maps (gauge → queue name → view),
 * because a family registered by the first queue must also report the queues made later.
 */
const inFlightViews = new WeakMap<Gauge, Map<string, () => number>>();

function scrapedGauge(registry: Registry, name: string, help: string): Gauge {
  return metric(registry, PREFIX + name, () => {
    const views = new Map<string, () => number>();
    const gauge = new Gauge({
      name: PREFIX + name,
      help,
      labelNames: ['name'],
      registers: [],
      collect() {
        for (const [queue, read] of views) this.set({ name: queue }, read());
      },
    });
    inFlightViews.set(gauge, views);
    return gauge;
  });
}

function viewsOf(gauge: Gauge, name: string): Map<string, () => number> {
  const views = inFlightViews.get(gauge);
  // Only this module registers these names; anything else under them is a wiring mistake.
  if (!views)
    throw new Error(`metric ${PREFIX}${name} was registered by something other than the work queue`);
  return views;
}

export class WorkQueueMetrics {
  private readonly labels: { name: string };
  private readonly depthGauge: Gauge;
  private readonly adds: Counter;
  private readonly retries: Counter;
  private readonly queueDuration: Histogram;
  private readonly workDuration: Histogram;
  private readonly results: Counter;
  private readonly unfinished: Gauge;
  private readonly longest: Gauge;

  constructor(registry: Registry, queueName: string, view: InFlightView) {
    this.labels = { name: queueName };
    this.depthGauge = metric(
      registry,
      `${PREFIX}depth`,
      () =>
        new Gauge({
          name: `${PREFIX}depth`,
          help: 'Keys ready and waiting for a worker (not counting keys in backoff or in flight).',
          labelNames: ['name'],
          registers: [],
        }),
    );
    this.adds = metric(
      registry,
      `${PREFIX}adds_total`,
      () =>
        new Counter({
          name: `${PREFIX}adds_total`,
          help: 'Keys added to the queue (an add of a key already waiting is not counted).',
          labelNames: ['name'],
          registers: [],
        }),
    );
    this.retries = metric(
      registry,
      `${PREFIX}retries_total`,
      () =>
        new Counter({
          name: `${PREFIX}retries_total`,
          help: 'Rate-limited re-adds, i.e. retries after a failed reconcile.',
          labelNames: ['name'],
          registers: [],
        }),
    );
    this.queueDuration = metric(
      registry,
      `${PREFIX}queue_duration_seconds`,
      () =>
        new Histogram({
          name: `${PREFIX}queue_duration_seconds`,
          help: 'Seconds a key waited in the queue between being added and a worker taking it.',
          labelNames: ['name'],
          buckets: LATENCY_BUCKETS,
          registers: [],
        }),
    );
    this.workDuration = metric(
      registry,
      `${PREFIX}work_duration_seconds`,
      () =>
        new Histogram({
          name: `${PREFIX}work_duration_seconds`,
          help: 'Seconds one reconcile of a key took.',
          labelNames: ['name'],
          buckets: LATENCY_BUCKETS,
          registers: [],
        }),
    );
    this.results = metric(
      registry,
      `${PREFIX}reconcile_total`,
      () =>
        new Counter({
          name: `${PREFIX}reconcile_total`,
          help: 'Reconciles finished, by result: success, error (retried with backoff) or requeue (asked to look again later).',
          labelNames: ['name', 'result'],
          registers: [],
        }),
    );
    this.unfinished = scrapedGauge(
      registry,
      'unfinished_work_seconds',
      'Seconds of work done so far by reconciles still running; a steady climb means a stuck worker.',
    );
    this.longest = scrapedGauge(
      registry,
      'longest_running_processor_seconds',
      'Seconds the longest-running reconcile of the queue has been running.',
    );

    const unfinishedViews = viewsOf(this.unfinished, 'unfinished_work_seconds');
    if (unfinishedViews.has(queueName)) {
      throw new Error(`a work queue named "${queueName}" is already running on this metrics registry`);
    }
    unfinishedViews.set(queueName, () => view.unfinishedWorkSeconds());
    viewsOf(this.longest, 'longest_running_processor_seconds').set(queueName, () =>
      view.longestRunningSeconds(),
    );

    // Publish zeroes at once, so a queue that never saw a key still shows up in /metrics.
    this.depthGauge.set(this.labels, 0);
    this.adds.inc(this.labels, 0);
    this.retries.inc(this.labels, 0);
    for (const result of ['success', 'error', 'requeue'] as const)
      this.results.inc({ ...this.labels, result }, 0);
  }

  depth(keys: number): void {
    this.depthGauge.set(this.labels, keys);
  }

  added(): void {
    this.adds.inc(this.labels);
  }

  retried(): void {
    this.retries.inc(this.labels);
  }

  waited(seconds: number): void {
    this.queueDuration.observe(this.labels, seconds);
  }

  worked(seconds: number): void {
    this.workDuration.observe(this.labels, seconds);
  }

  finished(result: ReconcileOutcome): void {
    this.results.inc({ ...this.labels, result });
  }

  /** Detaches a stopped queue: its in-flight gauges read zero and its name may be reused. */
  close(): void {
    viewsOf(this.unfinished, 'unfinished_work_seconds').delete(this.labels.name);
    viewsOf(this.longest, 'longest_running_processor_seconds').delete(this.labels.name);
    this.unfinished.set(this.labels, 0);
    this.longest.set(this.labels, 0);
    this.depthGauge.set(this.labels, 0);
  }
}
