/**
 * L3VPN: vpn-instances and vpn-interfaces (with their adjacencies), in both model profiles.
 *
 * Sodium (`l3vpn`): RD and route targets inside `ipv4-family`/`ipv6-family`, a `description`
 * (1..242, no '?'), `type` and `l3vni`; adjacencies are the `odl-l3vpn:adjacency` augment.
 * Aluminium (`l3vpn-instances-interfaces`): RD and route targets directly in the entry,
 * `bgpvpn-type`, `ip-address-family-configured`, `l2vpn`, and **no description leaf**;
 * adjacencies are `adjacency` in the same module; vpn-interface gains `external`.
 */
import { OdlParseError } from './errors.js';
import { assign, findMember, parseList, withPreserved, type EntryReader, type JsonObject } from './json.js';
import { adjacencyModule, netvirtPaths } from './paths.js';
import type { Profile } from './profile.js';
import { checkRouteDistinguisher, checkRouteTarget } from './route-distinguisher.js';
import {
  check,
  checkInteger,
  checkLength,
  checkNonEmpty,
  checkOneOf,
  checkUint64,
  checkUuid,
  UINT32_MAX,
} from './validate.js';
import { putOp, type WriteOp } from './write.js';

export const VRF_RT_TYPES = ['export_extcommunity', 'import_extcommunity', 'both'] as const;
export type VrfRtType = (typeof VRF_RT_TYPES)[number];
export const BGPVPN_TYPES = ['InternetBGPVPN', 'BGPVPN', 'InternalVPN'] as const;
export type BgpvpnType = (typeof BGPVPN_TYPES)[number];
export const IP_ADDRESS_FAMILIES_CONFIGURED = ['undefined', 'ipv4', 'ipv6', 'ipv4-and-ipv6'] as const;
export type IpAddressFamilyConfigured = (typeof IP_ADDRESS_FAMILIES_CONFIGURED)[number];
export const SUBNET_TYPES = ['V4Subnet', 'V6Subnet', 'V6InternetVPN', 'V4AndV6Subnets'] as const;
export type AssociatedSubnetType = (typeof SUBNET_TYPES)[number];
export const NETWORK_TYPES = ['FLAT', 'VLAN', 'VXLAN', 'GRE'] as const;
export type NetworkType = (typeof NETWORK_TYPES)[number];
export const ADJACENCY_TYPES = ['primary-adjacency', 'learnt-ip', 'extra-route'] as const;
export type AdjacencyType = (typeof ADJACENCY_TYPES)[number];
const VPN_TYPES = ['l3', 'l2'] as const;

/** `vpn-name` in vpn-interface is 1..40 characters: a longer VPN can exist but never be referenced. */
export const VPN_NAME_MAX = 40;

export interface VpnTarget {
  value: string;
  type: VrfRtType;
}

/** Sodium `ipv4-family` / `ipv6-family`. */
export interface VpnAddressFamily {
  routeDistinguishers: string[];
  vpnTargets: VpnTarget[];
  /** apply-label, prefix-limit, ...: verbatim. */
  preserved?: JsonObject;
}

export interface SodiumVpnInstance {
  profile: 'sodium';
  name: string;
  type?: 'l3' | 'l2';
  l3vni?: number;
  /** 1..242 characters, no '?'. */
  description?: string;
  ipv4Family?: VpnAddressFamily;
  ipv6Family?: VpnAddressFamily;
  preserved?: JsonObject;
}

export interface AluminiumVpnInstance {
  profile: 'aluminium';
  name: string;
  routeDistinguishers: string[];
  vpnTargets: VpnTarget[];
  l2vpn?: boolean;
  bgpvpnType?: BgpvpnType;
  ipAddressFamilyConfigured?: IpAddressFamilyConfigured;
  l3vni?: number;
  preserved?: JsonObject;
}

export type VpnInstance = SodiumVpnInstance | AluminiumVpnInstance;

export interface VpnInstanceName {
  vpnName: string;
  associatedSubnetType?: AssociatedSubnetType;
}

export interface Adjacency {
  /** The list key: free text, NetVirt uses `ip/32` or `ip/128`. */
  ipAddress: string;
  macAddress?: string;
  /** `=extra-route` in YANG: a port's own address must say `primary-adjacency` explicitly. */
  adjacencyType?: AdjacencyType;
  subnetId?: string;
  subnetGatewayIp?: string;
  nextHopIpList?: string[];
  physNetworkFunc?: boolean;
  preserved?: JsonObject;
}

export interface VpnInterface {
  name: string;
  vpnInstanceNames: VpnInstanceName[];
  routerInterface?: boolean;
  /** uint64 as a decimal string. */
  dpnId?: string;
  networkId?: string;
  networkType?: NetworkType;
  segmentationId?: number;
  /** Aluminium only. */
  external?: boolean;
  adjacencies: Adjacency[];
  preserved?: JsonObject;
}

// ---------------------------------------------------------------------------------------------
// builders

export function checkVpnName(name: string, where: string): void {
  checkLength(name, 1, VPN_NAME_MAX, where);
}

/** Sodium vpn-instance description: `length 1..242`, and the pattern forbids '?'. */
export function checkVpnDescription(value: string, where: string): void {
  checkLength(value, 1, 242, where);
  check(!value.includes('?'), where, `must not contain '?': ${JSON.stringify(value)}`);
}

function vpnTargetsJson(targets: readonly VpnTarget[], where: string): JsonObject | undefined {
  if (targets.length === 0) return undefined;
  const seen = new Set<string>();
  return {
    vpnTarget: targets.map((t, i) => {
      checkRouteTarget(t.value, `${where}/vpnTarget[${i}]/vrfRTValue`);
      checkOneOf(t.type, VRF_RT_TYPES, `${where}/vpnTarget[${i}]/vrfRTType`);
      check(!seen.has(t.value), `${where}/vpnTarget[${i}]`, `duplicate list key ${t.value}`);
      seen.add(t.value);
      return { vrfRTValue: t.value, vrfRTType: t.type };
    }),
  };
}

function rdsJson(rds: readonly string[], where: string): string[] {
  rds.forEach((rd, i) => checkRouteDistinguisher(rd, `${where}/route-distinguisher[${i}]`));
  check(new Set(rds).size === rds.length, `${where}/route-distinguisher`, 'duplicate values in a leaf-list');
  return [...rds];
}

function familyJson(f: VpnAddressFamily, where: string): JsonObject {
  const j: JsonObject = {};
  if (f.routeDistinguishers.length > 0) j['route-distinguisher'] = rdsJson(f.routeDistinguishers, where);
  const targets = vpnTargetsJson(f.vpnTargets, `${where}/vpnTargets`);
  if (targets) j['vpnTargets'] = targets;
  return withPreserved(j, f.preserved);
}

export function vpnInstanceEntry(v: VpnInstance): JsonObject {
  const where = `vpn-instance[${v.name}]`;
  checkVpnName(v.name, `${where}/vpn-instance-name (referenced by vpn-name)`);
  const j: JsonObject = { 'vpn-instance-name': v.name };
  if (v.l3vni !== undefined) checkInteger(v.l3vni, 0, UINT32_MAX, `${where}/l3vni`);
  if (v.profile === 'sodium') {
    if (v.type !== undefined) {
      checkOneOf(v.type, VPN_TYPES, `${where}/type`);
      j['type'] = v.type;
    }
    if (v.l3vni !== undefined) j['l3vni'] = v.l3vni;
    if (v.description !== undefined) {
      checkVpnDescription(v.description, `${where}/description`);
      j['description'] = v.description;
    }
    if (v.ipv4Family) j['ipv4-family'] = familyJson(v.ipv4Family, `${where}/ipv4-family`);
    if (v.ipv6Family) j['ipv6-family'] = familyJson(v.ipv6Family, `${where}/ipv6-family`);
  } else {
    if (v.routeDistinguishers.length > 0) j['route-distinguisher'] = rdsJson(v.routeDistinguishers, where);
    const targets = vpnTargetsJson(v.vpnTargets, `${where}/vpnTargets`);
    if (targets) j['vpnTargets'] = targets;
    if (v.l2vpn !== undefined) j['l2vpn'] = v.l2vpn;
    if (v.bgpvpnType !== undefined) {
      checkOneOf(v.bgpvpnType, BGPVPN_TYPES, `${where}/bgpvpn-type`);
      j['bgpvpn-type'] = v.bgpvpnType;
    }
    if (v.ipAddressFamilyConfigured !== undefined) {
      checkOneOf(
        v.ipAddressFamilyConfigured,
        IP_ADDRESS_FAMILIES_CONFIGURED,
        `${where}/ip-address-family-configured`,
      );
      j['ip-address-family-configured'] = v.ipAddressFamilyConfigured;
    }
    if (v.l3vni !== undefined) j['l3vni'] = v.l3vni;
  }
  return withPreserved(j, v.preserved);
}

/** One adjacency entry (inside a vpn-interface or as the body of an adjacency PUT). */
export function adjacencyEntry(a: Adjacency, where = `adjacency[${a.ipAddress}]`): JsonObject {
  checkNonEmpty(a.ipAddress, `${where}/ip_address`);
  const j: JsonObject = { ip_address: a.ipAddress };
  if (a.nextHopIpList !== undefined && a.nextHopIpList.length > 0)
    j['next-hop-ip-list'] = [...a.nextHopIpList];
  if (a.adjacencyType !== undefined) {
    checkOneOf(a.adjacencyType, ADJACENCY_TYPES, `${where}/adjacency_type`);
    j['adjacency_type'] = a.adjacencyType;
  }
  if (a.macAddress !== undefined) j['mac_address'] = a.macAddress;
  if (a.subnetId !== undefined) {
    checkUuid(a.subnetId, `${where}/subnet_id`);
    j['subnet_id'] = a.subnetId;
  }
  if (a.subnetGatewayIp !== undefined) j['subnet_gateway_ip'] = a.subnetGatewayIp;
  if (a.physNetworkFunc !== undefined) j['phys-network-func'] = a.physNetworkFunc;
  return withPreserved(j, a.preserved);
}

export function vpnInterfaceEntry(profile: Profile, v: VpnInterface): JsonObject {
  const where = `vpn-interface[${v.name}]`;
  checkNonEmpty(v.name, `${where}/name`);
  const j: JsonObject = { name: v.name };
  const seen = new Set<string>();
  j['vpn-instance-names'] = v.vpnInstanceNames.map((n, i) => {
    const at = `${where}/vpn-instance-names[${i}]`;
    checkVpnName(n.vpnName, `${at}/vpn-name`);
    check(!seen.has(n.vpnName), at, `duplicate list key ${n.vpnName}`);
    seen.add(n.vpnName);
    const e: JsonObject = { 'vpn-name': n.vpnName };
    if (n.associatedSubnetType !== undefined) {
      checkOneOf(n.associatedSubnetType, SUBNET_TYPES, `${at}/associated-subnet-type`);
      e['associated-subnet-type'] = n.associatedSubnetType;
    }
    return e;
  });
  if (v.vpnInstanceNames.length === 0) delete j['vpn-instance-names'];
  if (v.dpnId !== undefined) {
    checkUint64(v.dpnId, `${where}/dpn-id`);
    j['dpn-id'] = v.dpnId;
  }
  if (v.routerInterface !== undefined) j['router-interface'] = v.routerInterface;
  if (v.networkId !== undefined) {
    checkUuid(v.networkId, `${where}/network-id`);
    j['network-id'] = v.networkId;
  }
  if (v.networkType !== undefined) {
    checkOneOf(v.networkType, NETWORK_TYPES, `${where}/network-type`);
    j['network-type'] = v.networkType;
  }
  if (v.segmentationId !== undefined) {
    checkInteger(v.segmentationId, 0, UINT32_MAX, `${where}/segmentation-id`);
    j['segmentation-id'] = v.segmentationId;
  }
  if (v.external !== undefined) {
    check(
      profile === 'aluminium',
      `${where}/external`,
      'vpn-interface has no external leaf in the Sodium model',
    );
    j['external'] = v.external;
  }
  if (v.adjacencies.length > 0) {
    const keys = new Set<string>();
    j[adjacencyMember(profile)] = v.adjacencies.map((a, i) => {
      const at = `${where}/adjacency[${i}]`;
      check(!keys.has(a.ipAddress), at, `duplicate list key ${a.ipAddress}`);
      keys.add(a.ipAddress);
      return adjacencyEntry(a, at);
    });
  }
  return withPreserved(j, v.preserved);
}

/** The JSON member of the adjacency list inside a vpn-interface entry. */
export function adjacencyMember(profile: Profile): string {
  const module = adjacencyModule(profile);
  return module ? `${module}:adjacency` : 'adjacency';
}

export function putVpnInstance(profile: Profile, v: VpnInstance): WriteOp {
  check(
    v.profile === profile,
    `vpn-instance[${v.name}]`,
    `built for ${v.profile}, written to a ${profile} controller`,
  );
  return putOp(netvirtPaths(profile).vpnInstance(v.name), vpnInstanceEntry(v));
}

export function putVpnInterface(profile: Profile, v: VpnInterface): WriteOp {
  return putOp(netvirtPaths(profile).vpnInterface(v.name), vpnInterfaceEntry(profile, v));
}

/** PUT of one adjacency: leaves every other adjacency (e.g. ODL's learnt-ip entries) untouched. */
export function putAdjacency(profile: Profile, interfaceName: string, a: Adjacency): WriteOp {
  return putOp(netvirtPaths(profile).adjacency(interfaceName, a.ipAddress), adjacencyEntry(a));
}

// ---------------------------------------------------------------------------------------------
// parsers

function readTargets(r: EntryReader): VpnTarget[] {
  return (
    r.container('vpnTargets', (c) =>
      c.list('vpnTarget', (t) => ({
        value: t.requiredString('vrfRTValue'),
        type: t.required('vrfRTType', t.enumeration('vrfRTType', VRF_RT_TYPES)),
      })),
    ) ?? []
  );
}

function readFamily(r: EntryReader): VpnAddressFamily {
  const f: VpnAddressFamily = {
    routeDistinguishers: r.strings('route-distinguisher') ?? [],
    vpnTargets: readTargets(r),
  };
  assign(f, 'preserved', r.rest());
  return f;
}

export function readVpnInstance(profile: Profile, r: EntryReader): VpnInstance {
  const name = r.requiredString('vpn-instance-name');
  const foreignLeaf = (
    profile === 'sodium' ? ['route-distinguisher', 'bgpvpn-type'] : ['ipv4-family', 'ipv6-family']
  ).find((leaf) => findMember(r.obj, leaf) !== undefined);
  if (foreignLeaf)
    throw new OdlParseError(
      `${r.where}/${foreignLeaf}`,
      `not in the ${profile} vpn-instance model (wrong profile?)`,
    );
  if (profile === 'sodium') {
    const v: SodiumVpnInstance = { profile, name };
    assign(v, 'type', r.enumeration('type', VPN_TYPES));
    assign(v, 'l3vni', r.integer('l3vni', 0, UINT32_MAX));
    assign(v, 'description', r.string('description'));
    assign(v, 'ipv4Family', r.container('ipv4-family', readFamily));
    assign(v, 'ipv6Family', r.container('ipv6-family', readFamily));
    assign(v, 'preserved', r.rest());
    return v;
  }
  const v: AluminiumVpnInstance = {
    profile,
    name,
    routeDistinguishers: r.strings('route-distinguisher') ?? [],
    vpnTargets: readTargets(r),
  };
  assign(v, 'l2vpn', r.boolean('l2vpn'));
  assign(v, 'bgpvpnType', r.enumeration('bgpvpn-type', BGPVPN_TYPES));
  assign(
    v,
    'ipAddressFamilyConfigured',
    r.enumeration('ip-address-family-configured', IP_ADDRESS_FAMILIES_CONFIGURED),
  );
  assign(v, 'l3vni', r.integer('l3vni', 0, UINT32_MAX));
  assign(v, 'preserved', r.rest());
  return v;
}

export function readAdjacency(r: EntryReader): Adjacency {
  const a: Adjacency = { ipAddress: r.requiredString('ip_address') };
  assign(a, 'macAddress', r.string('mac_address'));
  assign(a, 'adjacencyType', r.enumeration('adjacency_type', ADJACENCY_TYPES));
  assign(a, 'subnetId', r.string('subnet_id'));
  assign(a, 'subnetGatewayIp', r.string('subnet_gateway_ip'));
  assign(a, 'nextHopIpList', r.strings('next-hop-ip-list'));
  assign(a, 'physNetworkFunc', r.boolean('phys-network-func'));
  // config false: present only in operational answers; writing them back would be refused.
  r.drop('label', 'subnet_gateway_mac_address', 'vrf-id', 'marked_for_deletion');
  assign(a, 'preserved', r.rest());
  return a;
}

export function readVpnInterface(profile: Profile, r: EntryReader): VpnInterface {
  const v: VpnInterface = {
    name: r.requiredString('name'),
    vpnInstanceNames: r.list('vpn-instance-names', (n) => {
      const e: VpnInstanceName = { vpnName: n.requiredString('vpn-name') };
      assign(e, 'associatedSubnetType', n.enumeration('associated-subnet-type', SUBNET_TYPES));
      return e;
    }),
    adjacencies: r.list('adjacency', readAdjacency),
  };
  assign(v, 'routerInterface', r.boolean('router-interface'));
  assign(v, 'dpnId', r.uint64('dpn-id'));
  assign(v, 'networkId', r.string('network-id'));
  assign(v, 'networkType', r.enumeration('network-type', NETWORK_TYPES));
  assign(v, 'segmentationId', r.integer('segmentation-id', 0, UINT32_MAX));
  const external = r.boolean('external');
  if (external !== undefined && profile === 'sodium') {
    throw new OdlParseError(
      `${r.where}/external`,
      'a Sodium vpn-interface has no external leaf (wrong profile?)',
    );
  }
  assign(v, 'external', external);
  assign(v, 'preserved', r.rest());
  return v;
}

export function parseVpnInstances(profile: Profile, body: unknown): VpnInstance[] {
  return parseList(body, 'vpn-instances', 'vpn-instance', (r) => readVpnInstance(profile, r));
}

export function parseVpnInterfaces(profile: Profile, body: unknown): VpnInterface[] {
  return parseList(body, 'vpn-interfaces', 'vpn-interface', (r) => readVpnInterface(profile, r));
}
