/**
 * `odlcoectl subnets`: per node, the pod subnet odlcoe uses (and where it comes from), its
 * gateway, and the pods addressed from it; plus k8s-node entries of ours whose node is gone.
 */
import type { K8sNode } from '../netvirt/k8s-node.js';
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
  /** `odl`: the pod-cidr of the node's k8s-node entry; `node.spec.podCIDR` in podCIDR mode; null: none. */
  source: 'odl' | 'node.spec.podCIDR' | null;
  /** The node's k8s-node entry URL in ODL. */
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

export interface SubnetsReport {
  subnetSource: SubnetSource;
  nodes: NodeSubnetRow[];
  /** k8s-node entries of this cluster whose node no longer exists (garbage collection removes them). */
  staleEntries: StaleK8sNode[];
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
  for (const node of [...kube.nodes].sort((a, b) =>
    (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
  )) {
    const name = node.metadata?.name ?? '?';
    const uid = node.metadata?.uid ?? null;
    if (uid) nodeUids.add(uid);
    const subnet = nodeSubnet(node, odl, source);
    let gateway: string | null = null;
    let problem: string | null = null;
    if (!subnet) {
      problem = !uid || !odl.get('k8sNode', uid) ? 'no k8s-node entry in ODL' : 'no pod-cidr assigned';
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
      entry: uid ? reader.entryUrl('k8sNode', uid) : null,
      gateway,
      pods,
      problem,
    });
  }
  const staleEntries = (odl.owned('k8sNode', owner) as K8sNode[])
    .filter((n) => !nodeUids.has(n.uid))
    .map((n) => ({ uid: n.uid, hostName: n.hostName ?? null, podCidr: n.podCidr ?? null }))
    .sort((a, b) => a.uid.localeCompare(b.uid));
  return { subnetSource: source, nodes: rows, staleEntries };
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
        n.source === 'odl' ? `odl k8s-node ${n.uid ?? ''}` : cell(n.source),
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
