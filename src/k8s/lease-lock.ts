import type { KubeClient } from './kube-client.js';

/** The leader election record kept in a Lease's spec (client-go's LeaderElectionRecord). */
export interface LeaderElectionRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime: string;
  renewTime: string;
  leaseTransitions: number;
}

/** The parts of a coordination.k8s.io/v1 Lease this lock reads and writes. */
interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string; [field: string]: unknown };
  spec?: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number | null;
    acquireTime?: string | null;
    renewTime?: string | null;
    leaseTransitions?: number | null;
    [field: string]: unknown;
  };
}

export interface ObservedRecord {
  record: LeaderElectionRecord;
  /** The record as canonical JSON: a change of any field, even by another candidate, is a change. */
  raw: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Reads and writes one Lease with optimistic concurrency: every update carries the
 * resourceVersion this lock last read or wrote, so a concurrent writer makes it fail with 409
 * instead of being overwritten.
 */
export class LeaseLock {
  private lease: Lease | undefined;
  private readonly collectionPath: string;
  private readonly objectPath: string;

  constructor(
    private readonly client: KubeClient,
    readonly namespace: string,
    readonly name: string,
  ) {
    if (!DNS_LABEL.test(namespace))
      throw new Error(`lease namespace "${namespace}" is not a valid namespace name`);
    if (!DNS_SUBDOMAIN.test(name)) throw new Error(`lease name "${name}" is not a valid object name`);
    this.collectionPath = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`;
    this.objectPath = `${this.collectionPath}/${name}`;
  }

  describe(): string {
    return `${this.namespace}/${this.name}`;
  }

  /** The current record, or undefined when the Lease does not exist. */
  async get(signal: AbortSignal): Promise<ObservedRecord | undefined> {
    try {
      this.lease = await this.client.request<Lease>('GET', this.objectPath, { signal });
    } catch (err) {
      if ((err as { status?: number }).status === 404) {
        this.lease = undefined;
        return undefined;
      }
      throw err;
    }
    return observed(recordOf(this.lease));
  }

  /** Creates the Lease; 409 AlreadyExists means another candidate was first. */
  async create(record: LeaderElectionRecord, signal: AbortSignal): Promise<ObservedRecord> {
    const lease: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.name, namespace: this.namespace },
      spec: { ...record },
    };
    this.lease = await this.client.request<Lease>('POST', this.collectionPath, { body: lease, signal });
    return observed(record);
  }

  /**
   * Replaces the record in the Lease last read or written; 409 Conflict means someone wrote it
   * since. Fields of the Lease this lock does not own (labels, other spec fields) are kept.
   */
  async update(record: LeaderElectionRecord, signal: AbortSignal): Promise<ObservedRecord> {
    if (!this.lease) throw new Error(`lease ${this.describe()}: update before the lease was read or created`);
    const lease: Lease = { ...this.lease, spec: { ...this.lease.spec, ...record } };
    this.lease = await this.client.request<Lease>('PUT', this.objectPath, { body: lease, signal });
    return observed(record);
  }

  /** Whether an update can go straight to PUT (a Lease was read or written before). */
  hasCachedLease(): boolean {
    return this.lease !== undefined;
  }
}

function recordOf(lease: Lease): LeaderElectionRecord {
  const spec = lease.spec ?? {};
  return {
    holderIdentity: spec.holderIdentity ?? '',
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTime: spec.acquireTime ?? '',
    renewTime: spec.renewTime ?? '',
    leaseTransitions: spec.leaseTransitions ?? 0,
  };
}

function observed(record: LeaderElectionRecord): ObservedRecord {
  const { holderIdentity, leaseDurationSeconds, acquireTime, renewTime, leaseTransitions } = record;
  return {
    record,
    raw: JSON.stringify([holderIdentity, leaseDurationSeconds, acquireTime, renewTime, leaseTransitions]),
  };
}

/**
 * A Lease `MicroTime`: RFC 3339 with exactly six fractional digits. The API server rejects the
 * millisecond form `Date.toISOString()` produces (which client-node 1.x sends as is).
 */
export function microTime(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
