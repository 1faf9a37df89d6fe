/**
 * The watcher's side of extra networks' addresses: before a pod's key is planned, its
 * attachments are allocated (netvirt/attachment-allocation.ts, pure) and recorded in the pod's
 * `odlcoe.io/attachments` annotation with a merge patch of that one annotation; the agent reads
 * it there, and the attachment keys plan the ODL interfaces from it.
 *
 * The annotations are the only store: what other pods hold is read from the cluster view (every
 * on-network pod's record), so a restarted watcher recovers every allocation and a deleted
 * pod's addresses are free as soon as the view no longer has it. A record written but not yet
 * seen back through the informer is held as a reservation, so two pods allocated one after the
 * other never get the same address; allocation itself is synchronous (no await between reading
 * what is held and reserving).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../common/log.js';
import type { KubeClient } from '../k8s/kube-client.js';
import { allocateAttachments, attachmentUsage, type NetworkUsage } from '../netvirt/attachment-allocation.js';
import {
  ATTACHMENTS_ANNOTATION,
  formatAttachments,
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
}

/** What a pod's sync did. */
export type AllocationResult = 'unchanged' | 'recorded' | 'no-networks';

export class AttachmentAllocator {
  /** `<ns>/<pod>` → records written, until the view shows them. */
  private readonly reservations = new Map<
    string,
    { uid: string; value: string; records: Map<string, AttachmentRecord> }
  >();

  constructor(private readonly options: AttachmentAllocatorOptions) {}

  /** Forgets reservations (a new leader term starts from the view alone). */
  reset(): void {
    this.reservations.clear();
  }

  /** Makes the pod's record match its selection; throws when the patch fails (the key is retried). */
  async sync(namespace: string, name: string, signal?: AbortSignal): Promise<AllocationResult> {
    const { view, kube, logger } = this.options;
    const podRef = `${namespace}/${name}`;
    const pod = view.pod(namespace, name);
    if (!pod || !podNetworkEligibility(pod).onNetwork) {
      this.reservations.delete(podRef);
      return 'no-networks';
    }
    const annotations = pod.metadata?.annotations ?? {};
    const networks = annotations[NETWORKS_ANNOTATION];
    const current = annotations[ATTACHMENTS_ANNOTATION];
    if (networks === undefined && current === undefined) return 'no-networks';
    const existing = this.recordsOf(pod, podRef);
    const usage = this.usageExcept(podRef);
    const records = allocateAttachments({ namespace, name }, networks, existing, {
      network: (ns, n) => this.options.network(ns, n),
      usage: (network) => usage.get(network) ?? { ips: new Map(), macs: new Map() },
    });
    const value = records.size === 0 ? undefined : formatAttachments(records);
    const reserved = this.reservations.get(podRef);
    if (value === current || (reserved && reserved.uid === pod.metadata?.uid && reserved.value === value)) {
      if (value === current) this.reservations.delete(podRef);
      return 'unchanged';
    }
    const uid = pod.metadata?.uid ?? '';
    this.reservations.set(podRef, { uid, value: value ?? '', records });
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
      throw err;
    }
    logger.info('recorded the attachments of a pod', { pod: podRef, attachments: value ?? '(none)' });
    return 'recorded';
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

  /** What every other on-network pod holds, per network. */
  private usageExcept(podRef: string): Map<string, NetworkUsage> {
    const holders: { holder: string; records: ReadonlyMap<string, AttachmentRecord> }[] = [];
    const seen = new Set<string>();
    for (const pod of this.options.view.pods.list()) {
      const ref = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
      seen.add(ref);
      if (ref === podRef || !podNetworkEligibility(pod).onNetwork) continue;
      const annotated = pod.metadata?.annotations?.[ATTACHMENTS_ANNOTATION] !== undefined;
      if (!annotated && !this.reservations.has(ref)) continue;
      let records: Map<string, AttachmentRecord>;
      try {
        records = this.recordsOf(pod, ref);
      } catch {
        continue;
      }
      holders.push({ holder: `pod ${ref}`, records });
    }
    for (const ref of this.reservations.keys()) if (!seen.has(ref)) this.reservations.delete(ref);
    return attachmentUsage(holders);
  }
}
