/**
 * The Interface external_ids odlcoe writes on a pod's OVS port, and how a port is recognised as
 * one odlcoe made: shared by the agent (which writes and reconciles them) and odlcoectl (which
 * checks them), without the agent's CNI machinery.
 */
import type { OvsPort } from './ovs.js';

/**
 * The keys. `iface-id` must equal the ietf-interface name the watcher creates in ODL; Genius
 * binds the port by it.
 */
export const EXTERNAL_ID = {
  ifaceId: 'iface-id',
  attachedMac: 'attached-mac',
  ipAddress: 'ip-address',
  podUid: 'pod-uid',
  containerId: 'container-id',
  /**
   * `<namespace>/<pod>` of a pod port: the iface-id names the namespace only under the netvirt
   * backend (`<namespace>:<pod>`), not under coe-northbound (`<cluster UUID>:<pod>`), nor on
   * an extra interface's port (the watcher's name for the attachment).
   */
  pod: 'odlcoe-pod',
  /**
   * On an extra interface's port only (a Multus attachment): the NetworkAttachmentDefinition
   * `<namespace>/<name>`; with `odlcoe-ifname` and `odlcoe-cni-network` beside it.
   */
  network: 'odlcoe-network',
  /** Extra interface: its name in the pod (CNI_IFNAME, `net1`). */
  ifName: 'odlcoe-ifname',
  /** Extra interface: the CNI network name of the config it was added with (GC is per network). */
  cniNetwork: 'odlcoe-cni-network',
} as const;

/** The `ns:name` iface-id of an OVS port, split; undefined when absent or malformed. */
export function parseIfaceId(value: string | undefined): { namespace: string; name: string } | undefined {
  if (!value) return undefined;
  const colon = value.indexOf(':');
  if (colon <= 0 || colon === value.length - 1) return undefined;
  return { namespace: value.slice(0, colon), name: value.slice(colon + 1) };
}

/**
 * The pod an OVS pod port belongs to: `odlcoe-pod`, or for ports made before the agent recorded
 * it, the `<namespace>:<pod>` iface-id; undefined when neither parses. An extra interface's
 * port is judged by `odlcoe-pod` alone: its iface-id never names the pod.
 */
export function podOfPort(
  externalIds: Readonly<Record<string, string>>,
): { namespace: string; name: string } | undefined {
  const recorded = externalIds[EXTERNAL_ID.pod];
  if (recorded === undefined && externalIds[EXTERNAL_ID.network] !== undefined) return undefined;
  if (recorded !== undefined) {
    const slash = recorded.indexOf('/');
    if (slash <= 0 || slash === recorded.length - 1 || recorded.indexOf('/', slash + 1) >= 0)
      return undefined;
    return { namespace: recorded.slice(0, slash), name: recorded.slice(slash + 1) };
  }
  return parseIfaceId(externalIds[EXTERNAL_ID.ifaceId]);
}

/** Whether this OVS port is a pod attachment odlcoe made (other ports on br-int are never touched). */
export function isPodPort(port: OvsPort): boolean {
  return /^veth[0-9a-f]{8}$/.test(port.name) && Boolean(port.externalIds[EXTERNAL_ID.containerId]);
}

/** Whether this pod port is an extra interface (a Multus attachment), not the pod's `eth0`. */
export function isExtraInterfacePort(port: OvsPort): boolean {
  return isPodPort(port) && port.externalIds[EXTERNAL_ID.network] !== undefined;
}
