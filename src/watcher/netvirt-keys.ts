/**
 * Keys of the netvirt backend, and the pure mapping from Kubernetes changes to keys.
 *
 * One key per ODL identity, so that both directions work: a Kubernetes change names the keys
 * it affects, and every ODL entry names the key that owns it (which is how garbage collection
 * finds objects whose Kubernetes object is long gone, even across restarts):
 *
 * | key                   | owns in ODL                                                   |
 * |-----------------------|---------------------------------------------------------------|
 * | `pod/<ns>/<pod>`      | ietf-interface, elan-interface, vpn-interface `<ns>:<pod>`     |
 * | `elan/<ip>:<ns>`      | elan-instance of namespace `<ns>` on the node with InternalIP `<ip>` (node × namespace) |
 * | `vpn/<vpn name>`      | vpn-instance of a namespace (`vpnName(ns)`)                   |
 * | `node/<uid>`          | k8s-node entry of a node                                      |
 */
import type { V1Namespace, V1Node, V1Pod } from '@kubernetes/client-node';
import { elanInstanceName, nodeInternalIp, vpnName } from '../netvirt/index.js';
import type { ClusterChange } from './backend.js';
import { nodeKey, podKey } from './object-keys.js';
import { nodeProjection, podProjection } from './projections.js';

export type NetvirtKey =
  | { kind: 'pod'; namespace: string; name: string }
  | { kind: 'elan'; elanName: string; nodeIp: string; namespace: string }
  | { kind: 'vpn'; vpnName: string }
  | { kind: 'node'; uid: string };

export { nodeKey, podKey };
export const elanKey = (elanName: string): string => `elan/${elanName}`;
export const vpnKey = (name: string): string => `vpn/${name}`;

/** The pod key that owns an interface name `<ns>:<pod>` (namespaces never contain ':'). */
export function podKeyOfInterface(ifName: string): string | undefined {
  const colon = ifName.indexOf(':');
  if (colon <= 0 || colon === ifName.length - 1) return undefined;
  return podKey(ifName.slice(0, colon), ifName.slice(colon + 1));
}

export function parseNetvirtKey(key: string): NetvirtKey {
  const slash = key.indexOf('/');
  const kind = key.slice(0, slash);
  const rest = key.slice(slash + 1);
  if (slash > 0 && rest !== '') {
    switch (kind) {
      case 'pod': {
        const [namespace, name, ...more] = rest.split('/');
        if (namespace && name && more.length === 0) return { kind, namespace, name };
        break;
      }
      case 'elan': {
        // The namespace is after the last ':' (IPv6 node addresses contain colons, names do not).
        const colon = rest.lastIndexOf(':');
        if (colon > 0 && colon < rest.length - 1)
          return { kind, elanName: rest, nodeIp: rest.slice(0, colon), namespace: rest.slice(colon + 1) };
        break;
      }
      case 'vpn':
        return { kind, vpnName: rest };
      case 'node':
        return { kind, uid: rest };
    }
  }
  throw new Error(`not a netvirt key: ${JSON.stringify(key)}`);
}

/** What the mapping needs to know besides the changed object. */
export interface KeyLookup {
  /** A node by name, from the node cache. */
  node(name: string): V1Node | undefined;
  /** Pods on a node (`namespace/name`), from the cluster view's index. */
  podsOnNode(nodeName: string): Iterable<V1Pod>;
  /** Pods of a namespace, from the cluster view's index. */
  podsInNamespace(namespace: string): Iterable<V1Pod>;
}

/**
 * A pod change: the pod itself, its namespace VPN and its node × namespace ELAN (which need it,
 * or may no longer), for the old and the new state.
 */
function podKeys(pod: V1Pod | undefined, lookup: KeyLookup, out: Set<string>): void {
  const ns = pod?.metadata?.namespace;
  const name = pod?.metadata?.name;
  if (!pod || !ns || !name) return;
  out.add(podKey(ns, name));
  out.add(vpnKey(vpnName(ns)));
  const ip = nodeIpOf(pod.spec?.nodeName, lookup);
  if (ip) out.add(elanKey(elanInstanceName(ip, ns)));
}

function nodeIpOf(nodeName: string | undefined, lookup: KeyLookup): string | undefined {
  if (!nodeName) return undefined;
  const node = lookup.node(nodeName);
  return node ? nodeInternalIp(node) : undefined;
}

/**
 * A node change: its k8s-node entry, and when its name, InternalIP or pod subnet changed (or it
 * came or went), every pod on it and the ELANs named after its old and new address.
 */
function nodeKeys(node: V1Node, old: V1Node | undefined, lookup: KeyLookup, out: Set<string>): void {
  const uid = node.metadata?.uid;
  if (uid) out.add(nodeKey(uid));
  if (old?.metadata?.uid && old.metadata.uid !== uid) out.add(nodeKey(old.metadata.uid));
  const name = node.metadata?.name;
  if (!name) return;
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

/** The keys a change affects, for the netvirt backend. */
export function netvirtKeysFor(change: ClusterChange, lookup: KeyLookup): string[] {
  const out = new Set<string>();
  switch (change.kind) {
    case 'pod':
      if (change.old && podProjection(change.old) === podProjection(change.obj)) break;
      podKeys(change.obj, lookup, out);
      // A pod's node or namespace never changes, but its eligibility does; the old state
      // names the same keys, so it is only consulted when the node differs (defensive).
      if (change.old && change.old.spec?.nodeName !== change.obj.spec?.nodeName)
        podKeys(change.old, lookup, out);
      break;
    case 'node':
      // Kubelets rewrite node status every few seconds (heartbeats, conditions): ignore those.
      if (change.old && nodeProjection(change.old) === nodeProjection(change.obj)) break;
      nodeKeys(change.obj, change.old, lookup, out);
      break;
    case 'namespace':
      namespaceKeys(change.obj, change.old, lookup, out);
      break;
    case 'service':
    case 'endpointslice':
      // Not watched for this backend (it declares no optional resources).
      break;
  }
  return [...out];
}
