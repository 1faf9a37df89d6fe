/**
 * The Services and EndpointSlices the coe-northbound backend needs beyond the core's pods,
 * namespaces and nodes: two more supervised informers (list + watch, bookmarks, relist on 410,
 * watchdog: src/k8s/informer.ts) and an index of each Service's slices.
 *
 * EndpointSlices, not Endpoints: they are the API every supported Kubernetes serves
 * (discovery.k8s.io/v1 since 1.21; core/v1 Endpoints is deprecated since 1.33), and they are
 * how large Services are split (100 endpoints per slice by default). A Service's endpoints
 * entry is built from ALL its slices.
 *
 * Like the core's informers these run on leader and standby alike, so a takeover starts from
 * warm caches. Index updates run before the change listeners, so a key enqueued by a change
 * is reconciled against indexes that include it.
 */
import type { KubeConfig, KubernetesObject, V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import type { Logger } from '../../common/log.js';
import type { Registry } from '../../common/metrics.js';
import { Informer, waitForAllSynced } from '../../k8s/informer.js';
import { sliceServiceName } from './translate.js';

export interface ServiceViewOptions {
  kubeConfig: KubeConfig;
  registry?: Registry;
  logger: Logger;
  watchTimeoutSeconds?: [number, number];
}

/** A Service (`namespace/name`) whose COE entries a change may affect. */
export type ServiceChange = { namespace: string; name: string };

/** What of a Service its translation reads; status heartbeats and label edits change nothing. */
export function serviceProjection(s: V1Service): string {
  return JSON.stringify([
    s.metadata?.uid,
    s.spec?.clusterIP,
    s.spec?.externalIPs,
    s.spec?.loadBalancerIP,
    (s.spec?.ports ?? []).map((p) => [p.name, p.port, p.targetPort, p.nodePort]),
    (s.status?.loadBalancer?.ingress ?? []).map((i) => i.ip),
  ]);
}

/** What of an EndpointSlice the endpoints translation reads. */
export function sliceProjection(s: V1EndpointSlice): string {
  return JSON.stringify([
    sliceServiceName(s),
    s.addressType,
    (s.endpoints ?? []).map((e) => [e.addresses, e.conditions?.ready, e.hostname, e.nodeName]),
    (s.ports ?? []).map((p) => [p.name, p.port]),
  ]);
}

export class ServiceView {
  readonly services: Informer<V1Service>;
  readonly slices: Informer<V1EndpointSlice>;
  /** `namespace/service name` → keys (`namespace/slice name`) of its slices. */
  private readonly slicesByService = new Map<string, Set<string>>();
  private readonly listeners: ((change: ServiceChange) => void)[] = [];

  constructor(options: ServiceViewOptions) {
    const common = {
      kubeConfig: options.kubeConfig,
      registry: options.registry,
      logger: options.logger,
      ...(options.watchTimeoutSeconds ? { watchTimeoutSeconds: options.watchTimeoutSeconds } : {}),
    };
    this.services = new Informer<V1Service>({ ...common, name: 'services', path: '/api/v1/services' });
    this.slices = new Informer<V1EndpointSlice>({
      ...common,
      name: 'endpointslices',
      path: '/apis/discovery.k8s.io/v1/endpointslices',
    });

    this.slices
      .on('add', (s) => this.indexSlice(s, true))
      .on('update', (s, old) => {
        this.indexSlice(old, false);
        this.indexSlice(s, true);
      })
      .on('delete', (s) => this.indexSlice(s, false));

    this.services
      .on('add', (s) => this.emitService(s))
      .on('update', (s, old) => {
        if (serviceProjection(s) !== serviceProjection(old)) this.emitService(s);
      })
      .on('delete', (s) => this.emitService(s));
    this.slices
      .on('add', (s) => this.emitSlice(s))
      .on('update', (s, old) => {
        if (sliceProjection(s) === sliceProjection(old)) return;
        this.emitSlice(s);
        if (sliceServiceName(old) !== sliceServiceName(s)) this.emitSlice(old);
      })
      .on('delete', (s) => this.emitSlice(s));
  }

  onChange(listener: (change: ServiceChange) => void): void {
    this.listeners.push(listener);
  }

  informers(): Informer<KubernetesObject>[] {
    return [this.services, this.slices] as unknown as Informer<KubernetesObject>[];
  }

  start(): void {
    for (const informer of this.informers()) informer.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers().map((i) => i.stop()));
  }

  hasSynced(): boolean {
    return this.informers().every((i) => i.hasSynced());
  }

  waitForSync(signal?: AbortSignal): Promise<void> {
    return waitForAllSynced(this.informers(), signal);
  }

  stalledMs(): number {
    return Math.max(...this.informers().map((i) => i.stalledMs()));
  }

  service(namespace: string, name: string): V1Service | undefined {
    return this.services.get(`${namespace}/${name}`);
  }

  /** The EndpointSlices of a Service, by slice name. */
  slicesOf(namespace: string, name: string): V1EndpointSlice[] {
    return [...(this.slicesByService.get(`${namespace}/${name}`) ?? [])]
      .sort()
      .map((key) => this.slices.get(key))
      .filter((s): s is V1EndpointSlice => s !== undefined);
  }

  private indexSlice(slice: V1EndpointSlice, add: boolean): void {
    const ns = slice.metadata?.namespace;
    const name = slice.metadata?.name;
    const service = sliceServiceName(slice);
    if (!ns || !name || !service) return;
    const owner = `${ns}/${service}`;
    let set = this.slicesByService.get(owner);
    if (add) {
      if (!set) this.slicesByService.set(owner, (set = new Set()));
      set.add(`${ns}/${name}`);
    } else if (set) {
      set.delete(`${ns}/${name}`);
      if (set.size === 0) this.slicesByService.delete(owner);
    }
  }

  private emitService(s: V1Service): void {
    const namespace = s.metadata?.namespace;
    const name = s.metadata?.name;
    if (namespace && name) this.emit({ namespace, name });
  }

  private emitSlice(s: V1EndpointSlice): void {
    const namespace = s.metadata?.namespace;
    const name = sliceServiceName(s);
    if (namespace && name) this.emit({ namespace, name });
  }

  private emit(change: ServiceChange): void {
    for (const listener of this.listeners) listener(change);
  }
}
