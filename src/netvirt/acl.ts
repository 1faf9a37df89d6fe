/**
 * NetVirt's security groups: `ietf-access-control-list:access-lists/acl` (the 2016 draft model
 * NetVirt ships) with the `aclservice` augments, and the `aclservice:interface-acl` augment of
 * an ietf-interface (the port security of one pod). Facts: netvirt-features.md §3.1.
 *
 * Stable API (the reachability analysis reads ODL through it):
 * - types `Acl`, `Ace`, `AceMatches`, `PortRange`, `AceDirection`, `InterfaceAcl`,
 *   `AllowedAddressPair`;
 * - readers `readAcl`, `parseAcls` (a GET of the list or one entry, either dialect),
 *   `readInterfaceAcl` (used by `readInterface`: `Interface.acl`);
 * - builders `aclEntry`, `aceEntry`, `interfaceAclMembers`;
 * - `aceFamily`, `aceRemoteNetwork`, `liveAces` (ACEs not marked `deleted`), `ACL_TYPE_IPV4`,
 *   `PROTOCOL_NUMBERS`;
 * - names: `aclName` (this cluster's name-based ACL UUIDs), `isClusterAclName`, `aceRuleName`.
 *
 * The traps the model is built around (aclservice's code, not its YANG):
 * - every ACE carries `direction` and `deleted: false` (both are dereferenced unchecked);
 * - an ACE is never edited in place (aclservice ignores a same-name edit): a changed ACE is a
 *   new rule-name (a hash of its content), and the old one is removed by writing it again with
 *   `deleted: true`, after which aclservice removes it from config itself (a DELETE would leave
 *   its flows installed);
 * - `acl-type` is always `ipv4-acl`, IPv6 rules included (aclservice hard-codes it);
 * - both port bounds, destination ranges only, and always an address family;
 * - Aluminium: the writer supplies `acl-tag`; Sodium's model has no such leaf (nor
 *   `interface-type`) and refuses it.
 */
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import type { EntryReader } from './json.js';
import { assign, canonicalJson, parseList, withPreserved, type JsonObject } from './json.js';
import { ACL_TYPE_IPV4 } from './paths.js';
import type { Profile } from './profile.js';
import { check, checkInteger, checkIpPrefix, checkMac, checkNonEmpty, checkUuid } from './validate.js';

export const ACL_MODULE = 'ietf-access-control-list';
export const ACLSERVICE = 'aclservice';
export { ACL_TYPE_IPV4 };
export const ACL_TYPES = ['ipv4-acl', 'ipv6-acl', 'eth-acl'].map((t) => `${ACL_MODULE}:${t}`);

export type AceDirection = 'ingress' | 'egress';
const DIRECTION_IDENTITY: Record<AceDirection, string> = {
  ingress: `${ACLSERVICE}:direction-ingress`,
  egress: `${ACLSERVICE}:direction-egress`,
};
export const DIRECTION_IDENTITIES = Object.values(DIRECTION_IDENTITY);

/** IP protocol numbers NetVirt matches on (aclservice takes any uint8). */
export const PROTOCOL_NUMBERS = { icmp: 1, tcp: 6, udp: 17, icmpv6: 58, sctp: 132 } as const;

export const ACL_TAG_MAX = 65535;

export interface PortRange {
  lower: number;
  upper: number;
}

/** The `ace-ip` case of `matches` (JSON has no choice or case nodes). */
export interface AceMatches {
  sourceIpv4Network?: string;
  destinationIpv4Network?: string;
  sourceIpv6Network?: string;
  destinationIpv6Network?: string;
  protocol?: number;
  /** Read from others' ACEs; odlcoe never writes it (NetVirt ORs source and destination ranges). */
  sourcePortRange?: PortRange;
  destinationPortRange?: PortRange;
  /** Members odlcoe does not model (dscp, flow-label, the ace-eth case), verbatim. */
  preserved?: JsonObject;
}

export interface Ace {
  ruleName: string;
  matches: AceMatches;
  /** `actions`: NetVirt permits whatever is written; absent when ODL holds no action. */
  action?: 'permit' | 'deny';
  /** `aclservice:direction`; absent only in others' (broken) ACEs. */
  direction?: AceDirection;
  /** `aclservice:remote-group-id`: the ACL whose members' addresses the rule matches. */
  remoteGroupId?: string;
  /** `aclservice:deleted`: true once the rule is being removed. */
  deleted?: boolean;
  preserved?: JsonObject;
}

export interface Acl {
  /** `acl-name`: a UUID for NetVirt (security-groups are uuids). */
  name: string;
  /** `acl-type` identity; odlcoe's are always `ACL_TYPE_IPV4`. */
  type: string;
  /** `aclservice:acl-tag` (Aluminium; absent on Sodium). */
  aclTag?: number;
  aces: Ace[];
  preserved?: JsonObject;
}

export interface AllowedAddressPair {
  macAddress: string;
  /** An address or a prefix (ip-prefix-or-address). */
  ipAddress: string;
}

/** The `aclservice:interface-acl` augment of one ietf-interface. */
export interface InterfaceAcl {
  portSecurityEnabled: boolean;
  /** ACL names, in the order written. */
  securityGroups: string[];
  allowedAddressPairs: AllowedAddressPair[];
  /** Aluminium only. */
  interfaceType?: 'access-port' | 'dhcp-service';
}

export const INTERFACE_TYPES = ['access-port', 'dhcp-service'] as const;

// ---------------------------------------------------------------------------------------------
// names

const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * The ACL name odlcoe gives the ACL identified by `stable` (a string naming what it stands for,
 * e.g. `policy:<uid>:ingress`) in cluster `clusterName`: a name-based UUID (RFC 9562 version 8)
 * whose first 32 bits are the cluster's tag and the rest a hash of cluster and `stable`. The
 * ACL model has no description leaf, so the name itself carries ownership: `isClusterAclName`
 * recognises the cluster's ACLs without a registry (Neutron's names are version 4).
 */
export function aclName(clusterName: string, stable: string): string {
  const bytes = Buffer.alloc(16);
  Buffer.from(clusterTag(clusterName), 'hex').copy(bytes, 0);
  sha256(`odlcoe:${clusterName}:acl:${stable}`).copy(bytes, 4, 0, 12);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The cluster's tag in hex, hashed once per cluster name: every ACL of the cache is checked
 * against it, for every ownership and owner-key question.
 */
const clusterTags = new Map<string, string>();
function clusterTag(clusterName: string): string {
  let tag = clusterTags.get(clusterName);
  if (tag === undefined)
    clusterTags.set(clusterName, (tag = sha256(`odlcoe:${clusterName}`).toString('hex', 0, 4)));
  return tag;
}

/** Whether `name` is an ACL name `aclName` makes for this cluster. */
export function isClusterAclName(name: string, clusterName: string): boolean {
  // The tag first: most names a cache holds are this cluster's or not UUIDs of this shape at all.
  return name.startsWith(clusterTag(clusterName)) && CLUSTER_ACL_NAME.test(name);
}

const CLUSTER_ACL_NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * The rule name of an ACE: its direction and a hash of everything that makes the rule (not
 * `deleted`), so a changed rule always gets a new name and an unchanged one keeps its own.
 */
export function aceRuleName(ace: Omit<Ace, 'ruleName' | 'deleted' | 'preserved'>): string {
  const content = canonicalJson({
    matches: canonicalMatches(ace.matches),
    action: ace.action,
    direction: ace.direction,
    remoteGroupId: ace.remoteGroupId?.toLowerCase(),
  });
  return `${ace.direction ?? 'any'}-${sha256(content).toString('hex').slice(0, 24)}`;
}

/** The matches in one spelling (prefixes as written by odlcoe are already canonical). */
export function canonicalMatches(m: AceMatches): Record<string, unknown> {
  return {
    s4: m.sourceIpv4Network,
    d4: m.destinationIpv4Network,
    s6: m.sourceIpv6Network,
    d6: m.destinationIpv6Network,
    p: m.protocol,
    sp: m.sourcePortRange && [m.sourcePortRange.lower, m.sourcePortRange.upper],
    dp: m.destinationPortRange && [m.destinationPortRange.lower, m.destinationPortRange.upper],
    x: m.preserved,
  };
}

// ---------------------------------------------------------------------------------------------
// reading

export function aceFamily(m: AceMatches): 4 | 6 | undefined {
  if (m.sourceIpv4Network !== undefined || m.destinationIpv4Network !== undefined) return 4;
  if (m.sourceIpv6Network !== undefined || m.destinationIpv6Network !== undefined) return 6;
  return undefined;
}

/** The prefix an ACE matches on the far side: the source for ingress, the destination for egress. */
export function aceRemoteNetwork(ace: Ace): string | undefined {
  const m = ace.matches;
  return ace.direction === 'egress'
    ? (m.destinationIpv4Network ?? m.destinationIpv6Network)
    : (m.sourceIpv4Network ?? m.sourceIpv6Network);
}

/** The ACEs in force: those not marked deleted (aclservice removes the marked ones itself). */
export const liveAces = (acl: Acl): Ace[] => acl.aces.filter((a) => a.deleted !== true);

function readPortRange(r: EntryReader): PortRange {
  const lower = r.required('lower-port', r.integer('lower-port', 0, 65535));
  // aclservice dereferences upper-port unchecked; a missing one reads as the lower bound.
  const upper = r.integer('upper-port', 0, 65535) ?? lower;
  return { lower, upper };
}

function readMatches(r: EntryReader): AceMatches {
  const m: AceMatches = {};
  assign(m, 'sourceIpv4Network', r.string('source-ipv4-network'));
  assign(m, 'destinationIpv4Network', r.string('destination-ipv4-network'));
  assign(m, 'sourceIpv6Network', r.string('source-ipv6-network'));
  assign(m, 'destinationIpv6Network', r.string('destination-ipv6-network'));
  assign(m, 'protocol', r.integer('protocol', 0, 255));
  assign(m, 'sourcePortRange', r.container('source-port-range', readPortRange));
  assign(m, 'destinationPortRange', r.container('destination-port-range', readPortRange));
  assign(m, 'preserved', r.rest());
  return m;
}

function readDirection(r: EntryReader): AceDirection | undefined {
  const id = r.identity('direction', ACLSERVICE);
  if (id === undefined) return undefined;
  const found = (Object.keys(DIRECTION_IDENTITY) as AceDirection[]).find((d) => DIRECTION_IDENTITY[d] === id);
  if (!found) return r.required('direction', undefined);
  return found;
}

function readActions(r: EntryReader): 'permit' | 'deny' | undefined {
  // `permit` and `deny` are empty leaves: `[null]` in JSON, so presence is what counts.
  const obj = r.obj;
  const has = (name: string) => Object.keys(obj).some((k) => k === name || k.endsWith(`:${name}`));
  const action = has('permit') ? 'permit' : has('deny') ? 'deny' : undefined;
  r.drop('permit', 'deny');
  return action;
}

export function readAce(r: EntryReader): Ace {
  const ace: Ace = {
    ruleName: r.requiredString('rule-name'),
    matches: r.container('matches', readMatches) ?? {},
  };
  assign(ace, 'action', r.container('actions', readActions));
  assign(ace, 'direction', readDirection(r));
  assign(ace, 'remoteGroupId', r.string('remote-group-id'));
  assign(ace, 'deleted', r.boolean('deleted'));
  assign(ace, 'preserved', r.rest());
  return ace;
}

export function readAcl(r: EntryReader): Acl {
  const acl: Acl = {
    name: r.requiredString('acl-name'),
    type: r.required('acl-type', r.identity('acl-type', ACL_MODULE)),
    aces: r.container('access-list-entries', (e) => e.list('ace', readAce)) ?? [],
  };
  assign(acl, 'aclTag', r.integer('acl-tag', 0, ACL_TAG_MAX));
  assign(acl, 'preserved', r.rest());
  return acl;
}

/** ACLs from a GET of the list container or of one entry, in either dialect. */
export function parseAcls(body: unknown): Acl[] {
  return parseList(body, 'access-lists', 'acl', readAcl);
}

function readAddressPair(r: EntryReader): AllowedAddressPair {
  return { macAddress: r.requiredString('mac-address'), ipAddress: r.requiredString('ip-address') };
}

/** The interface-acl members of an ietf-interface entry (undefined when it has none). */
export function readInterfaceAcl(r: EntryReader): InterfaceAcl | undefined {
  const enabled = r.boolean('port-security-enabled');
  const groups = r.strings('security-groups');
  const pairs = r.list('allowed-address-pairs', readAddressPair);
  const type = r.enumeration('interface-type', INTERFACE_TYPES);
  if (enabled === undefined && groups === undefined && pairs.length === 0 && type === undefined)
    return undefined;
  const acl: InterfaceAcl = {
    // aclservice unboxes it unchecked; absent reads as off, which is how odlcoe then rewrites it.
    portSecurityEnabled: enabled ?? false,
    securityGroups: groups ?? [],
    allowedAddressPairs: pairs,
  };
  assign(acl, 'interfaceType', type);
  return acl;
}

// ---------------------------------------------------------------------------------------------
// building

function portRangeEntry(p: PortRange, where: string): JsonObject {
  checkInteger(p.lower, 0, 65535, `${where}/lower-port`);
  checkInteger(p.upper, 0, 65535, `${where}/upper-port`);
  // ODL does not evaluate the model's `must`: a reversed range would be stored and misread.
  check(p.upper >= p.lower, `${where}/upper-port`, `${p.upper} is below lower-port ${p.lower}`);
  return { 'lower-port': p.lower, 'upper-port': p.upper };
}

function matchesEntry(m: AceMatches, where: string): JsonObject {
  const e: JsonObject = {};
  const v4 = [m.sourceIpv4Network, m.destinationIpv4Network];
  const v6 = [m.sourceIpv6Network, m.destinationIpv6Network];
  check(
    !(v4.some((x) => x !== undefined) && v6.some((x) => x !== undefined)),
    where,
    'an ACE matches one address family (ace-ipv4 and ace-ipv6 are cases of one choice)',
  );
  const net = (member: string, value: string | undefined, family: 4 | 6) => {
    if (value === undefined) return;
    checkIpPrefix(value, `${where}/${member}`);
    check(isIP(value.slice(0, value.lastIndexOf('/'))) === family, `${where}/${member}`, `not IPv${family}`);
    e[member] = value;
  };
  net('source-ipv4-network', m.sourceIpv4Network, 4);
  net('destination-ipv4-network', m.destinationIpv4Network, 4);
  net('source-ipv6-network', m.sourceIpv6Network, 6);
  net('destination-ipv6-network', m.destinationIpv6Network, 6);
  if (m.protocol !== undefined) {
    checkInteger(m.protocol, 0, 255, `${where}/protocol`);
    e['protocol'] = m.protocol;
  }
  if (m.sourcePortRange)
    e['source-port-range'] = portRangeEntry(m.sourcePortRange, `${where}/source-port-range`);
  if (m.destinationPortRange)
    e['destination-port-range'] = portRangeEntry(m.destinationPortRange, `${where}/destination-port-range`);
  return withPreserved(e, m.preserved);
}

/** The JSON of one ACE, augment members qualified by `aclservice:`. */
export function aceEntry(ace: Ace, where = `ace[${ace.ruleName}]`): JsonObject {
  checkNonEmpty(ace.ruleName, `${where}/rule-name`);
  check(ace.direction !== undefined, `${where}/direction`, 'aclservice needs a direction on every ACE');
  if (ace.remoteGroupId !== undefined) checkUuid(ace.remoteGroupId, `${where}/remote-group-id`);
  const e: JsonObject = { 'rule-name': ace.ruleName, matches: matchesEntry(ace.matches, `${where}/matches`) };
  if (ace.action !== undefined) e['actions'] = { [ace.action]: [null] };
  e[`${ACLSERVICE}:direction`] = DIRECTION_IDENTITY[ace.direction];
  if (ace.remoteGroupId !== undefined) e[`${ACLSERVICE}:remote-group-id`] = ace.remoteGroupId;
  // aclservice unboxes `deleted` unchecked: always written.
  e[`${ACLSERVICE}:deleted`] = ace.deleted ?? false;
  return withPreserved(e, ace.preserved);
}

/** The JSON of one ACL entry for `profile` (Sodium refuses `acl-tag`). */
export function aclEntry(profile: Profile, acl: Acl): JsonObject {
  const where = `acl[${acl.name}]`;
  checkNonEmpty(acl.name, `${where}/acl-name`);
  check(ACL_TYPES.includes(acl.type), `${where}/acl-type`, `unknown ACL type ${acl.type}`);
  const e: JsonObject = { 'acl-name': acl.name, 'acl-type': acl.type };
  if (acl.aclTag !== undefined) {
    check(profile !== 'sodium', `${where}/acl-tag`, "Sodium's aclservice model has no acl-tag leaf");
    checkInteger(acl.aclTag, 1, ACL_TAG_MAX, `${where}/acl-tag`);
    e[`${ACLSERVICE}:acl-tag`] = acl.aclTag;
  }
  e['access-list-entries'] = { ace: acl.aces.map((a, i) => aceEntry(a, `${where}/ace[${i}]`)) };
  return withPreserved(e, acl.preserved);
}

/** The interface-acl members for an ietf-interface body (Sodium refuses `interface-type`). */
export function interfaceAclMembers(profile: Profile, acl: InterfaceAcl, where: string): JsonObject {
  const e: JsonObject = { [`${ACLSERVICE}:port-security-enabled`]: acl.portSecurityEnabled };
  acl.securityGroups.forEach((g, i) => checkUuid(g, `${where}/security-groups[${i}]`));
  if (acl.securityGroups.length > 0) e[`${ACLSERVICE}:security-groups`] = [...acl.securityGroups];
  acl.allowedAddressPairs.forEach((p, i) => {
    checkMac(p.macAddress, `${where}/allowed-address-pairs[${i}]/mac-address`);
    const addr = p.ipAddress.includes('/')
      ? p.ipAddress
      : `${p.ipAddress}/${isIP(p.ipAddress) === 6 ? 128 : 32}`;
    checkIpPrefix(addr, `${where}/allowed-address-pairs[${i}]/ip-address`);
  });
  if (acl.allowedAddressPairs.length > 0)
    e[`${ACLSERVICE}:allowed-address-pairs`] = acl.allowedAddressPairs.map((p) => ({
      'mac-address': p.macAddress,
      'ip-address': p.ipAddress,
    }));
  if (acl.interfaceType !== undefined) {
    check(
      profile !== 'sodium',
      `${where}/interface-type`,
      "Sodium's aclservice model has no interface-type leaf",
    );
    e[`${ACLSERVICE}:interface-type`] = acl.interfaceType;
  }
  return e;
}
