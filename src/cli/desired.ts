/**
 * What ODL should hold for the cluster, computed exactly as the watcher does: the pure
 * translation of src/netvirt over the Kubernetes lists, with the two stateful inputs (node
 * subnets and namespace RDs) recovered from ODL the way the watcher recovers them.
 */
import type { V1Node } from '@kubernetes/client-node';
import {
  allocateRouteDistinguishers,
  namespacesNeedingVpn,
  recoverRouteDistinguishers,
  translateCluster,
  vpnRouteDistinguisher,
  type DesiredState,
  type OwnerContext,
  type TranslateSettings,
} from '../netvirt/index.js';
import type { SubnetSource } from '../watcher/settings.js';
import type { OdlState } from '../watcher/odl-state.js';
import type { KubeSnapshot } from './kube-reader.js';

export interface DesiredInputs {
  owner: OwnerContext;
  rdAdministrator: string;
  subnetSource: SubnetSource;
}

export function translateSettings(owner: OwnerContext): TranslateSettings {
  return {
    clusterName: owner.clusterName,
    profile: owner.profile,
    routeTarget: owner.routeTarget,
    segmentType: 'vxlan',
  };
}

export interface NodeSubnet {
  cidr: string;
  /** Where it was read: the node's k8s-node entry in ODL, or `spec.podCIDR`. */
  source: 'odl' | 'node.spec.podCIDR';
}

/**
 * The subnet pods on `node` are addressed from, as the watcher sees it (src/watcher/node-subnets.ts
 * `subnetFor`): `spec.podCIDR` for the podCIDR source, else the `pod-cidr` of the node's
 * k8s-node entry in ODL (which is also what the node agent reads).
 */
export function nodeSubnet(node: V1Node, odl: OdlState, source: SubnetSource): NodeSubnet | undefined {
  if (source === 'podCIDR') {
    const cidr = node.spec?.podCIDR;
    return cidr ? { cidr, source: 'node.spec.podCIDR' } : undefined;
  }
  const uid = node.metadata?.uid;
  const cidr = uid ? odl.get('k8sNode', uid)?.podCidr?.trim() : undefined;
  return cidr ? { cidr, source: 'odl' } : undefined;
}

/** node name → subnet, for the nodes that have one. */
export function nodeSubnets(kube: KubeSnapshot, odl: OdlState, source: SubnetSource): Map<string, string> {
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
export function routeDistinguishers(
  kube: KubeSnapshot,
  odl: OdlState,
  inputs: DesiredInputs,
): Map<string, string> {
  const needing = namespacesNeedingVpn(kube.pods);
  const existing = recoverRouteDistinguishers(odl.values('vpnInstance'), needing, inputs.owner);
  const known = new Set(existing.values());
  for (const vpn of odl.values('vpnInstance')) {
    const rd = vpnRouteDistinguisher(vpn);
    if (rd !== undefined && !known.has(rd)) existing.set(`foreign-vpn:${vpn.name}`, rd);
  }
  return allocateRouteDistinguishers(needing, existing, { administrator: inputs.rdAdministrator })
    .byNamespace;
}

export function desiredState(kube: KubeSnapshot, odl: OdlState, inputs: DesiredInputs): DesiredState {
  return translateCluster(
    {
      nodes: kube.nodes,
      namespaces: kube.namespaces,
      pods: kube.pods,
      routeDistinguishers: routeDistinguishers(kube, odl, inputs),
      nodeSubnets: nodeSubnets(kube, odl, inputs.subnetSource),
    },
    translateSettings(inputs.owner),
  );
}
