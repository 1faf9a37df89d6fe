/**
 * Where the node's pod subnet comes from: ODL, not the agent's configuration, so that the
 * watcher (which writes it) and the agent (which hands out its addresses) cannot disagree.
 */
import ipaddr from 'ipaddr.js';
import { readDhcpNetwork } from '../netvirt/dhcp.js';
import { EntryReader } from '../netvirt/json.js';
import { networkSubnets, nodeNetworkName } from '../netvirt/node-network.js';
import { netvirtPaths } from '../netvirt/paths.js';
import type { DataPath } from '../restconf/path.js';
import type { RestconfClient } from '../restconf/client.js';

/**
 * The node's pod subnet as ODL holds it, on every release: the dhcp_allocation_pool network
 * `odlcoe-node:<node name>` (its first allocation-pool, IPv4 first). Where ODL has the COE
 * models (Sodium with COE), a node without a network falls back to the
 * `k8s-node:k8s-nodes-info/k8s-nodes` entry whose `internal-ip-address` is this node's
 * InternalIP (the entry is keyed by node UID, which the agent does not need to know), its
 * `pod-cidr` leaf: a cluster whose watcher has not written networks yet.
 */
/** The node network (the dhcp_allocation_pool module is the same in every profile). */
export const nodeNetworkPath = (nodeName: string): DataPath =>
  netvirtPaths('aluminium').dhcpNetwork(nodeNetworkName(nodeName));

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

/** A node's subnet as read from ODL, and where. */
export interface FoundNodeSubnet {
  podCidr: string;
  /** The pool's gateway, when the network gives one. */
  gateway?: string;
  /** `dhcp-network odlcoe-node:<node>` or `k8s-node <uid>`. */
  from: string;
}

/** The subnet of a node network entry as ODL returned it; undefined without a usable pool. */
export function networkSubnet(raw: Record<string, unknown>): FoundNodeSubnet | undefined {
  const network = readDhcpNetwork(EntryReader.of(raw, 'network[0]'));
  const [podCidr] = networkSubnets(network);
  if (podCidr === undefined) return undefined;
  const pool = network.allocationPools.find((p) => p.subnet.trim() === podCidr) ?? network.allocationPools[0];
  return {
    podCidr,
    ...(pool?.gateway !== undefined ? { gateway: pool.gateway } : {}),
    from: `dhcp-network ${network.networkId}`,
  };
}

/**
 * This node's subnet: its network, else (`k8sNodes`: only where ODL has that model) its k8s-node
 * entry. Undefined while neither has one.
 */
export async function fetchNodeSubnet(
  client: RestconfClient,
  node: { name: string; ip: string },
  options: { k8sNodes: boolean },
): Promise<FoundNodeSubnet | undefined> {
  const [raw] = await client.getEntries(nodeNetworkPath(node.name));
  const found = raw ? networkSubnet(raw) : undefined;
  if (found || !options.k8sNodes) return found;
  const entry = findNodeSubnet(await client.getEntries(K8S_NODES_LIST), node.ip);
  return entry ? { podCidr: entry.podCidr, from: `k8s-node ${entry.uid}` } : undefined;
}
