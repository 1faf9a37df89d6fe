/**
 * Looking at the data path of the simulated nodes: pings between real pods (network
 * namespaces wired by the agent) and the OVS ports the agent made for them.
 *
 * Only pods on the same node are pinged. Their traffic crosses the node's br-int, where
 * netvirt-l3.ts stands in for NetVirt's L3 hop (the pods send everything to the subnet
 * gateway), so that works whatever their namespace, as under NetVirt. Across nodes, NetVirt
 * carries traffic in VXLAN tunnels through flows ODL programs into every br-int; the emulator
 * programs no flows, and the simulated nodes have no underlay between them, so a ping across
 * nodes cannot work here and is not attempted.
 */
import { CommandError } from '../common/exec.js';
import { Ovs, type OvsPort } from '../ovs/ovs.js';
import { execInNetns } from './netns.js';
import type { ExtraInterface, PodSandbox } from './pod-runtime.js';

export interface PingResult {
  node: string;
  from: { pod: string; ip: string };
  to: { pod: string; ip: string };
  ok: boolean;
  /** Round-trip time of the answered ping. */
  rttMs?: number;
  error?: string;
}

const podName = (s: PodSandbox) => `${s.pod.namespace}/${s.pod.name}`;

/** One ping from a pod's namespace; a few tries, as the first ARP may race the bridge. */
export async function ping(
  from: PodSandbox,
  toIp: string,
  attempts = 3,
): Promise<{ ok: boolean; rttMs?: number; error?: string }> {
  if (!from.netns) return { ok: false, error: `${podName(from)} has no network namespace` };
  return pingFrom(from.netns.path, toIp, attempts);
}

/** One ping from a sandbox network namespace (a pod's, or a simulated node's host side). */
export async function pingFrom(
  netnsPath: string,
  toIp: string,
  attempts = 3,
): Promise<{ ok: boolean; rttMs?: number; error?: string }> {
  let error = '';
  for (let i = 0; i < attempts; i += 1) {
    try {
      const out = await execInNetns(netnsPath, 'ping', ['-c', '1', '-W', '2', '-n', toIp], 10_000);
      const rtt = /time=([\d.]+) ms/.exec(out)?.[1];
      return { ok: true, ...(rtt ? { rttMs: Number(rtt) } : {}) };
    } catch (err) {
      error =
        err instanceof CommandError
          ? (err.stdout.split('\n').find((l) => /loss|unreachable/i.test(l)) ?? err.message)
          : String(err);
    }
  }
  return { ok: false, error: error.trim() };
}

/** A pod with a data path, as the pair functions see it. */
export interface WiredPod {
  pod: string;
  ip: string;
  netns: { name: string; path: string };
  sandbox: PodSandbox;
}

/** The node's first pod (by name) with every other pod of the node: what is tried between pods. */
export function podPairsWithinNode(sandboxes: readonly PodSandbox[]): [WiredPod, WiredPod][] {
  const wired = sandboxes.flatMap((s): WiredPod[] =>
    s.netns && s.ips[0] ? [{ pod: podName(s), ip: s.ips[0], netns: s.netns, sandbox: s }] : [],
  );
  const [first, ...others] = wired;
  return first ? others.map((to): [WiredPod, WiredPod] => [first, to]) : [];
}

/** What was tried from one pod to another of the same node, and how it went. */
export type PairResult<T> = {
  node: string;
  from: { pod: string; ip: string };
  to: { pod: string; ip: string };
} & T;

/** `probe` from the node's first pod (by name) to every other pod of the node, one at a time. */
export async function withinNode<T extends object>(
  node: string,
  sandboxes: readonly PodSandbox[],
  probe: (from: WiredPod, to: WiredPod) => Promise<T>,
): Promise<PairResult<T>[]> {
  const results: PairResult<T>[] = [];
  for (const [from, to] of podPairsWithinNode(sandboxes)) {
    const outcome = await probe(from, to);
    results.push({ node, from: { pod: from.pod, ip: from.ip }, to: { pod: to.pod, ip: to.ip }, ...outcome });
  }
  return results;
}

/** From the node's first pod (by name) to every other pod of the node. */
export function pingWithinNode(node: string, sandboxes: readonly PodSandbox[]): Promise<PingResult[]> {
  return withinNode(node, sandboxes, (from, to) => ping(from.sandbox, to.ip));
}

/** A ping over an extra interface (a Multus attachment): which network and interface. */
export interface ExtraPingResult extends PingResult {
  network: string;
  ifName: string;
}

/** The first address of an extra interface's ADD result, bare. */
function extraIp(x: ExtraInterface): string | undefined {
  const ips = (x.result.ips ?? []) as { address?: string }[];
  return ips[0]?.address?.split('/')[0];
}

/**
 * Over each extra network of the node's pods: from its first pod (by name) on that network to
 * every other, through their extra interfaces (the address of the target's interface on it).
 */
export async function pingExtraWithinNode(
  node: string,
  sandboxes: readonly PodSandbox[],
): Promise<ExtraPingResult[]> {
  const byNetwork = new Map<string, { sandbox: PodSandbox; x: ExtraInterface; ip: string }[]>();
  for (const sandbox of [...sandboxes].sort((a, b) => podName(a).localeCompare(podName(b))))
    for (const x of sandbox.extra ?? []) {
      const ip = extraIp(x);
      const network = typeof x.config.name === 'string' ? x.config.name : '?';
      if (ip) byNetwork.set(network, [...(byNetwork.get(network) ?? []), { sandbox, x, ip }]);
    }
  const out: ExtraPingResult[] = [];
  for (const [network, [first, ...others]] of byNetwork)
    for (const to of first ? others : []) {
      const r = await ping(first!.sandbox, to.ip);
      out.push({
        node,
        network,
        ifName: first!.x.ifName,
        from: { pod: podName(first!.sandbox), ip: first!.ip },
        to: { pod: podName(to.sandbox), ip: to.ip },
        ...r,
      });
    }
  return out;
}

/**
 * From the node's host side (its network namespace, where the agent made the gateway port and
 * its routes) to every pod of the node: what kubelet's probes need. `from.ip` is the gateway's.
 */
export async function pingFromHost(
  node: { name: string; netnsPath: string; gatewayIp: string },
  sandboxes: readonly PodSandbox[],
): Promise<PingResult[]> {
  const results: PingResult[] = [];
  for (const s of sandboxes) {
    const ip = s.ips[0];
    if (!s.netns || !ip) continue;
    const outcome = await pingFrom(node.netnsPath, ip);
    results.push({
      node: node.name,
      from: { pod: `${node.name} (host)`, ip: node.gatewayIp },
      to: { pod: podName(s), ip },
      ...outcome,
    });
  }
  return results.sort((a, b) => a.to.pod.localeCompare(b.to.pod));
}

/** The ports of the node's bridge with their external_ids (what the agent set). */
export function bridgePorts(dbSocket: string, bridge: string): Promise<OvsPort[]> {
  return new Ovs({ dbSocket, timeoutSeconds: 10 }).listPorts(bridge);
}
