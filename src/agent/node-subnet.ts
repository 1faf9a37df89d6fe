/**
 * Where the node's pod subnet comes from: ODL, not the agent's configuration, so that the
 * watcher (which writes it) and the agent (which hands out its addresses) cannot disagree.
 */
import ipaddr from 'ipaddr.js';
import type { DataPath } from '../restconf/path.js';
import type { RestconfClient } from '../restconf/client.js';

/**
 * The node's pod subnet as ODL holds it: the `k8s-node:k8s-nodes-info/k8s-nodes` entry whose
 * `internal-ip-address` is this node's InternalIP (the entry is keyed by node UID, which the
 * agent does not need to know), its `pod-cidr` leaf.
 */
export const K8S_NODES_LIST: DataPath = [
  { module: 'k8s-node', name: 'k8s-nodes-info' },
  { name: 'k8s-nodes' },
];

export interface NodeSubnetEntry {
  uid: string;
  podCidr: string;
}

function sameIp(a: unknown, b: string): boolean {
  if (typeof a !== 'string' || !ipaddr.isValid(a) || !ipaddr.isValid(b)) return false;
  return ipaddr.parse(a).toNormalizedString() === ipaddr.parse(b).toNormalizedString();
}

/**
 * Picks this node's entry. Undefined while there is none with a pod-cidr (the watcher has not
 * registered the node, or nobody has assigned a subnet yet). Two entries for one IP with
 * different subnets (a node replaced under the same IP and its old entry left behind) are an
 * error: guessing could hand pods addresses of another node's subnet.
 */
export function findNodeSubnet(
  entries: readonly Record<string, unknown>[],
  nodeIp: string,
): NodeSubnetEntry | undefined {
  const matches = entries
    .filter((e) => sameIp(e['internal-ip-address'], nodeIp))
    .filter((e) => typeof e['pod-cidr'] === 'string' && e['pod-cidr'].trim() !== '')
    .map((e) => ({ uid: String(e.uid ?? ''), podCidr: (e['pod-cidr'] as string).trim() }));
  const cidrs = new Set(matches.map((m) => m.podCidr));
  if (cidrs.size > 1) {
    throw new Error(
      `ODL has ${matches.length} k8s-nodes entries for ${nodeIp} with different pod-cidr values (${matches.map((m) => `${m.uid}: ${m.podCidr}`).join(', ')})`,
    );
  }
  return matches[0];
}

export async function fetchNodeSubnet(
  client: RestconfClient,
  nodeIp: string,
): Promise<NodeSubnetEntry | undefined> {
  return findNodeSubnet(await client.getEntries(K8S_NODES_LIST), nodeIp);
}
