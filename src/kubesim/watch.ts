/**
 * Watch streams: newline-delimited JSON events over one chunked HTTP response, each written
 * (and so flushed) as it happens. A watch replays retained history after its resourceVersion
 * (or sends the current state as ADDED), then follows live changes, seeing objects enter and
 * leave its selectors as ADDED and DELETED the way the API server's watch cache reports them.
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from '../common/log.js';
import type { EventType, StoreEvent } from './history.js';
import type { KubeObject, ResourceType } from './resources.js';
import type { ObjectPredicate } from './selectors.js';
import type { ObjectStore } from './store.js';
import { parseResourceVersion } from './store.js';
import { tooLargeResourceVersion, tooOldResourceVersion } from './status.js';

export interface WatchRequest {
  resource: ResourceType;
  /** Only this namespace (undefined: all). */
  namespace: string | undefined;
  /** Only this object (a watch on an item path). */
  name: string | undefined;
  predicate: ObjectPredicate | undefined;
  /** `resourceVersion` as the client sent it ('' or undefined when unset). */
  resourceVersion: string | undefined;
  allowBookmarks: boolean;
  /** Server-side end of the stream; undefined or 0: none. */
  timeoutSeconds: number | undefined;
  /** `sendInitialEvents=true`: current state first, then a bookmark marking its end. */
  sendInitialEvents: boolean;
  /** Fault injection: headers, then nothing at all until the client hangs up. */
  silent: boolean;
}

export interface WatchHubOptions {
  bookmarkIntervalMs: number;
  /** A watch whose unsent output exceeds this is closed, as the API server drops slow watchers. */
  maxBufferedBytes: number;
  logger: Logger;
}

/** JSON text of stored objects, shared by every watch that sends the same version. */
const objectJson = new WeakMap<KubeObject, string>();

function jsonOf(obj: KubeObject): string {
  let text = objectJson.get(obj);
  if (text === undefined) {
    text = JSON.stringify(obj);
    objectJson.set(obj, text);
  }
  return text;
}

function eventLine(type: EventType | 'ERROR' | 'BOOKMARK', objectText: string): string {
  return `{"type":"${type}","object":${objectText}}\n`;
}

interface OpenWatch {
  request: WatchRequest;
  response: ServerResponse;
  timers: NodeJS.Timeout[];
}

export class WatchHub {
  private readonly watches = new Set<OpenWatch>();
  private readonly byResource = new Map<ResourceType, Set<OpenWatch>>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: ObjectStore,
    private readonly options: WatchHubOptions,
  ) {
    this.unsubscribe = store.subscribe((event) => this.dispatch(event));
  }

  get count(): number {
    return this.watches.size;
  }

  /**
   * Starts a watch on `response`. Errors a client can fix (bad or too large resourceVersion)
   * throw before anything is written; a too old resourceVersion is answered the way the API
   * server does it: a 200 stream carrying one ERROR event with a 410 Status, then the end.
   */
  open(request: WatchRequest, response: ServerResponse): void {
    const rvText = request.resourceVersion ?? '';
    const fromCurrentState = rvText === '' || rvText === '0' || request.sendInitialEvents;
    const fromRv = rvText === '' ? this.store.resourceVersion : parseResourceVersion(rvText);
    if (fromRv > this.store.resourceVersion)
      throw tooLargeResourceVersion(fromRv, this.store.resourceVersion);

    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache, private' });
    response.flushHeaders();
    const watch: OpenWatch = { request, response, timers: [] };
    this.watches.add(watch);
    response.on('close', () => this.forget(watch));
    if (request.silent) return;

    if (!fromCurrentState && !this.store.history.covers(fromRv)) {
      const status = tooOldResourceVersion(rvText, this.store.history.oldestStart).toStatus();
      response.end(eventLine('ERROR', JSON.stringify(status)));
      return;
    }

    let replay = '';
    let pending = 0;
    const flushReplay = () => {
      if (replay !== '') response.write(replay);
      replay = '';
      pending = 0;
    };
    const queue = (line: string) => {
      replay += line;
      if (++pending >= 256) flushReplay();
    };
    if (fromCurrentState) {
      for (const obj of this.inScope(request)) queue(eventLine('ADDED', jsonOf(obj)));
      if (request.sendInitialEvents && request.allowBookmarks) {
        queue(
          eventLine('BOOKMARK', this.bookmarkJson(request.resource, { 'k8s.io/initial-events-end': 'true' })),
        );
      }
    } else {
      for (const event of this.store.history.after(fromRv)) {
        if (event.resource !== request.resource) continue;
        const line = this.lineFor(request, event);
        if (line !== undefined) queue(line);
      }
    }
    flushReplay();

    let set = this.byResource.get(request.resource);
    if (!set) this.byResource.set(request.resource, (set = new Set()));
    set.add(watch);
    if (request.allowBookmarks) {
      watch.timers.push(
        setInterval(
          () => this.send(watch, eventLine('BOOKMARK', this.bookmarkJson(request.resource))),
          this.options.bookmarkIntervalMs,
        ),
      );
    }
    if (request.timeoutSeconds !== undefined && request.timeoutSeconds > 0) {
      watch.timers.push(setTimeout(() => this.end(watch), request.timeoutSeconds * 1000));
    }
  }

  /** Ends every open watch stream cleanly, as an API server restart or load-balancer reset would. */
  closeAll(): void {
    for (const watch of [...this.watches]) this.end(watch);
  }

  dispose(): void {
    this.closeAll();
    this.unsubscribe();
  }

  private *inScope(request: WatchRequest): Generator<KubeObject> {
    for (const obj of this.store.objects(request.resource, request.namespace)) {
      if (this.matches(request, obj)) yield obj;
    }
  }

  private matches(request: WatchRequest, obj: KubeObject | undefined): boolean {
    if (!obj) return false;
    if (request.namespace !== undefined && obj.metadata.namespace !== request.namespace) return false;
    if (request.name !== undefined && obj.metadata.name !== request.name) return false;
    return !request.predicate || request.predicate(obj);
  }

  /** The line this watch sees for an event, or undefined when the change is outside its selectors. */
  private lineFor(request: WatchRequest, event: StoreEvent): string | undefined {
    if (event.type === 'DELETED')
      return this.matches(request, event.object) ? eventLine('DELETED', jsonOf(event.object)) : undefined;
    const now = this.matches(request, event.object);
    const before = this.matches(request, event.previous);
    if (now && before) return eventLine('MODIFIED', jsonOf(event.object));
    if (now) return eventLine('ADDED', jsonOf(event.object));
    // The object left the selection: the watcher must forget it, so it sees a delete.
    if (before) return eventLine('DELETED', jsonOf(event.object));
    return undefined;
  }

  private bookmarkJson(resource: ResourceType, annotations?: Record<string, string>): string {
    const metadata = {
      resourceVersion: String(this.store.resourceVersion),
      ...(annotations ? { annotations } : {}),
    };
    return JSON.stringify({ kind: resource.kind, apiVersion: resource.apiVersion, metadata });
  }

  private dispatch(event: StoreEvent): void {
    const set = this.byResource.get(event.resource);
    if (!set) return;
    for (const watch of set) {
      const line = this.lineFor(watch.request, event);
      if (line !== undefined) this.send(watch, line);
    }
  }

  private send(watch: OpenWatch, line: string): void {
    if (watch.response.writableEnded || watch.response.destroyed) return;
    if (watch.response.writableLength > this.options.maxBufferedBytes) {
      this.options.logger.warn('kubesim closing a watch that is not reading', {
        resource: watch.request.resource.plural,
        buffered: watch.response.writableLength,
      });
      this.end(watch);
      return;
    }
    watch.response.write(line);
  }

  private end(watch: OpenWatch): void {
    this.forget(watch);
    if (!watch.response.writableEnded) watch.response.end();
  }

  private forget(watch: OpenWatch): void {
    for (const timer of watch.timers) clearTimeout(timer);
    watch.timers = [];
    this.watches.delete(watch);
    this.byResource.get(watch.request.resource)?.delete(watch);
  }
}
