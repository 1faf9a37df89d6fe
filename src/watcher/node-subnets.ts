/**
 * Where a node's pod subnet comes from, per the `subnetSource` setting, and where it is kept in
 * ODL: the node's dhcp_allocation_pool network `odlcoe-node:<node>` on every release, and on
 * Sodium with the COE models also the `pod-cidr` of its k8s-node entry.
 *
 * - `odl`: an ODL user creates the node's network (or, on Sodium with COE, sets `pod-cidr` in
 *   its k8s-node entry, which the watcher carries over into a network). The watcher never
 *   writes either leaf and reads the subnet back from ODL: the network first, else the entry.
 * - `podCIDR`: `node.spec.podCIDR`, copied into both.
 * - `allocate`: carved from `clusterCidr` by the SubnetAllocator; the network (and the entry,
 *   where it exists) is the allocation's durable record, recovered at the start of each leader
 *   term.
 *
 * Upgrade: a node whose subnet is only in its k8s-node entry (a cluster converged by a release
 * that knew no networks) keeps it: `allocate` recovers it from the entry, `odl` carries it
 * into the network, `podCIDR` writes the same `spec.podCIDR` again.
 *
 * The node agent reads the network (falling back to the k8s-node entry where ODL has the COE
 * models), so both backends use this class, each over its own ODL cache. What it answers are
 * the node plans' subnet inputs (plan-node.ts).
 */
import type { V1Node } from '@kubernetes/client-node';
import type { DhcpNetwork } from '../netvirt/dhcp.js';
import { k8sNodeOwnership, type K8sNode } from '../netvirt/k8s-node.js';
import { parseCidr } from '../netvirt/names.js';
import {
  networkSubnets,
  nodeNetworkName,
  nodeNetworkOwnership,
  nodeOfNetwork,
} from '../netvirt/node-network.js';
import type { OwnerContext } from '../netvirt/ownership.js';
import type { NetworkSubnet } from '../netvirt/plan-node.js';
import type { EntrySubnet } from '../netvirt/plan.js';
import type { SubnetSource } from '../config/watcher-settings.js';
import { SubnetAllocator } from './subnet-allocator.js';

/** The k8s-node entries of a backend's ODL cache, as far as node subnets need them. */
export interface K8sNodeEntries {
  /** The cached entry of a node, by node uid. */
  get(uid: string): K8sNode | undefined;
  /** Re-reads a node's entry from ODL into the cache. */
  refresh(uid: string): Promise<K8sNode | undefined>;
  /** This cluster's entries (under `allocate`, the durable record of the allocations). */
  ours(): Iterable<K8sNode>;
}

/** `K8sNodeEntries` over a cache that holds k8s-node entries under the kind `k8sNode`. */
export function k8sNodeEntries(
  cache: {
    get(kind: 'k8sNode', uid: string): K8sNode | undefined;
    refresh(kind: 'k8sNode', uid: string): Promise<unknown>;
    values(kind: 'k8sNode'): Iterable<K8sNode>;
  },
  owner: OwnerContext,
): K8sNodeEntries {
  return {
    get: (uid) => cache.get('k8sNode', uid),
    refresh: async (uid) => (await cache.refresh('k8sNode', uid)) as K8sNode | undefined,
    ours: () => [...cache.values('k8sNode')].filter((e) => k8sNodeOwnership(e, owner).owner === 'ours'),
  };
}

/** The node networks of a backend's ODL cache (kind `dhcpNetwork`), by network id. */
export interface NodeNetworkEntries {
  get(networkId: string): DhcpNetwork | undefined;
  refresh(networkId: string): Promise<DhcpNetwork | undefined>;
  /** odlcoe's networks (the `odlcoe-node:` name space). */
  ours(): Iterable<DhcpNetwork>;
}

export function nodeNetworkEntries(cache: {
  get(kind: 'dhcpNetwork', name: string): DhcpNetwork | undefined;
  refresh(kind: 'dhcpNetwork', name: string): Promise<unknown>;
  values(kind: 'dhcpNetwork'): Iterable<DhcpNetwork>;
}): NodeNetworkEntries {
  return {
    get: (id) => cache.get('dhcpNetwork', id),
    refresh: async (id) => (await cache.refresh('dhcpNetwork', id)) as DhcpNetwork | undefined,
    ours: () => [...cache.values('dhcpNetwork')].filter((n) => nodeNetworkOwnership(n).owner === 'ours'),
  };
}

/** Node networks and the nodes they are named after (to recover allocations by node uid). */
export interface NodeNetworkRecords {
  entries: NodeNetworkEntries;
  node(name: string): V1Node | undefined;
}

export type { EntrySubnet };

/**
 * The allocator's key for the subnet of a node that is gone, recovered from its network alone
 * (the network names the node, not its uid): held until that network goes.
 */
const GONE_PREFIX = 'node-name:';
const goneNodeKey = (nodeName: string) => `${GONE_PREFIX}${nodeName}`;

const canonicalCidr = (cidr: string): string | undefined => {
  try {
    const { network, prefixLength } = parseCidr(cidr.trim());
    return `${network}/${prefixLength}`;
  } catch {
    return undefined;
  }
};

export class NodeSubnets {
  private readonly allocator: SubnetAllocator | undefined;
  private readonly releaseListeners: ((uid: string) => void)[] = [];

  /** Node names by uid, as seen in this term: a gone node's name (its pods, its network) after the Node object is gone. */
  private readonly names = new Map<string, string>();

  /**
   * @param entries k8s-node entries, where ODL has the model (undefined: it does not).
   * @param networks node networks, where the backend keeps them (undefined: it does not).
   */
  constructor(
    readonly source: SubnetSource,
    private readonly entries: K8sNodeEntries | undefined,
    allocation?: { clusterCidr: string; nodePrefixLength: number },
    private readonly networks?: NodeNetworkRecords,
  ) {
    if (source === 'allocate') {
      if (!allocation)
        throw new Error('the allocate subnet source needs a cluster CIDR and a node prefix length');
      this.allocator = new SubnetAllocator(allocation.clusterCidr, allocation.nodePrefixLength);
    }
  }

  private remember(node: V1Node): void {
    const uid = node.metadata?.uid;
    const name = node.metadata?.name;
    if (uid && name) this.names.set(uid, name);
  }

  /** The subnet pods on `node` are addressed from now, as far as the watcher knows. Never allocates. */
  subnetFor(node: V1Node): string | undefined {
    this.remember(node);
    const uid = node.metadata?.uid;
    switch (this.source) {
      case 'podCIDR':
        return node.spec?.podCIDR || undefined;
      case 'allocate':
        return uid ? this.allocator?.get(uid) : undefined;
      case 'odl':
        return this.odlSubnet(node);
    }
  }

  /** `odl`: the node network's subnet, else the k8s-node entry's pod-cidr. */
  private odlSubnet(node: V1Node): string | undefined {
    const name = node.metadata?.name;
    const uid = node.metadata?.uid;
    const network = name ? networkSubnets(this.networks?.entries.get(nodeNetworkName(name)))[0] : undefined;
    return network ?? ((uid ? this.entries?.get(uid)?.podCidr?.trim() : undefined) || undefined);
  }

  /**
   * `odl`: re-reads a node's entry (an ODL user may have set its pod-cidr since it was read).
   * Only an entry the cache holds: an absent one is the watcher's to create first.
   */
  async refreshEntry(uid: string): Promise<void> {
    if (this.source === 'odl' && this.entries?.get(uid)) await this.entries.refresh(uid);
  }

  /**
   * `odl`: re-reads what an ODL user may have written since it was read: the node's network
   * (created by the user, so read even when the cache has none) and its k8s-node entry.
   */
  async refreshNode(node: V1Node): Promise<void> {
    if (this.source !== 'odl') return;
    const name = node.metadata?.name;
    if (name && this.networks) await this.networks.entries.refresh(nodeNetworkName(name));
    const uid = node.metadata?.uid;
    if (uid) await this.refreshEntry(uid);
  }

  /**
   * What the node's network carries. `odl`: an existing network is the user's (never written);
   * without one, a `pod-cidr` set in the k8s-node entry is carried over into a new network;
   * otherwise as `entrySubnet` (allocates under `allocate`).
   */
  nodeNetworkSubnet(node: V1Node): NetworkSubnet {
    this.remember(node);
    if (this.source !== 'odl') return this.entrySubnet(node);
    const name = node.metadata?.name;
    if (name && this.networks?.entries.get(nodeNetworkName(name))) return { kind: 'user' };
    const uid = node.metadata?.uid;
    const text = uid ? this.entries?.get(uid)?.podCidr?.trim() : undefined;
    if (!text) return { kind: 'none' };
    const cidr = canonicalCidr(text);
    return cidr === undefined
      ? { kind: 'none', problem: `k8s-node pod-cidr ${JSON.stringify(text)} is not a CIDR` }
      : { kind: 'subnet', cidr };
  }

  /** The `pod-cidr` the watcher writes for `node`; allocates under `allocate`. */
  entrySubnet(node: V1Node): EntrySubnet {
    this.remember(node);
    const uid = node.metadata?.uid;
    if (!uid) return { kind: 'none', problem: 'node without uid' };
    switch (this.source) {
      case 'odl':
        return { kind: 'none' };
      case 'podCIDR': {
        const cidr = node.spec?.podCIDR;
        if (!cidr) return { kind: 'none', problem: 'node has no spec.podCIDR yet' };
        try {
          parseCidr(cidr);
        } catch (err) {
          return { kind: 'none', problem: `spec.podCIDR: ${(err as Error).message}` };
        }
        return { kind: 'subnet', cidr };
      }
      case 'allocate': {
        const cidr = this.allocator?.allocate(uid);
        return cidr === undefined ? { kind: 'exhausted' } : { kind: 'subnet', cidr };
      }
    }
  }

  /**
   * `allocate`: takes the allocations recorded in ODL: the node networks first (a gone node's
   * under its name: the network names no uid), then this cluster's k8s-node entries (an
   * upgraded cluster's only record), skipping what a network already recorded. Returns the
   * problems (records whose subnet is unusable or overlaps another's).
   */
  recover(): string[] {
    const allocator = this.allocator;
    if (!allocator) return [];
    const problems: string[] = [];
    const networks = [...(this.networks?.entries.ours() ?? [])].sort((a, b) =>
      a.networkId.localeCompare(b.networkId),
    );
    for (const network of networks) {
      const nodeName = nodeOfNetwork(network.networkId);
      const [cidr] = networkSubnets(network);
      if (nodeName === undefined || cidr === undefined) continue;
      const node = this.networks?.node(nodeName);
      if (node) this.remember(node);
      const uid = node?.metadata?.uid ?? goneNodeKey(nodeName);
      const problem = allocator.recover(uid, cidr);
      if (problem) problems.push(`network ${network.networkId}: ${problem}`);
    }
    const recorded = () => new Set(allocator.nodes().map((n) => allocator.get(n)));
    const entries = [...(this.entries?.ours() ?? [])].sort((a, b) => a.uid.localeCompare(b.uid));
    for (const entry of entries) {
      if (!entry.podCidr) continue;
      const cidr = canonicalCidr(entry.podCidr);
      const held = allocator.get(entry.uid);
      if (held !== undefined) {
        if (cidr !== held)
          problems.push(
            `k8s-node ${entry.uid}: pod-cidr ${entry.podCidr} differs from its network's ${held}; keeping ${held}`,
          );
        continue;
      }
      // A gone node's network recorded it under the node's name: the entry knows its uid.
      const byName = allocator.nodes().find((n) => n.startsWith(GONE_PREFIX) && allocator.get(n) === cidr);
      if (byName !== undefined) {
        allocator.release(byName);
        allocator.recover(entry.uid, entry.podCidr);
        continue;
      }
      if (cidr !== undefined && recorded().has(cidr)) continue;
      const problem = allocator.recover(entry.uid, entry.podCidr);
      if (problem) problems.push(`k8s-node ${entry.uid}: ${problem}`);
    }
    return problems;
  }

  /**
   * A node's cached k8s-node entry. When the node object is gone, this is where its host name
   * (which its pods' `spec.nodeName` still say) and its allocation are recorded.
   */
  entry(uid: string): K8sNode | undefined {
    return this.entries?.get(uid);
  }

  /** The name of a node (present or gone) as the watcher saw it, else as its k8s-node entry records it. */
  nodeName(uid: string): string | undefined {
    return this.names.get(uid) ?? this.entry(uid)?.hostName;
  }

  /** A node's cached network. */
  network(nodeName: string): DhcpNetwork | undefined {
    return this.networks?.entries.get(nodeNetworkName(nodeName));
  }

  /** `allocate`: the network of a gone node is gone: the subnet recovered from it alone is free again. */
  releaseNetwork(nodeName: string): boolean {
    const released = this.allocator?.release(goneNodeKey(nodeName)) ?? false;
    if (released) for (const listener of this.releaseListeners) listener(goneNodeKey(nodeName));
    return released;
  }

  /** `allocate`: the subnet held by a node (present or gone), as allocated or recovered. */
  allocated(uid: string): string | undefined {
    return this.allocator?.get(uid);
  }

  /**
   * The node is gone and no pod holds an address from its subnet any more: the subnet is free
   * again (see reconcile-node.ts for why both conditions).
   */
  release(uid: string): boolean {
    const released = this.allocator?.release(uid) ?? false;
    if (released) for (const listener of this.releaseListeners) listener(uid);
    return released;
  }

  /** Called after a subnet was freed: nodes that found the pool used up may fit now. */
  onRelease(listener: (uid: string) => void): void {
    this.releaseListeners.push(listener);
  }

  /** `allocate`: the allocator, for start-up recovery checks and tests. */
  get allocations(): SubnetAllocator | undefined {
    return this.allocator;
  }
}
