/**
 * Kubernetes Events (core/v1) for what an operator must act on (the watcher: a foreign ODL
 * object holding a name, a node subnet pool used up; the agent: an extra interface of a pod
 * that could not be attached). One Event per (object, reason), created once and then counted
 * up (as client-go's recorder aggregates), at most once per `minIntervalMs`, so a key retried
 * for hours does not flood the API server. Recording never blocks or fails the work that
 * reports: errors are logged.
 */
import { createHash } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../common/log.js';
import { errorMessage } from '../common/log.js';
import { KubeApiError, KubeClient } from './kube-client.js';

/** The Kubernetes object an Event is about. */
export interface InvolvedObject {
  kind: string;
  /** For kinds outside core/v1 (a CRD's `k8s.cni.cncf.io/v1`); default `v1`. */
  apiVersion?: string;
  name: string;
  /** Namespaced kinds only. */
  namespace?: string;
  uid?: string;
}

export interface EventRecorder {
  warning(object: InvolvedObject, reason: string, message: string): void;
}

interface Recorded {
  name: string;
  namespace: string;
  count: number;
  lastSentAt: number;
}

/** Records Events as `component` (the Event's `source.component` and `reportingComponent`). */
export class KubeEventRecorder implements EventRecorder {
  private readonly client: KubeClient;
  private readonly recorded = new Map<string, Recorded>();
  /** Requests in flight, so close() can wait for them. */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    kubeConfig: KubeConfig,
    private readonly logger: Logger,
    private readonly host: string,
    private readonly component: string,
    private readonly minIntervalMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {
    this.client = new KubeClient(kubeConfig);
  }

  warning(object: InvolvedObject, reason: string, message: string): void {
    const id = `${object.kind}/${object.namespace ?? ''}/${object.name}/${object.uid ?? ''}/${reason}`;
    const now = this.now();
    this.forgetOld(now);
    const previous = this.recorded.get(id);
    if (previous && now - previous.lastSentAt < this.minIntervalMs) {
      previous.count += 1;
      return;
    }
    // Events about cluster-scoped objects live in `default`, as client-go records them.
    const namespace = object.namespace ?? 'default';
    const name = `${object.name}.${createHash('sha256').update(id).digest('hex').slice(0, 16)}`;
    const entry: Recorded = previous ?? { name, namespace, count: 0, lastSentAt: now };
    entry.count += 1;
    entry.lastSentAt = now;
    this.recorded.set(id, entry);
    const send = this.send(object, entry, reason, message).finally(() => this.inFlight.delete(send));
    this.inFlight.add(send);
  }

  /** Keeps the memory bounded: an Event not repeated for an hour starts over as a new one. */
  private forgetOld(now: number): void {
    if (this.recorded.size < 1000) return;
    for (const [id, r] of this.recorded) if (now - r.lastSentAt > 3_600_000) this.recorded.delete(id);
  }

  async flush(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  private async send(
    object: InvolvedObject,
    entry: Recorded,
    reason: string,
    message: string,
  ): Promise<void> {
    const timestamp = new Date(this.now()).toISOString().replace(/\.\d+Z$/, 'Z');
    const path = `/api/v1/namespaces/${encodeURIComponent(entry.namespace)}/events`;
    const involvedObject = {
      apiVersion: object.apiVersion ?? 'v1',
      kind: object.kind,
      name: object.name,
      ...(object.namespace ? { namespace: object.namespace } : {}),
      ...(object.uid ? { uid: object.uid } : {}),
    };
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: entry.name, namespace: entry.namespace },
      involvedObject,
      reason,
      message,
      type: 'Warning',
      count: entry.count,
      firstTimestamp: timestamp,
      lastTimestamp: timestamp,
      source: { component: this.component, host: this.host },
      reportingComponent: this.component,
      reportingInstance: this.host,
    };
    try {
      try {
        await this.client.request('POST', path, { body, timeoutMs: 10_000 });
      } catch (err) {
        if (!(err instanceof KubeApiError && err.status === 409)) throw err;
        // Already recorded (by us earlier, or a previous process): count it up.
        await this.client.request('PATCH', `${path}/${encodeURIComponent(entry.name)}`, {
          body: { count: entry.count, lastTimestamp: timestamp, message },
          contentType: 'application/merge-patch+json',
          timeoutMs: 10_000,
        });
      }
    } catch (err) {
      this.logger.warn('could not record Kubernetes event', {
        involved: `${object.kind} ${object.namespace ? `${object.namespace}/` : ''}${object.name}`,
        reason,
        error: errorMessage(err),
      });
    }
  }
}
