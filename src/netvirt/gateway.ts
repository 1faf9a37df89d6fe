/**
 * A node's gateway in ODL and the routes of Services through it (docs/architecture.md,
 * "Node gateways and Services", has the design and the NetVirt sources behind it).
 *
 * Per node: an ietf-interface, an elan-interface in the node's own gateway ELAN and a
 * vpn-interface in the cluster's gateway VPN, all named `odlcoe-gw.<node name>`. Pod interfaces
 * are `<namespace>:<pod>` and always contain a `:`; node names (DNS-1123 subdomains) never do,
 * so no pod can ever take a gateway's name. The gateway's address is the node subnet's second
 * address (the first is the pods' gateway, answered by ODL's ARP responder); its MAC is derived
 * from that address as a pod's is.
 *
 * The gateway VPN imports and exports the cluster route target, as every namespace VPN does:
 * the gateways' addresses and the Service routes on them reach every namespace VPN through
 * vpnmanager's route import, and the pods' addresses reach the gateways. A Service IP is one
 * extra-route adjacency (`/32`, `/128`) on every gateway's vpn-interface, next hop that
 * gateway's address (vpnmanager uses only the first next hop of an extra route, so the
 * next hops of a Service are spread over the gateways, one each). The gateway VPN carries one
 * route distinguisher per gateway, because vpnmanager gives every switch that is a next hop of
 * the same extra-route prefix its own RD from the VPN's list.
 */
import { isIP } from 'node:net';
import type { V1Node, V1Service } from '@kubernetes/client-node';
import type { ElanInstance, ElanInterface } from './elan.js';
import { ModelValidationError } from './errors.js';
import { internalPortInterface, type Interface } from './interfaces.js';
import { nodeInternalIp } from './kube.js';
import {
  addressFromBigInt,
  addressToBigInt,
  canonicalIp,
  cidrContains,
  clusterUuid,
  gatewayIp,
  gatewayName,
  GATEWAY_VPN,
  ownershipMarker,
  parseCidr,
  podMac,
  subnetId,
} from './names.js';
import { maxAssignedNumber } from './route-distinguisher.js';

export { GATEWAY_PREFIX, GATEWAY_VPN, gatewayName, isGatewayName, nodeOfGatewayName } from './names.js';
import { vpnInstanceOf } from './translate-instances.js';
import type { TranslateSettings } from './translate-settings.js';
import type { Adjacency, VpnInstance, VpnInterface } from './vpn.js';

/**
 * The gateway's address: the node subnet's second address (network + 2). The first (network +
 * 1) is the pods' default gateway, which ODL's ARP responder answers (`subnet_gateway_ip`);
 * host-local must leave the second one out of its range (the agent's conflist). A subnet must
 * keep at least one pod address besides both: IPv4 at most /29, IPv6 at most /125.
 */
export function gatewayAddress(podCidr: string): string {
  const { family, network, prefixLength } = parseCidr(podCidr);
  if (prefixLength > (family === 4 ? 29 : 125))
    throw new ModelValidationError(
      'node subnet',
      `${JSON.stringify(podCidr)} is too small to reserve a gateway address (the second address) and keep addresses for pods: at most /${family === 4 ? 29 : 125}`,
    );
  return addressFromBigInt(addressToBigInt(network) + 2n, family);
}

const hostPrefix = (ip: string) => `${canonicalIp(ip)}/${isIP(ip) === 6 ? 128 : 32}`;

// ---------------------------------------------------------------------------------------------
// Services

/** The IPs of a Service that kube-proxy serves on every node, by where they come from. */
export interface ServiceIps {
  clusterIps: string[];
  externalIps: string[];
  ingressIps: string[];
}

/**
 * ClusterIPs of every family, externalIPs and LoadBalancer ingress IPs; none for ExternalName
 * and headless Services (kube-proxy serves no address for them).
 */
export function serviceIps(service: V1Service): ServiceIps {
  const spec = service.spec ?? {};
  const none: ServiceIps = { clusterIps: [], externalIps: [], ingressIps: [] };
  if (spec.type === 'ExternalName') return none;
  const cluster = spec.clusterIPs?.length ? spec.clusterIPs : spec.clusterIP ? [spec.clusterIP] : [];
  if (cluster.length === 0 || cluster.includes('None')) return none;
  const ingress = (service.status?.loadBalancer?.ingress ?? []).flatMap((i) => (i.ip ? [i.ip] : []));
  return { clusterIps: cluster, externalIps: spec.externalIPs ?? [], ingressIps: ingress };
}

/**
 * The host routes (`/32`, `/128`) a Service needs, sorted; throws a precise error when one of
 * its addresses is not an IP or a ClusterIP lies outside every configured service range (the
 * Service then gets no route at all: nothing half-written).
 */
export function serviceRoutes(service: V1Service, serviceCidrs: readonly string[]): string[] {
  const ips = serviceIps(service);
  const out = new Set<string>();
  const all = [
    ...ips.clusterIps.map((ip) => ['clusterIP', ip] as const),
    ...ips.externalIps.map((ip) => ['externalIP', ip] as const),
    ...ips.ingressIps.map((ip) => ['LoadBalancer ingress IP', ip] as const),
  ];
  for (const [what, ip] of all) {
    if (isIP(ip) === 0)
      throw new ModelValidationError(`Service ${what}`, `${JSON.stringify(ip)} is not an IP`);
    if (what === 'clusterIP' && !serviceCidrs.some((c) => cidrContains(c, ip)))
      throw new ModelValidationError(
        `Service clusterIP ${ip}`,
        `outside the configured service range${serviceCidrs.length === 1 ? '' : 's'} ${serviceCidrs.join(', ')}`,
      );
    out.add(hostPrefix(ip));
  }
  return [...out].sort();
}

// ---------------------------------------------------------------------------------------------
// the objects

export interface GatewayObjects {
  nodeName: string;
  address: string;
  mac: string;
  interface: Interface;
  elanInstance: ElanInstance;
  elanInterface: ElanInterface;
  vpnInterface: VpnInterface;
}

/**
 * A node's gateway objects. `routes`: the Service routes (`ip/len`), each an extra-route
 * adjacency with this gateway's address as its next hop. Throws ModelValidationError for a
 * node without uid or InternalIP, or a subnet that cannot hold a gateway.
 */
export function translateGateway(
  node: V1Node,
  subnet: string,
  routes: readonly string[],
  settings: TranslateSettings,
): GatewayObjects {
  const nodeName = node.metadata?.name ?? '';
  const uid = node.metadata?.uid;
  const nodeIp = nodeInternalIp(node);
  if (!uid || !nodeIp)
    throw new ModelValidationError(`node ${nodeName || '?'}`, 'needs a uid and an InternalIP for a gateway');
  const name = gatewayName(nodeName);
  const address = gatewayAddress(subnet);
  const mac = podMac(address);
  const marker = ownershipMarker(settings.clusterName, 'node-gateway', uid);
  const v6 = isIP(address) === 6;
  const primary: Adjacency = {
    ipAddress: hostPrefix(address),
    macAddress: mac,
    adjacencyType: 'primary-adjacency',
    subnetId: subnetId(nodeIp),
    subnetGatewayIp: gatewayIp(subnet),
  };
  const extra = routes.map((r): Adjacency => ({
    ipAddress: r,
    adjacencyType: 'extra-route',
    nextHopIpList: [address],
  }));
  return {
    nodeName,
    address,
    mac,
    interface: internalPortInterface(name, marker),
    elanInstance: { name, segmentType: settings.segmentType, external: false, description: marker },
    elanInterface: {
      name,
      elanInstanceName: name,
      staticMacEntries: [{ macAddress: mac, ipPrefix: address }],
      description: marker,
    },
    vpnInterface: {
      name,
      vpnInstanceNames: [{ vpnName: GATEWAY_VPN, associatedSubnetType: v6 ? 'V6Subnet' : 'V4Subnet' }],
      routerInterface: false,
      adjacencies: [primary, ...extra],
    },
  };
}

/**
 * The gateway VPN's route distinguishers: `count` (one per gateway, at least one) from the top
 * of the administrator's number space downwards, so they never meet the namespace VPNs' RDs,
 * which are allocated upwards from 1. The first never changes (vpnmanager keys the VPN's state
 * by it); node joins and leaves only add or remove RDs at the end.
 */
export function gatewayVpnRouteDistinguishers(administrator: string, count: number): string[] {
  const max = maxAssignedNumber(administrator);
  const n = Math.max(1, count);
  return Array.from({ length: n }, (_, i) => `${administrator}:${max - i}`);
}

/** The gateway VPN: the cluster route target, like every namespace VPN, and `rds`. */
export function translateGatewayVpn(rds: readonly string[], settings: TranslateSettings): VpnInstance {
  const marker = ownershipMarker(settings.clusterName, 'gateway-vpn', clusterUuid(settings.clusterName));
  return vpnInstanceOf(GATEWAY_VPN, rds, marker, settings);
}
