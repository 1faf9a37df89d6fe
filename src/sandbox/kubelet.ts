/**
 * A kubelet stand-in for one node: the part of kubelet odlcoe depends on. It watches the pods
 * bound to its node (`spec.nodeName`), creates a sandbox for each (through a PodRuntime: the
 * real CNI path on a simulated node), writes the pod IP into the pod's status as kubelet does
 * (the status subresource, guarded by the pod's UID), and tears the sandbox down when the pod
 * goes away, turns terminal or is replaced by a pod of the same name with another UID.
 *
 * A deleted pod bound to a node stays in the API, Terminating (`deletionTimestamp` set), until
 * its kubelet has stopped it: this stand-in then stops the sandbox (CNI DEL) and deletes the
 * pod with grace period 0 and its UID as a precondition, as kubelet's status manager does.
 * (The real kubelet also reports a terminal phase before that last delete; the stand-in does
 * not, its containers have nothing to report.)
 *
 * Level-triggered like everything else in odlcoe: informer events only queue the pod's key;
 * `syncPod` compares the pod with the sandbox it has and fixes the difference; failures
 * (the agent not ready yet: CNI code 11) are retried with backoff, as kubelet retries a sandbox.
 */
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../common/log.js';
import { errorMessage } from '../common/log.js';
import { Registry } from '../common/metrics.js';
import { Informer } from '../k8s/informer.js';
import { KubeApiError, KubeClient } from '../k8s/kube-client.js';
import { WorkQueue } from '../queue/work-queue.js';
import { NAD_API_VERSION, NAD_PLURAL } from '../netvirt/network-config.js';
import { NETWORKS_ANNOTATION, parseNetworkSelection } from '../netvirt/network-selection.js';
import type { ExtraAttachment, PodRef, PodRuntime, PodSandbox } from './pod-runtime.js';

export interface KubeletOptions {
  nodeName: string;
  /** The node's InternalIP: the pods' hostIP, and the podIP of hostNetwork pods. */
  nodeIp: string;
  kubeConfig: KubeConfig;
  runtime: PodRuntime;
  /** Sandboxes set up at once (each CNI ADD is a process; default 4). */
  workers?: number;
  registry?: Registry;
  logger: Logger;
}

export interface SandboxFailure {
  pod: string;
  error: string;
  at: number;
}

const seg = encodeURIComponent;
const podKey = (namespace: string, name: string) => `${namespace}/${name}`;

function isTerminal(pod: V1Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

function isTerminating(pod: V1Pod): boolean {
  return pod.metadata?.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;
}

function refOf(pod: V1Pod): PodRef | undefined {
  const { namespace, name, uid } = pod.metadata ?? {};
  return namespace && name && uid ? { namespace, name, uid } : undefined;
}

export class Kubelet {
  readonly nodeName: string;
  private readonly informer: Informer<V1Pod>;
  private readonly queue: WorkQueue<string>;
  private readonly kube: KubeClient;
  private readonly sandboxes = new Map<string, PodSandbox>();
  /** UIDs of pods whose sandbox was stopped on purpose (stopPod): never started again. */
  private readonly stopped = new Set<string>();
  private readonly failures = new Map<string, SandboxFailure>();
  private readonly logger: Logger;
  /** Syncs running now: close() waits for them, so no sandbox appears after its teardown. */
  private readonly running = new Set<Promise<void>>();
  private closing = false;

  constructor(private readonly options: KubeletOptions) {
    this.nodeName = options.nodeName;
    this.logger = options.logger;
    this.kube = new KubeClient(options.kubeConfig);
    const registry = options.registry ?? new Registry();
    this.informer = new Informer<V1Pod>({
      name: `kubelet-${options.nodeName}`,
      kubeConfig: options.kubeConfig,
      path: '/api/v1/pods',
      fieldSelector: `spec.nodeName=${options.nodeName}`,
      registry,
      logger: this.logger,
    });
    this.queue = new WorkQueue<string>({
      name: `kubelet-${options.nodeName}`,
      workers: options.workers ?? 4,
      reconcile: (key) => this.track(this.syncPod(key)),
      // Like kubelet's pod workers: retry soon, never hammer.
      backoff: { baseDelayMs: 250, maxDelayMs: 5_000 },
      registry,
      logger: this.logger,
    });
    const enqueue = (pod: V1Pod) => {
      const { namespace, name } = pod.metadata ?? {};
      if (namespace && name) this.queue.add(podKey(namespace, name));
    };
    this.informer.on('add', enqueue);
    this.informer.on('update', enqueue);
    this.informer.on('delete', enqueue);
  }

  start(): void {
    this.queue.start();
    this.informer.start();
  }

  waitForSync(signal?: AbortSignal): Promise<void> {
    return this.informer.waitForSync(signal);
  }

  /** The sandboxes running now, sorted by pod. */
  list(): PodSandbox[] {
    return [...this.sandboxes.values()].sort((a, b) =>
      podKey(a.pod.namespace, a.pod.name).localeCompare(podKey(b.pod.namespace, b.pod.name)),
    );
  }

  get(namespace: string, name: string): PodSandbox | undefined {
    return this.sandboxes.get(podKey(namespace, name));
  }

  /** The latest failure of each pod whose sandbox is not up (cleared once it is). */
  failuresNow(): SandboxFailure[] {
    return [...this.failures.values()];
  }

  /**
   * Stops a pod's sandbox for good (CNI DEL) without deleting the pod: it is not started again.
   * A deleted pod needs no call: once Terminating, its sandbox is stopped and the pod deleted.
   */
  async stopPod(namespace: string, name: string): Promise<void> {
    const key = podKey(namespace, name);
    const pod = this.informer.get(key);
    if (pod?.metadata?.uid) this.stopped.add(pod.metadata.uid);
    const sandbox = this.sandboxes.get(key);
    if (sandbox) {
      this.stopped.add(sandbox.pod.uid);
      await this.options.runtime.remove(sandbox);
      this.sandboxes.delete(key);
    }
  }

  /**
   * Stops watching. With `teardown`, every sandbox is stopped too (CNI DEL, pod namespaces
   * removed); the first failure is rethrown after all were tried.
   */
  async close(opts: { teardown: boolean }): Promise<void> {
    this.closing = true;
    await this.informer.stop();
    await this.queue.shutdown({ drain: false, timeoutMs: 5_000 });
    await Promise.allSettled([...this.running]);
    if (!opts.teardown) return;
    let first: unknown;
    for (const sandbox of this.list()) {
      try {
        await this.options.runtime.remove(sandbox);
        this.sandboxes.delete(podKey(sandbox.pod.namespace, sandbox.pod.name));
      } catch (err) {
        first ??= err;
        this.logger.warn('kubelet: sandbox teardown failed', {
          node: this.nodeName,
          pod: podKey(sandbox.pod.namespace, sandbox.pod.name),
          error: errorMessage(err),
        });
      }
    }
    if (first !== undefined) throw first;
  }

  private track(sync: Promise<void>): Promise<void> {
    this.running.add(sync);
    const done = () => this.running.delete(sync);
    sync.then(done, done);
    return sync;
  }

  private async syncPod(key: string): Promise<void> {
    if (this.closing) return;
    const pod = this.informer.get(key);
    let sandbox = this.sandboxes.get(key);
    const ref = pod ? refOf(pod) : undefined;

    if (
      sandbox &&
      (!ref || ref.uid !== sandbox.pod.uid || (pod && (isTerminal(pod) || isTerminating(pod))))
    ) {
      this.logger.info('kubelet: stopping pod sandbox', {
        node: this.nodeName,
        pod: key,
        containerId: sandbox.containerId,
      });
      await this.options.runtime.remove(sandbox);
      this.sandboxes.delete(key);
      sandbox = undefined;
    }
    if (pod && ref && isTerminating(pod)) {
      this.failures.delete(key);
      await this.finishDeletion(ref);
      return;
    }
    if (!pod || !ref || isTerminal(pod) || this.stopped.has(ref.uid)) {
      this.failures.delete(key);
      return;
    }

    if (pod.spec?.hostNetwork === true) {
      await this.writeStatus(ref, pod, [this.options.nodeIp]);
      return;
    }
    if (!sandbox) {
      try {
        const attachments = await this.attachmentsOf(pod);
        sandbox = await this.options.runtime.add(attachments.length > 0 ? { ...ref, attachments } : ref);
      } catch (err) {
        this.failures.set(key, { pod: key, error: errorMessage(err), at: Date.now() });
        this.logger.info('kubelet: pod sandbox not created yet; retrying', {
          node: this.nodeName,
          pod: key,
          error: errorMessage(err),
        });
        throw err;
      }
      this.failures.delete(key);
      this.sandboxes.set(key, sandbox);
      this.logger.info('kubelet: pod sandbox running', {
        node: this.nodeName,
        pod: key,
        containerId: sandbox.containerId,
        ips: sandbox.ips,
      });
    }
    await this.writeStatus(ref, pod, sandbox.ips);
  }

  /**
   * The last step of a pod's deletion, once its sandbox is stopped: DELETE with grace period
   * 0, guarded by the UID so that a newer pod of the same name is never removed.
   */
  private async finishDeletion(ref: PodRef): Promise<void> {
    try {
      await this.kube.request('DELETE', `/api/v1/namespaces/${seg(ref.namespace)}/pods/${seg(ref.name)}`, {
        body: {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          gracePeriodSeconds: 0,
          preconditions: { uid: ref.uid },
        },
      });
      this.logger.info('kubelet: pod deleted after its sandbox stopped', {
        node: this.nodeName,
        pod: `${ref.namespace}/${ref.name}`,
      });
    } catch (err) {
      // Already gone, or replaced by a newer pod of the same name: nothing of ours is left.
      if (err instanceof KubeApiError && (err.status === 404 || err.status === 409)) return;
      throw err;
    }
  }

  /** Sets phase Running, podIP(s) and hostIP(s) unless the status already says so. */
  /**
   * Multus' part: the pod's `k8s.v1.cni.cncf.io/networks` selection, each element's
   * NetworkAttachmentDefinition read from the API (a missing one fails the sandbox, which is
   * retried, as Multus fails it).
   */
  private async attachmentsOf(pod: V1Pod): Promise<ExtraAttachment[]> {
    const value = pod.metadata?.annotations?.[NETWORKS_ANNOTATION];
    const namespace = pod.metadata?.namespace ?? '';
    if (value === undefined) return [];
    const out: ExtraAttachment[] = [];
    for (const sel of parseNetworkSelection(value, namespace)) {
      const nad = await this.kube.request<{ spec?: { config?: string } }>(
        'GET',
        `/apis/${NAD_API_VERSION}/namespaces/${seg(sel.namespace)}/${NAD_PLURAL}/${seg(sel.name)}`,
      );
      const config = JSON.parse(nad.spec?.config ?? '{}') as Record<string, unknown>;
      out.push({
        ifName: sel.interface,
        config,
        ...(sel.ips ? { ips: sel.ips } : {}),
        ...(sel.mac ? { mac: sel.mac } : {}),
      });
    }
    return out;
  }

  private async writeStatus(ref: PodRef, pod: V1Pod, ips: string[]): Promise<void> {
    const s = pod.status ?? {};
    const current = (s.podIPs ?? []).map((p) => p.ip);
    if (
      s.phase === 'Running' &&
      s.podIP === ips[0] &&
      current.join(',') === ips.join(',') &&
      s.hostIP === this.options.nodeIp
    )
      return;
    try {
      await this.kube.request(
        'PATCH',
        `/api/v1/namespaces/${seg(ref.namespace)}/pods/${seg(ref.name)}/status`,
        {
          contentType: 'application/merge-patch+json',
          // The UID is a precondition: a newer pod of the same name must not get this one's IP.
          body: {
            metadata: { uid: ref.uid },
            status: {
              phase: 'Running',
              podIP: ips[0],
              podIPs: ips.map((ip) => ({ ip })),
              hostIP: this.options.nodeIp,
              hostIPs: [{ ip: this.options.nodeIp }],
            },
          },
        },
      );
    } catch (err) {
      // Gone or replaced: the informer brings the delete, and syncPod stops the sandbox.
      if (err instanceof KubeApiError && (err.status === 404 || err.status === 409)) return;
      throw err;
    }
  }
}
