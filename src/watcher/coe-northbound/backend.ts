/**
 * The `coe-northbound` backend: for ODL releases whose NetVirt translates ODL's own COE models
 * itself (NetVirt's `coe` module, up to Sodium), the watcher writes those models instead of
 * NetVirt objects: `pod:coe/pods` per pod on the pod network, `k8s-node` per node,
 * `service-information/services` and `endpoints-info/endpoints` per Service. NetVirt then
 * creates the interfaces, ELANs and VPNs itself.
 *
 * Beyond pods, namespaces and nodes it reads Services and EndpointSlices, which it declares in
 * `resources`: the core's cluster view watches them (leader and standby alike, in the sync
 * gate and the health checks) and hands their changes to `keysFor`. The backend keeps only an
 * index of each Service's slices (service-slices.ts), fed from the view.
 */
import { errorMessage } from '../../common/log.js';
import type { Backend, BackendContext, ClusterChange, ReconcileOutcome, WriteGuard } from '../backend.js';
import type { OptionalResource } from '../cluster-view.js';
import { k8sNodeEntries, NodeSubnets } from '../node-subnets.js';
import { ObjectWriter } from '../object-writer.js';
import { reconcileNode } from '../reconcile-node.js';
import { ownerContext, subnetAllocation, translateSettings } from '../settings.js';
import { coeEntryDiff } from './diff.js';
import { coeKeysFor, nodeKey, parseCoeKey, podKey, podUidKey, serviceKey, serviceUidKey } from './keys.js';
import { COE_KINDS, CoeOdlCache, namedKey } from './odl-cache.js';
import {
  reconcilePod,
  reconcilePodUid,
  reconcileService,
  reconcileServiceUid,
  type CoeContext,
} from './reconcile.js';
import { ServiceSlices } from './service-slices.js';

export class CoeNorthboundBackend implements Backend {
  readonly name = 'coe-northbound';
  readonly resources: readonly OptionalResource[] = ['services', 'endpointslices'];
  private readonly c: CoeContext;

  constructor(ctx: BackendContext) {
    const { settings } = ctx;
    const translate = translateSettings(settings);
    const owner = ownerContext(settings);
    const cache = new CoeOdlCache(ctx.client, settings.profile, ctx.logger);
    this.c = {
      ...ctx,
      cache,
      writer: new ObjectWriter(cache, coeEntryDiff(cache, owner), ctx.client, ctx.metrics, ctx.logger),
      owner,
      translate,
      subnets: newSubnets(ctx, cache),
      // Subscribed now, before the core maps changes to keys (see BackendContext.view).
      slices: new ServiceSlices(ctx.view),
    };
  }

  /** The ODL cache (tests and the benchmark look at it). */
  get cache(): CoeOdlCache {
    return this.c.cache;
  }

  /** Which EndpointSlices belong to which Service. */
  get slices(): ServiceSlices {
    return this.c.slices;
  }

  keysFor(change: ClusterChange): string[] {
    return coeKeysFor(change, (nodeName) => this.c.view.podsOnNode(nodeName));
  }

  async load(fresh: boolean): Promise<void> {
    const c = this.c;
    if (fresh) {
      c.cache.clear();
      c.subnets = newSubnets(c, c.cache);
      c.metrics.reset();
    }
    const problems = await c.cache.load();
    for (const kind of COE_KINDS)
      c.metrics.unparsed.set({ kind }, problems.filter((p) => p.kind === kind).length);
    for (const p of problems.slice(0, 20))
      c.logger.warn('ODL COE entry does not parse as its model; it is left alone', { ...p });
    if (fresh) {
      for (const problem of c.subnets.recover())
        c.logger.error('node subnet allocation in ODL not recovered', { problem });
    }
  }

  *allKeys(): Iterable<string> {
    const c = this.c;
    const seen = new Set<string>();
    const emit = function* (key: string | undefined) {
      if (key === undefined || seen.has(key)) return;
      seen.add(key);
      yield key;
    };
    // What the cluster needs.
    for (const node of c.view.nodes.list()) yield* emit(node.metadata?.uid && nodeKey(node.metadata.uid));
    for (const pod of c.view.pods.list()) {
      const { namespace, name } = pod.metadata ?? {};
      if (namespace && name) yield* emit(podKey(namespace, name));
    }
    for (const service of c.view.services?.list() ?? []) {
      const { namespace, name } = service.metadata ?? {};
      if (namespace && name) yield* emit(serviceKey(namespace, name));
    }
    // What ODL holds of this cluster's (garbage collection). Foreign entries are no key's.
    for (const pod of c.cache.values('coePod')) {
      if (!c.writer.owns('coePod', pod.uid)) continue;
      const named = namedKey(pod);
      yield* emit(named ? `pod/${named}` : podUidKey(pod.uid));
    }
    for (const service of c.cache.values('coeService')) {
      if (!c.writer.owns('coeService', service.uid)) continue;
      const named = namedKey(service);
      yield* emit(named ? `service/${named}` : serviceUidKey(service.uid));
    }
    for (const node of c.cache.values('k8sNode'))
      if (c.writer.owns('k8sNode', node.uid)) yield* emit(nodeKey(node.uid));
  }

  async reconcile(key: string, guard: WriteGuard): Promise<ReconcileOutcome> {
    let parsed;
    try {
      parsed = parseCoeKey(key);
    } catch (err) {
      // Keys are made by this module; a bad one is a bug, and retrying cannot fix it.
      this.c.logger.error('unparseable key dropped', { key, error: errorMessage(err) });
      return { result: 'deferred' };
    }
    switch (parsed.kind) {
      case 'pod':
        return reconcilePod(this.c, parsed.namespace, parsed.name, guard);
      case 'service':
        return reconcileService(this.c, parsed.namespace, parsed.name, guard);
      case 'node':
        // Pod entries carry no subnet: nothing to enqueue when it changes, nothing to poll.
        return reconcileNode(this.c, parsed.uid, guard, { podsUseSubnet: false });
      case 'pod-uid':
        return reconcilePodUid(this.c, parsed.uid, guard);
      case 'service-uid':
        return reconcileServiceUid(this.c, parsed.uid, guard);
    }
  }
}

function newSubnets(ctx: BackendContext, cache: CoeOdlCache): NodeSubnets {
  const { settings } = ctx;
  return new NodeSubnets(
    settings.subnetSource,
    k8sNodeEntries(cache, ownerContext(settings)),
    subnetAllocation(settings),
  );
}
