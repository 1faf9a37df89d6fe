/**
 * The default backend: Kubernetes → NetVirt/Genius objects (ietf-interfaces, ELAN and L3VPN
 * instances and interfaces) plus the k8s-node entries that carry node subnets. See
 * netvirt-keys.ts for the keys and reconcile-*.ts for what each key makes right.
 */
import { errorMessage } from '../common/log.js';
import {
  diffElanInstance,
  diffElanInterface,
  diffInterface,
  diffK8sNode,
  diffVpnInstance,
  diffVpnInterface,
  type OwnerContext,
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
import { k8sNodeEntries, NodeSubnets } from './node-subnets.js';
import { ObjectWriter, type EntryDiff } from './object-writer.js';
import { ODL_KINDS, OdlState, type OdlEntries } from './odl-state.js';
import { reconcileElan, reconcileVpn } from './reconcile-instances.js';
import { reconcileNode } from './reconcile-node.js';
import { reconcilePod } from './reconcile-pod.js';
import { ownerContext, subnetAllocation, translateSettings } from './settings.js';

/** The owned-leaf diff of every kind this backend writes (src/netvirt/diff.ts). */
function netvirtDiff(state: OdlState, owner: OwnerContext): EntryDiff<OdlEntries> {
  return (kind, name, desired, actual) => {
    const d = desired as never;
    const a = actual as never;
    const opts = { name };
    switch (kind) {
      case 'interface':
        return diffInterface(d, a, owner, opts);
      case 'elanInstance':
        return diffElanInstance(d, a, owner, opts);
      case 'elanInterface':
        return diffElanInterface(d, a, owner, opts);
      case 'vpnInstance':
        return diffVpnInstance(d, a, owner, opts);
      case 'vpnInterface':
        // Owned through the ietf-interface of the same name.
        return diffVpnInterface(d, a, state.get('interface', name), owner, opts);
      case 'k8sNode':
        return diffK8sNode(d, a, owner, opts);
      default:
        throw new Error(`unknown ODL kind ${String(kind)}`);
    }
  };
}

export class NetvirtBackend implements Backend {
  readonly name = 'netvirt';
  private readonly c: NetvirtContext;
  private readonly lookup: KeyLookup;

  constructor(ctx: BackendContext) {
    const { settings } = ctx;
    const translate = translateSettings(settings);
    const owner = ownerContext(settings);
    const state = new OdlState(ctx.client, settings.profile, ctx.logger);
    this.c = {
      ...ctx,
      state,
      writer: new ObjectWriter(state, netvirtDiff(state, owner), ctx.client, ctx.metrics, ctx.logger),
      owner,
      translate,
      subnets: newSubnets(ctx, state, owner),
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
      c.subnets = newSubnets(c, c.state, c.owner);
      c.metrics.reset();
    }
    const problems = await c.state.load();
    for (const kind of ODL_KINDS)
      c.metrics.unparsed.set({ kind }, problems.filter((p) => p.kind === kind).length);
    for (const p of problems.slice(0, 20)) {
      c.logger.warn('ODL entry does not parse as its model; it is left alone', { ...p });
    }
    if (fresh) {
      for (const problem of c.subnets.recover())
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
    const ours = (kind: keyof OdlEntries, name: string) => c.writer.owns(kind, name);
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
        return reconcileElan(this.c, key, parsed.elanName, parsed.namespace, guard);
      case 'vpn':
        return reconcileVpn(this.c, key, parsed.vpnName, guard);
      case 'node':
        return reconcileNode(this.c, parsed.uid, guard, { podsUseSubnet: true });
    }
  }
}

function newSubnets(ctx: BackendContext, state: OdlState, owner: OwnerContext): NodeSubnets {
  return new NodeSubnets(
    ctx.settings.subnetSource,
    k8sNodeEntries(state, owner),
    subnetAllocation(ctx.settings),
  );
}
