/**
 * The `allocate` subnet source: carves per-node subnets of one prefix length out of a cluster
 * CIDR. Allocations live in ODL (the `pod-cidr` of each node's k8s-node entry) and are recovered
 * from there when a leader term starts, so they survive restarts and leader changes; this class
 * only decides, synchronously (no two nodes can race for one subnet), and remembers.
 *
 * Rules: a node keeps its subnet for as long as its entry exists (never moved, even if the
 * settings change later); a new node gets the lowest free subnet that overlaps no allocation;
 * a subnet is free again once its node is gone and no pod holds an address from it any more
 * (reconcile-node.ts decides when; the entry is kept until then, as the durable record).
 */
import ipaddr from 'ipaddr.js';
import { ModelValidationError } from '../netvirt/errors.js';
import { addressFromBigInt as fromBigInt, addressToBigInt as toBigInt, parseCidr } from '../netvirt/names.js';

interface Range {
  family: 4 | 6;
  first: bigint;
  /** Last address, inclusive. */
  last: bigint;
}

function rangeOf(cidr: string): Range {
  const { family, network, prefixLength } = parseCidr(cidr);
  const bits = family === 4 ? 32 : 128;
  const first = toBigInt(network);
  return { family, first, last: first + (1n << BigInt(bits - prefixLength)) - 1n };
}

const overlaps = (a: Range, b: Range) => a.family === b.family && a.first <= b.last && b.first <= a.last;

/**
 * Whether `address` lies in `cidr`. The address may carry a prefix length (an adjacency's
 * `ip-address` is `ip/32` or `ip/128`), which is ignored. False when either does not parse.
 */
export function subnetHoldsAddress(cidr: string, address: string): boolean {
  const slash = address.indexOf('/');
  const bare = (slash < 0 ? address : address.slice(0, slash)).trim();
  try {
    if (!ipaddr.isValid(bare)) return false;
    const family = ipaddr.parse(bare).kind() === 'ipv6' ? 6 : 4;
    const n = toBigInt(bare);
    return overlaps(rangeOf(cidr.trim()), { family, first: n, last: n });
  } catch {
    return false;
  }
}

export class SubnetAllocator {
  private readonly cluster: Range;
  private readonly size: bigint;
  private readonly count: bigint;
  /** node UID → CIDR. */
  private readonly byNode = new Map<string, { cidr: string; range: Range }>();

  constructor(
    readonly clusterCidr: string,
    readonly prefixLength: number,
  ) {
    const { family, prefixLength: clusterLength } = parseCidr(clusterCidr);
    const bits = family === 4 ? 32 : 128;
    if (!Number.isInteger(prefixLength) || prefixLength < clusterLength || prefixLength > bits) {
      throw new ModelValidationError(
        'node prefix length',
        `${prefixLength} must be between the cluster CIDR's ${clusterLength} and ${bits}`,
      );
    }
    this.cluster = rangeOf(clusterCidr);
    this.size = 1n << BigInt(bits - prefixLength);
    this.count = 1n << BigInt(prefixLength - clusterLength);
  }

  /** How many node subnets the cluster CIDR holds. */
  get capacity(): bigint {
    return this.count;
  }

  get(nodeUid: string): string | undefined {
    return this.byNode.get(nodeUid)?.cidr;
  }

  /**
   * Takes an allocation found in ODL. Returns an error text (and takes nothing) when it is not
   * a CIDR or overlaps another node's subnet: the first one recovered keeps it.
   */
  recover(nodeUid: string, cidr: string): string | undefined {
    let range: Range;
    let canonical: string;
    try {
      const parsed = parseCidr(cidr.trim());
      canonical = `${parsed.network}/${parsed.prefixLength}`;
      range = rangeOf(canonical);
    } catch (err) {
      return (err as Error).message;
    }
    for (const [uid, other] of this.byNode) {
      if (uid !== nodeUid && overlaps(other.range, range))
        return `${canonical} overlaps ${other.cidr} of node ${uid}`;
    }
    this.byNode.set(nodeUid, { cidr: canonical, range });
    return undefined;
  }

  /** The node's subnet, allocating the lowest free one; undefined when the cluster CIDR is used up. */
  allocate(nodeUid: string): string | undefined {
    const existing = this.byNode.get(nodeUid);
    if (existing) return existing.cidr;
    const taken = [...this.byNode.values()].map((a) => a.range).filter((r) => overlaps(r, this.cluster));
    taken.sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
    // Walk candidates in order, jumping past each allocation that overlaps the candidate.
    let index = 0n;
    let t = 0;
    while (index < this.count) {
      const first = this.cluster.first + index * this.size;
      const candidate: Range = { family: this.cluster.family, first, last: first + this.size - 1n };
      while (t < taken.length && (taken[t] as Range).last < candidate.first) t += 1;
      const blocker = taken[t];
      if (blocker && overlaps(blocker, candidate)) {
        // Next candidate starting after the blocker.
        index = (blocker.last - this.cluster.first) / this.size + 1n;
        continue;
      }
      const cidr = `${fromBigInt(first, this.cluster.family)}/${this.prefixLength}`;
      this.byNode.set(nodeUid, { cidr, range: candidate });
      return cidr;
    }
    return undefined;
  }

  release(nodeUid: string): boolean {
    return this.byNode.delete(nodeUid);
  }

  /** Node UIDs holding a subnet. */
  nodes(): string[] {
    return [...this.byNode.keys()];
  }
}
