/**
 * The watcher's own metrics (one instance per registry: the gauges read this instance's state
 * at scrape time). Queue metrics come from the work queue, RESTCONF latency from the
 * client's `onRequest` hook (restconf/metrics.ts), informer and leader metrics from src/k8s;
 * all share one registry.
 */
import type { ReconcileOutcome } from './reconcile.js';
import { Counter, Gauge, Histogram, LATENCY_BUCKETS, metric, type Registry } from '../common/metrics.js';

export type ReconcileResult = ReconcileOutcome['result'] | 'error';
export type WriteKind = 'create' | 'update' | 'delete';
export type ObjectState = 'undesired' | 'applied' | 'pending' | 'foreign';

/** Per ODL kind: the state of every name the cluster needs, and how many are in each. */
interface KindStates {
  /** Needed names only (an undesired name is not kept). */
  states: Map<string, Exclude<ObjectState, 'undesired'>>;
  desired: number;
  applied: number;
  foreign: number;
}

export class WatcherMetrics {
  readonly reconcileDuration: Histogram<'kind'>;
  readonly reconciles: Counter<'kind' | 'result'>;
  readonly writes: Counter<'kind' | 'op'>;
  readonly collisions: Counter<'kind'>;
  readonly subnetExhausted: Counter;
  readonly resyncs: Counter<'result'>;
  readonly unparsed: Gauge<'kind'>;
  readonly policyApproximations: Counter<'reason'>;
  /**
   * Per ODL kind: names the cluster needs, names in sync, names held by foreign objects. One
   * map of states with counts, not a set per state: every object of every reconcile is
   * recorded, and three set updates each were a visible part of a key's cost.
   */
  private readonly kinds = new Map<string, KindStates>();
  private readonly unallocated = new Set<string>();

  constructor(registry: Registry) {
    this.reconcileDuration = metric(
      registry,
      'odlcoe_watcher_reconcile_duration_seconds',
      () =>
        new Histogram({
          name: 'odlcoe_watcher_reconcile_duration_seconds',
          help: 'Duration of one reconcile, by key kind (pod, elan, vpn, node)',
          labelNames: ['kind'],
          buckets: LATENCY_BUCKETS,
          registers: [],
        }),
    );
    this.reconciles = metric(
      registry,
      'odlcoe_watcher_reconciles_total',
      () =>
        new Counter({
          name: 'odlcoe_watcher_reconciles_total',
          help: 'Finished reconciles by key kind and result (synced, deferred, waiting, grace, foreign, exhausted, polling, error)',
          labelNames: ['kind', 'result'],
          registers: [],
        }),
    );
    this.writes = metric(
      registry,
      'odlcoe_watcher_odl_writes_total',
      () =>
        new Counter({
          name: 'odlcoe_watcher_odl_writes_total',
          help: 'Successful writes to ODL by object kind and operation (create, update, delete)',
          labelNames: ['kind', 'op'],
          registers: [],
        }),
    );
    this.collisions = metric(
      registry,
      'odlcoe_watcher_foreign_collisions_total',
      () =>
        new Counter({
          name: 'odlcoe_watcher_foreign_collisions_total',
          help: 'Reconciles that found a name odlcoe needs held by an ODL object without its ownership marker',
          labelNames: ['kind'],
          registers: [],
        }),
    );
    this.subnetExhausted = metric(
      registry,
      'odlcoe_watcher_subnet_exhausted_total',
      () =>
        new Counter({
          name: 'odlcoe_watcher_subnet_exhausted_total',
          help: 'Node subnet allocations that failed because the cluster CIDR is used up',
          registers: [],
        }),
    );
    this.resyncs = metric(
      registry,
      'odlcoe_watcher_resyncs_total',
      () =>
        new Counter({
          name: 'odlcoe_watcher_resyncs_total',
          help: 'Full resyncs (re-read ODL, reconcile every key) by result',
          labelNames: ['result'],
          registers: [],
        }),
    );
    this.unparsed = metric(
      registry,
      'odlcoe_watcher_odl_unparsed_entries',
      () =>
        new Gauge({
          name: 'odlcoe_watcher_odl_unparsed_entries',
          help: 'ODL entries that do not parse as their model (left alone), by object kind, at the last read',
          labelNames: ['kind'],
          registers: [],
        }),
    );
    this.policyApproximations = metric(
      registry,
      'odlcoe_watcher_network_policy_approximations_total',
      () =>
        new Counter({
          name: 'odlcoe_watcher_network_policy_approximations_total',
          help: 'NetworkPolicies (or parts) NetVirt cannot express exactly, applied in their closest safe form or refused, by reason (approximated, invalid); each also a Warning Event on the policy',
          labelNames: ['reason'],
          registers: [],
        }),
    );
    const kinds = this.kinds;
    const sizes = (name: string, help: string, count: 'desired' | 'applied' | 'foreign') =>
      metric(
        registry,
        name,
        () =>
          new Gauge({
            name,
            help,
            labelNames: ['kind'],
            registers: [],
            collect() {
              for (const [kind, states] of kinds) this.set({ kind }, states[count]);
            },
          }),
      );
    sizes(
      'odlcoe_watcher_objects_desired',
      'ODL objects the cluster needs, by object kind (as of each key’s last reconcile)',
      'desired',
    );
    sizes(
      'odlcoe_watcher_objects_applied',
      'Needed ODL objects that ODL holds as desired, by object kind',
      'applied',
    );
    sizes(
      'odlcoe_watcher_objects_foreign',
      'Needed ODL object names held by objects odlcoe does not own, by object kind',
      'foreign',
    );
    const unallocated = this.unallocated;
    metric(
      registry,
      'odlcoe_watcher_nodes_without_subnet',
      () =>
        new Gauge({
          name: 'odlcoe_watcher_nodes_without_subnet',
          help: 'Nodes the subnet allocator could not give a subnet (cluster CIDR used up)',
          registers: [],
          collect() {
            this.set(unallocated.size);
          },
        }),
    );
  }

  /** Records the state of one ODL object after a reconcile looked at it. */
  objectState(kind: string, name: string, state: ObjectState): void {
    let k = this.kinds.get(kind);
    if (!k) this.kinds.set(kind, (k = { states: new Map(), desired: 0, applied: 0, foreign: 0 }));
    const before = k.states.get(name) ?? 'undesired';
    if (before === state) return;
    count(k, before, -1);
    count(k, state, 1);
    if (state === 'undesired') k.states.delete(name);
    else k.states.set(name, state);
  }

  /** ODL objects needed and applied, over every kind. */
  objectTotals(): { desired: number; applied: number } {
    let desired = 0;
    let applied = 0;
    for (const k of this.kinds.values()) {
      desired += k.desired;
      applied += k.applied;
    }
    return { desired, applied };
  }

  nodeSubnet(nodeUid: string, allocated: boolean): void {
    if (allocated) this.unallocated.delete(nodeUid);
    else this.unallocated.add(nodeUid);
  }

  /** A new leader term starts from nothing known. */
  reset(): void {
    // Kinds seen stay (their gauges read 0), as they did when each state was a set.
    for (const k of this.kinds.values()) {
      k.states.clear();
      k.desired = k.applied = k.foreign = 0;
    }
    this.unallocated.clear();
  }
}

/** Adds `by` to the counts `state` is part of. */
function count(k: KindStates, state: ObjectState, by: 1 | -1): void {
  if (state === 'undesired') return;
  k.desired += by;
  if (state === 'applied') k.applied += by;
  else if (state === 'foreign') k.foreign += by;
}
