/**
 * Keys of the coe-northbound backend, and the pure mapping from Kubernetes changes to keys.
 *
 * | key                      | owns in ODL                                                        |
 * |--------------------------|--------------------------------------------------------------------|
 * | `pod/<ns>/<pod>`         | the `pod:coe/pods` entries named `<ns>/<pod>` (the pod's own uid, and those of earlier pods of that name) |
 * | `node/<uid>`             | the `k8s-node` entry of a node                                     |
 * | `service/<ns>/<svc>`     | the `services` and `endpoints` entries of a Service (both keyed by the Service's uid), and those of earlier Services of that name |
 * | `pod-uid/<uid>`          | a pods entry of this cluster that lacks `network-NS` or `name` (not written by odlcoe; found at load) |
 * | `service-uid/<uid>`      | the same for a services entry                                      |
 *
 * Keys are by name, not uid: ODL entries carry the name and namespace they were written for,
 * so every entry names the key that owns it (garbage collection after downtime), and a pod
 * re-created under the same name (a StatefulSet pod) is one key whose reconcile removes the old
 * entry before writing the new one; NetVirt names the pod's interface `<ns>:<pod>`, so the two
 * must never overlap.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { nodeInternalIp } from '../../netvirt/index.js';
import type { ClusterChange } from '../backend.js';

export type CoeKey =
  | { kind: 'pod'; namespace: string; name: string }
  | { kind: 'node'; uid: string }
  | { kind: 'service'; namespace: string; name: string }
  | { kind: 'pod-uid'; uid: string }
  | { kind: 'service-uid'; uid: string };

export const podKey = (namespace: string, name: string): string => `pod/${namespace}/${name}`;
export const nodeKey = (uid: string): string => `node/${uid}`;
export const serviceKey = (namespace: string, name: string): string => `service/${namespace}/${name}`;
export const podUidKey = (uid: string): string => `pod-uid/${uid}`;
export const serviceUidKey = (uid: string): string => `service-uid/${uid}`;

export function parseCoeKey(key: string): CoeKey {
  const slash = key.indexOf('/');
  const kind = key.slice(0, slash);
  const rest = key.slice(slash + 1);
  if (slash > 0 && rest !== '') {
    switch (kind) {
      case 'pod':
      case 'service': {
        const [namespace, name, ...more] = rest.split('/');
        if (namespace && name && more.length === 0) return { kind, namespace, name };
        break;
      }
      case 'node':
      case 'pod-uid':
      case 'service-uid':
        if (!rest.includes('/')) return { kind, uid: rest };
        break;
    }
  }
  throw new Error(`not a coe-northbound key: ${JSON.stringify(key)}`);
}

/** Pods on a node, from the cluster view's index. */
export type PodsOnNode = (nodeName: string) => Iterable<V1Pod>;

/** What of a pod its COE entry reads; an update that leaves it equal changes nothing in ODL. */
export function podProjection(pod: V1Pod): string {
  return JSON.stringify([
    pod.metadata?.uid,
    pod.spec?.nodeName,
    pod.spec?.hostNetwork,
    pod.status?.phase,
    pod.status?.podIP,
    (pod.status?.podIPs ?? []).map((p) => p.ip),
  ]);
}

/** What of a node its k8s-node entry and its pods' entries read (not heartbeats or conditions). */
export function nodeProjection(node: V1Node): string {
  return JSON.stringify([
    node.metadata?.uid,
    node.metadata?.name,
    (node.status?.addresses ?? []).map((a) => [a.type, a.address]),
    node.spec?.podCIDR,
  ]);
}

/**
 * The keys a change of a pod, node or namespace affects. A node's pods are affected when the
 * node appears, goes, or its InternalIP changes (their `host-ip-address`). Namespaces affect
 * nothing: `network-NS` is the namespace's name, and a namespace's pods go before it does.
 */
export function coeKeysFor(change: ClusterChange, podsOnNode: PodsOnNode): string[] {
  switch (change.kind) {
    case 'pod': {
      const { obj, old } = change;
      if (old && podProjection(old) === podProjection(obj)) return [];
      const ns = obj.metadata?.namespace;
      const name = obj.metadata?.name;
      return ns && name ? [podKey(ns, name)] : [];
    }
    case 'node': {
      const { obj, old } = change;
      if (old && nodeProjection(old) === nodeProjection(obj)) return [];
      const out = new Set<string>();
      const uid = obj.metadata?.uid;
      if (uid) out.add(nodeKey(uid));
      if (old?.metadata?.uid && old.metadata.uid !== uid) out.add(nodeKey(old.metadata.uid));
      const podsMatter = !old || old.metadata?.uid !== uid || nodeInternalIp(old) !== nodeInternalIp(obj);
      const name = obj.metadata?.name;
      if (podsMatter && name) {
        for (const pod of podsOnNode(name)) {
          const ns = pod.metadata?.namespace;
          const podName = pod.metadata?.name;
          if (ns && podName) out.add(podKey(ns, podName));
        }
      }
      return [...out];
    }
    case 'namespace':
      return [];
  }
}
