import { randomInt } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { Backoff, sleep } from '../common/backoff.js';
import type { Logger } from '../common/log.js';
import { createLogger, errorMessage } from '../common/log.js';
import { Registry } from '../common/metrics.js';
import { abortScope } from './abort-scope.js';
import { InformerMetrics } from './informer-metrics.js';
import type { WatchErrorKind } from './informer-metrics.js';
import { KubeApiError, KubeClient, isGone } from './kube-client.js';
import type { KubeStatus, Query } from './kube-client.js';
import { objectKey, resourceVersionOf } from './object-key.js';
import { ObjectStore } from './object-store.js';
import type { StoreChange } from './object-store.js';
import { WatchDecodeError, readWatchEvents } from './watch-stream.js';
import type { WatchEvent } from './watch-stream.js';

export { objectKey } from './object-key.js';

/** What the informer is doing, for logs, metrics and tests. */
export type InformerEvent =
  | { type: 'connect' }
  | { type: 'reconnect'; delayMs: number; reason: string }
  | { type: 'relist'; reason: string }
  | { type: 'error'; error: Error }
  | { type: 'synced'; objects: number }
  | { type: 'bookmark'; resourceVersion: string }
  | { type: 'watchdog'; silentMs: number };

export interface InformerOptions<T extends KubernetesObject = KubernetesObject> {
  /** For logs and the `informer` metric label, e.g. `pods`. */
  name: string;
  kubeConfig: KubeConfig;
  /** List/watch URL path, e.g. `/api/v1/pods` or `/apis/coordination.k8s.io/v1/namespaces/x/leases`. */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Objects per LIST page (`limit`/`continue`); default 500. */
  pageSize?: number;
  /** Each watch asks the server to end it after a random number of seconds in this range; default 5..10 minutes. */
  watchTimeoutSeconds?: [min: number, max: number];
  /** A watch silent (no event, no bookmark) this long is dead; default the longest watch timeout + 30 s. */
  silenceMs?: number;
  /** Reconnect backoff; default 800 ms doubling to 30 s with jitter. */
  backoff?: { initialMs: number; maxMs: number };
  /**
   * Applied to every listed and watched object before it is cached or handed to a handler, so
   * the cache keeps only what its readers need (client-go's `SetTransform`): what it drops, no
   * handler and no reader ever sees. It must keep `metadata.name`, `namespace` and
   * `resourceVersion`, and must not change its argument's nested objects in place (it may
   * build a new object from them).
   */
  transform?: (obj: T) => T;
  registry?: Registry;
  logger?: Logger;
}

type Handlers<T> = {
  add: ((obj: T) => void)[];
  update: ((obj: T, old: T) => void)[];
  delete: ((obj: T) => void)[];
  event: ((e: InformerEvent) => void)[];
};

interface ListResponse<T> {
  kind?: string;
  apiVersion?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items?: T[] | null;
}

/** The watch went quiet for longer than `silenceMs`. */
class WatchdogError extends Error {
  override name = 'WatchdogError';
  constructor(readonly silentMs: number) {
    super(`watch silent for ${Math.round(silentMs)} ms (no event or bookmark)`);
  }
}

/**
 * A self-healing informer: a paged LIST, then a WATCH from the list's resourceVersion with
 * bookmarks, kept alive for as long as the process runs.
 *
 * - A watch the server ends cleanly (its `timeoutSeconds`, a restart, a load balancer) is
 *   reopened at once from the last resourceVersion: no relist, no backoff.
 * - 410 Gone (HTTP status or an ERROR event) relists; the new list replaces the cache in one
 *   step and handlers hear `delete` for objects that vanished during the gap, `update` for
 *   changed ones and `add` for new ones.
 * - Any other failure (connection refused, 5xx, 429, a broken or undecodable stream, a watch
 *   silent past the watchdog) retries the watch with jittered exponential backoff; it never
 *   gives up, and logs at error level once it has made no progress for a minute so that
 *   `/readyz` (see `stalledMs()`) and the logs both show it.
 *
 * Handlers run synchronously in event order and should only enqueue keys. Objects are the
 * JSON the API server sent (timestamps are RFC 3339 strings even where client-node's model
 * types say `Date`); list items get the `kind`/`apiVersion` the API server leaves out of
 * them, so listed and watched objects look alike.
 */
export class Informer<T extends KubernetesObject> {
  static readonly DEFAULT_PAGE_SIZE = 500;
  static readonly DEFAULT_WATCH_TIMEOUT_SECONDS: readonly [number, number] = [300, 600];
  static readonly WATCHDOG_MARGIN_MS = 30_000;
  static readonly DEFAULT_BACKOFF = { initialMs: 800, maxMs: 30_000 } as const;
  /** A watch open this long before it fails counts as healthy: the backoff starts over. */
  static readonly HEALTHY_WATCH_MS = 30_000;
  /** A watch ended cleanly sooner than this, with no event, is a misbehaving server or proxy. */
  static readonly MIN_WATCH_MS = 1_000;
  /** Deadline for one LIST page. */
  static readonly LIST_PAGE_TIMEOUT_MS = 60_000;
  /** After this long without progress, every failed retry logs at error level. */
  static readonly STALL_ALARM_MS = 60_000;

  readonly name: string;
  private readonly client: KubeClient;
  private readonly path: string;
  private readonly selectors: Query;
  private readonly pageSize: number;
  private readonly transform: (obj: T) => T;
  private readonly watchTimeoutSeconds: readonly [number, number];
  private readonly silenceMs: number;
  private readonly backoff: Backoff;
  private readonly backoffMaxMs: number;
  private readonly metrics: InformerMetrics;
  private readonly logger: Logger;
  private readonly handlers: Handlers<T> = { add: [], update: [], delete: [], event: [] };
  private readonly store = new ObjectStore<T>();
  private rv = '';
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  private abort: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private failingSince: number | undefined;
  /** Object and bookmark events the current watch delivered. */
  private watchEvents = 0;

  constructor(options: InformerOptions<T>) {
    this.name = options.name;
    if (!options.name) throw new Error('informer needs a name');
    if (!options.path.startsWith('/')) throw new Error(`informer ${options.name}: path must start with "/"`);
    this.path = options.path;
    this.selectors = {
      labelSelector: options.labelSelector || undefined,
      fieldSelector: options.fieldSelector || undefined,
    };
    this.pageSize = options.pageSize ?? Informer.DEFAULT_PAGE_SIZE;
    this.transform = options.transform ?? ((obj) => obj);
    if (!Number.isInteger(this.pageSize) || this.pageSize < 1) {
      throw new Error(
        `informer ${options.name}: pageSize must be a positive integer, got ${options.pageSize}`,
      );
    }
    this.watchTimeoutSeconds = options.watchTimeoutSeconds ?? Informer.DEFAULT_WATCH_TIMEOUT_SECONDS;
    const [minTimeout, maxTimeout] = this.watchTimeoutSeconds;
    if (
      !Number.isInteger(minTimeout) ||
      !Number.isInteger(maxTimeout) ||
      minTimeout < 1 ||
      maxTimeout < minTimeout
    ) {
      throw new Error(
        `informer ${options.name}: watchTimeoutSeconds must be whole seconds [min, max] with 1 <= min <= max`,
      );
    }
    this.silenceMs = options.silenceMs ?? maxTimeout * 1000 + Informer.WATCHDOG_MARGIN_MS;
    if (!(this.silenceMs > 0)) throw new Error(`informer ${options.name}: silenceMs must be positive`);
    this.backoff = new Backoff({ ...(options.backoff ?? Informer.DEFAULT_BACKOFF) });
    this.backoffMaxMs = (options.backoff ?? Informer.DEFAULT_BACKOFF).maxMs;
    this.client = new KubeClient(options.kubeConfig);
    this.metrics = new InformerMetrics(options.registry ?? new Registry(), options.name);
    this.logger = (options.logger ?? createLogger('informer')).child({ informer: options.name });
  }

  on(event: 'add', fn: (obj: T) => void): this;
  on(event: 'update', fn: (obj: T, old: T) => void): this;
  on(event: 'delete', fn: (obj: T) => void): this;
  on(event: 'event', fn: (e: InformerEvent) => void): this;
  on(event: keyof Handlers<T>, fn: (...args: never[]) => void): this {
    (this.handlers[event] as unknown[]).push(fn);
    return this;
  }

  off(event: keyof Handlers<T>, fn: (...args: never[]) => void): this {
    const list = this.handlers[event] as unknown[];
    const index = list.indexOf(fn);
    if (index >= 0) list.splice(index, 1);
    return this;
  }

  /** Starts listing and watching in the background; a second call while running does nothing. */
  start(): void {
    if (this.loop) return;
    const abort = new AbortController();
    this.abort = abort;
    this.failingSince = undefined;
    this.loop = this.run(abort.signal);
  }

  /** Ends the watch; no handler runs after this resolves. The cache keeps its last state. */
  async stop(): Promise<void> {
    this.abort?.abort(new Error(`informer ${this.name} stopped`));
    await this.loop;
    this.loop = undefined;
    this.abort = undefined;
  }

  /** True once the first complete list has been delivered to the handlers. */
  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once `hasSynced()`; rejects with the signal's reason if it aborts first. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        this.syncWaiters = this.syncWaiters.filter((w) => w !== done);
        reject(signal?.reason);
      };
      const done = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.syncWaiters.push(done);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The cached object under `namespace/name` (or `name` for cluster-scoped kinds). */
  get(key: string): T | undefined {
    return this.store.get(key);
  }

  list(): T[] {
    return this.store.list();
  }

  /** The last resourceVersion seen (list, event or bookmark): opaque, compare only for equality. */
  resourceVersion(): string {
    return this.rv;
  }

  /**
   * How long the informer has been failing to list or watch, in ms; 0 while it works. A
   * daemon's `/readyz` can report an informer stalled past some limit.
   */
  stalledMs(): number {
    return this.failingSince === undefined ? 0 : performance.now() - this.failingSince;
  }

  private async run(signal: AbortSignal): Promise<void> {
    let listReason: string | undefined = 'initial list';
    // 410s in a row without a working watch in between: from the second one on the relist
    // waits for the backoff, so a server that keeps answering 410 cannot spin us.
    let gonesInARow = 0;
    while (!signal.aborted) {
      let listing = false;
      this.watchEvents = 0;
      try {
        if (listReason !== undefined) {
          listing = true;
          await this.listAndReplace(signal);
          listing = false;
          listReason = undefined;
        }
        await this.watch(signal);
        gonesInARow = 0;
      } catch (err) {
        if (signal.aborted) break;
        const error = err instanceof Error ? err : new Error(String(err));
        if (this.watchEvents > 0) gonesInARow = 0;
        if (isGone(error) && !listing) {
          gonesInARow += 1;
          listReason = error.message;
          this.metrics.relist();
          this.emit({ type: 'relist', reason: error.message });
          this.logger.info('resourceVersion expired; relisting', {
            resourceVersion: this.rv,
            reason: error.message,
          });
          if (gonesInARow < 2) continue;
        }
        await this.retryAfterFailure(error, listing ? 'list' : watchErrorKind(error), signal);
      }
    }
  }

  /** Records a failure, says so loudly enough, and waits out the backoff. */
  private async retryAfterFailure(error: Error, kind: WatchErrorKind, signal: AbortSignal): Promise<void> {
    this.failingSince ??= performance.now();
    this.metrics.watchError(kind);
    this.emit({ type: 'error', error });
    // A server asking to wait (429 Retry-After) is heeded, within the backoff ceiling.
    const retryAfterMs = error instanceof KubeApiError ? (error.retryAfterMs ?? 0) : 0;
    const delayMs = Math.max(this.backoff.next(), Math.min(retryAfterMs, this.backoffMaxMs));
    const stalledMs = Math.round(this.stalledMs());
    const fields = { kind, error: error.message, delayMs, stalledMs, attempt: this.backoff.attempts };
    if (stalledMs >= Informer.STALL_ALARM_MS) {
      this.logger.error('informer cannot list/watch; still retrying, its cache is going stale', fields);
    } else {
      this.logger.warn('list/watch failed; retrying', fields);
    }
    this.metrics.reconnect();
    this.emit({ type: 'reconnect', delayMs, reason: error.message });
    await sleep(delayMs, signal).catch(() => undefined);
  }

  private progress(): void {
    this.failingSince = undefined;
  }

  /** Lists everything, swaps the cache and tells the handlers what changed. */
  private async listAndReplace(signal: AbortSignal): Promise<void> {
    const started = performance.now();
    const { items, resourceVersion } = await this.listAll(signal);
    this.metrics.listed((performance.now() - started) / 1000);
    const { added, updated, deleted } = this.store.replace(items);
    this.rv = resourceVersion;
    this.metrics.cacheSize(this.store.size);
    this.progress();
    for (const obj of deleted) this.deliver({ kind: 'delete', obj });
    for (const { obj, old } of updated) this.deliver({ kind: 'update', obj, old });
    for (const obj of added) this.deliver({ kind: 'add', obj });
    this.logger.info('listed', {
      objects: this.store.size,
      added: added.length,
      updated: updated.length,
      deleted: deleted.length,
      resourceVersion,
      ms: Math.round(performance.now() - started),
    });
    if (!this.synced) {
      this.synced = true;
      this.metrics.setSynced(true);
      const waiters = this.syncWaiters;
      this.syncWaiters = [];
      for (const done of waiters) done();
    }
    this.emit({ type: 'synced', objects: this.store.size });
  }

  /**
   * Fetches the complete list page by page. The resourceVersion of the first page is the
   * snapshot the later pages continue, so the watch starts from it. A continue token that
   * expired mid-list (410) restarts the list in one unpaged request.
   */
  private async listAll(signal: AbortSignal, paged = true): Promise<{ items: T[]; resourceVersion: string }> {
    const items: T[] = [];
    let resourceVersion: string | undefined;
    const fetchPage = (continueToken: string | undefined) =>
      this.client.request<ListResponse<T>>('GET', this.path, {
        query: { ...this.selectors, limit: paged ? this.pageSize : undefined, continue: continueToken },
        signal,
        timeoutMs: Informer.LIST_PAGE_TIMEOUT_MS,
      });
    let continued = false;
    let next = fetchPage(undefined);
    for (;;) {
      let page: ListResponse<T>;
      try {
        page = await next;
      } catch (err) {
        if (continued && isGone(err)) {
          this.logger.info('list continue token expired; listing again without paging');
          return this.listAll(signal, false);
        }
        throw err;
      }
      if (page.items !== undefined && page.items !== null && !Array.isArray(page.items)) {
        throw new Error(`GET ${this.path}: list response items is not an array`);
      }
      resourceVersion ??= page.metadata?.resourceVersion;
      const continueToken = page.metadata?.continue || undefined;
      // The next page is asked for before this one is gone through: the server builds it
      // meanwhile (a 10,000-pod list took 20 round trips one after another). A failure of it
      // is handled when it is awaited, or dropped with the list if this page fails first.
      if (continueToken !== undefined) {
        continued = true;
        next = fetchPage(continueToken);
        next.catch(() => undefined);
      }
      const itemKind = page.kind?.endsWith('List') ? page.kind.slice(0, -'List'.length) : undefined;
      for (const item of page.items ?? []) {
        if (itemKind && item.kind === undefined) item.kind = itemKind;
        if (page.apiVersion && item.apiVersion === undefined) item.apiVersion = page.apiVersion;
        objectKey(item);
        items.push(this.transform(item));
      }
      if (continueToken === undefined) break;
    }
    if (!resourceVersion) throw new Error(`GET ${this.path}: list response has no metadata.resourceVersion`);
    return { items, resourceVersion };
  }

  /**
   * One watch from the current resourceVersion, until the server ends it cleanly (resolves)
   * or it fails (rejects).
   */
  private async watch(signal: AbortSignal): Promise<void> {
    const [minTimeout, maxTimeout] = this.watchTimeoutSeconds;
    const query: Query = {
      ...this.selectors,
      watch: 'true',
      resourceVersion: this.rv,
      allowWatchBookmarks: 'true',
      timeoutSeconds: randomInt(minTimeout, maxTimeout + 1),
    };
    const watchdog = abortScope(signal);
    const watchSignal = watchdog.signal;
    const openedAt = performance.now();
    let lastHeard = openedAt;
    let connectedAt: number | undefined;
    const failingBefore = this.failingSince;
    // One timer re-armed for the remaining silence, rather than one per event.
    const check = () => {
      const silentMs = performance.now() - lastHeard;
      if (silentMs >= this.silenceMs) {
        this.emit({ type: 'watchdog', silentMs: Math.round(silentMs) });
        watchdog.abort(new WatchdogError(silentMs));
      } else {
        timer = setTimeout(check, this.silenceMs - silentMs);
      }
    };
    let timer = setTimeout(check, this.silenceMs);
    try {
      const res = await this.client.stream(this.path, query, watchSignal);
      connectedAt = performance.now();
      lastHeard = connectedAt;
      this.progress();
      this.emit({ type: 'connect' });
      await readWatchEvents(res, (event) => {
        lastHeard = performance.now();
        this.applyWatchEvent(event);
        this.watchEvents += 1;
      });
      if (this.watchEvents === 0 && performance.now() - openedAt < Informer.MIN_WATCH_MS) {
        throw new Error('very short watch: the server ended it at once without any event');
      }
      this.backoff.reset();
    } catch (err) {
      if (connectedAt !== undefined && performance.now() - connectedAt >= Informer.HEALTHY_WATCH_MS) {
        this.backoff.reset();
      }
      // A watch that connected but failed before delivering anything was no progress.
      if (this.watchEvents === 0) this.failingSince = failingBefore;
      if (watchSignal.aborted && !signal.aborted) throw watchSignal.reason;
      throw err;
    } finally {
      clearTimeout(timer);
      // Releases the connection if the stream ended by an exception rather than by the server.
      watchdog.abort(new Error('watch ended'));
      watchdog.dispose();
    }
  }

  private applyWatchEvent(event: WatchEvent): void {
    this.metrics.event(event.type);
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED': {
        const obj = this.watchedObject(event);
        this.deliver(this.store.upsert(obj));
        this.advance(obj);
        return;
      }
      case 'DELETED': {
        const obj = this.watchedObject(event);
        this.deliver(this.store.remove(obj));
        this.advance(obj);
        return;
      }
      case 'BOOKMARK': {
        const rv = resourceVersionOf(event.object as KubernetesObject);
        if (rv) {
          this.rv = rv;
          this.emit({ type: 'bookmark', resourceVersion: rv });
        }
        return;
      }
      case 'ERROR': {
        const status = event.object as KubeStatus;
        const reason = status.reason ?? 'Unknown';
        const code = status.code ?? (reason === 'Expired' || reason === 'Gone' ? 410 : 500);
        throw new KubeApiError(
          code,
          reason,
          `watch ${this.path}: ${code} ${reason}: ${status.message ?? ''}`,
        );
      }
      default:
        throw new WatchDecodeError(`unknown watch event type "${event.type}"`);
    }
  }

  private watchedObject(event: WatchEvent): T {
    const obj = event.object as T;
    if (typeof obj.metadata?.name !== 'string' || obj.metadata.name === '') {
      throw new WatchDecodeError(`${event.type} event for an object without metadata.name`);
    }
    return this.transform(obj);
  }

  private advance(obj: KubernetesObject): void {
    const rv = resourceVersionOf(obj);
    if (rv) this.rv = rv;
    this.metrics.cacheSize(this.store.size);
  }

  private deliver(change: StoreChange<T>): void {
    switch (change.kind) {
      case 'add':
        for (const fn of this.handlers.add) this.call('add', () => fn(change.obj));
        return;
      case 'update':
        for (const fn of this.handlers.update) this.call('update', () => fn(change.obj, change.old));
        return;
      case 'delete':
        for (const fn of this.handlers.delete) this.call('delete', () => fn(change.obj));
        return;
      case 'unchanged':
        return;
    }
  }

  private emit(event: InformerEvent): void {
    for (const fn of this.handlers.event) this.call('event', () => fn(event));
  }

  /** A throwing handler is a bug in the consumer; it must not break the watch for everyone. */
  private call(handler: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.logger.error('informer handler threw', { handler, error: errorMessage(err) });
    }
  }
}

function watchErrorKind(err: Error): WatchErrorKind {
  if (err instanceof WatchdogError) return 'watchdog';
  if (err instanceof WatchDecodeError) return 'decode';
  if (err instanceof KubeApiError) return 'status';
  if (/connection closed|mid-stream|aborted|premature close|ECONNRESET|socket hang up/i.test(err.message))
    return 'stream';
  return 'connect';
}

/** Resolves once every informer has synced; rejects with the signal's reason if it aborts first. */
export async function waitForAllSynced(
  informers: readonly { waitForSync(signal?: AbortSignal): Promise<void> }[],
  signal?: AbortSignal,
): Promise<void> {
  await Promise.all(informers.map((informer) => informer.waitForSync(signal)));
}
