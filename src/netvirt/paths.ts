/**
 * Where each NetVirt/Genius/COE entry lives, per model profile. Only the VPN subtrees differ
 * between profiles: Sodium keeps them in module `l3vpn` with the adjacency list as the
 * `odl-l3vpn` augment; Magnesium/Aluminium moved both into `l3vpn-instances-interfaces`.
 */
import type { DataPath } from '../restconf/path.js';
import type { Profile } from './profile.js';

export interface NetvirtPaths {
  interfaces(): DataPath;
  interface(name: string): DataPath;
  /** Genius's operational state of an interface (operational datastore only; same on every release). */
  interfaceState(name: string): DataPath;
  elanInstances(): DataPath;
  elanInstance(name: string): DataPath;
  elanInterfaces(): DataPath;
  elanInterface(name: string): DataPath;
  vpnInstances(): DataPath;
  vpnInstance(name: string): DataPath;
  vpnInterfaces(): DataPath;
  vpnInterface(name: string): DataPath;
  /** One adjacency of a vpn-interface; `ipPrefix` like `10.11.1.5/32` (the `/` is encoded by encodePath). */
  adjacency(interfaceName: string, ipPrefix: string): DataPath;
  dhcpAllocationPool(): DataPath;
  dhcpNetwork(networkId: string): DataPath;
  allocationPool(networkId: string, subnet: string): DataPath;
  floatingIpInfo(): DataPath;
  routerPorts(routerId: string): DataPath;
  coePods(): DataPath;
  coePod(uid: string): DataPath;
  coeServices(): DataPath;
  coeService(uid: string): DataPath;
  coeEndpointsInfo(): DataPath;
  coeEndpoints(uid: string): DataPath;
  k8sNodesInfo(): DataPath;
  k8sNode(uid: string): DataPath;
  /** `ietf-access-control-list:access-lists` (same module and shape on every release). */
  accessLists(): DataPath;
  /** One ACL; the list is keyed by `acl-type, acl-name`, and odlcoe's are all `ipv4-acl`. */
  acl(name: string, type?: string): DataPath;
  /** One ACE of an ACL (an ACE is written alone: added, or marked deleted). */
  ace(aclName: string, ruleName: string, type?: string): DataPath;
}

/** The module holding vpn-instances and vpn-interfaces for a profile. */
export function vpnModule(profile: Profile): string {
  return profile === 'sodium' ? 'l3vpn' : 'l3vpn-instances-interfaces';
}

/** The module of the adjacency list node: an augment in Sodium, the VPN module itself later. */
export function adjacencyModule(profile: Profile): string | undefined {
  return profile === 'sodium' ? 'odl-l3vpn' : undefined;
}

const entry = (module: string, container: string, list: string, keyName: string) => ({
  all: (): DataPath => [{ module, name: container }],
  one: (key: string): DataPath => [
    { module, name: container },
    { name: list, keys: [key], keyNames: [keyName] },
  ],
});

const pathsByProfile = new Map<Profile, NetvirtPaths>();

/** The paths of a profile (built once per profile: plans ask for them on every reconcile). */
export function netvirtPaths(profile: Profile): NetvirtPaths {
  let paths = pathsByProfile.get(profile);
  if (!paths) pathsByProfile.set(profile, (paths = buildPaths(profile)));
  return paths;
}

/** The acl-type of every ACL odlcoe writes (aclservice hard-codes it, IPv6 rules included). */
export const ACL_TYPE_IPV4 = 'ietf-access-control-list:ipv4-acl';

const aclPath = (name: string, type: string): DataPath => [
  { module: 'ietf-access-control-list', name: 'access-lists' },
  { name: 'acl', keys: [type, name], keyNames: ['acl-type', 'acl-name'] },
];

function buildPaths(profile: Profile): NetvirtPaths {
  const ifs = entry('ietf-interfaces', 'interfaces', 'interface', 'name');
  const ifStates = entry('ietf-interfaces', 'interfaces-state', 'interface', 'name');
  const elans = entry('elan', 'elan-instances', 'elan-instance', 'elan-instance-name');
  const elanIfs = entry('elan', 'elan-interfaces', 'elan-interface', 'name');
  const vpns = entry(vpnModule(profile), 'vpn-instances', 'vpn-instance', 'vpn-instance-name');
  const vpnIfs = entry(vpnModule(profile), 'vpn-interfaces', 'vpn-interface', 'name');
  const dhcp = entry('dhcp_allocation_pool', 'dhcp_allocation_pool', 'network', 'network-id');
  const nat = entry('odl-nat', 'floating-ip-info', 'router-ports', 'router-id');
  const pods = entry('pod', 'coe', 'pods', 'uid');
  const services = entry('service', 'service-information', 'services', 'uid');
  const endpoints = entry('service', 'endpoints-info', 'endpoints', 'uid');
  const nodes = entry('k8s-node', 'k8s-nodes-info', 'k8s-nodes', 'uid');
  const adjacency = adjacencyModule(profile);
  return {
    interfaces: ifs.all,
    interface: ifs.one,
    interfaceState: ifStates.one,
    elanInstances: elans.all,
    elanInstance: elans.one,
    elanInterfaces: elanIfs.all,
    elanInterface: elanIfs.one,
    vpnInstances: vpns.all,
    vpnInstance: vpns.one,
    vpnInterfaces: vpnIfs.all,
    vpnInterface: vpnIfs.one,
    adjacency: (interfaceName, ipPrefix) => [
      ...vpnIfs.one(interfaceName),
      adjacency
        ? { module: adjacency, name: 'adjacency', keys: [ipPrefix], keyNames: ['ip_address'] }
        : { name: 'adjacency', keys: [ipPrefix], keyNames: ['ip_address'] },
    ],
    dhcpAllocationPool: dhcp.all,
    dhcpNetwork: dhcp.one,
    allocationPool: (networkId, subnet) => [
      ...dhcp.one(networkId),
      { name: 'allocation-pool', keys: [subnet], keyNames: ['subnet'] },
    ],
    floatingIpInfo: nat.all,
    routerPorts: nat.one,
    coePods: pods.all,
    coePod: pods.one,
    coeServices: services.all,
    coeService: services.one,
    coeEndpointsInfo: endpoints.all,
    coeEndpoints: endpoints.one,
    k8sNodesInfo: nodes.all,
    k8sNode: nodes.one,
    accessLists: () => [{ module: 'ietf-access-control-list', name: 'access-lists' }],
    acl: (name, type = ACL_TYPE_IPV4) => aclPath(name, type),
    ace: (aclName, ruleName, type = ACL_TYPE_IPV4) => [
      ...aclPath(aclName, type),
      { name: 'access-list-entries' },
      { name: 'ace', keys: [ruleName], keyNames: ['rule-name'] },
    ],
  };
}
