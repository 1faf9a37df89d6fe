/**
 * A node's pod subnet as host-local needs it. ODL's `pod-cidr` leaf is free text, so it is
 * parsed and normalised here; the gateway is the first address (ODL NetVirt answers ARP for
 * it on the node's ELAN), by the very rule the watcher writes it into ODL with (netvirt
 * gatewayIp); pods get the rest from `rangeStart` on, by the rule the watcher's allocation pool
 * follows (netvirt podRangeStart): with the node gateway on, the second address is its.
 */
import ipaddr from 'ipaddr.js';
import { gatewayIp, parseCidr } from '../netvirt/names.js';
import { podRangeStart } from '../netvirt/node-network.js';

export interface PodSubnet {
  /** Normalised `network/prefix`. */
  cidr: string;
  gateway: string;
  family: 4 | 6;
  /** The first address host-local hands out. */
  rangeStart: string;
  /** Addresses host-local can hand out (network, gateway(s) and IPv4 broadcast excluded). */
  capacity: number;
}

/**
 * `nodeGateway`: the node gateway is on (the agent's `services.cidrs` is set), so the second
 * address is left out of host-local's range when the subnet can spare it.
 */
export function parsePodSubnet(text: string, nodeGateway = false): PodSubnet {
  const trimmed = text.trim();
  if (!ipaddr.isValidCIDR(trimmed)) throw new Error(`pod subnet "${text}" is not an address/prefix CIDR`);
  const [address, prefix] = ipaddr.parseCIDR(trimmed);
  const family = address.kind() === 'ipv4' ? 4 : 6;
  const bits = family === 4 ? 32 : 128;
  // /31, /32 (and their IPv6 peers) leave no room for a gateway and a pod.
  if (prefix > bits - 2) throw new Error(`pod subnet ${trimmed} is too small (prefix /${prefix})`);
  const network =
    family === 4 ? ipaddr.IPv4.networkAddressFromCIDR(trimmed) : ipaddr.IPv6.networkAddressFromCIDR(trimmed);
  const cidr = `${network.toString()}/${prefix}`;
  const gateway = gatewayIp(cidr);
  const rangeStart = podRangeStart(cidr, nodeGateway);
  const hostBits = bits - prefix;
  const size = hostBits >= 53 ? Number.MAX_SAFE_INTEGER : 2 ** hostBits;
  const reserved = rangeStart === podRangeStart(cidr, false) ? 0 : 1;
  const capacity = (family === 4 ? size - 3 : size - 2) - reserved;
  return { cidr, gateway, family, rangeStart, capacity };
}

/** The default route of the subnet's family. */
export function defaultRoute(subnet: PodSubnet): string {
  return subnet.family === 4 ? '0.0.0.0/0' : '::/0';
}

/**
 * The pod network as a node sees it: its own subnet, the cluster ranges and the Service ranges
 * of the subnet's family (the pod network is routed by one family), canonical, without
 * duplicates. The node gateway routes them via the pods' gateway, and so do the pods.
 */
export function podNetworkPrefixes(
  subnet: string,
  clusterCidrs: readonly string[],
  serviceCidrs: readonly string[],
): string[] {
  const own = parseCidr(subnet);
  const out = new Set<string>([`${own.network}/${own.prefixLength}`]);
  for (const cidr of [...clusterCidrs, ...serviceCidrs]) {
    const { family, network, prefixLength } = parseCidr(cidr);
    if (family === own.family) out.add(`${network}/${prefixLength}`);
  }
  return [...out].sort();
}

/**
 * The routes host-local gives a pod (all via the subnet's gateway): the pod network, then the
 * default route. The pod network's own routes keep cluster and Service traffic on the primary
 * interface when a pod's default route goes to an extra network (Multus `default-route`), as
 * ovn-kubernetes does.
 */
export function podRoutes(
  subnet: PodSubnet,
  clusterCidrs: readonly string[],
  serviceCidrs: readonly string[],
): { dst: string }[] {
  return [...podNetworkPrefixes(subnet.cidr, clusterCidrs, serviceCidrs), defaultRoute(subnet)].map(
    (dst) => ({ dst }),
  );
}
