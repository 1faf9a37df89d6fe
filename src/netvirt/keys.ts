/**
 * The keys odlcoe's plans are made for, one per ODL identity, so that both directions work: a
 * Kubernetes change names the keys it affects (the watcher's event mapping), and every ODL entry
 * names the key that owns it (which is how garbage collection finds objects whose Kubernetes
 * object is long gone, even across restarts).
 *
 * netvirt backend:
 *
 * | key                   | owns in ODL                                                   |
 * |-----------------------|---------------------------------------------------------------|
 * | `pod/<ns>/<pod>`      | ietf-interface, elan-interface, vpn-interface `<ns>:<pod>`     |
 * | `elan/<ip>:<ns>`      | elan-instance of namespace `<ns>` on the node with InternalIP `<ip>` (node × namespace) |
 * | `vpn/<vpn name>`      | vpn-instance of a namespace (`vpnName(ns)`)                   |
 * | `node/<uid>`          | k8s-node entry of a node (where ODL has the COE models)       |
 * | `node-network/<node>` | dhcp_allocation_pool network `odlcoe-node:<node>` (node subnet) |
 * | `gateway/<node name>` | a node's gateway: ietf-, elan-, vpn-interface and ELAN `odlcoe-gw.<node>`, with its Service routes |
 * | `gateway-vpn`         | the cluster's gateway VPN `odlcoe.gateways`                   |
 * | `service/<ns>/<name>` | nothing: reports about a Service (a ClusterIP outside the service range) |
 * | `network/<ns>/<nad>`  | a NetworkAttachmentDefinition's ELAN and VPN `odlcoe-net.<ns>.<nad>` (network-names.ts) |
 * | `attachment/<ns>/<pod>/<ifname>` | ietf-, elan-, vpn-interface `<ns>:<pod>@<ifname>` of one extra interface |
 * | `network-policy`      | the shared ACLs (allow-all, per node, per peer group) and the sweep of this cluster's ACLs nothing needs (NetworkPolicy enforcement; a pod's bindings are its own key's) |
 * | `acl-policy/<ns>/<name>` | one NetworkPolicy's ACLs (per direction, per named-port resolution) |
 *
 * (The coe-northbound backend's keys: coe/keys.ts; `pod/` and `node/` are spelled alike.)
 */
import type { V1Namespace, V1Node, V1Pod, V1Service } from '@kubernetes/client-node';
import { elanInstanceName, GATEWAY_VPN, nodeOfGatewayName, vpnName } from './names.js';
import { attachmentOfInterfaceName, networkOfInstanceName } from './network-names.js';
import { ATTACHMENTS_ANNOTATION, parseAttachments } from './attachments.js';
import { nodeInternalIp } from './kube.js';
export type NetvirtKey =
  | { kind: 'pod'; namespace: string; name: string }
  | { kind: 'elan'; elanName: string; nodeIp: string; namespace: string }
  | { kind: 'vpn'; vpnName: string }
  | { kind: 'node'; uid: string }
  | { kind: 'node-network'; nodeName: string }
  | { kind: 'gateway'; nodeName: string }
  | { kind: 'gateway-vpn' }
  | { kind: 'service'; namespace: string; name: string }
  | { kind: 'network'; namespace: string; name: string }
  | { kind: 'attachment'; namespace: string; pod: string; ifname: string }
  | { kind: 'network-policy' }
  | { kind: 'acl-policy'; namespace: string; name: string };

export const podKey = (namespace: string, name: string): string => `pod/${namespace}/${name}`;
export const nodeKey = (uid: string): string => `node/${uid}`;
export const nodeNetworkKey = (nodeName: string): string => `node-network/${nodeName}`;
export const elanKey = (elanName: string): string => `elan/${elanName}`;
export const vpnKey = (name: string): string => `vpn/${name}`;
export const gatewayKey = (nodeName: string): string => `gateway/${nodeName}`;
export const GATEWAY_VPN_KEY = 'gateway-vpn';
export const NETWORK_POLICY_KEY = 'network-policy';
export const aclPolicyKey = (namespace: string, name: string): string => `acl-policy/${namespace}/${name}`;
export const serviceKey = (namespace: string, name: string): string => `service/${namespace}/${name}`;
export const networkKey = (namespace: string, name: string): string => `network/${namespace}/${name}`;
export const attachmentKey = (namespace: string, pod: string, ifname: string): string =>
  `attachment/${namespace}/${pod}/${ifname}`;

/** The key owning an interface (or ELAN) name: a node gateway's, an attachment's, else a pod's. */
export function keyOfInterfaceName(name: string): string | undefined {
  const node = nodeOfGatewayName(name);
  if (node !== undefined) return gatewayKey(node);
  const a = attachmentOfInterfaceName(name);
  return a ? attachmentKey(a.namespace, a.pod, a.ifname) : podKeyOfInterface(name);
}

/** The network key owning an ELAN or VPN `odlcoe-net.<ns>.<nad>` (undefined: not such a name). */
export function keyOfNetworkInstance(name: string): string | undefined {
  const n = networkOfInstanceName(name);
  return n ? networkKey(n.namespace, n.name) : undefined;
}

/** The key owning a vpn-instance: the gateway VPN's, a network's, else a namespace VPN's. */
export const keyOfVpnName = (name: string): string =>
  name === GATEWAY_VPN ? GATEWAY_VPN_KEY : (keyOfNetworkInstance(name) ?? vpnKey(name));

/** The pod key that owns an interface name `<ns>:<pod>` (namespaces never contain ':'). */
export function podKeyOfInterface(ifName: string): string | undefined {
  const colon = ifName.indexOf(':');
  if (colon <= 0 || colon === ifName.length - 1) return undefined;
  return podKey(ifName.slice(0, colon), ifName.slice(colon + 1));
}

export function parseNetvirtKey(key: string): NetvirtKey {
  if (key === GATEWAY_VPN_KEY) return { kind: 'gateway-vpn' };
  if (key === NETWORK_POLICY_KEY) return { kind: 'network-policy' };
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
      case 'node-network':
      case 'gateway':
        if (!rest.includes('/')) return { kind, nodeName: rest };
        break;
      case 'service':
      case 'network':
      case 'acl-policy': {
        const [namespace, name, ...more] = rest.split('/');
        if (namespace && name && more.length === 0) return { kind, namespace, name };
        break;
      }
      case 'attachment': {
        const [namespace, pod, ifname, ...more] = rest.split('/');
        if (namespace && pod && ifname && more.length === 0) return { kind, namespace, pod, ifname };
        break;
      }
    }
  }
  throw new Error(`not a netvirt key: ${JSON.stringify(key)}`);
}

/** The attachment keys of the interfaces recorded on a pod (none when the record does not parse). */
export function attachmentKeysOfPod(pod: V1Pod): string[] {
  const ns = pod.metadata?.namespace;
  const name = pod.metadata?.name;
  const value = pod.metadata?.annotations?.[ATTACHMENTS_ANNOTATION];
  if (!ns || !name || value === undefined) return [];
  try {
    return [...parseAttachments(value).keys()].map((ifname) => attachmentKey(ns, name, ifname));
  } catch {
    // The pod key rewrites a record that does not parse; its interfaces are found in ODL.
    return [];
  }
}

/**
 * The keys a pod names: its own, its namespace's VPN, (once its node is known) its ELAN, and
 * its recorded attachments.
 */
export function keysOfPod(pod: V1Pod, node: (name: string) => V1Node | undefined): string[] {
  const ns = pod.metadata?.namespace;
  const name = pod.metadata?.name;
  if (!ns || !name) return [];
  const out = [podKey(ns, name), vpnKey(vpnName(ns)), ...attachmentKeysOfPod(pod)];
  const nodeName = pod.spec?.nodeName;
  const known = nodeName ? node(nodeName) : undefined;
  const ip = known ? nodeInternalIp(known) : undefined;
  if (ip) out.push(elanKey(elanInstanceName(ip, ns)));
  return out;
}

/** Every key the cluster's objects name (not yet those of what ODL holds). */
export function netvirtClusterKeys(cluster: {
  nodes: readonly V1Node[];
  namespaces: readonly V1Namespace[];
  pods: readonly V1Pod[];
  /** Given when Services are routed (service ranges configured): adds the gateway keys. */
  services?: readonly V1Service[];
  /** Given where NADs are known: adds the network keys. */
  networkAttachmentDefinitions?: readonly { metadata?: { namespace?: string; name?: string } }[];
}): string[] {
  const byName = new Map(cluster.nodes.map((n) => [n.metadata?.name ?? '', n]));
  const keys = new Set<string>();
  for (const node of cluster.nodes) {
    if (node.metadata?.uid) keys.add(nodeKey(node.metadata.uid));
    if (node.metadata?.name) keys.add(nodeNetworkKey(node.metadata.name));
  }
  for (const ns of cluster.namespaces) if (ns.metadata?.name) keys.add(vpnKey(vpnName(ns.metadata.name)));
  for (const pod of cluster.pods) for (const key of keysOfPod(pod, (n) => byName.get(n))) keys.add(key);
  for (const nad of cluster.networkAttachmentDefinitions ?? [])
    if (nad.metadata?.namespace && nad.metadata.name) {
      keys.add(networkKey(nad.metadata.namespace, nad.metadata.name));
      // A namespace-routed network needs its namespace's VPN.
      keys.add(vpnKey(vpnName(nad.metadata.namespace)));
    }
  if (cluster.services) {
    keys.add(GATEWAY_VPN_KEY);
    for (const node of cluster.nodes) if (node.metadata?.name) keys.add(gatewayKey(node.metadata.name));
    for (const s of cluster.services)
      if (s.metadata?.namespace && s.metadata.name)
        keys.add(serviceKey(s.metadata.namespace, s.metadata.name));
  }
  return [...keys];
}
