/**
 * Where an extra interface's ADD finds what to wire: the record the watcher writes for it into
 * the pod's `odlcoe.io/attachments` annotation (src/netvirt/attachments.ts), by CNI_IFNAME.
 * The watcher allocates when it sees the pod, which can be after Multus already calls the
 * plugin, so the ADD waits for the record on the agent's own pod informer (no extra API
 * request), bounded by `cni.attachmentWaitSeconds`; on timeout the runtime gets "try again
 * later" naming what was missing, and kubelet retries the sandbox.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { errorMessage } from '../common/log.js';
import { kubeletPodUid } from '../k8s/pod-uid.js';
import { ATTACHMENTS_ANNOTATION, parseAttachments, type AttachmentRecord } from '../netvirt/attachments.js';
import { CNI_ERROR, CniError } from './cni/error.js';

/** The agent's view of its node's pods (the pod informer), with change notifications. */
export interface PodStore {
  /** The pod `namespace/name`, if the informer has it. */
  get(key: string): V1Pod | undefined;
  /** Calls `fn` on every added or updated pod until the returned function is called. */
  onChange(fn: () => void): () => void;
}

/** Which pod and interface a record is for. */
export interface RecordQuery {
  namespace: string;
  name: string;
  /** K8S_POD_UID when the runtime sent it: a record of an older pod of the name is not taken. */
  uid?: string;
  ifName: string;
  /**
   * Why a found allocation cannot be used yet (it disagrees with the request's static `ips` or
   * `mac`: the watcher has not caught up with an edited annotation); undefined to take it.
   */
  mismatch?: (record: AttachmentRecord) => string | undefined;
}

export interface FoundRecord {
  record: AttachmentRecord;
  /** The pod's UID as kubelet knows it, for the Event and the OVS port. */
  podUid: string | undefined;
}

/** What is missing for `query` now; a found record, or why it is not there yet. */
export function lookUpRecord(
  pod: V1Pod | undefined,
  query: RecordQuery,
): { found: FoundRecord } | { missing: string } {
  const who = `pod ${query.namespace}/${query.name}`;
  if (!pod) return { missing: `${who} is not known on this node yet` };
  const podUid = kubeletPodUid(pod);
  if (query.uid !== undefined && podUid !== query.uid)
    return { missing: `${who} is known with UID ${podUid ?? '(none)'}, the request is for ${query.uid}` };
  const value = pod.metadata?.annotations?.[ATTACHMENTS_ANNOTATION];
  if (value === undefined) return { missing: `${who} has no annotation ${ATTACHMENTS_ANNOTATION}` };
  let records: Map<string, AttachmentRecord>;
  try {
    records = parseAttachments(value);
  } catch (err) {
    // The watcher writes it canonically: a broken one was edited by hand, and waiting
    // does not repair it.
    throw new CniError(
      CNI_ERROR.attachment,
      `${who}: annotation ${ATTACHMENTS_ANNOTATION} is unusable: ${errorMessage(err)}`,
    );
  }
  const record = records.get(query.ifName);
  if (!record) return { missing: `${who} has no record for ${query.ifName} in ${ATTACHMENTS_ANNOTATION}` };
  const mismatch = query.mismatch?.(record);
  if (mismatch) return { missing: `${who}: the record for ${query.ifName} ${mismatch}` };
  return { found: { record, podUid } };
}

/** Waits for the record of one interface on the pod informer, bounded by `timeoutMs`. */
export class AttachmentRecordWaiter {
  constructor(
    private readonly pods: PodStore,
    readonly timeoutMs: number,
  ) {}

  /**
   * Resolves with the record as soon as the informer shows it (at once when it already does).
   * Rejects with "try again later" when `timeoutMs` passes first (naming what was missing) or
   * `signal` aborts, and with the error of an unusable annotation at once.
   */
  wait(query: RecordQuery, signal: AbortSignal): Promise<FoundRecord> {
    const key = `${query.namespace}/${query.name}`;
    return new Promise<FoundRecord>((resolve, reject) => {
      let missing = '';
      let unsubscribe: () => void = () => undefined;
      const finish = (outcome: FoundRecord | Error) => {
        clearTimeout(timer);
        unsubscribe();
        signal.removeEventListener('abort', onAbort);
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      };
      const check = () => {
        try {
          const result = lookUpRecord(this.pods.get(key), query);
          if ('found' in result) finish(result.found);
          else missing = result.missing;
        } catch (err) {
          finish(err as Error);
        }
      };
      const onAbort = () =>
        finish(
          new CniError(
            CNI_ERROR.tryAgainLater,
            `ADD abandoned while waiting for the allocation of ${query.ifName}: ${errorMessage(signal.reason)}`,
          ),
        );
      const timer = setTimeout(
        () =>
          finish(
            new CniError(
              CNI_ERROR.tryAgainLater,
              `no allocation for ${query.ifName} of pod ${key} within ${this.timeoutMs / 1000} s: ${missing}`,
              `odlcoe-watcher writes it into the pod annotation ${ATTACHMENTS_ANNOTATION}; check that it runs and that the NetworkAttachmentDefinition is an odlcoe network`,
            ),
          ),
        this.timeoutMs,
      );
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      unsubscribe = this.pods.onChange(check);
      check();
    });
  }
}
