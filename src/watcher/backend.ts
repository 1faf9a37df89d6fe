/**
 * The seam between the watcher's machinery (informers, leader election, the keyed work queue,
 * resync, health and metrics) and what it writes into ODL.
 *
 * A backend decides three things and nothing else:
 * - which keys a change of a Kubernetes object affects (`keysFor`: pure, no I/O; it runs inside
 *   informer handlers, which must only enqueue);
 * - what ODL holds (`load`: read every list it owns, at the start of each leader term and on
 *   every periodic resync), and so which keys exist at all (`allKeys`: desired ∪ actual, the
 *   start-up convergence and garbage collection set);
 * - how one key is made right (`reconcile`).
 *
 * The default backend (`netvirt-backend.ts`) writes NetVirt/Genius objects; `coe-northbound`
 * (`coe-northbound/backend.ts`) writes ODL's own COE models. Each implements this interface in
 * its own module and is selected by name (the `backend` setting, `createBackend` in
 * watcher.ts). Everything a backend reads from Kubernetes comes through the core's cluster
 * view: beyond pods, namespaces and nodes, a backend declares the optional resources it needs
 * (`resources`), and the view watches them with the same supervision, sync gate and health
 * checks as the rest. Keys are opaque strings to the core except for their kind prefix
 * (`<kind>/<rest>`), which labels the reconcile metrics.
 */
import type { V1EndpointSlice, V1Namespace, V1Node, V1Pod, V1Service } from '@kubernetes/client-node';
import type { Logger } from '../common/log.js';
import type { RestconfClient } from '../restconf/client.js';
import type { ClusterView, OptionalResource } from './cluster-view.js';
import type { EventRecorder } from './events.js';
import type { WatcherMetrics } from './metrics.js';
import type { WatcherSettings } from './settings.js';

/**
 * A change of one Kubernetes object, as an informer handler saw it. Services and
 * EndpointSlices change only for a backend that declared them in `resources`.
 */
export type ClusterChange =
  | { kind: 'pod'; obj: V1Pod; old?: V1Pod }
  | { kind: 'namespace'; obj: V1Namespace; old?: V1Namespace }
  | { kind: 'node'; obj: V1Node; old?: V1Node }
  | { kind: 'service'; obj: V1Service; old?: V1Service }
  | { kind: 'endpointslice'; obj: V1EndpointSlice; old?: V1EndpointSlice };

/**
 * How a reconcile ended (besides throwing, which means "failed: retry with backoff").
 * - `synced`: ODL is right for this key.
 * - `deferred`: the desired state cannot be known yet (a pod whose node is not known); what
 *   exists is kept and a later event will enqueue the key again.
 * - `waiting`: a precondition does not hold yet (an instance its interfaces need, interfaces an
 *   instance's deletion must wait for); look again after `retryAfterMs`. Not converged.
 * - `grace`: an unneeded instance inside its grace period; look again when it ends.
 * - `foreign`: a name odlcoe needs is held by an object it does not own; reported, retried slowly.
 * - `exhausted`: a resource pool (node subnets) is used up; reported, retried slowly.
 * - `polling`: right as far as the watcher can make it, but waiting for someone else (an ODL
 *   user to set a node's pod-cidr); look again after `retryAfterMs`.
 */
export type ReconcileOutcome =
  | { result: 'synced' | 'deferred' }
  | { result: 'waiting' | 'grace' | 'foreign' | 'exhausted' | 'polling'; retryAfterMs: number };

/** Everything a backend may use; built once per watcher by the core. */
export interface BackendContext {
  settings: WatcherSettings;
  /**
   * The cluster's caches and indexes (running on leader and standby alike). A backend that
   * keeps an index of its own feeds it with `view.onChange` from its constructor: listeners run
   * in the order they were added, so its index takes a change in before the core maps the
   * change to keys.
   */
  view: ClusterView;
  client: RestconfClient;
  events: EventRecorder;
  metrics: WatcherMetrics;
  /** Queues a key in the current leader term (a no-op while standing by). */
  enqueue(key: string): void;
  logger: Logger;
}

/** Checked before every write: leadership or the queue may have ended since the reconcile began. */
export interface WriteGuard {
  check(): void;
  /**
   * Fires when leadership or the queue ends. Every write passes it to the RESTCONF client
   * (`{ signal }`), so a write in flight or waiting for a retry is abandoned at once rather
   * than landing after another replica took over.
   */
  readonly signal: AbortSignal;
}

export interface Backend {
  readonly name: string;
  /**
   * Kubernetes resources beyond pods, namespaces and nodes that this backend reads from the
   * cluster view. The view watches them from start-up; a leader term waits for their sync too.
   */
  readonly resources?: readonly OptionalResource[];
  /** Keys a change affects. Pure: reads the cluster view's caches, never ODL. */
  keysFor(change: ClusterChange): string[];
  /**
   * Reads everything this backend owns in ODL into its cache. Called at the start of every
   * leader term (`fresh`: forget what an earlier term knew) and by the periodic resync.
   */
  load(fresh: boolean): Promise<void>;
  /** Every key the cluster view needs or ODL holds (start-up convergence, GC and resync). */
  allKeys(): Iterable<string>;
  reconcile(key: string, guard: WriteGuard): Promise<ReconcileOutcome>;
}

/** The kind of a key (`pod/ns/name` → `pod`), for metric labels. */
export function keyKind(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? key : key.slice(0, slash);
}
