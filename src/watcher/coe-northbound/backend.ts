/**
 * The `coe-northbound` backend: for ODL releases whose NetVirt translates ODL's own COE models
 * itself (NetVirt's `coe` module, up to Sodium), the watcher writes those models instead of
 * NetVirt objects: `pod:coe/pods` per pod on the pod network, `k8s-node` per node,
 * `service-information/services` and `endpoints-info/endpoints` per Service. NetVirt then
 * creates the interfaces, ELANs and VPNs itself. Its keys and plans are src/netvirt/coe/.
 *
 * Beyond pods, namespaces and nodes it reads Services and EndpointSlices, which it declares in
 * `resources`: the core's cluster view watches them (leader and standby alike, in the sync
 * gate and the health checks) and hands their changes to `keysFor`. The backend keeps only an
 * index of each Service's slices (service-slices.ts), fed from the view.
 */
import { gatewayKey, namedKey, nodeKey, parseCoeKey, podKey, serviceKey } from '../../netvirt/coe/keys.js';
import { planCoeKey, type CoePlanInputs } from '../../netvirt/coe/plan.js';
import { COE_KINDS } from '../../netvirt/kinds.js';
import { OdlModelsError } from '../../odl/models.js';
import type { BackendContext } from '../backend.js';
import type { ClusterChange, OptionalResource } from '../cluster-view.js';
import type { EntryChange } from '../entry-cache.js';
import { OdlBackend } from '../odl-backend.js';
import { coeKeysFor } from './keys.js';
import { PodNames } from './pod-names.js';
import { ServiceSlices } from './service-slices.js';

export class CoeNorthboundBackend extends OdlBackend {
  readonly name = 'coe-northbound';
  override readonly resources: readonly OptionalResource[] = ['services', 'endpointslices'];
  /** Which EndpointSlices belong to which Service. */
  readonly slices: ServiceSlices;
  /** Which namespaces have a pod of a name (the renderer's interface names ignore namespaces). */
  private readonly podNames: PodNames;
  private readonly inputs: CoePlanInputs;
  /** Node gateways are on when service ranges are configured (their pod entries, gateway.ts). */
  private readonly gateways: boolean;

  constructor(ctx: BackendContext) {
    // COE entries have no grace period; pod entries carry no subnet (nothing to hold a node's).
    super(ctx, COE_KINDS, 0, false);
    const missing = COE_KINDS.kinds.filter((k) => !this.table.has(k));
    if (missing.length > 0)
      throw new OdlModelsError(
        `the coe-northbound backend writes ODL's COE models, which this ODL (${ctx.models.profile}) does not have (no module ${[...new Set(missing.map((k) => COE_KINDS.spec(k).module(ctx.models.profile)))].join(', ')}): use the netvirt backend`,
      );
    // Subscribed now, before the core maps changes to keys (see BackendContext.view).
    this.slices = new ServiceSlices(ctx.view);
    this.podNames = new PodNames(ctx.view);
    const view = ctx.view;
    const named = (e: unknown) => namedKey(e as { networkNs?: string; name?: string });
    const podsNamed = this.cache.addIndex('coePod', named);
    const servicesNamed = this.cache.addIndex('coeService', named);
    const serviceCidrs = ctx.settings.serviceCidrs ?? [];
    this.gateways = serviceCidrs.length > 0;
    this.inputs = {
      settings: { ...this.translate, serviceCidrs },
      k8sNodeModel: true,
      pod: (ns, name) => view.pod(ns, name),
      podByUid: (uid) => view.pods.list().find((p) => p.metadata?.uid === uid),
      node: (name) => view.node(name),
      nodeByUid: (uid) => view.nodeByUid(uid),
      service: (ns, name) => view.service(ns, name),
      serviceByUid: (uid) => view.services?.list().find((s) => s.metadata?.uid === uid),
      slicesOf: (ns, name) => this.slices.slicesOf(ns, name),
      coePodsNamed: (ns, name) => podsNamed(`${ns}/${name}`),
      coeServicesNamed: (ns, name) => servicesNamed(`${ns}/${name}`),
      hasCoePod: (uid) => this.cache.get('coePod', uid) !== undefined,
      podsNamed: (name) => this.podNames.podsNamed(name),
      hasCoeService: (uid) => this.cache.get('coeService', uid) !== undefined,
      nodeSubnet: (node) => this.subnets.subnetFor(node),
      nodeEntrySubnet: (node) => this.subnets.entrySubnet(node),
      // Pod entries carry no subnet; only pods still bound to a gone node hold its addresses.
      subnetHolder: (uid) => {
        const subnet = this.subnets.allocated(uid);
        const nodeName = this.subnets.entry(uid)?.hostName;
        const pod = nodeName ? view.podsOnNode(nodeName)[0] : undefined;
        return subnet && pod
          ? { subnet, holder: `pod ${pod.metadata?.namespace ?? '?'}/${pod.metadata?.name ?? '?'}` }
          : undefined;
      },
    };
  }

  keysFor(change: ClusterChange): string[] {
    const keys = coeKeysFor(
      change,
      (nodeName) => this.ctx.view.podsOnNode(nodeName),
      (name) => this.podNames.podsNamed(name),
    );
    if (!this.gateways || change.kind !== 'node') return keys;
    const names = new Set([change.obj.metadata?.name, change.old?.metadata?.name]);
    return [...keys, ...[...names].flatMap((n) => (n ? [gatewayKey(n)] : []))];
  }

  /** A node's subnet changed in ODL (its k8s-node pod-cidr): its gateway sits at the subnet's second address. */
  override keysForEntry(change: EntryChange): string[] {
    if (!this.gateways || change.ref.kind !== 'k8sNode') return [];
    const podCidr = (e: unknown) => (e as { podCidr?: string } | undefined)?.podCidr?.trim();
    if (podCidr(change.before) === podCidr(change.after)) return [];
    const nodeName = this.ctx.view.nodeByUid(change.ref.name)?.metadata?.name;
    return nodeName ? [gatewayKey(nodeName)] : [];
  }

  protected *clusterKeys(): Iterable<string> {
    const view = this.ctx.view;
    for (const node of view.nodes.list()) {
      if (node.metadata?.uid) yield nodeKey(node.metadata.uid);
      if (this.gateways && node.metadata?.name) yield gatewayKey(node.metadata.name);
    }
    for (const pod of view.pods.list()) {
      const { namespace, name } = pod.metadata ?? {};
      if (namespace && name) yield podKey(namespace, name);
    }
    for (const service of view.services?.list() ?? []) {
      const { namespace, name } = service.metadata ?? {};
      if (namespace && name) yield serviceKey(namespace, name);
    }
  }

  protected parseKey(key: string): void {
    parseCoeKey(key);
  }

  /** The plan of a key, as the watcher sees the cluster and ODL now. */
  plan(key: string) {
    return planCoeKey(key, this.inputs);
  }

  protected nodeOfKey(key: string): string | undefined {
    const k = parseCoeKey(key);
    return k.kind === 'node' ? k.uid : undefined;
  }
}
