/**
 * An odlcoe network (NetworkAttachmentDefinition) and a pod's attachment to it → their ODL
 * objects, as pure functions (docs/networks.md has the design):
 *
 * - the network: one cluster-wide ELAN `odlcoe-net.<ns>.<name>` (VXLAN: ELAN manager tunnels
 *   it between every switch with a member, keyed by the `elan-tag` it allocates, so no VNI
 *   allocator is needed) and, when routed `vpn`, a VPN of the same name whose only route target
 *   is its own RD (it imports and exports nothing of any other VPN: the network stays isolated
 *   from the pod network and from other networks). Routed `namespace`, it has no VPN of its
 *   own: its attachments join the namespace's VPN (`vpnName(ns)`), which the `vpn/` key owns.
 *   A network on an ELAN an ODL user made has neither: the attachments join that ELAN, which
 *   odlcoe never writes.
 * - an attachment: ietf-interface, elan-interface with the static MAC entry, and on a routed
 *   network a vpn-interface with one primary adjacency per address, the subnet's gateway as
 *   `subnet_gateway_ip` (ODL answers ARP for it), all named `<ns>:<pod>@<interface>` and
 *   carrying the pod's marker, like its primary interface.
 */
import { isIP } from 'node:net';
import type { AttachmentAllocation } from './attachments.js';
import type { ElanInstance, ElanInterface } from './elan.js';
import { ModelValidationError } from './errors.js';
import { internalPortInterface, type Interface } from './interfaces.js';
import { canonicalIp, cidrContains, ownershipMarker, vpnName } from './names.js';
import type { OdlcoeNetwork } from './network-config.js';
import { networkInstanceName, networkSubnetId, networkVpnName } from './network-names.js';
import { checkRouteDistinguisher } from './route-distinguisher.js';
import { vpnInstanceOf } from './translate-instances.js';
import type { TranslateSettings } from './translate-settings.js';
import type { Adjacency, AssociatedSubnetType, VpnInstance, VpnInterface } from './vpn.js';

/** The ELAN an attachment of this network joins: odlcoe's own, or the ODL user's. */
export const networkElanName = (net: OdlcoeNetwork): string =>
  net.elan ?? networkInstanceName(net.namespace, net.name);

/** The network's own ELAN (none for a network on an ELAN an ODL user made). */
export function translateNetworkElan(
  net: OdlcoeNetwork,
  settings: TranslateSettings,
): ElanInstance | undefined {
  if (net.elan !== undefined) return undefined;
  return {
    name: networkInstanceName(net.namespace, net.name),
    segmentType: settings.segmentType,
    external: false,
    description: ownershipMarker(settings.clusterName, 'network', net.uid),
  };
}

/**
 * The VPN a network's attachments join: its own (`vpn`), its namespace's (`namespace`), or
 * none (`l2`).
 */
export function attachmentVpnName(net: OdlcoeNetwork): string | undefined {
  switch (net.routing) {
    case 'vpn':
      return networkVpnName(net.namespace, net.name);
    case 'namespace':
      return vpnName(net.namespace);
    case 'l2':
      return undefined;
  }
}

/** The families a network's subnets have, as the VPN's address families. */
const familiesOf = (net: OdlcoeNetwork) =>
  [...new Set(net.subnets.map((s) => (s.family === 4 ? ('ipv4' as const) : ('ipv6' as const))))].sort();

/**
 * The VPN of a routed network (undefined for an L2 one): one RD, and that RD as its only route
 * target (`both`), so nothing is imported from or exported to any other VPN.
 */
export function translateNetworkVpn(
  net: OdlcoeNetwork,
  routeDistinguisher: string,
  settings: TranslateSettings,
): VpnInstance | undefined {
  if (net.routing !== 'vpn') return undefined;
  checkRouteDistinguisher(routeDistinguisher, `route distinguisher of network ${net.namespace}/${net.name}`);
  return vpnInstanceOf(
    networkVpnName(net.namespace, net.name),
    [routeDistinguisher],
    ownershipMarker(settings.clusterName, 'network', net.uid),
    { ...settings, routeTarget: routeDistinguisher, ipFamilies: familiesOf(net) },
  );
}

export interface AttachmentObjects {
  interface: Interface;
  elanInterface: ElanInterface;
  vpnInterface?: VpnInterface;
}

/** An allocated attachment's objects; `podUid` marks them as the pod's. */
export function translateAttachment(
  allocation: AttachmentAllocation,
  net: OdlcoeNetwork,
  podUid: string,
  settings: TranslateSettings,
): AttachmentObjects {
  const name = allocation.interfaceName;
  const marker = ownershipMarker(settings.clusterName, 'pod', podUid);
  const ips = allocation.ips.map((cidr) => canonicalIp(cidr.split('/')[0] ?? ''));
  const first = ips[0];
  if (first === undefined) throw new ModelValidationError(`attachment ${name}`, 'has no address');
  const out: AttachmentObjects = {
    interface: internalPortInterface(name, marker),
    elanInterface: {
      name,
      elanInstanceName: networkElanName(net),
      // One entry per MAC (the list's key): the first address, as for a pod's primary interface.
      staticMacEntries: [{ macAddress: allocation.mac, ipPrefix: first }],
      description: marker,
    },
  };
  const vpn = attachmentVpnName(net);
  if (vpn === undefined) return out;
  const adjacencies = ips.map((ip): Adjacency => {
    const subnet = net.subnets.find((s) => cidrContains(s.cidr, ip));
    if (!subnet?.gateway)
      throw new ModelValidationError(`attachment ${name}`, `${ip} is in no routed subnet of the network`);
    return {
      ipAddress: `${ip}/${isIP(ip) === 6 ? 128 : 32}`,
      macAddress: allocation.mac,
      adjacencyType: 'primary-adjacency',
      subnetId: networkSubnetId(net.namespace, net.name, subnet.cidr),
      subnetGatewayIp: subnet.gateway,
    };
  });
  const v4 = ips.some((ip) => isIP(ip) === 4);
  const v6 = ips.some((ip) => isIP(ip) === 6);
  const type: AssociatedSubnetType = v4 && v6 ? 'V4AndV6Subnets' : v6 ? 'V6Subnet' : 'V4Subnet';
  out.vpnInterface = {
    name,
    vpnInstanceNames: [{ vpnName: vpn, associatedSubnetType: type }],
    routerInterface: false,
    adjacencies,
  };
  return out;
}
