/**
 * Where a node's pod subnet comes from, per the `subnetSource` setting:
 *
 * - `odl`: an ODL user writes `pod-cidr` into the node's k8s-node entry. The watcher owns the
 *   entry but not that leaf (the desired entry has no `pod-cidr`, so the diff neither compares
 *   nor erases it) and reads the subnet back from ODL.
 * - `podCIDR`: `node.spec.podCIDR`, copied into the entry.
 * - `allocate`: carved from `clusterCidr` by the SubnetAllocator; the entry's `pod-cidr` is the
 *   allocation's durable record, recovered at the start of each leader term.
 */
import type { V1Node } from '@kubernetes/client-node';
import { parseCidr } from '../netvirt/index.js';
import type { OdlState } from './odl-state.js';
import type { SubnetSource } from './settings.js';
import { SubnetAllocator } from './subnet-allocator.js';

/** The subnet to write into a node's entry, or why there is none. */
export type EntrySubnet =
  | { kind: 'subnet'; cidr: string }
  /** The watcher does not own the leaf (`odl`), or the node has no usable subnet yet. */
  | { kind: 'none'; problem?: string }
  /** `allocate`: the cluster CIDR is used up. */
  | { kind: 'exhausted' };

export class NodeSubnets {
  private readonly allocator: SubnetAllocator | undefined;

  constructor(
    readonly source: SubnetSource,
    private readonly state: OdlState,
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
        return uid ? this.state.get('k8sNode', uid)?.podCidr?.trim() || undefined : undefined;
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

  /**
   * `allocate`: takes the allocations recorded in ODL (this cluster's k8s-node entries).
   * Returns the problems (entries whose pod-cidr is unusable or overlaps another's).
   */
  recover(isOurs: (uid: string) => boolean): string[] {
    if (!this.allocator) return [];
    const problems: string[] = [];
    const entries = [...this.state.values('k8sNode')].sort((a, b) => a.uid.localeCompare(b.uid));
    for (const entry of entries) {
      if (!entry.podCidr || !isOurs(entry.uid)) continue;
      const problem = this.allocator.recover(entry.uid, entry.podCidr);
      if (problem) problems.push(`k8s-node ${entry.uid}: ${problem}`);
    }
    return problems;
  }

  /** The node and its entry are gone: its subnet is free again. */
  release(uid: string): boolean {
    return this.allocator?.release(uid) ?? false;
  }

  /** `allocate`: the allocator, for start-up recovery checks and tests. */
  get allocations(): SubnetAllocator | undefined {
    return this.allocator;
  }
}
