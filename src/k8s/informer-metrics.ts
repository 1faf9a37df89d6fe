import { Counter, Gauge, Histogram, LATENCY_BUCKETS, metric } from '../common/metrics.js';
import type { Registry } from '../common/metrics.js';

/** Why a watch ended in an error; a fixed set so the label stays low-cardinality. */
export type WatchErrorKind = 'list' | 'connect' | 'stream' | 'decode' | 'status' | 'watchdog';

/**
 * The informer metric families. Every informer sharing a registry shares the families and
 * is told apart by its `informer` label.
 */
export class InformerMetrics {
  private readonly events: Counter<'informer' | 'type'>;
  private readonly relists: Counter<'informer'>;
  private readonly reconnects: Counter<'informer'>;
  private readonly watchErrors: Counter<'informer' | 'kind'>;
  private readonly objects: Gauge<'informer'>;
  private readonly synced: Gauge<'informer'>;
  private readonly listDuration: Histogram<'informer'>;

  constructor(
    registry: Registry,
    private readonly informer: string,
  ) {
    this.events = metric(
      registry,
      'odlcoe_informer_events_total',
      () =>
        new Counter({
          name: 'odlcoe_informer_events_total',
          help: 'Watch events received, by watch event type (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR).',
          labelNames: ['informer', 'type'],
          registers: [],
        }),
    );
    this.relists = metric(
      registry,
      'odlcoe_informer_relists_total',
      () =>
        new Counter({
          name: 'odlcoe_informer_relists_total',
          help: 'Full lists after the first one (410 Gone: resourceVersion too old).',
          labelNames: ['informer'],
          registers: [],
        }),
    );
    this.reconnects = metric(
      registry,
      'odlcoe_informer_reconnects_total',
      () =>
        new Counter({
          name: 'odlcoe_informer_reconnects_total',
          help: 'Backoff waits before retrying a failed list or watch.',
          labelNames: ['informer'],
          registers: [],
        }),
    );
    this.watchErrors = metric(
      registry,
      'odlcoe_informer_watch_errors_total',
      () =>
        new Counter({
          name: 'odlcoe_informer_watch_errors_total',
          help: 'Failed lists and watches, by kind (list, connect, stream, decode, status, watchdog).',
          labelNames: ['informer', 'kind'],
          registers: [],
        }),
    );
    this.objects = metric(
      registry,
      'odlcoe_informer_objects',
      () =>
        new Gauge({
          name: 'odlcoe_informer_objects',
          help: 'Objects in the informer cache.',
          labelNames: ['informer'],
          registers: [],
        }),
    );
    this.synced = metric(
      registry,
      'odlcoe_informer_synced',
      () =>
        new Gauge({
          name: 'odlcoe_informer_synced',
          help: '1 once the informer delivered its first complete list.',
          labelNames: ['informer'],
          registers: [],
        }),
    );
    this.listDuration = metric(
      registry,
      'odlcoe_informer_list_duration_seconds',
      () =>
        new Histogram({
          name: 'odlcoe_informer_list_duration_seconds',
          help: 'Time to fetch a complete (paged) list.',
          labelNames: ['informer'],
          buckets: LATENCY_BUCKETS,
          registers: [],
        }),
    );
    this.synced.set({ informer }, 0);
    this.objects.set({ informer }, 0);
  }

  event(type: string): void {
    this.events.inc({ informer: this.informer, type });
  }

  relist(): void {
    this.relists.inc({ informer: this.informer });
  }

  reconnect(): void {
    this.reconnects.inc({ informer: this.informer });
  }

  watchError(kind: WatchErrorKind): void {
    this.watchErrors.inc({ informer: this.informer, kind });
  }

  cacheSize(size: number): void {
    this.objects.set({ informer: this.informer }, size);
  }

  setSynced(synced: boolean): void {
    this.synced.set({ informer: this.informer }, synced ? 1 : 0);
  }

  listed(seconds: number): void {
    this.listDuration.observe({ informer: this.informer }, seconds);
  }
}
