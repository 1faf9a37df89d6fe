/**
 * Where a node's pod subnet comes from, per the `subnetSource` setting:
 *
 * - `odl`: an ODL user writes `pod-cidr` into the node's k8s-node entry. The watcher owns the
 *   entry but not that leaf (the desired entry has no `pod-cidr`, so the diff neither compares
 *   nor erases it) and reads the subnet back from ODL.
 * - `podCIDR`: `node.spec.podCIDR`, copied into the entry.
 * - `allocate`: carved from `clusterCidr` by the SubnetAllocator; the entry's `pod-cidr` is the
 *   allocation's durable record, recovered at the start of each leader term.
 *
 * The node agent reads its subnet from the k8s-node entry whichever backend runs, so both
 * backends use this class, each reading the entries from its own ODL cache through
 * `K8sNodeEntries`. What it answers are the node plans' subnet inputs (plan-node.ts).
 */
import type { V1Node } from '@kubernetes/client-node';
import { k8sNodeOwnership, type K8sNode } from '../netvirt/k8s-node.js';
import { parseCidr } from '../netvirt/names.js';
import type { OwnerContext } from '../netvirt/ownership.js';
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

export type { EntrySubnet };

export class NodeSubnets {
  private readonly allocator: SubnetAllocator | undefined;
  private readonly releaseListeners: ((uid: string) => void)[] = [];

  constructor(
    readonly source: SubnetSource,
    private readonly entries: K8sNodeEntries,
    allocation?: { clusterCidr: string; nodePrefixLength: number },
  ) {
    if (source === 'allocate') {
      if (!allocation)
        throw new Error('the allocate subnet source needs a cluster CIDR and a node prefix length');
      this.allocator = new SubnetAllocator(allocation.clusterCidr, allocation.nodePrefixLength);
    }
  }

  /** The subnet pods on `node` are addressed from now, as far as the watcher knows. Never allocates. */
  subnetFor(node: V1Node): string | undefined {
    const uid = node.metadata?.uid;
    switch (this.source) {
      case 'podCIDR':
        return node.spec?.podCIDR || undefined;
      case 'allocate':
        return uid ? this.allocator?.get(uid) : undefined;
      case 'odl':
        return uid ? this.entries.get(uid)?.podCidr?.trim() || undefined : undefined;
    }
  }

  /**
   * `odl`: re-reads a node's entry (an ODL user may have set its pod-cidr since it was read).
   * Only an entry the cache holds: an absent one is the watcher's to create first.
   */
  async refreshEntry(uid: string): Promise<void> {
    if (this.source === 'odl' && this.entries.get(uid)) await this.entries.refresh(uid);
  }

  /** The `pod-cidr` the watcher writes for `node`; allocates under `allocate`. */
  entrySubnet(node: V1Node): EntrySubnet {
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
   * `allocate`: takes the allocations recorded in ODL (this cluster's k8s-node entries).
   * Returns the problems (entries whose pod-cidr is unusable or overlaps another's).
   */
  recover(): string[] {
    if (!this.allocator) return [];
    const problems: string[] = [];
    const entries = [...this.entries.ours()].sort((a, b) => a.uid.localeCompare(b.uid));
    for (const entry of entries) {
      if (!entry.podCidr) continue;
      const problem = this.allocator.recover(entry.uid, entry.podCidr);
      if (problem) problems.push(`k8s-node ${entry.uid}: ${problem}`);
    }
    return problems;
  }

  /**
   * A node's cached k8s-node entry. When the node object is gone, this is where its host name
   * (which its pods' `spec.nodeName` still say) and its allocation are recorded.
   */
  entry(uid: string): K8sNode | undefined {
    return this.entries.get(uid);
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
