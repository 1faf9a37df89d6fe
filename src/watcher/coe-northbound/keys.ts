/**
 * The pure mapping from Kubernetes changes to the coe-northbound backend's keys
 * (src/netvirt/coe/keys.ts says what each key owns). Runs inside informer handlers.
 */
import type { V1EndpointSlice, V1Pod, V1Service } from '@kubernetes/client-node';
import { nodeKey, podKey, serviceKey } from '../../netvirt/coe/keys.js';
import { sliceServiceName } from '../../netvirt/coe/translate.js';
import { nodeInternalIp } from '../../netvirt/kube.js';
import type { ClusterChange } from '../cluster-view.js';
import { nodeProjection, podProjection } from '../projections.js';

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
 * The keys a change affects. A pod's key, and those of the pods of its name in other namespaces
 * (only one of them may be on the network, coe/plan.ts `podNameHolder`). A node's pods are affected when the node appears, goes, or its
 * InternalIP changes (their `host-ip-address`). Namespaces affect nothing: `network-NS` is the
 * namespace's name, and a namespace's pods go before it does. A Service's key covers its
 * endpoints entry too, so a slice change names the key of the Service it belongs to (and of
 * the one it belonged to, should its label have changed).
 */
export function coeKeysFor(
  change: ClusterChange,
  podsOnNode: PodsOnNode,
  podsNamed: (name: string) => Iterable<V1Pod> = () => [],
): string[] {
  switch (change.kind) {
    case 'pod': {
      const { obj, old } = change;
      if (old && podProjection(old) === podProjection(obj)) return [];
      const ns = obj.metadata?.namespace;
      const name = obj.metadata?.name;
      if (!ns || !name) return [];
      // Pods of the same name elsewhere: which one holds the name may have changed.
      const others = [...podsNamed(name)]
        .map((p) => p.metadata?.namespace)
        .filter((o): o is string => o !== undefined && o !== ns)
        .map((o) => podKey(o, name));
      return [podKey(ns, name), ...others];
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
    case 'networkpolicy':
      // Sodium's COE renderer enforced no policy (netvirt-features.md §3.2): not watched here.
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
