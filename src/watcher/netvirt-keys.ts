/**
 * The pure mapping from Kubernetes changes to the netvirt backend's keys (src/netvirt/keys.ts
 * says what each key owns). Runs inside informer handlers: reads only the lookup, never ODL.
 */
import type { V1Namespace, V1Node, V1Pod } from '@kubernetes/client-node';
import { elanKey, keysOfPod, networkKey, nodeKey, nodeNetworkKey, podKey, vpnKey } from '../netvirt/keys.js';
import type { NetworkAttachmentDefinition } from '../netvirt/network-config.js';
import { NETWORKS_ANNOTATION, parseNetworkSelection } from '../netvirt/network-selection.js';
import { nodeInternalIp } from '../netvirt/kube.js';
import { elanInstanceName, vpnName } from '../netvirt/names.js';
import type { ClusterChange } from './cluster-view.js';
import { nodeProjection, podProjection } from './projections.js';

/** What the mapping needs to know besides the changed object. */
export interface KeyLookup {
  /** A node by name, from the node cache. */
  node(name: string): V1Node | undefined;
  /** Pods on a node (`namespace/name`), from the cluster view's index. */
  podsOnNode(nodeName: string): Iterable<V1Pod>;
  /** Pods of a namespace, from the cluster view's index. */
  podsInNamespace(namespace: string): Iterable<V1Pod>;
  /** Pods whose network selection names the NAD `<ns>/<name>`. */
  podsSelecting(network: string): Iterable<V1Pod>;
}

/**
 * A pod change: the pod itself, its namespace VPN and its node × namespace ELAN (which need it,
 * or may no longer), for the old and the new state.
 */
function podKeys(pod: V1Pod | undefined, lookup: KeyLookup, out: Set<string>): void {
  if (pod) for (const key of keysOfPod(pod, (name) => lookup.node(name))) out.add(key);
}

/**
 * A node change: its k8s-node entry and its network, and when its name, InternalIP or pod
 * subnet changed (or it came or went), every pod on it and the ELANs named after its old and
 * new address.
 */
function nodeKeys(node: V1Node, old: V1Node | undefined, lookup: KeyLookup, out: Set<string>): void {
  const uid = node.metadata?.uid;
  if (uid) out.add(nodeKey(uid));
  if (old?.metadata?.uid && old.metadata.uid !== uid) out.add(nodeKey(old.metadata.uid));
  const name = node.metadata?.name;
  if (!name) return;
  out.add(nodeNetworkKey(name));
  const ips = new Set([nodeInternalIp(node), old && nodeInternalIp(old)].filter((x): x is string => !!x));
  const podsMatter =
    !old ||
    old.metadata?.uid !== uid ||
    nodeInternalIp(old) !== nodeInternalIp(node) ||
    old.spec?.podCIDR !== node.spec?.podCIDR;
  if (!podsMatter) return;
  for (const pod of lookup.podsOnNode(name)) {
    const ns = pod.metadata?.namespace;
    const podName = pod.metadata?.name;
    if (!ns || !podName) continue;
    out.add(podKey(ns, podName));
    for (const ip of ips) out.add(elanKey(elanInstanceName(ip, ns)));
  }
}

/** A namespace change: its VPN, and its pods (their translation waits for the namespace). */
function namespaceKeys(
  namespace: V1Namespace,
  old: V1Namespace | undefined,
  lookup: KeyLookup,
  out: Set<string>,
): void {
  const name = namespace.metadata?.name;
  if (!name) return;
  out.add(vpnKey(vpnName(name)));
  // Only a namespace's identity matters to translation (its uid is in markers), not its labels.
  if (old && old.metadata?.uid === namespace.metadata?.uid) return;
  for (const pod of lookup.podsInNamespace(name)) {
    podKeys(pod, lookup, out);
  }
}

/** The networks a pod selects (`<ns>/<name>`; none when its selection does not parse). */
export function networksOfPod(pod: V1Pod): string[] {
  const value = pod.metadata?.annotations?.[NETWORKS_ANNOTATION];
  const ns = pod.metadata?.namespace;
  if (value === undefined || !ns) return [];
  try {
    return parseNetworkSelection(value, ns).map((s) => `${s.namespace}/${s.name}`);
  } catch {
    return [];
  }
}

/**
 * A NAD change: its network, its namespace's VPN, and the pods that select it (their allocations follow its subnets
 * and routes, and a NAD appearing or going turns their records into allocations or refusals).
 */
function networkKeys(nad: NetworkAttachmentDefinition, lookup: KeyLookup, out: Set<string>): void {
  const ns = nad.metadata?.namespace;
  const name = nad.metadata?.name;
  if (!ns || !name) return;
  out.add(networkKey(ns, name));
  // A network routed through its namespace's VPN needs that VPN (or, gone, no longer does).
  out.add(vpnKey(vpnName(ns)));
  const ref = `${ns}/${name}`;
  for (const pod of lookup.podsSelecting(ref)) podKeys(pod, lookup, out);
}

/** The keys a change affects, for the netvirt backend. */
export function netvirtKeysFor(change: ClusterChange, lookup: KeyLookup): string[] {
  const out = new Set<string>();
  switch (change.kind) {
    case 'pod':
      if (change.old && podProjection(change.old) === podProjection(change.obj)) break;
      podKeys(change.obj, lookup, out);
      // A pod's node or namespace never changes, but its eligibility does; the old state
      // names the same keys but for attachments it no longer has (or a different node).
      if (change.old) podKeys(change.old, lookup, out);
      break;
    case 'node':
      // Kubelets rewrite node status every few seconds (heartbeats, conditions): ignore those.
      if (change.old && nodeProjection(change.old) === nodeProjection(change.obj)) break;
      nodeKeys(change.obj, change.old, lookup, out);
      break;
    case 'namespace':
      namespaceKeys(change.obj, change.old, lookup, out);
      break;
    case 'network':
      if (change.old && change.old.spec?.config === change.obj.spec?.config) break;
      networkKeys(change.obj, lookup, out);
      break;
    case 'service':
    case 'endpointslice':
      // Not watched for this backend (it declares no optional resources).
      break;
  }
  return [...out];
}
