/**
 * The `pod-cidr` of a node's k8s-node entry under the coe-northbound backend. The node agent
 * reads its subnet from that entry whichever backend runs, so the three sources behave exactly
 * as with the netvirt backend (src/watcher/node-subnets.ts):
 *
 * - `odl`: an ODL user writes `pod-cidr`; the watcher owns the entry but not that leaf.
 * - `podCIDR`: `node.spec.podCIDR`, copied.
 * - `allocate`: carved from `clusterCidr`; the entry's `pod-cidr` is the durable record,
 *   recovered from this cluster's entries at the start of each leader term.
 *
 * (The netvirt class is bound to the netvirt backend's ODL cache; this one reads the
 * coe-northbound cache through `entries`.)
 */
import type { V1Node } from '@kubernetes/client-node';
import { parseCidr, type K8sNode } from '../../netvirt/index.js';
import type { SubnetSource } from '../settings.js';
import { SubnetAllocator } from '../subnet-allocator.js';

export type EntrySubnet =
  { kind: 'subnet'; cidr: string } | { kind: 'none'; problem?: string } | { kind: 'exhausted' };

export class CoeNodeSubnets {
  private readonly allocator: SubnetAllocator | undefined;

  constructor(
    readonly source: SubnetSource,
    allocation?: { clusterCidr: string; nodePrefixLength: number },
  ) {
    if (source === 'allocate') {
      if (!allocation)
        throw new Error('the allocate subnet source needs a cluster CIDR and a node prefix length');
      this.allocator = new SubnetAllocator(allocation.clusterCidr, allocation.nodePrefixLength);
    }
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

  /** Whether the node holds an allocation (`allocate` only). */
  allocated(uid: string): boolean {
    return this.allocator?.get(uid) !== undefined;
  }

  /** `allocate`: takes the allocations recorded in this cluster's k8s-node entries; returns the problems. */
  recover(ours: Iterable<K8sNode>): string[] {
    if (!this.allocator) return [];
    const problems: string[] = [];
    for (const entry of [...ours].sort((a, b) => a.uid.localeCompare(b.uid))) {
      if (!entry.podCidr) continue;
      const problem = this.allocator.recover(entry.uid, entry.podCidr);
      if (problem) problems.push(`k8s-node ${entry.uid}: ${problem}`);
    }
    return problems;
  }

  release(uid: string): boolean {
    return this.allocator?.release(uid) ?? false;
  }
}
