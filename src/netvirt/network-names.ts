/**
 * Names of the ODL objects of extra networks (NetworkAttachmentDefinitions) and of the pods'
 * attachments to them. Deterministic, so the agent and a restarted watcher agree without
 * asking anyone, and disjoint from every other name odlcoe makes:
 *
 * - a network's ELAN (and, when routed, its VPN) is `odlcoe-net.<namespace>.<name>`: no `:`,
 *   so never a node × namespace ELAN (`<ip>:<ns>`); it does not start with `odlcoe-gw.`, so
 *   never a node gateway's; its `.` at index 10 makes it neither a namespace VPN (namespaces
 *   have no `.`; a shortened namespace VPN name has its first `.` at index 23) nor
 *   `odlcoe.gateways`. Namespaces have no `.`, so the name reads back to one NAD.
 * - an attachment's ietf-, elan- and vpn-interface (and the OVS `iface-id`) is
 *   `<namespace>:<pod>@<interface>`: the pod's primary interface is `<namespace>:<pod>`, and
 *   neither pod names (DNS-1123 subdomains) nor interface names contain `@`, so the name reads
 *   back to exactly one pod and interface.
 */
import { ModelValidationError } from './errors.js';
import { nameUuidFromBytes } from './names.js';
import { VPN_NAME_MAX } from './vpn.js';

/** What every odlcoe-made network ELAN and VPN name starts with. */
export const NETWORK_PREFIX = 'odlcoe-net.';

/** The ELAN (and VPN) of the NAD `<namespace>/<name>`. */
export function networkInstanceName(namespace: string, name: string): string {
  if (!namespace || namespace.includes('.') || namespace.includes('/') || !name || name.includes('/'))
    throw new ModelValidationError(
      'network',
      `${JSON.stringify(`${namespace}/${name}`)} cannot name a network`,
    );
  return `${NETWORK_PREFIX}${namespace}.${name}`;
}

/** The NAD an ELAN or VPN name is for (undefined: not a network name). */
export function networkOfInstanceName(instance: string): { namespace: string; name: string } | undefined {
  if (!instance.startsWith(NETWORK_PREFIX) || instance.includes(':')) return undefined;
  const rest = instance.slice(NETWORK_PREFIX.length);
  const dot = rest.indexOf('.');
  if (dot <= 0 || dot === rest.length - 1) return undefined;
  return { namespace: rest.slice(0, dot), name: rest.slice(dot + 1) };
}

export const isNetworkInstanceName = (name: string): boolean => networkOfInstanceName(name) !== undefined;

/**
 * The VPN of a routed network: its ELAN's name, which must fit ODL's 40-character `vpn-name`
 * (a NAD whose name does not is refused with this message rather than given a hashed name
 * that would not read back to it).
 */
export function networkVpnName(namespace: string, name: string): string {
  const vpn = networkInstanceName(namespace, name);
  if (vpn.length > VPN_NAME_MAX)
    throw new ModelValidationError(
      'routing "vpn"',
      `the network's VPN name ${vpn} has ${vpn.length} characters, ODL's vpn-name allows ${VPN_NAME_MAX}: shorten the NAD's namespace or name, or use "l2"`,
    );
  return vpn;
}

/** The ODL interface name (and OVS `iface-id`) of a pod's attachment `ifname`. */
export function attachmentInterfaceName(namespace: string, pod: string, ifname: string): string {
  if (!namespace || !pod || !ifname || namespace.includes(':') || pod.includes('@') || ifname.includes('@'))
    throw new ModelValidationError(
      'attachment',
      `${JSON.stringify(`${namespace}/${pod}/${ifname}`)} cannot name an attachment interface`,
    );
  return `${namespace}:${pod}@${ifname}`;
}

/** The pod and interface an attachment interface name is for (undefined: not one). */
export function attachmentOfInterfaceName(
  name: string,
): { namespace: string; pod: string; ifname: string } | undefined {
  const colon = name.indexOf(':');
  const at = name.indexOf('@');
  if (colon <= 0 || at <= colon + 1 || at === name.length - 1 || name.indexOf('@', at + 1) >= 0)
    return undefined;
  return { namespace: name.slice(0, colon), pod: name.slice(colon + 1, at), ifname: name.slice(at + 1) };
}

/** The adjacency `subnet_id` of attachments in one subnet of a network. */
export function networkSubnetId(namespace: string, name: string, cidr: string): string {
  return nameUuidFromBytes(Buffer.from(`odlcoe-net:${namespace}/${name}:${cidr}`, 'utf8'));
}
