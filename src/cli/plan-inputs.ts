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
function routeDistinguishers(kube: KubeSnapshot, odl: OdlView, settings: PlanSettings): Map<string, string> {
  const needing = namespacesNeedingVpn(kube.pods);
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

function clusterObjects(kube: KubeSnapshot, odl: OdlView, settings: PlanSettings) {
  return {
    nodes: kube.nodes,
    namespaces: kube.namespaces,
    pods: kube.pods,
    routeDistinguishers: routeDistinguishers(kube, odl, settings),
    nodeSubnets: nodeSubnets(kube, odl, settings.subnetSource),
    k8sNodeModel: odl.table.has('k8sNode'),
    ...(kube.services ? { services: kube.services } : {}),
  };
}

/** The netvirt plans' inputs over a snapshot of both sides. */
export function planInputs(kube: KubeSnapshot, odl: OdlView, settings: PlanSettings): NetvirtPlanInputs {
  return {
    ...clusterPlanInputs(clusterObjects(kube, odl, settings), translateSettingsOf(settings)),
    // No policy is evaluated here: the ACL key keeps the ACLs ODL holds, neither missing nor extra.
    acls: () => odl.values('acl') as Iterable<Acl>,
  };
}

/** The whole cluster's desired state (the fold of its plans). */
export function desiredState(kube: KubeSnapshot, odl: OdlView, settings: PlanSettings): DesiredState {
  return translateCluster(clusterObjects(kube, odl, settings), translateSettingsOf(settings));
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
