/**
 * The watcher's side of extra networks' addresses: before a pod's key is planned, its
 * attachments are allocated (netvirt/attachment-allocation.ts, pure) and recorded in the pod's
 * `odlcoe.io/attachments` annotation with a merge patch of that one annotation; the agent reads
 * it there, and the attachment keys plan the ODL interfaces from it.
 *
 * The annotations are the only store: what pods hold is read from the cluster view (every
 * on-network pod's record) into an index (netvirt/attachment-holdings.ts) built once per term
 * and then kept up to date one pod at a time, from the view's pod changes and the records this
 * watcher writes, so allocating a pod costs what it asks for, not what the cluster holds. A
 * record written but not yet seen back through the informer is held as a reservation, so two
 * pods allocated one after the other never get the same address; allocation itself is
 * synchronous (no await between reading what is held and reserving).
 *
 * A deleted pod's addresses are quarantined, not free, while ODL still holds an interface of
 * its attachments (its ietf-, elan- or vpn-interface with the old pod's marker): until the
 * attachment key's deletes land, ODL still routes and answers for the old address, and a new
 * pod given it would share the address with a stale vpn-interface adjacency and static MAC
 * entry. The ODL cache's changes release them.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../common/log.js';
import type { KubeClient } from '../k8s/kube-client.js';
import { allocateAttachments } from '../netvirt/attachment-allocation.js';
import { AttachmentHoldings } from '../netvirt/attachment-holdings.js';
import {
  ATTACHMENTS_ANNOTATION,
  formatAttachments,
  isAttachmentFailure,
  parseAttachments,
  type AttachmentRecord,
} from '../netvirt/attachments.js';
import { podNetworkEligibility } from '../netvirt/kube.js';
import type { NetworkDefinition } from '../netvirt/network-config.js';
import { NETWORKS_ANNOTATION } from '../netvirt/network-selection.js';
import type { ClusterView } from './cluster-view.js';

export interface AttachmentAllocatorOptions {
  view: ClusterView;
  kube: KubeClient;
  logger: Logger;
  /** The NAD read, its ELAN checked (as the plans see it); undefined: no such NAD. */
  network(namespace: string, name: string): NetworkDefinition | undefined;
  /**
   * Whether ODL (the watcher's cache) still holds an interface of the attachment interface
   * `name` made for the pod `podUid`: its ietf- or elan-interface with that pod's marker, or a
   * vpn-interface of that name whose ietf-interface is gone or that pod's.
   */
  odlHolds(name: string, podUid: string): boolean;
}

/** What a pod's sync did. */
export type AllocationResult = 'unchanged' | 'recorded' | 'no-networks';

/** A deleted pod's attachments waiting for their ODL interfaces to go. */
interface Quarantine {
  /** Its key in the holdings: never a live pod's `<ns>/<name>`. */
  key: string;
  uid: string;
  /** Attachment interface names ODL may still hold. */
  interfaces: Set<string>;
}

export class AttachmentAllocator {
  /** `<ns>/<pod>` → records written, until the view shows them. */
  private readonly reservations = new Map<
    string,
    { uid: string; value: string; records: Map<string, AttachmentRecord> }
  >();
  /** What every on-network pod holds (built from the view at the first allocation of a term). */
  private readonly holdings = new AttachmentHoldings();
  private built = false;
  /** `<ns>/<pod>` → the uid and records the holdings have for it. */
  private readonly held = new Map<string, { uid: string; records: ReadonlyMap<string, AttachmentRecord> }>();
  /** Attachment interface name → the quarantine it belongs to. */
  private readonly quarantined = new Map<string, Quarantine>();

  constructor(private readonly options: AttachmentAllocatorOptions) {}

  /** Forgets reservations and holdings (a new leader term starts from the view alone). */
  reset(): void {
    this.reservations.clear();
    this.holdings.clear();
    this.held.clear();
    this.quarantined.clear();
    this.built = false;
  }

  /** The view added, changed or deleted a pod: what it holds follows. */
  podChanged(namespace: string, name: string): void {
    if (this.built) this.refresh(`${namespace}/${name}`);
  }

  /**
   * ODL's cache changed an interface (ietf-, elan- or vpn-interface): a quarantined address is
   * free once none of its attachment's interfaces is left.
   */
  interfaceChanged(name: string): void {
    const q = this.quarantined.get(name);
    if (!q) return;
    for (const n of q.interfaces) if (this.options.odlHolds(n, q.uid)) return;
    this.release(q);
  }

  /** Makes the pod's record match its selection; throws when the patch fails (the key is retried). */
  async sync(namespace: string, name: string, signal?: AbortSignal): Promise<AllocationResult> {
    const { view, kube, logger } = this.options;
    const podRef = `${namespace}/${name}`;
    this.build();
    const pod = view.pod(namespace, name);
    if (!pod || !podNetworkEligibility(pod).onNetwork) {
      this.refresh(podRef);
      return 'no-networks';
    }
    const annotations = pod.metadata?.annotations ?? {};
    const networks = annotations[NETWORKS_ANNOTATION];
    const current = annotations[ATTACHMENTS_ANNOTATION];
    if (networks === undefined && current === undefined) return 'no-networks';
    const existing = this.recordsOf(pod, podRef);
    const records = allocateAttachments({ namespace, name }, networks, existing, {
      network: (ns, n) => this.options.network(ns, n),
      usage: (network) => this.holdings.holdings(network, podRef),
    });
    const value = records.size === 0 ? undefined : formatAttachments(records);
    const reserved = this.reservations.get(podRef);
    if (value === current || (reserved && reserved.uid === pod.metadata?.uid && reserved.value === value)) {
      if (value === current) this.reservations.delete(podRef);
      return 'unchanged';
    }
    const uid = pod.metadata?.uid ?? '';
    this.reservations.set(podRef, { uid, value: value ?? '', records });
    this.hold(podRef, uid, records);
    try {
      await kube.request(
        'PATCH',
        `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`,
        {
          // The uid makes the patch fail (409) against a new pod of the same name.
          body: { metadata: { uid, annotations: { [ATTACHMENTS_ANNOTATION]: value ?? null } } },
          contentType: 'application/merge-patch+json',
          timeoutMs: 10_000,
          ...(signal ? { signal } : {}),
        },
      );
    } catch (err) {
      this.reservations.delete(podRef);
      this.refresh(podRef);
      throw err;
    }
    logger.info('recorded the attachments of a pod', { pod: podRef, attachments: value ?? '(none)' });
    return 'recorded';
  }

  /** Builds the holdings from every pod of the view, once per term. */
  private build(): void {
    if (this.built) return;
    this.built = true;
    for (const pod of this.options.view.pods.list())
      this.refresh(`${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`);
  }

  /** Makes the holdings of `podRef` what the view (and a pending reservation) says. */
  private refresh(podRef: string): void {
    const [namespace = '', name = ''] = podRef.split('/');
    const pod = this.options.view.pod(namespace, name);
    if (!pod || !podNetworkEligibility(pod).onNetwork) {
      this.reservations.delete(podRef);
      this.gone(podRef);
      return;
    }
    const uid = pod.metadata?.uid ?? '';
    const previous = this.held.get(podRef);
    // A new pod of the same name: the old one's attachments are gone from the view.
    if (previous && previous.uid !== uid) this.gone(podRef);
    const annotated = pod.metadata?.annotations?.[ATTACHMENTS_ANNOTATION] !== undefined;
    const records = annotated || this.reservations.has(podRef) ? this.recordsOf(pod, podRef) : new Map();
    this.hold(podRef, uid, records);
  }

  private hold(podRef: string, uid: string, records: ReadonlyMap<string, AttachmentRecord>): void {
    if (records.size === 0) {
      this.held.delete(podRef);
      this.holdings.set(podRef, undefined);
      return;
    }
    this.held.set(podRef, { uid, records });
    this.holdings.set(podRef, records);
  }

  /** The pod is gone (or off the network): its addresses are quarantined while ODL holds them. */
  private gone(podRef: string): void {
    const previous = this.held.get(podRef);
    this.held.delete(podRef);
    this.holdings.set(podRef, undefined);
    if (!previous) return;
    const interfaces = new Set<string>();
    for (const r of previous.records.values())
      if (!isAttachmentFailure(r) && this.options.odlHolds(r.interfaceName, previous.uid))
        interfaces.add(r.interfaceName);
    if (interfaces.size === 0) return;
    const q: Quarantine = {
      key: `${podRef} (deleted; ODL still holds its interfaces)`,
      uid: previous.uid,
      interfaces,
    };
    this.holdings.set(q.key, previous.records);
    for (const n of interfaces) this.quarantined.set(n, q);
  }

  private release(q: Quarantine): void {
    this.holdings.set(q.key, undefined);
    for (const n of q.interfaces) if (this.quarantined.get(n) === q) this.quarantined.delete(n);
    this.options.logger.info(
      "a deleted pod's attachment interfaces are gone from ODL; its addresses are free",
      {
        pod: q.key,
      },
    );
  }

  /** The pod's records: its reservation while the view lags, else its annotation. */
  private recordsOf(pod: V1Pod, podRef: string): Map<string, AttachmentRecord> {
    const reserved = this.reservations.get(podRef);
    const value = pod.metadata?.annotations?.[ATTACHMENTS_ANNOTATION];
    if (reserved && reserved.uid === pod.metadata?.uid) {
      if (reserved.value !== (value ?? '')) return reserved.records;
      this.reservations.delete(podRef);
    }
    if (value === undefined) return new Map();
    try {
      return parseAttachments(value);
    } catch (err) {
      this.options.logger.warn("a pod's attachment record does not parse; it is allocated afresh", {
        pod: podRef,
        error: (err as Error).message,
      });
      return new Map();
    }
  }
}
