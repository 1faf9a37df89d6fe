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
import type { V1EndpointSlice, V1Pod, V1Service } from '@kubernetes/client-node';
import { nodeInternalIp } from '../../netvirt/index.js';
import type { ClusterChange } from '../backend.js';
import { nodeKey, podKey } from '../object-keys.js';
import { nodeProjection, podProjection } from '../projections.js';
import { sliceServiceName } from './translate.js';

export type CoeKey =
  | { kind: 'pod'; namespace: string; name: string }
  | { kind: 'node'; uid: string }
  | { kind: 'service'; namespace: string; name: string }
  | { kind: 'pod-uid'; uid: string }
  | { kind: 'service-uid'; uid: string };

export { nodeKey, podKey };
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

/** What of a Service its translation reads; status heartbeats and label edits change nothing. */
export function serviceProjection(s: V1Service): string {
  return JSON.stringify([
    s.metadata?.uid,
    s.spec?.clusterIP,
    s.spec?.externalIPs,
    s.spec?.loadBalancerIP,
    (s.spec?.ports ?? []).map((p) => [p.name, p.port, p.targetPort, p.nodePort]),
    (s.status?.loadBalancer?.ingress ?? []).map((i) => i.ip),
  ]);
}

/** What of an EndpointSlice the endpoints translation reads. */
export function sliceProjection(s: V1EndpointSlice): string {
  return JSON.stringify([
    sliceServiceName(s),
    s.addressType,
    (s.endpoints ?? []).map((e) => [e.addresses, e.conditions?.ready, e.hostname, e.nodeName]),
    (s.ports ?? []).map((p) => [p.name, p.port]),
  ]);
}

/** The key of the Service a slice belongs to (by its `kubernetes.io/service-name` label). */
function sliceServiceKey(slice: V1EndpointSlice | undefined): string | undefined {
  const namespace = slice?.metadata?.namespace;
  const service = slice && sliceServiceName(slice);
  return namespace && service ? serviceKey(namespace, service) : undefined;
}

/**
 * The keys a change affects. A node's pods are affected when the node appears, goes, or its
 * InternalIP changes (their `host-ip-address`). Namespaces affect nothing: `network-NS` is the
 * namespace's name, and a namespace's pods go before it does. A Service's key covers its
 * endpoints entry too, so a slice change names the key of the Service it belongs to (and of
 * the one it belonged to, should its label have changed).
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
    case 'service': {
      const { obj, old } = change;
      if (old && serviceProjection(old) === serviceProjection(obj)) return [];
      const ns = obj.metadata?.namespace;
      const name = obj.metadata?.name;
      return ns && name ? [serviceKey(ns, name)] : [];
    }
    case 'endpointslice': {
      const { obj, old } = change;
      if (old && sliceProjection(old) === sliceProjection(obj)) return [];
      const keys = new Set([sliceServiceKey(obj), sliceServiceKey(old)]);
      return [...keys].filter((k): k is string => k !== undefined);
    }
  }
}
