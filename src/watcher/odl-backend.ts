/**
 * The skeleton both backends share: an ODL cache and writer over the backend's kinds table,
 * loading, the key set (what the cluster needs, then what ODL holds of ours, each key once),
 * "parse the key, drop it loudly if it is a bug, reconcile it", node subnets (both backends
 * write k8s-node entries) and the instances' grace clock. A backend adds its keys, its plan
 * inputs and what it does around a plan's execution.
 */
import { errorMessage } from '../common/log.js';
import type { KindTable, Ref } from '../netvirt/kind.js';
import { nodeKey } from '../netvirt/keys.js';
import type { OwnerContext } from '../netvirt/ownership.js';
import {
  ownerContextOf,
  translateSettingsOf,
  type TranslateSettings,
} from '../netvirt/translate-settings.js';
import { OdlReader } from '../odl/reader.js';
import type { Backend, BackendContext } from './backend.js';
import type { ClusterChange, OptionalResource } from './cluster-view.js';
import { EntryCache, type EntryChange } from './entry-cache.js';
import { ObjectWriter } from './object-writer.js';
import { GracePeriods } from './grace-period.js';
import { k8sNodeEntries, nodeNetworkEntries, NodeSubnets } from './node-subnets.js';
import { runPlan, settleInMemory, type PlanContext, type PlanRun } from './plan-executor.js';
import type { ReconcileOutcome, WriteGuard } from './reconcile.js';
import { reconcileNode, type NodeKeyContext } from './reconcile-node.js';
import { subnetAllocation } from '../config/watcher-settings.js';
import type { KeyPlan } from '../netvirt/plan.js';

export abstract class OdlBackend implements Backend {
  abstract readonly name: string;
  readonly resources?: readonly OptionalResource[];
  /** The backend's kinds that ODL has a model for (k8s-node only where the COE models are). */
  readonly table: KindTable;
  readonly cache: EntryCache;
  readonly writer: ObjectWriter;
  readonly owner: OwnerContext;
  readonly translate: TranslateSettings;
  /** Node subnets: what each node's entry carries and its pods are addressed from. */
  protected subnets: NodeSubnets;
  protected readonly grace: GracePeriods;

  /**
   * @param gracePeriodMs how long an unneeded entry of a `grace` plan survives (0: none).
   * @param podsUseSubnet whether pod entries carry addresses of their node's subnet, so that a
   *   node's subnet is held while they exist.
   */
  constructor(
    protected readonly ctx: BackendContext,
    table: KindTable,
    gracePeriodMs: number,
    private readonly podsUseSubnet: boolean,
  ) {
    const { settings } = ctx;
    this.table = table.restrictedTo(settings.profile, ctx.models.modules);
    this.translate = translateSettingsOf(settings);
    this.owner = ownerContextOf(settings);
    this.cache = new EntryCache(new OdlReader(ctx.client, settings.profile, this.table), ctx.logger);
    this.writer = new ObjectWriter(this.cache, this.owner, ctx.client, ctx.metrics, ctx.logger);
    this.grace = new GracePeriods(gracePeriodMs);
    this.subnets = this.newSubnets();
  }

  /** The plan of a key, as the watcher sees the cluster and ODL now. */
  abstract plan(key: string): KeyPlan;
  /** The node UID a key names, when it is a node's key (reconciled with its subnet). */
  protected abstract nodeOfKey(key: string): string | undefined;

  abstract keysFor(change: ClusterChange): string[];

  keysForEntry(_change: EntryChange): string[] {
    return [];
  }

  keyOfEntry(ref: Ref): string | undefined {
    if (!this.table.has(ref.kind)) return undefined;
    return this.table.spec(ref.kind).ownerKey(ref.name, this.cache.context(this.owner));
  }

  /** The keys the cluster needs (every key a Kubernetes object names). */
  protected abstract clusterKeys(): Iterable<string>;
  /** Throws when `key` is not one of this backend's keys. */
  protected abstract parseKey(key: string): void;
  /** A new leader term: forget what the backend's own state (clocks, allocators) knew. */
  protected freshTerm(): void {
    this.grace.clear();
    this.subnets = this.newSubnets();
  }

  /** After every successful load (`fresh`: the first of a term): recover the subnet allocations. */
  protected loaded(fresh: boolean): void {
    if (!fresh) return;
    for (const problem of this.subnets.recover())
      this.ctx.logger.error('node subnet allocation in ODL not recovered', { problem });
    const allocations = this.subnets.allocations;
    if (allocations)
      this.ctx.logger.info('recovered node subnet allocations', { nodes: allocations.nodes().length });
  }

  private context: (NodeKeyContext & PlanContext) | undefined;

  /** What plans run with; built again only when the term's subnets are (every reconcile asks). */
  protected planContext(): NodeKeyContext & PlanContext {
    if (this.context?.subnets !== this.subnets)
      this.context = {
        ...this.ctx,
        writer: this.writer,
        order: this.table,
        grace: this.grace,
        subnets: this.subnets,
      };
    return this.context;
  }

  /** Executes a key's plan: a node's with its subnet (reconcile-node.ts), any other as it is. */
  protected async reconcileKey(key: string, guard: WriteGuard): Promise<ReconcileOutcome> {
    const uid = this.nodeOfKey(key);
    const c = this.planContext();
    if (uid !== undefined)
      return reconcileNode(c, uid, guard, () => this.plan(key), { podsUseSubnet: this.podsUseSubnet });
    return (await this.runKeyPlan(key, guard)).outcome;
  }

  /**
   * Runs a key's plan: `planned` first, then the plan, then `afterPlan` (a backend that does I/O
   * before planning overrides this).
   */
  protected async runKeyPlan(key: string, guard: WriteGuard): Promise<PlanRun> {
    const plan = this.plan(key);
    this.planned(plan);
    const run = await runPlan(this.planContext(), plan, guard, () => this.plan(key));
    return this.afterPlan(key, plan, run);
  }

  /** A key's plan was made for a run (what the backend learns or reports from every plan). */
  protected planned(_plan: KeyPlan): void {}

  /** After a key's plan ran: the backend's own bookkeeping, and the outcome it turns into. */
  protected afterPlan(_key: string, _plan: KeyPlan, run: PlanRun): PlanRun {
    return run;
  }

  /**
   * Whether a key's reconcile is its plan's run alone (`runKeyPlan` as it is): node keys are not
   * (their subnet is allocated first), and a backend says which others are not.
   */
  protected runsPlanOnly(key: string): boolean {
    return this.nodeOfKey(key) === undefined;
  }

  /**
   * Settles `key` without queueing it when reconciling it would write nothing and end `synced`,
   * decided from the caches alone (no I/O), and leaves what that reconcile would have left
   * (plan-executor.ts `settleInMemory`, then `afterPlan`). False: nothing is settled, the key
   * must be queued (anything to write or delete, to wait for, to report; a bad key, a plan
   * that throws: the reconcile reports those).
   */
  holdsNothing(): boolean {
    for (const kind of this.table.kinds) for (const _name of this.cache.names(kind)) return false;
    return true;
  }

  settleIfInSync(key: string): boolean {
    let plan: KeyPlan;
    try {
      this.parseKey(key);
      if (!this.runsPlanOnly(key)) return false;
      plan = this.plan(key);
    } catch {
      return false;
    }
    const run = settleInMemory(this.planContext(), plan);
    if (!run) return false;
    this.planned(plan);
    return this.afterPlan(key, plan, run).outcome.result === 'synced';
  }

  private newSubnets(): NodeSubnets {
    const subnets = new NodeSubnets(
      this.ctx.settings.subnetSource,
      this.table.has('k8sNode') ? k8sNodeEntries(this.cache, this.owner) : undefined,
      subnetAllocation(this.ctx.settings),
      this.table.has('dhcpNetwork')
        ? { entries: nodeNetworkEntries(this.cache), node: (name) => this.ctx.view.node(name) }
        : undefined,
    );
    // A freed subnet: nodes that found the pool used up may fit now.
    subnets.onRelease(() => {
      for (const node of this.ctx.view.nodes.list()) {
        const uid = node.metadata?.uid;
        if (uid && this.subnets.subnetFor(node) === undefined) this.ctx.enqueue(nodeKey(uid));
      }
    });
    return subnets;
  }

  async load(fresh: boolean, signal?: AbortSignal): Promise<void> {
    const { metrics, logger } = this.ctx;
    if (fresh) {
      this.cache.clear();
      metrics.reset();
      this.freshTerm();
    }
    const problems = await this.cache.load(signal);
    // Subnet allocations are recovered against the cluster's nodes (a term's first load reads
    // ODL while the informers list the cluster).
    await this.ctx.view.waitForSync(signal);
    for (const kind of this.table.kinds)
      metrics.unparsed.set({ kind }, problems.filter((p) => p.kind === kind).length);
    for (const p of problems.slice(0, 20))
      logger.warn('ODL entry does not parse as its model; it is left alone', { ...p });
    this.loaded(fresh);
  }

  *allKeys(): Iterable<string> {
    const seen = new Set<string>();
    const fresh = (key: string | undefined): key is string => {
      if (key === undefined || seen.has(key)) return false;
      seen.add(key);
      return true;
    };
    for (const key of this.clusterKeys()) if (fresh(key)) yield key;
    // What ODL holds of ours (garbage collection). Foreign entries are not keys of ours.
    // An entry whose key the cluster already named is not looked at further (most are: at
    // 100,000 pods, 400,000 entries were each judged for ownership only to be dropped here).
    for (const kind of this.table.kinds)
      for (const name of this.cache.names(kind)) {
        const key = this.keyOfEntry({ kind, name });
        if (key === undefined || seen.has(key) || !this.writer.owns(kind, name)) continue;
        seen.add(key);
        yield key;
      }
  }

  async reconcile(key: string, guard: WriteGuard): Promise<ReconcileOutcome> {
    try {
      this.parseKey(key);
    } catch (err) {
      // Keys are made by this backend; a bad one is a bug, and retrying cannot fix it.
      this.ctx.logger.error('unparseable key dropped', { key, error: errorMessage(err) });
      return { result: 'deferred' };
    }
    return this.reconcileKey(key, guard);
  }
}
