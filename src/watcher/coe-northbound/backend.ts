/**
 * The `coe-northbound` backend: for ODL releases whose NetVirt translates ODL's own COE models
 * itself (NetVirt's `coe` module, up to Sodium), the watcher writes those models instead of
 * NetVirt objects: `pod:coe/pods` per pod on the pod network, `k8s-node` per node,
 * `service-information/services` and `endpoints-info/endpoints` per Service. NetVirt then
 * creates the interfaces, ELANs and VPNs itself.
 *
 * Beyond the core's pods, namespaces and nodes it watches Services and EndpointSlices with two
 * informers of its own (service-view.ts). The core's `BackendContext` carries no kubeconfig,
 * so the backend is given one (`CoeClusterAccess`), and it owns those informers' lifecycle:
 * they start with the backend (leader and standby alike, as the core's do) and stop with
 * `close()`. Nothing is deleted before they have synced: `load` waits for them.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { errorMessage } from '../../common/log.js';
import type { Registry } from '../../common/metrics.js';
import {
  checkClusterName,
  checkTranslateSettings,
  type OwnerContext,
  type TranslateSettings,
} from '../../netvirt/index.js';
import type { Backend, BackendContext, ClusterChange, ReconcileOutcome, WriteGuard } from '../backend.js';
import { coeKeysFor, nodeKey, parseCoeKey, podKey, podUidKey, serviceKey, serviceUidKey } from './keys.js';
import { CoeNodeSubnets } from './node-subnets.js';
import { COE_KINDS, CoeOdlCache, namedKey } from './odl-cache.js';
import {
  reconcileNode,
  reconcilePod,
  reconcilePodUid,
  reconcileService,
  reconcileServiceUid,
  type CoeContext,
} from './reconcile.js';
import { ServiceView } from './service-view.js';
import { CoeWriter } from './writer.js';

/** What the backend needs to watch Services and EndpointSlices itself. */
export interface CoeClusterAccess {
  kubeConfig: KubeConfig;
  /** Informer metrics go here (the watcher's registry, so they are scraped with the rest). */
  registry?: Registry;
  /** Informer watch timeouts in seconds (tests shorten them). */
  watchTimeoutSeconds?: [number, number];
}

/**
 * How long `load` waits for the Service/EndpointSlice informers' first sync before failing
 * (the core then retries `load` with backoff, checking its leader term in between).
 */
export const INFORMER_SYNC_WAIT_MS = 10_000;

export class CoeNorthboundBackend implements Backend {
  readonly name = 'coe-northbound';
  private readonly c: CoeContext;

  constructor(ctx: BackendContext, access?: CoeClusterAccess) {
    const { settings } = ctx;
    const kube = access ?? accessFromContext(ctx);
    checkClusterName(settings.clusterName);
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
    const cache = new CoeOdlCache(ctx.client, settings.profile, ctx.logger);
    const services = new ServiceView({
      kubeConfig: kube.kubeConfig,
      logger: ctx.logger,
      ...(kube.registry ? { registry: kube.registry } : {}),
      ...(kube.watchTimeoutSeconds ? { watchTimeoutSeconds: kube.watchTimeoutSeconds } : {}),
    });
    this.c = {
      ...ctx,
      cache,
      writer: new CoeWriter(cache, ctx.client, owner, ctx.metrics, ctx.logger),
      owner,
      translate,
      subnets: newSubnets(ctx),
      services,
    };
    services.onChange(({ namespace, name }) => ctx.enqueue(serviceKey(namespace, name)));
    services.start();
  }

  /** The ODL cache (tests and the benchmark look at it). */
  get cache(): CoeOdlCache {
    return this.c.cache;
  }

  /** The Service/EndpointSlice informers. */
  get services(): ServiceView {
    return this.c.services;
  }

  keysFor(change: ClusterChange): string[] {
    return coeKeysFor(change, (nodeName) => this.c.view.podsOnNode(nodeName));
  }

  async load(fresh: boolean): Promise<void> {
    const c = this.c;
    await this.waitForServices();
    if (fresh) {
      c.cache.clear();
      c.subnets = newSubnets(c);
      c.metrics.reset();
    }
    const problems = await c.cache.load();
    for (const kind of COE_KINDS)
      c.metrics.unparsed.set({ kind }, problems.filter((p) => p.kind === kind).length);
    for (const p of problems.slice(0, 20))
      c.logger.warn('ODL COE entry does not parse as its model; it is left alone', { ...p });
    if (fresh) {
      const ours = [...c.cache.values('k8sNode')].filter((n) => c.writer.owns('k8sNode', n.uid));
      for (const problem of c.subnets.recover(ours))
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
    for (const service of c.services.services.list()) {
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
        return reconcileNode(this.c, parsed.uid, guard);
      case 'pod-uid':
        return reconcilePodUid(this.c, parsed.uid, guard);
      case 'service-uid':
        return reconcileServiceUid(this.c, parsed.uid, guard);
    }
  }

  /** Stops the Service/EndpointSlice informers. Call after the watcher has closed. */
  async close(): Promise<void> {
    await this.c.services.stop();
  }

  private async waitForServices(): Promise<void> {
    if (this.c.services.hasSynced()) return;
    const timeout = AbortSignal.timeout(INFORMER_SYNC_WAIT_MS);
    try {
      await this.c.services.waitForSync(timeout);
    } catch {
      throw new Error(
        `the services/endpointslices informers have not synced within ${INFORMER_SYNC_WAIT_MS} ms ` +
          `(stalled ${Math.round(this.c.services.stalledMs())} ms); nothing is read or deleted before they have`,
      );
    }
  }
}

/** A factory for `startWatcher({ backend })`. */
export function coeNorthboundBackend(
  access: CoeClusterAccess,
): (ctx: BackendContext) => CoeNorthboundBackend {
  return (ctx) => new CoeNorthboundBackend(ctx, access);
}

/**
 * The kubeconfig when the core's context carries one (`createBackend('coe-northbound', ctx)`).
 * The core's BackendContext does not (yet) have these members; until it does, construct the
 * backend with `coeNorthboundBackend({ kubeConfig })`.
 */
function accessFromContext(ctx: BackendContext): CoeClusterAccess {
  const extended = ctx as BackendContext & { kubeConfig?: KubeConfig; registry?: Registry };
  if (!extended.kubeConfig)
    throw new Error(
      'the coe-northbound backend watches Services and EndpointSlices and needs a kubeconfig: ' +
        'the watcher core must pass kubeConfig in the BackendContext, or construct it with coeNorthboundBackend({ kubeConfig })',
    );
  return { kubeConfig: extended.kubeConfig, ...(extended.registry ? { registry: extended.registry } : {}) };
}

function newSubnets(ctx: BackendContext): CoeNodeSubnets {
  const { settings } = ctx;
  return new CoeNodeSubnets(
    settings.subnetSource,
    settings.clusterCidr !== undefined && settings.nodePrefixLength !== undefined
      ? { clusterCidr: settings.clusterCidr, nodePrefixLength: settings.nodePrefixLength }
      : undefined,
  );
}
