/**
 * `dhcp_allocation_pool:dhcp_allocation_pool/network`: address pools for ODL's DHCP service,
 * which looks a port's pool up by the **ELAN instance name** (through its elan-interface). The
 * feature is off unless enabled in ODL's startup config. odlcoe keeps each node's pod subnet
 * here under a name that is never an ELAN name (node-network.ts).
 */
import { assign, parseList, withPreserved, type EntryReader, type JsonObject } from './json.js';
import { netvirtPaths } from './paths.js';
import type { Profile } from './profile.js';
import { check, checkIpAddress, checkIpPrefix, checkNonEmpty } from './validate.js';
import { putOp, type WriteOp } from './write.js';

export interface AllocationPool {
  /** The list key, an ip-prefix (`10.11.1.0/24`; `/` is `%2F` in URLs). */
  subnet: string;
  allocateFrom?: string;
  allocateTo?: string;
  gateway?: string;
  dnsServers?: string[];
}

export interface DhcpNetwork {
  /** The ELAN instance name for ODL's DHCP; `odlcoe-node:<node>` for a node's pod subnet. */
  networkId: string;
  allocationPools: AllocationPool[];
  /** `allocations` (unused by Sodium's dhcpservice) and anything else, verbatim. */
  preserved?: JsonObject;
}

export function allocationPoolEntry(p: AllocationPool, where = `allocation-pool[${p.subnet}]`): JsonObject {
  checkIpPrefix(p.subnet, `${where}/subnet`);
  const j: JsonObject = { subnet: p.subnet };
  for (const [leaf, value] of [
    ['allocate-from', p.allocateFrom],
    ['allocate-to', p.allocateTo],
    ['gateway', p.gateway],
  ] as const) {
    if (value === undefined) continue;
    checkIpAddress(value, `${where}/${leaf}`);
    j[leaf] = value;
  }
  if (p.dnsServers !== undefined && p.dnsServers.length > 0) {
    p.dnsServers.forEach((d, i) => checkIpAddress(d, `${where}/dns-servers[${i}]`));
    j['dns-servers'] = [...p.dnsServers];
  }
  return j;
}

export function dhcpNetworkEntry(n: DhcpNetwork): JsonObject {
  const where = `network[${n.networkId}]`;
  checkNonEmpty(n.networkId, `${where}/network-id`);
  const j: JsonObject = { 'network-id': n.networkId };
  const seen = new Set<string>();
  if (n.allocationPools.length > 0) {
    j['allocation-pool'] = n.allocationPools.map((p, i) => {
      check(!seen.has(p.subnet), `${where}/allocation-pool[${i}]`, `duplicate list key ${p.subnet}`);
      seen.add(p.subnet);
      return allocationPoolEntry(p, `${where}/allocation-pool[${i}]`);
    });
  }
  return withPreserved(j, n.preserved);
}

export function putDhcpNetwork(profile: Profile, n: DhcpNetwork): WriteOp {
  return putOp(netvirtPaths(profile).dhcpNetwork(n.networkId), dhcpNetworkEntry(n));
}

export function putAllocationPool(profile: Profile, networkId: string, p: AllocationPool): WriteOp {
  return putOp(netvirtPaths(profile).allocationPool(networkId, p.subnet), allocationPoolEntry(p));
}

function readPool(r: EntryReader): AllocationPool {
  const p: AllocationPool = { subnet: r.requiredString('subnet') };
  assign(p, 'allocateFrom', r.string('allocate-from'));
  assign(p, 'allocateTo', r.string('allocate-to'));
  assign(p, 'gateway', r.string('gateway'));
  assign(p, 'dnsServers', r.strings('dns-servers'));
  return p;
}

export function readDhcpNetwork(r: EntryReader): DhcpNetwork {
  const n: DhcpNetwork = {
    networkId: r.requiredString('network-id'),
    allocationPools: r.list('allocation-pool', readPool),
  };
  assign(n, 'preserved', r.rest());
  return n;
}

export function parseDhcpNetworks(body: unknown): DhcpNetwork[] {
  return parseList(body, 'dhcp_allocation_pool', 'network', readDhcpNetwork);
}
