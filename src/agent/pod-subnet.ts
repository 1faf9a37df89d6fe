/**
 * A node's pod subnet as host-local needs it. ODL's `pod-cidr` leaf is free text, so it is
 * parsed and normalised here; the gateway is the first address (ODL NetVirt answers ARP for
 * it on the node's ELAN), by the very rule the watcher writes it into ODL with (netvirt
 * gatewayIp); pods get the rest.
 */
import ipaddr from 'ipaddr.js';
import { gatewayIp } from '../netvirt/names.js';

export interface PodSubnet {
  /** Normalised `network/prefix`. */
  cidr: string;
  gateway: string;
  family: 4 | 6;
  /** Addresses host-local can hand out (network, gateway and IPv4 broadcast excluded). */
  capacity: number;
}

export function parsePodSubnet(text: string): PodSubnet {
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
  const hostBits = bits - prefix;
  const size = hostBits >= 53 ? Number.MAX_SAFE_INTEGER : 2 ** hostBits;
  const capacity = family === 4 ? size - 3 : size - 2;
  return { cidr, gateway, family, capacity };
}

/** The default route of the subnet's family. */
export function defaultRoute(subnet: PodSubnet): string {
  return subnet.family === 4 ? '0.0.0.0/0' : '::/0';
}
