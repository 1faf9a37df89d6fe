/**
 * The start-up reconcile: what kubelet deleted while the agent was away (ports, veths, leases
 * of pods no longer on this node) is removed before ADDs are served, since no DEL will ever come
 * for it. Decided by a pure plan (planReconcile) from the bridge, the leases and the synced pod
 * informer, so that the rule "anything in doubt stays" is tested without OVS.
 */
import type { V1Pod } from '@kubernetes/client-node';
import ipaddr from 'ipaddr.js';
import type { Logger } from '../common/log.js';
import { errorMessage } from '../common/log.js';
import { kubeletPodUid } from '../k8s/pod-uid.js';
import { EXTERNAL_ID, isPodPort, podOfPort } from '../ovs/external-ids.js';
import type { Ovs, OvsPort } from '../ovs/ovs.js';
import type { IpamLease } from './ipam.js';
import type { AgentMetrics } from './metrics.js';
import type { IpamState, PodAttacher } from './pod-attach.js';

/** A pod on this node as the informer sees it. */
export interface LivePod {
  uid: string;
  ips: string[];
}

/** `ns/name` → the live pod; host-network pods are left out (they never get a port). */
export function livePods(pods: readonly V1Pod[]): Map<string, LivePod> {
  const out = new Map<string, LivePod>();
  for (const pod of pods) {
    const ns = pod.metadata?.namespace;
    const name = pod.metadata?.name;
    if (!ns || !name || pod.spec?.hostNetwork) continue;
    const ips = new Set<string>();
    for (const entry of pod.status?.podIPs ?? []) if (entry.ip) ips.add(normalIp(entry.ip));
    if (pod.status?.podIP) ips.add(normalIp(pod.status.podIP));
    out.set(`${ns}/${name}`, { uid: kubeletPodUid(pod) ?? '', ips: [...ips] });
  }
  return out;
}

function normalIp(ip: string): string {
  return ipaddr.isValid(ip) ? ipaddr.parse(ip).toString() : ip;
}

export interface ReconcilePlan {
  stalePorts: OvsPort[];
  staleLeases: IpamLease[];
}

/**
 * What to remove after a restart, decided from the bridge, the leases and the synced pod
 * informer. A port goes only when its pod (by iface-id) is gone from this node, or the pod
 * under that name has another UID than the port records. Anything in doubt stays: ports
 * without a parsable iface-id, pods without a recorded UID. A lease goes only when no
 * remaining port and no live pod holds its address, and its container has no remaining port.
 */
export function planReconcile(
  ports: readonly OvsPort[],
  leases: readonly IpamLease[],
  pods: ReadonlyMap<string, LivePod>,
): ReconcilePlan {
  const stalePorts: OvsPort[] = [];
  const keptPorts: OvsPort[] = [];
  for (const port of ports) {
    if (!isPodPort(port)) {
      keptPorts.push(port);
      continue;
    }
    const ref = podOfPort(port.externalIds);
    if (!ref) {
      keptPorts.push(port);
      continue;
    }
    const pod = pods.get(`${ref.namespace}/${ref.name}`);
    const portUid = port.externalIds[EXTERNAL_ID.podUid];
    const stale = !pod || (portUid !== undefined && pod.uid !== '' && pod.uid !== portUid);
    (stale ? stalePorts : keptPorts).push(port);
  }
  const heldIps = new Set<string>();
  const heldContainers = new Set<string>();
  for (const port of keptPorts) {
    for (const ip of (port.externalIds[EXTERNAL_ID.ipAddress] ?? '').split(','))
      if (ip) heldIps.add(normalIp(ip));
    const cid = port.externalIds[EXTERNAL_ID.containerId];
    if (cid) heldContainers.add(cid);
  }
  for (const pod of pods.values()) for (const ip of pod.ips) heldIps.add(ip);
  const removedContainers = new Set(stalePorts.map((p) => p.externalIds[EXTERNAL_ID.containerId]));
  const staleLeases = leases.filter(
    (l) =>
      l.ifName !== '' &&
      !heldIps.has(normalIp(l.ip)) &&
      !heldContainers.has(l.containerId) &&
      !removedContainers.has(l.containerId),
  );
  return { stalePorts, staleLeases };
}

export interface ReconcileOptions {
  ovs: Ovs;
  bridge: string;
  attacher: PodAttacher;
  ipamState: () => IpamState | undefined;
  pods: readonly V1Pod[];
  metrics: AgentMetrics;
  logger: Logger;
}

/**
 * The start-up reconcile. Must run only once the pod informer has synced: before that an
 * empty cache would make every pod look deleted. Failures on one attachment are logged and
 * the rest still processed; returns what was removed. Leases can only be released through
 * the IPAM of a known subnet: without one they are not looked at (`leasesChecked` false) and
 * the caller runs it again once the subnet is known.
 */
export async function reconcileNodeAttachments(
  o: ReconcileOptions,
): Promise<{ ports: number; leases: number; failures: number; leasesChecked: boolean }> {
  const state = o.ipamState();
  const ports = await o.metrics.count(o.metrics.ovsErrors, 'list_ports', () => o.ovs.listPorts(o.bridge));
  const leases = state ? await o.metrics.count(o.metrics.ipamErrors, 'list', () => state.ipam.leases()) : [];
  const plan = planReconcile(ports, leases, livePods(o.pods));
  let failures = 0;
  for (const port of plan.stalePorts) {
    try {
      o.logger.info('reconcile: removing attachment of a pod no longer on this node', {
        port: port.name,
        pod: port.externalIds[EXTERNAL_ID.ifaceId],
        containerId: port.externalIds[EXTERNAL_ID.containerId],
      });
      await o.attacher.removePort(port);
    } catch (err) {
      failures += 1;
      o.logger.error('reconcile: could not remove attachment', { port: port.name, error: errorMessage(err) });
    }
  }
  for (const lease of plan.staleLeases) {
    if (!state) break;
    try {
      o.logger.info('reconcile: releasing lease held by no pod and no port', {
        ip: lease.ip,
        containerId: lease.containerId,
      });
      await o.metrics.count(o.metrics.ipamErrors, 'del', () =>
        state.ipam.del({ containerId: lease.containerId, ifName: lease.ifName }),
      );
      o.metrics.reconcileRemoved.inc({ kind: 'lease' });
    } catch (err) {
      failures += 1;
      o.logger.error('reconcile: could not release lease', { ip: lease.ip, error: errorMessage(err) });
    }
  }
  return {
    ports: plan.stalePorts.length,
    leases: plan.staleLeases.length,
    failures,
    leasesChecked: state !== undefined,
  };
}
