/**
 * What odlcoe reads from Kubernetes objects: which pods are on the pod network, which address
 * of a pod or node counts. Shared by the watcher (translation) and the node agent (which must
 * pick the same node IP the watcher put into ELAN names and k8s-node entries).
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { isIP } from 'node:net';
import { canonicalIp } from './names.js';

export type IpFamily = 'ipv4' | 'ipv6';

function familyOf(ip: string): IpFamily | undefined {
  const f = isIP(ip);
  return f === 4 ? 'ipv4' : f === 6 ? 'ipv6' : undefined;
}

/** The first valid address in `families` order (family preference first, then list order). */
function pick(addresses: readonly string[], families: readonly IpFamily[]): string | undefined {
  for (const family of families) {
    const found = addresses.find((a) => familyOf(a) === family);
    if (found !== undefined) return canonicalIp(found);
  }
  return undefined;
}

function nodeAddresses(node: V1Node, type: string): string[] {
  return (node.status?.addresses ?? []).filter((a) => a.type === type).map((a) => a.address);
}

/**
 * The node IP that names its ELANs and goes into its k8s-node entry: the first IPv4 InternalIP,
 * else the first IPv6 one. A node lists at most one per family, so this is stable.
 */
export function nodeInternalIp(node: V1Node): string | undefined {
  return pick(nodeAddresses(node, 'InternalIP'), ['ipv4', 'ipv6']);
}

export function nodeExternalIp(node: V1Node): string | undefined {
  return pick(nodeAddresses(node, 'ExternalIP'), ['ipv4', 'ipv6']);
}

export function nodeHostName(node: V1Node): string | undefined {
  return nodeAddresses(node, 'Hostname')[0] ?? node.metadata?.name;
}

/**
 * Whether a pod is on the pod network now, and why not. A pod is on it once scheduled
 * (`spec.nodeName`: before that it has no node, hence no ELAN), unless it uses the host's
 * network, and until it has finished (Succeeded/Failed: its sandbox is torn down, and a
 * finished pod object may linger for a long time, its IP already reused by another pod).
 *
 * A pod with a `deletionTimestamp` stays on the network: during its grace period its containers
 * still run (preStop hooks, connection draining), and Services keep terminating endpoints
 * reachable; its network goes when the pod object goes or turns terminal.
 */
export function podNetworkEligibility(
  pod: V1Pod,
): { onNetwork: true } | { onNetwork: false; reason: string } {
  if (pod.spec?.hostNetwork === true) return { onNetwork: false, reason: 'uses the host network' };
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return { onNetwork: false, reason: `finished (${phase})` };
  if (!pod.spec?.nodeName) return { onNetwork: false, reason: 'not scheduled yet' };
  return { onNetwork: true };
}

/**
 * The address odlcoe routes for a pod: from `status.podIPs` (falling back to `status.podIP`),
 * the first address of the first family in `families` that the pod has. With the default
 * `['ipv4']` a dual-stack pod is routed by its IPv4 address; dual-stack routing (two
 * adjacencies) is future work.
 */
export function podAddress(pod: V1Pod, families: readonly IpFamily[]): string | undefined {
  const listed = (pod.status?.podIPs ?? [])
    .map((p) => p.ip)
    .filter((ip): ip is string => typeof ip === 'string' && ip !== '');
  const all = listed.length > 0 ? listed : pod.status?.podIP ? [pod.status.podIP] : [];
  return pick(all, families);
}

/** Whether a pod has any address at all (to tell "no IP yet" from "no IP of a routed family"). */
export function podHasAnyAddress(pod: V1Pod): boolean {
  return (pod.status?.podIPs ?? []).some((p) => isIP(p.ip) !== 0) || isIP(pod.status?.podIP ?? '') !== 0;
}
