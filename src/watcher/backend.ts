/**
 * The seam between the watcher's machinery (informers, leader election, the keyed work queue,
 * resync, health and metrics) and what it writes into ODL.
 *
 * A backend decides, and nothing else:
 * - which keys a change of a Kubernetes object affects (`keysFor`: pure, no I/O; it runs inside
 *   informer handlers, which must only enqueue), and which keys read an ODL entry that changed
 *   (`keysForEntry`, same rules);
 * - what ODL holds (`load`, into `cache`: every list it owns, at the start of each leader term
 *   and on every periodic resync), and so which keys exist at all (`allKeys`: desired ∪ actual,
 *   the start-up convergence and garbage collection set), and which key owns an entry
 *   (`keyOfEntry`);
 * - how one key is made right (`reconcile`, the contract in reconcile.ts).
 *
 * Both backends share one skeleton (odl-backend.ts) and differ in their kinds table, keys and
 * plans: `netvirt` (netvirt-backend.ts) writes NetVirt/Genius objects, `coe-northbound`
 * (coe-northbound/backend.ts) ODL's own COE models. Selected by name (the `backend` setting,
 * `createBackend` in watcher.ts). Everything a backend reads from Kubernetes comes through the
 * core's cluster view: beyond pods, namespaces and nodes, a backend declares the optional
 * resources it needs (`resources`), and the view watches them with the same supervision, sync
 * gate and health checks as the rest.
 */
import type { Logger } from '../common/log.js';
import type { Ref } from '../netvirt/kind.js';
import type { OdlModels } from '../odl/models.js';
import type { RestconfClient } from '../restconf/client.js';
import type { KubeClient } from '../k8s/kube-client.js';
import type { ClusterChange, ClusterView, OptionalResource } from './cluster-view.js';
import type { EntryCache, EntryChange } from './entry-cache.js';
import type { EventRecorder } from './events.js';
import type { WatcherMetrics } from './metrics.js';
import type { ReconcileOutcome, WriteGuard } from './reconcile.js';
import type { WatcherSettings } from '../config/watcher-settings.js';

/** Everything a backend may use; built once per watcher by the core. */
export interface BackendContext {
  settings: WatcherSettings;
  /** The release and optional models ODL has (read at start-up): a backend writes only kinds whose model ODL has. */
  models: OdlModels;
  /**
   * The cluster's caches and indexes (running on leader and standby alike). A backend that
   * keeps an index of its own feeds it with `view.onChange` from its constructor: listeners run
   * in the order they were added, so its index takes a change in before the core maps the
   * change to keys.
   */
  view: ClusterView;
  client: RestconfClient;
  /** The Kubernetes API, for what a backend records on objects (the pods' attachment records). */
  kube: KubeClient;
  events: EventRecorder;
  metrics: WatcherMetrics;
  /**
   * Queues a key in the current leader term (a no-op while standing by). For event handlers
   * a backend wires up (an allocator's release); reconcilers never enqueue other keys: what
   * they wait for, they name in their outcome.
   */
  enqueue(key: string): void;
  logger: Logger;
}

export interface Backend {
  readonly name: string;
  /**
   * Kubernetes resources beyond pods, namespaces and nodes that this backend reads from the
   * cluster view. The view watches them from start-up; a leader term waits for their sync too.
   */
  readonly resources?: readonly OptionalResource[];
  /** What the backend knows ODL holds; the core wakes keys waiting for an entry when it changes. */
  readonly cache: EntryCache;
  /** Keys a change affects. Pure: reads the cluster view's caches, never ODL. */
  keysFor(change: ClusterChange): string[];
  /** Keys whose plans read an ODL entry that changed (a node's subnet → its pods). Pure. */
  keysForEntry(change: EntryChange): string[];
  /** The key that owns an ODL entry, if any: reconciled to make (or remove) what another key awaits. */
  keyOfEntry(ref: Ref): string | undefined;
  /**
   * Reads everything this backend owns in ODL into its cache. Called at the start of every
   * leader term (`fresh`: forget what an earlier term knew), while the informers may still be
   * listing the cluster (reading overlaps them; what is derived from ODL and the cluster
   * together waits for their sync), and by the periodic resync. `signal` ends it (a term ended).
   */
  load(fresh: boolean, signal?: AbortSignal): Promise<void>;
  /** Every key the cluster view needs or ODL holds (start-up convergence, GC and resync). */
  allKeys(): Iterable<string>;
  reconcile(key: string, guard: WriteGuard): Promise<ReconcileOutcome>;
  /**
   * The pass over every key (a term's start, a resync) asks this first: true when the key's
   * reconcile would write nothing and end `synced`, decided from the caches alone (no I/O),
   * with the key left as that reconcile would have left it; false: the key is queued. Absent:
   * every key is queued.
   */
  settleIfInSync?(key: string): boolean;
  /**
   * Whether ODL holds no entry of this backend's kinds (a first start on an empty ODL): then
   * every key has something to write, and the pass queues them all without asking
   * `settleIfInSync` (which would plan each key once more, for nothing).
   */
  holdsNothing?(): boolean;
}
