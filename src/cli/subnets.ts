/**
 * `odlcoectl subnets`: per node, the pod subnet odlcoe uses (and where it comes from: the node
 * network `odlcoe-node:<node>`, else a k8s-node entry, or `spec.podCIDR`), its gateway, and the
 * pods addressed from it; plus node networks and k8s-node entries of ours whose node is gone.
 */
import type { DhcpNetwork } from '../netvirt/dhcp.js';
import type { K8sNode } from '../netvirt/k8s-node.js';
import { networkSubnets, nodeNetworkName, nodeOfNetwork } from '../netvirt/node-network.js';
import { nodeInternalIp, podAddress, podNetworkEligibility } from '../netvirt/kube.js';
import { cidrContains, gatewayIp } from '../netvirt/names.js';
import type { OwnerContext } from '../netvirt/ownership.js';
import type { EntryStore } from '../odl/entry-store.js';
import type { OdlReader } from '../odl/reader.js';
import type { KubeSnapshot } from './kube-reader.js';
import { nodeSubnet, type SubnetSource } from './plan-inputs.js';
import { cell, indentedTable, table } from './render.js';

export interface SubnetPod {
  pod: string;
  ip: string | null;
  /** False when the pod's IP is outside the node's subnet (addressed from a previous subnet?). */
  inSubnet: boolean | null;
}

export interface NodeSubnetRow {
  node: string;
  uid: string | null;
  internalIp: string | null;
  subnet: string | null;
  /** `odl`: what ODL holds for the node (see `record`); `node.spec.podCIDR` in podCIDR mode; null: none. */
  source: 'odl' | 'node.spec.podCIDR' | null;
  /** The ODL entry the subnet was read from (`dhcp-network odlcoe-node:<node>` or `k8s-node <uid>`). */
  record: string | null;
  /** That entry's URL in ODL (without a subnet: the node network's). */
  entry: string | null;
  gateway: string | null;
  pods: SubnetPod[];
  /** What is wrong with this node's subnet, if anything. */
  problem: string | null;
}

export interface StaleK8sNode {
  uid: string;
  hostName: string | null;
  podCidr: string | null;
}

export interface StaleNetwork {
  network: string;
  node: string;
  subnets: string[];
}

export interface SubnetsReport {
  subnetSource: SubnetSource;
  nodes: NodeSubnetRow[];
  /** k8s-node entries of this cluster whose node no longer exists (garbage collection removes them). */
  staleEntries: StaleK8sNode[];
  /** Node networks whose node no longer exists (garbage collection removes them). */
  staleNetworks: StaleNetwork[];
}

export function buildSubnets(
  kube: KubeSnapshot,
  odl: EntryStore,
  owner: OwnerContext,
  source: SubnetSource,
  reader: OdlReader,
): SubnetsReport {
  const rows: NodeSubnetRow[] = [];
  const nodeUids = new Set<string>();
  const nodeNames = new Set<string>();
  const networks = odl.table.has('dhcpNetwork');
  for (const node of [...kube.nodes].sort((a, b) =>
    (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
  )) {
    const name = node.metadata?.name ?? '?';
    const uid = node.metadata?.uid ?? null;
    if (uid) nodeUids.add(uid);
    nodeNames.add(name);
    const subnet = nodeSubnet(node, odl, source);
    let gateway: string | null = null;
    let problem: string | null = null;
    if (!subnet) {
      const network = networks ? odl.get('dhcpNetwork', nodeNetworkName(name)) : undefined;
      problem = network
        ? `node network ${network.networkId} has no usable allocation-pool`
        : `no node network ${nodeNetworkName(name)} in ODL${odl.table.has('k8sNode') && uid && odl.get('k8sNode', uid) ? ' and no pod-cidr in its k8s-node entry' : ''}`;
    } else {
      try {
        gateway = gatewayIp(subnet.cidr);
      } catch (err) {
        problem = `pod-cidr unusable: ${(err as Error).message}`;
      }
    }
    const pods: SubnetPod[] = kube.pods
      .filter((p) => p.spec?.nodeName === name && podNetworkEligibility(p).onNetwork)
      .map((p) => {
        const ip = podAddress(p, ['ipv4']) ?? null;
        let inSubnet: boolean | null = null;
        if (ip !== null && subnet && gateway !== null) inSubnet = cidrContains(subnet.cidr, ip);
        return { pod: `${p.metadata?.namespace ?? '?'}/${p.metadata?.name ?? '?'}`, ip, inSubnet };
      })
      .sort((a, b) => a.pod.localeCompare(b.pod));
    const outside = pods.filter((p) => p.inSubnet === false);
    if (problem === null && outside.length > 0)
      problem = `${outside.length} pod(s) addressed outside the subnet: ${outside.map((p) => p.pod).join(', ')}`;
    rows.push({
      node: name,
      uid,
      internalIp: nodeInternalIp(node) ?? null,
      subnet: subnet?.cidr ?? null,
      source: subnet?.source ?? null,
      record: subnet?.record ? `${odl.table.label(subnet.record.kind)} ${subnet.record.name}` : null,
      entry: subnet?.record
        ? reader.entryUrl(subnet.record.kind, subnet.record.name)
        : networks
          ? reader.entryUrl('dhcpNetwork', nodeNetworkName(name))
          : null,
      gateway,
      pods,
      problem,
    });
  }
  const staleEntries = odl.table.has('k8sNode')
    ? (odl.owned('k8sNode', owner) as K8sNode[])
        .filter((n) => !nodeUids.has(n.uid))
        .map((n) => ({ uid: n.uid, hostName: n.hostName ?? null, podCidr: n.podCidr ?? null }))
        .sort((a, b) => a.uid.localeCompare(b.uid))
    : [];
  const staleNetworks = networks
    ? (odl.owned('dhcpNetwork', owner) as DhcpNetwork[])
        .map((n) => ({
          network: n.networkId,
          node: nodeOfNetwork(n.networkId) ?? '',
          subnets: networkSubnets(n),
        }))
        .filter((n) => !nodeNames.has(n.node))
        .sort((a, b) => a.network.localeCompare(b.network))
    : [];
  return { subnetSource: source, nodes: rows, staleEntries, staleNetworks };
}

export function renderSubnets(r: SubnetsReport): string {
  const out = [
    `Node pod subnets (source setting: ${r.subnetSource})`,
    '',
    table(
      ['NODE', 'INTERNAL IP', 'SUBNET', 'SOURCE', 'GATEWAY', 'PODS', 'PROBLEM'],
      r.nodes.map((n) => [
        n.node,
        cell(n.internalIp),
        cell(n.subnet),
        n.source === 'odl' ? `odl ${n.record ?? ''}` : cell(n.source),
        cell(n.gateway),
        String(n.pods.length),
        cell(n.problem),
      ]),
    ) || 'No nodes.',
  ];
  for (const n of r.nodes) {
    if (n.pods.length === 0) continue;
    out.push(
      '',
      `Pods on ${n.node}:`,
      indentedTable(
        ['POD', 'IP', 'IN SUBNET'],
        n.pods.map((p) => [p.pod, cell(p.ip), cell(p.inSubnet === null ? null : p.inSubnet ? 'yes' : 'NO')]),
      ),
    );
  }
  if (r.staleNetworks.length > 0) {
    out.push(
      '',
      'node networks of this cluster whose node is gone:',
      indentedTable(
        ['NETWORK', 'SUBNETS'],
        r.staleNetworks.map((s) => [s.network, s.subnets.join(', ') || '-']),
      ),
    );
  }
  if (r.staleEntries.length > 0) {
    out.push(
      '',
      'k8s-node entries of this cluster whose node is gone:',
      indentedTable(
        ['UID', 'HOST', 'POD CIDR'],
        r.staleEntries.map((s) => [s.uid, cell(s.hostName), cell(s.podCidr)]),
      ),
    );
  }
  return out.join('\n');
}
