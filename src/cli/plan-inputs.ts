/**
 * What ODL should hold for the cluster, planned exactly as the watcher plans it (the netvirt
 * plans of src/netvirt), with the two stateful inputs (node subnets and namespace RDs)
 * recovered from a snapshot of ODL the way the watcher recovers them. Also the set of keys to
 * plan: every key the cluster names, and every key that owns an entry of ours in ODL.
 */
import type { Acl } from '../netvirt/acl.js';
import type { V1Node } from '@kubernetes/client-node';
import { networkSubnets, nodeNetworkName } from '../netvirt/node-network.js';
import { netvirtClusterKeys } from '../netvirt/keys.js';
import { readNetworkDefinition, type NetworkDefinition } from '../netvirt/network-config.js';
import { networkInstanceName } from '../netvirt/network-names.js';
import { namespaceRoutingConflictsOf, routedSubnet, type RoutedSubnet } from '../netvirt/network-routing.js';
import type { OwnerContext } from '../netvirt/ownership.js';
import { recoverRouteDistinguishers, vpnRouteDistinguisher } from '../netvirt/ownership.js';
import type { NetvirtPlanInputs } from '../netvirt/plan-netvirt.js';
import { allocateRouteDistinguishers } from '../netvirt/route-distinguisher.js';
import {
  clusterPlanInputs,
  namespacesNeedingVpn,
  translateCluster,
  type DesiredState,
} from '../netvirt/translate-cluster.js';
import { ownerContextOf, translateSettingsOf } from '../netvirt/translate-settings.js';
import type { OdlView } from '../odl/entry-store.js';
import type { KubeSnapshot } from './kube-reader.js';
import type { CliSettings } from './settings.js';

export type SubnetSource = CliSettings['subnetSource'];

/** What planning needs of the settings (the watcher's, which odlcoectl shares). */
export type PlanSettings = Pick<
  CliSettings,
  'clusterName' | 'profile' | 'models' | 'routeTarget' | 'rdAdministrator' | 'subnetSource' | 'serviceCidrs'
>;

export interface NodeSubnet {
  cidr: string;
  /** Where it was read: ODL (the node's network, else its k8s-node entry), or `spec.podCIDR`. */
  source: 'odl' | 'node.spec.podCIDR';
  /** The ODL entry it was read from (`odl`). */
  record?: { kind: 'dhcpNetwork' | 'k8sNode'; name: string };
}

/**
 * The subnet pods on `node` are addressed from, as the watcher sees it (node-subnets.ts
 * `subnetFor`): `spec.podCIDR` for the podCIDR source, else what ODL holds for the node, as
 * the node agent reads it: its network `odlcoe-node:<node>`, else (where ODL has the COE
 * models) the `pod-cidr` of its k8s-node entry.
 */
export function nodeSubnet(node: V1Node, odl: OdlView, source: SubnetSource): NodeSubnet | undefined {
  if (source === 'podCIDR') {
    const cidr = node.spec?.podCIDR;
    return cidr ? { cidr, source: 'node.spec.podCIDR' } : undefined;
  }
  const name = node.metadata?.name;
  if (name && odl.table.has('dhcpNetwork')) {
    const network = nodeNetworkName(name);
    const [cidr] = networkSubnets(odl.get('dhcpNetwork', network));
    if (cidr) return { cidr, source: 'odl', record: { kind: 'dhcpNetwork', name: network } };
  }
  const uid = node.metadata?.uid;
  const cidr = uid && odl.table.has('k8sNode') ? odl.get('k8sNode', uid)?.podCidr?.trim() : undefined;
  return cidr && uid ? { cidr, source: 'odl', record: { kind: 'k8sNode', name: uid } } : undefined;
}

/** node name → subnet, for the nodes that have one. */
function nodeSubnets(kube: KubeSnapshot, odl: OdlView, source: SubnetSource): Map<string, string> {
  const out = new Map<string, string>();
  for (const node of kube.nodes) {
    const name = node.metadata?.name;
    const subnet = nodeSubnet(node, odl, source);
    if (name && subnet) out.set(name, subnet.cidr);
  }
  return out;
}

/**
 * Namespace → RD: the RD its VPN already has in ODL, else the one the watcher's allocator
 * would hand out next (RDs held by any VPN in ODL, ours or not, count as taken).
 */
function routeDistinguishers(
  kube: KubeSnapshot,
  odl: OdlView,
  settings: PlanSettings,
  networks: NetworkInputs | undefined,
): Map<string, string> {
  const needing = namespacesNeedingVpn(kube.pods);
  // Routed networks: a `vpn` one's own VPN (its name is its id in the allocator), a `namespace`
  // one's namespace VPN.
  for (const nad of kube.networkAttachmentDefinitions ?? []) {
    const ns = nad.metadata?.namespace ?? '';
    const def = networks?.networkDefinition(ns, nad.metadata?.name ?? '');
    if (def?.state !== 'odlcoe') continue;
    if (def.network.routing === 'vpn') needing.add(networkInstanceName(ns, def.network.name));
    if (def.network.routing === 'namespace') needing.add(ns);
  }
  const vpns = [...odl.values('vpnInstance')];
  const existing = recoverRouteDistinguishers(vpns, needing, ownerContextOf(settings));
  const known = new Set(existing.values());
  for (const vpn of vpns) {
    const rd = vpnRouteDistinguisher(vpn);
    if (rd !== undefined && !known.has(rd)) existing.set(`foreign-vpn:${vpn.name}`, rd);
  }
  return allocateRouteDistinguishers(needing, existing, { administrator: settings.rdAdministrator })
    .byNamespace;
}

type NetworkInputs = Required<Pick<NetvirtPlanInputs, 'networkDefinition' | 'namespaceRoutedNetworks'>>;

/**
 * The NADs as the watcher reads them (undefined where the API server does not serve them): a
 * network on an ELAN made in ODL is invalid while the snapshot has no such ELAN, and a
 * namespace-routed one that overlaps the pod subnets known here (every node's, the Service
 * ranges; odlcoectl does not know the watcher's cluster CIDR) or an older such network is
 * refused (network-routing.ts).
 */
function networkInputs(kube: KubeSnapshot, odl: OdlView, settings: PlanSettings): NetworkInputs | undefined {
  const nads = kube.networkAttachmentDefinitions;
  if (!nads) return undefined;
  const byRef = new Map(nads.map((n) => [`${n.metadata?.namespace ?? ''}/${n.metadata?.name ?? ''}`, n]));
  const conflicts = namespaceRoutingConflictsOf(nads, readNetworkDefinition, () => {
    const routed = [...nodeSubnets(kube, odl, settings.subnetSource)].map(([node, cidr]) =>
      routedSubnet(cidr, `node ${node}'s pod subnet`),
    );
    for (const cidr of settings.serviceCidrs ?? []) routed.push(routedSubnet(cidr, 'the Service range'));
    return routed.filter((r): r is RoutedSubnet => r !== undefined);
  });
  const networkDefinition = (ns: string, name: string): NetworkDefinition | undefined => {
    const nad = byRef.get(`${ns}/${name}`);
    if (!nad) return undefined;
    const def = readNetworkDefinition(nad);
    if (def.state !== 'odlcoe') return def;
    const elan = def.network.elan;
    if (elan !== undefined && !odl.get('elanInstance', elan))
      return {
        state: 'invalid',
        message: `spec.config/elan: no ELAN ${JSON.stringify(elan)} exists in ODL (create it there first)`,
      };
    const conflict = conflicts.get(`${ns}/${name}`);
    return conflict === undefined ? def : { state: 'invalid', message: conflict };
  };
  return {
    networkDefinition,
    namespaceRoutedNetworks: (ns) =>
      nads.flatMap((nad) => {
        const name = nad.metadata?.name ?? '';
        if (nad.metadata?.namespace !== ns) return [];
        const def = networkDefinition(ns, name);
        return def?.state === 'odlcoe' && def.network.routing === 'namespace' ? [`${ns}/${name}`] : [];
      }),
  };
}

function clusterObjects(
  kube: KubeSnapshot,
  odl: OdlView,
  settings: PlanSettings,
  networks: NetworkInputs | undefined,
) {
  return {
    nodes: kube.nodes,
    namespaces: kube.namespaces,
    pods: kube.pods,
    routeDistinguishers: routeDistinguishers(kube, odl, settings, networks),
    nodeSubnets: nodeSubnets(kube, odl, settings.subnetSource),
    k8sNodeModel: odl.table.has('k8sNode'),
    ...(kube.services ? { services: kube.services } : {}),
  };
}

/** The netvirt plans' inputs over a snapshot of both sides. */
export function planInputs(kube: KubeSnapshot, odl: OdlView, settings: PlanSettings): NetvirtPlanInputs {
  const networks = networkInputs(kube, odl, settings);
  const inputs = clusterPlanInputs(
    clusterObjects(kube, odl, settings, networks),
    translateSettingsOf(settings),
  );
  return {
    ...inputs,
    ...networks,
    // No policy is evaluated here: the ACL key keeps the ACLs ODL holds, neither missing nor extra.
    acls: () => odl.values('acl') as Iterable<Acl>,
  };
}

/** The whole cluster's desired state (the fold of its plans). */
export function desiredState(kube: KubeSnapshot, odl: OdlView, settings: PlanSettings): DesiredState {
  const networks = networkInputs(kube, odl, settings);
  return translateCluster(clusterObjects(kube, odl, settings, networks), translateSettingsOf(settings));
}

/** Every key to plan: those the cluster names, then the owners of ODL entries of ours, sorted. */
export function keysToPlan(kube: KubeSnapshot, odl: OdlView, owner: OwnerContext): string[] {
  const keys = new Set(netvirtClusterKeys(kube));
  const ctx = { owner, get: (kind: string, name: string) => odl.get(kind, name) };
  for (const kind of odl.table.kinds) {
    const spec = odl.table.spec(kind);
    for (const entry of odl.values(kind)) {
      if (spec.ownership(entry, ctx).owner !== 'ours') continue;
      const key = spec.ownerKey(spec.nameOf(entry), ctx);
      if (key !== undefined) keys.add(key);
    }
  }
  return [...keys].sort();
}
