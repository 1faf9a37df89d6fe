/**
 * What of a pod or node the backends' translations and key mappings read. An update that
 * leaves the projection equal changes nothing in ODL, so its keys are not enqueued: kubelets
 * rewrite node status every few seconds (heartbeats, conditions), and pods change labels and
 * annotations all the time.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { ATTACHMENTS_ANNOTATION } from '../netvirt/attachments.js';
import { NETWORKS_ANNOTATION } from '../netvirt/network-selection.js';

export function podProjection(pod: V1Pod): string {
  return JSON.stringify([
    pod.metadata?.uid,
    pod.spec?.nodeName,
    pod.spec?.hostNetwork,
    pod.status?.phase,
    pod.status?.podIP,
    (pod.status?.podIPs ?? []).map((p) => p.ip),
    // Extra networks: what the pod asks for, and what the watcher recorded for it.
    pod.metadata?.annotations?.[NETWORKS_ANNOTATION],
    pod.metadata?.annotations?.[ATTACHMENTS_ANNOTATION],
  ]);
}

export function nodeProjection(node: V1Node): string {
  return JSON.stringify([
    node.metadata?.uid,
    node.metadata?.name,
    (node.status?.addresses ?? []).map((a) => [a.type, a.address]),
    node.spec?.podCIDR,
  ]);
}
