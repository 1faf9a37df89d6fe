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
   * backend (`<namespace>:<pod>`), not under coe-northbound (`<cluster UUID>:<pod>`).
   */
  pod: 'odlcoe-pod',
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
 * it, the `<namespace>:<pod>` iface-id; undefined when neither parses.
 */
export function podOfPort(
  externalIds: Readonly<Record<string, string>>,
): { namespace: string; name: string } | undefined {
  const recorded = externalIds[EXTERNAL_ID.pod];
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
