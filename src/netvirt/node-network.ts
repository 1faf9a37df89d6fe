/**
 * A node's pod subnet in ODL on every release: the `dhcp_allocation_pool` network
 * `odlcoe-node:<node name>`, one `allocation-pool` per address family (subnet, gateway = the
 * first address, allocate-from..allocate-to = the rest that host-local hands out). NetVirt's
 * dhcpservice reads this tree only when dynamic allocation pools are enabled in its start-up
 * config (off as shipped), and then only for networks named after an ELAN instance: a node
 * network's name is never an ELAN name, so ODL does nothing with it (netvirt-features.md §1).
 *
 * Ownership: the model has no description leaf and no free leaf for a marker (netvirt
 * `dhcpservice/api/src/main/yang/dhcp_allocation_pool.yang`, identical in Sodium and Aluminium),
 * so the `odlcoe-node:` name space is odlcoe's: an entry named in it is odlcoe's, any other is
 * foreign. Which cluster a node network belongs to is the watcher's record (its nodes, and
 * the node key that owns the name): clusters sharing one controller must not share node names.
 * An ODL user who creates `odlcoe-node:<node>` for the `odl` subnet source creates it for
 * odlcoe to read: it is never rewritten while the node exists.
 */
import { compareIp, ip, prefix } from './canonical.js';
import { carry, decide, decisionName, type Decision, type DiffOptions } from './decision.js';
import { dhcpNetworkEntry, type AllocationPool, type DhcpNetwork } from './dhcp.js';
import { ModelValidationError } from './errors.js';
import { gatewayAddress } from './gateway.js';
import { addressFromBigInt, addressToBigInt, gatewayIp, parseCidr } from './names.js';
import type { Ownership } from './ownership.js';
import { netvirtPaths } from './paths.js';
import type { Profile } from './profile.js';
import { putOp } from './write.js';

export const NODE_NETWORK_PREFIX = 'odlcoe-node:';

/** The network of a node: `odlcoe-node:<node name>`. */
export const nodeNetworkName = (nodeName: string): string => `${NODE_NETWORK_PREFIX}${nodeName}`;

/** The node a network is named after, or undefined for a network outside odlcoe's name space. */
export function nodeOfNetwork(networkId: string): string | undefined {
  if (!networkId.startsWith(NODE_NETWORK_PREFIX)) return undefined;
  const node = networkId.slice(NODE_NETWORK_PREFIX.length);
  return node === '' ? undefined : node;
}

export function nodeNetworkOwnership(n: DhcpNetwork): Ownership {
  return nodeOfNetwork(n.networkId) !== undefined
    ? { owner: 'ours' }
    : {
        owner: 'foreign',
        reason: `network-id ${JSON.stringify(n.networkId)} is outside odlcoe's ${NODE_NETWORK_PREFIX} name space`,
      };
}

/**
 * The first address pods get from a node subnet: the one rule behind the watcher's allocation
 * pool (`allocate-from`) and the agent's conflist (host-local's `rangeStart`). The first
 * address is the pods' gateway; with node gateways on (`services.cidrs` set) the second is the
 * node gateway's (gateway.ts) and pods start at the third. A subnet too small to reserve the
 * gateway address gets no gateway (the watcher reports it, the agent is not ready for it), and
 * its pods start at the second address as without gateways. Throws ModelValidationError for a
 * subnet too small for a gateway and a pod.
 */
export function podRangeStart(cidr: string, nodeGateway: boolean): string {
  gatewayIp(cidr);
  const { family, network } = parseCidr(cidr);
  const skip = nodeGateway && reservesGatewayAddress(cidr) ? 3n : 2n;
  return addressFromBigInt(addressToBigInt(network) + skip, family);
}

/** Whether the subnet is large enough to reserve a node gateway address besides pods. */
export function reservesGatewayAddress(cidr: string): boolean {
  try {
    gatewayAddress(cidr);
    return true;
  } catch (err) {
    if (err instanceof ModelValidationError) return false;
    throw err;
  }
}

/**
 * The allocation pool of a node subnet: the gateway is its first address (as the pods' default
 * route and vpn-interfaces' `subnet_gateway_ip` have it), pods get `podRangeStart` to the last
 * usable one (IPv4: the broadcast address is not handed out). Throws ModelValidationError for
 * a subnet too small for a gateway and a pod.
 */
export function nodeAllocationPool(cidr: string, nodeGateway = false): AllocationPool {
  const gateway = gatewayIp(cidr);
  const { family, network, prefixLength } = parseCidr(cidr);
  const bits = family === 4 ? 32 : 128;
  const first = addressToBigInt(network);
  const last = first + (1n << BigInt(bits - prefixLength)) - 1n - (family === 4 ? 1n : 0n);
  return {
    subnet: `${network}/${prefixLength}`,
    gateway,
    allocateFrom: podRangeStart(cidr, nodeGateway),
    allocateTo: addressFromBigInt(last, family),
  };
}

/**
 * A node's network with one pool per subnet (one per address family). `nodeGateway`: node
 * gateways are on (the watcher's `services.cidrs` is set), so pods start at the third address.
 */
export function translateNodeNetwork(
  nodeName: string,
  cidrs: readonly string[],
  nodeGateway = false,
): DhcpNetwork {
  return {
    networkId: nodeNetworkName(nodeName),
    allocationPools: cidrs.map((c) => nodeAllocationPool(c, nodeGateway)),
  };
}

/**
 * The subnets of a network's pools that parse as CIDRs, canonical, IPv4 first: what a node's
 * pods are addressed from (one family is used today: the first).
 */
export function networkSubnets(n: DhcpNetwork | undefined): string[] {
  const out: string[] = [];
  for (const pool of n?.allocationPools ?? []) {
    try {
      const { network, prefixLength } = parseCidr(pool.subnet.trim());
      out.push(`${network}/${prefixLength}`);
    } catch {
      // Not a subnet odlcoe can use; reported by whoever reads it.
    }
  }
  return out.sort((a, b) => compareIp(a.split('/')[0] ?? a, b.split('/')[0] ?? b));
}

const POOL_OWNED = ['allocationPools'] as const;

/** The owned-leaf diff: the pools (as a set), written as a whole-entry PUT that carries `allocations` forward. */
export function diffNodeNetwork(
  desired: DhcpNetwork | undefined,
  actual: DhcpNetwork | undefined,
  ctx: { profile: Profile },
  opts: DiffOptions = {},
): Decision {
  const paths = netvirtPaths(ctx.profile);
  return decide<DhcpNetwork>(
    {
      path: paths.dhcpNetwork,
      ownership: nodeNetworkOwnership,
      owned: (n) => ({
        'allocation-pool': [...n.allocationPools]
          .map((p) => ({
            subnet: prefix(p.subnet.trim()),
            gateway: ip(p.gateway),
            'allocate-from': ip(p.allocateFrom),
            'allocate-to': ip(p.allocateTo),
            'dns-servers':
              p.dnsServers && p.dnsServers.length > 0 ? p.dnsServers.map((d) => ip(d)) : undefined,
          }))
          .sort((a, b) => (a.subnet < b.subnet ? -1 : a.subnet > b.subnet ? 1 : 0)),
      }),
      create: (d) => [putOp(paths.dhcpNetwork(d.networkId), dhcpNetworkEntry(d))],
      update: (d, a) => ({
        action: 'update',
        writes: [putOp(paths.dhcpNetwork(d.networkId), dhcpNetworkEntry(carry(d, a, POOL_OWNED)))],
      }),
    },
    decisionName(desired, actual, (n) => n.networkId, opts),
    desired,
    actual,
    opts.keep === true,
  );
}

/** `10.11.1.0/24 gw 10.11.1.1 (10.11.1.2-10.11.1.254)` per pool, for operators. */
export function nodeNetworkSummary(n: DhcpNetwork): string {
  if (n.allocationPools.length === 0) return 'no allocation pool';
  return n.allocationPools
    .map(
      (p) =>
        `${p.subnet}${p.gateway ? ` gw ${p.gateway}` : ''}${p.allocateFrom || p.allocateTo ? ` (${p.allocateFrom ?? '?'}-${p.allocateTo ?? '?'})` : ''}`,
    )
    .join(', ');
}
