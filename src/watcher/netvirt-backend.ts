/**
 * The default backend: Kubernetes → NetVirt/Genius objects (ietf-interfaces, ELAN and L3VPN
 * instances and interfaces) plus the k8s-node entries that carry node subnets. See
 * netvirt-keys.ts for the keys and reconcile-*.ts for what each key makes right.
 */
import { errorMessage } from '../common/log.js';
import {
  checkTranslateSettings,
  k8sNodeOwnership,
  type OwnerContext,
  type TranslateSettings,
} from '../netvirt/index.js';
import type { Backend, BackendContext, ClusterChange, ReconcileOutcome, WriteGuard } from './backend.js';
import { GracePeriods } from './grace-period.js';
import type { NetvirtContext } from './netvirt-context.js';
import {
  elanKey,
  netvirtKeysFor,
  nodeKey,
  parseNetvirtKey,
  podKeyOfInterface,
  vpnKey,
  type KeyLookup,
} from './netvirt-keys.js';
import { NodeSubnets } from './node-subnets.js';
import { ObjectWriter } from './object-writer.js';
import { ODL_KINDS, OdlState, type OdlKind } from './odl-state.js';
import { reconcileElan, reconcileVpn } from './reconcile-instances.js';
import { reconcileNode } from './reconcile-node.js';
import { reconcilePod } from './reconcile-pod.js';

export class NetvirtBackend implements Backend {
  readonly name = 'netvirt';
  private readonly c: NetvirtContext;
  private readonly lookup: KeyLookup;

  constructor(ctx: BackendContext) {
    const { settings } = ctx;
    const translate: TranslateSettings = {
      clusterName: settings.clusterName,
      profile: settings.profile,
      routeTarget: settings.routeTarget,
      segmentType: 'vxlan',
    };
    checkTranslateSettings(translate);
    const owner: OwnerContext = {
      clusterName: settings.clusterName,
      profile: settings.profile,
      routeTarget: settings.routeTarget,
      rdAdministrator: settings.rdAdministrator,
    };
    const state = new OdlState(ctx.client, settings.profile, ctx.logger);
    this.c = {
      ...ctx,
      state,
      writer: new ObjectWriter(state, ctx.client, owner, ctx.metrics, ctx.logger),
      owner,
      translate,
      subnets: this.newSubnets(ctx, state),
      grace: new GracePeriods(settings.gracePeriodMs),
      rdReservations: new Map(),
    };
    const view = ctx.view;
    this.lookup = {
      node: (name) => view.node(name),
      podsOnNode: (name) => view.podsOnNode(name),
      podsInNamespace: (ns) => view.podsInNamespace(ns),
    };
  }

  /** The ODL cache (tests and the benchmark look at it). */
  get state(): OdlState {
    return this.c.state;
  }

  keysFor(change: ClusterChange): string[] {
    return netvirtKeysFor(change, this.lookup);
  }

  async load(fresh: boolean): Promise<void> {
    const c = this.c;
    if (fresh) {
      c.state.clear();
      c.grace.clear();
      c.rdReservations.clear();
      c.subnets = this.newSubnets(c, c.state);
      c.metrics.reset();
    }
    const problems = await c.state.load();
    for (const kind of ODL_KINDS)
      c.metrics.unparsed.set({ kind }, problems.filter((p) => p.kind === kind).length);
    for (const p of problems.slice(0, 20)) {
      c.logger.warn('ODL entry does not parse as its model; it is left alone', { ...p });
    }
    if (fresh) {
      const recovered = c.subnets.recover((uid) => {
        const entry = c.state.get('k8sNode', uid);
        return entry !== undefined && k8sNodeOwnership(entry, c.owner).owner === 'ours';
      });
      for (const problem of recovered)
        c.logger.error('node subnet allocation in ODL not recovered', { problem });
      const allocations = c.subnets.allocations;
      if (allocations)
        c.logger.info('recovered node subnet allocations', { nodes: allocations.nodes().length });
    }
  }

  *allKeys(): Iterable<string> {
    const c = this.c;
    const seen = new Set<string>();
    const emit = function* (keys: Iterable<string>) {
      for (const k of keys) {
        if (seen.has(k)) continue;
        seen.add(k);
        yield k;
      }
    };
    // What the cluster needs.
    for (const obj of c.view.nodes.list()) yield* emit(this.keysFor({ kind: 'node', obj }));
    for (const obj of c.view.namespaces.list()) yield* emit(this.keysFor({ kind: 'namespace', obj }));
    for (const obj of c.view.pods.list()) yield* emit(this.keysFor({ kind: 'pod', obj }));
    // What ODL holds of ours (garbage collection). Foreign entries are not keys of ours.
    const ours = (kind: OdlKind, name: string) =>
      c.writer.decide(kind, name, undefined).action === 'delete-candidate';
    for (const kind of ['interface', 'elanInterface', 'vpnInterface'] as const) {
      for (const name of c.state.names(kind)) {
        const key = ours(kind, name) ? podKeyOfInterface(name) : undefined;
        if (key) yield* emit([key]);
      }
    }
    for (const name of c.state.names('elanInstance'))
      if (ours('elanInstance', name)) yield* emit([elanKey(name)]);
    for (const name of c.state.names('vpnInstance'))
      if (ours('vpnInstance', name)) yield* emit([vpnKey(name)]);
    for (const uid of c.state.names('k8sNode')) if (ours('k8sNode', uid)) yield* emit([nodeKey(uid)]);
  }

  async reconcile(key: string, guard: WriteGuard): Promise<ReconcileOutcome> {
    let parsed;
    try {
      parsed = parseNetvirtKey(key);
    } catch (err) {
      // Keys are made by this module; a bad one is a bug, and retrying cannot fix it.
      this.c.logger.error('unparseable key dropped', { key, error: errorMessage(err) });
      return { result: 'deferred' };
    }
    switch (parsed.kind) {
      case 'pod':
        return reconcilePod(this.c, parsed.namespace, parsed.name, guard);
      case 'elan':
        return reconcileElan(this.c, key, parsed.elanName, parsed.nodeIp, parsed.namespace, guard);
      case 'vpn':
        return reconcileVpn(this.c, key, parsed.vpnName, guard);
      case 'node':
        return reconcileNode(this.c, parsed.uid, guard);
    }
  }

  private newSubnets(ctx: BackendContext, state: OdlState): NodeSubnets {
    const { settings } = ctx;
    return new NodeSubnets(
      settings.subnetSource,
      state,
      settings.clusterCidr !== undefined && settings.nodePrefixLength !== undefined
        ? { clusterCidr: settings.clusterCidr, nodePrefixLength: settings.nodePrefixLength }
        : undefined,
    );
  }
}
