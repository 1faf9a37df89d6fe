import type { V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from '../../src/k8s/kube-client.js';
import { KubeApiError } from '../../src/k8s/kube-client.js';

/**
 * Deleting pods the way a cluster does, against kube-apiserver semantics (the simulator has
 * them): a DELETE of a pod bound to a node only marks it (Terminating: `deletionTimestamp`,
 * `deletionGracePeriodSeconds`); the pod goes when its kubelet, once the containers have
 * stopped, deletes it again with grace period 0 and the pod's UID as a precondition.
 */

const podPath = (namespace: string, name: string) =>
  `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;

/** What `kubectl delete pod` does: a DELETE without a grace period (the pod's own, 30 s by default). */
export function terminatePod(kube: KubeClient, namespace: string, name: string): Promise<V1Pod> {
  return kube.request<V1Pod>('DELETE', podPath(namespace, name));
}

/** What kubelet does last for a Terminating pod: DELETE with grace 0, guarded by the pod's UID. */
export async function finishPodDeletion(kube: KubeClient, namespace: string, name: string): Promise<void> {
  try {
    const pod = await kube.request<V1Pod>('GET', podPath(namespace, name));
    await kube.request('DELETE', podPath(namespace, name), {
      body: {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        gracePeriodSeconds: 0,
        preconditions: { uid: pod.metadata?.uid },
      },
    });
  } catch (err) {
    // Gone already (a pod not bound to a node goes with its first DELETE).
    if (err instanceof KubeApiError && err.status === 404) return;
    throw err;
  }
}

/** A pod deleted as a cluster deletes it: marked Terminating, then removed as kubelet removes it. */
export async function deletePodAsKubelet(kube: KubeClient, namespace: string, name: string): Promise<void> {
  await terminatePod(kube, namespace, name);
  await finishPodDeletion(kube, namespace, name);
}

/** `kubectl delete pod --grace-period=0 --force`: removed in one request (no Terminating phase). */
export async function deletePodNow(kube: KubeClient, namespace: string, name: string): Promise<void> {
  await kube.request('DELETE', podPath(namespace, name), { query: { gracePeriodSeconds: 0 } });
}
