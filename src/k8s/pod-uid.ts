/**
 * Which pod a CNI request or an OVS port belongs to, as kubelet names it: the agent accepts an
 * ADD and keeps a port by this UID, and odlcoectl trace checks the port's `pod-uid` against it.
 */
import type { V1Pod } from '@kubernetes/client-node';

/** The annotation kubelet puts on a static pod's mirror pod: the static pod's own UID. */
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/**
 * The pod UID kubelet hands to CNI (`K8S_POD_UID`) for this API object. For ordinary pods that
 * is `metadata.uid`. A static pod's UID is a hash of its manifest, and the API server's copy of
 * it (the mirror pod) gets a UID of its own, so comparing against `metadata.uid` would refuse
 * every ADD of a static pod and make the start-up reconcile remove its port.
 */
export function kubeletPodUid(pod: V1Pod): string | undefined {
  return pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION] ?? pod.metadata?.uid;
}
