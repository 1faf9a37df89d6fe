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
/** The state of an ODL object the cluster needs, after a reconcile looked at it. */
type NeededState = 'applied' | 'pending' | 'foreign';
interface StateCounts {
  desired: number;
  applied: number;
  foreign: number;
}

function count(counts: StateCounts, state: NeededState, by: 1 | -1): void {
  counts.desired += by;
  if (state === 'applied') counts.applied += by;
  if (state === 'foreign') counts.foreign += by;
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
   * Per ODL kind: the state of each object the cluster needs (an undesired one is forgotten),
   * and how many are in each state. One map entry per object: three sets (needed, in sync,
   * foreign) held most names twice, 20 MB at 100,000 pods.
   */
  private readonly states = new Map<string, { names: Map<string, NeededState>; counts: StateCounts }>();
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
    const states = this.states;
    const sizes = (name: string, help: string, count: keyof StateCounts) =>
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
              for (const [kind, { counts }] of states) this.set({ kind }, counts[count]);
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
  objectState(kind: string, name: string, state: 'undesired' | NeededState): void {
    let ofKind = this.states.get(kind);
    if (!ofKind)
      this.states.set(kind, (ofKind = { names: new Map(), counts: { desired: 0, applied: 0, foreign: 0 } }));
    const { names, counts } = ofKind;
    const before = names.get(name);
    if (before === state) return;
    if (before !== undefined) count(counts, before, -1);
    if (state === 'undesired') names.delete(name);
    else {
      names.set(name, state);
      count(counts, state, 1);
    }
  }

  /** ODL objects needed and applied, over every kind. */
  objectTotals(): { desired: number; applied: number } {
    let desired = 0;
    let applied = 0;
    for (const { counts } of this.states.values()) {
      desired += counts.desired;
      applied += counts.applied;
    }
    return { desired, applied };
  }

  /** The per-object states (for heap accounting: the benchmark measures them). */
  get objectStates(): ReadonlyMap<string, { names: ReadonlyMap<string, NeededState> }> {
    return this.states;
  }

  nodeSubnet(nodeUid: string, allocated: boolean): void {
    if (allocated) this.unallocated.delete(nodeUid);
    else this.unallocated.add(nodeUid);
  }

  /** A new leader term starts from nothing known. */
  reset(): void {
    for (const { names, counts } of this.states.values()) {
      names.clear();
      Object.assign(counts, { desired: 0, applied: 0, foreign: 0 });
    }
    this.unallocated.clear();
  }
}
