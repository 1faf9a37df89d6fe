/**
 * What the watcher's informer caches keep of each object (the informers' `transform`): the
 * watcher holds every pod and node of the cluster for as long as it runs, and most of what the
 * API server sends is never read by a reconcile. A real pod is 5–15 KB of JSON, most of it
 * `managedFields`, container specs (images, env, probes, resources, mounts), volumes and
 * container statuses; a node carries its image list (often tens of KB) and its conditions.
 *
 * The rule for what stays: every field a translation, a key mapping, a projection
 * (projections.ts, policy-keys.ts) or an index reads. Pods: all of `metadata` but
 * `managedFields` and kubectl's last-applied copy (labels, annotations, uid, deletion and
 * creation timestamps, owner references); `spec.nodeName`, `hostNetwork`, and each container's
 * name and ports (named ports of NetworkPolicies); `status` phase and IPs. Nodes: `metadata`
 * as for pods, all of `spec` (podCIDRs, small), `status.addresses`. Every other kind: the
 * object without `managedFields` and the last-applied copy. A reader that needs another field
 * must add it here, or it reads `undefined`.
 */
import type { KubernetesObject, V1Container, V1Node, V1ObjectMeta, V1Pod } from '@kubernetes/client-node';

/** kubectl's copy of the whole object as last applied: a second object in an annotation. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** `metadata` without `managedFields` and kubectl's last-applied copy (a new object; the input is left as it is). */
function slimMetadata(metadata: V1ObjectMeta | undefined): V1ObjectMeta | undefined {
  if (!metadata) return metadata;
  const { managedFields: _managedFields, annotations, ...rest } = metadata;
  if (annotations === undefined) return rest;
  if (!(LAST_APPLIED_ANNOTATION in annotations)) return { ...rest, annotations };
  const { [LAST_APPLIED_ANNOTATION]: _lastApplied, ...kept } = annotations;
  return { ...rest, annotations: kept };
}

/** Any object: without `managedFields` and kubectl's last-applied copy. */
export function slimObject<T extends KubernetesObject>(obj: T): T {
  const metadata = slimMetadata(obj.metadata);
  return { ...obj, ...(metadata ? { metadata } : {}) };
}

const slimContainer = (c: V1Container): V1Container => ({
  name: c.name,
  ...(c.ports ? { ports: c.ports.map((p) => ({ ...p })) } : {}),
});

/** A pod as the watcher's reconciles read it (see above). */
export function slimPod(pod: V1Pod): V1Pod {
  const { spec, status } = pod;
  const metadata = slimMetadata(pod.metadata);
  return {
    ...(pod.apiVersion !== undefined ? { apiVersion: pod.apiVersion } : {}),
    ...(pod.kind !== undefined ? { kind: pod.kind } : {}),
    ...(metadata ? { metadata } : {}),
    ...(spec
      ? {
          spec: {
            containers: (spec.containers ?? []).map(slimContainer),
            ...(spec.nodeName !== undefined ? { nodeName: spec.nodeName } : {}),
            ...(spec.hostNetwork !== undefined ? { hostNetwork: spec.hostNetwork } : {}),
          },
        }
      : {}),
    ...(status
      ? {
          status: {
            ...(status.phase !== undefined ? { phase: status.phase } : {}),
            ...(status.podIP !== undefined ? { podIP: status.podIP } : {}),
            ...(status.podIPs !== undefined ? { podIPs: status.podIPs.map((p) => ({ ip: p.ip })) } : {}),
            ...(status.hostIP !== undefined ? { hostIP: status.hostIP } : {}),
          },
        }
      : {}),
  };
}

/** A node as the watcher's reconciles read it (see above). */
export function slimNode(node: V1Node): V1Node {
  const metadata = slimMetadata(node.metadata);
  const addresses = node.status?.addresses;
  return {
    ...(node.apiVersion !== undefined ? { apiVersion: node.apiVersion } : {}),
    ...(node.kind !== undefined ? { kind: node.kind } : {}),
    ...(metadata ? { metadata } : {}),
    ...(node.spec ? { spec: node.spec } : {}),
    ...(node.status
      ? {
          status: addresses
            ? { addresses: addresses.map((a) => ({ type: a.type, address: a.address })) }
            : {},
        }
      : {}),
  };
}
