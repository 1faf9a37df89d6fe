/**
 * Genius interfaces: `ietf-interfaces:interfaces/interface` with the `odl-interface` augments
 * and, where odlcoe enforces NetworkPolicy, aclservice's `interface-acl` augment (acl.ts).
 */
import { interfaceAclMembers, readInterfaceAcl, type InterfaceAcl } from './acl.js';
import { assign, parseList, withPreserved, type EntryReader, type JsonObject } from './json.js';
import { netvirtPaths } from './paths.js';
import type { Profile } from './profile.js';
import { check, checkIdentity, checkInteger, checkNonEmpty, checkOneOf, checkUint64 } from './validate.js';
import { putOp, type WriteOp } from './write.js';

export const L2VLAN_MODES = [
  'access',
  'native-tagged',
  'native-untagged',
  'trunk',
  'trunk-member',
  'transparent',
] as const;
export type L2vlanMode = (typeof L2VLAN_MODES)[number];

export const IF_TYPE_L2VLAN = 'iana-if-type:l2vlan';

export interface Interface {
  name: string;
  /** identityref, e.g. `iana-if-type:l2vlan`. Mandatory. */
  type: string;
  enabled?: boolean;
  description?: string;
  l2vlanMode?: L2vlanMode;
  /** `odl-interface:external`. Written explicitly: YANG says true when absent, Genius reads absent as false. */
  external?: boolean;
  vlanId?: number;
  /** Filled in by Genius from the OVS port whose `iface-id` is this name; never written by odlcoe. */
  parentInterface?: string;
  /** uint64 as a decimal string. */
  datapathNodeIdentifier?: string;
  /** aclservice's port security (`aclservice:` members); odlcoe owns it only while it enforces policy. */
  acl?: InterfaceAcl;
  /** Members odlcoe does not model (tunnel leaves, node-identifier, subnet-info, ...), verbatim. */
  preserved?: JsonObject;
}

/**
 * The ietf-interface of a port odlcoe wires onto br-int (a pod's, an attachment's, a node
 * gateway's): l2vlan trunk, enabled, and `external false` written out (YANG default true,
 * Genius reads absence as false: say what is meant, so neither reader gets it wrong).
 */
export const internalPortInterface = (name: string, marker: string): Interface => ({
  name,
  type: IF_TYPE_L2VLAN,
  enabled: true,
  l2vlanMode: 'trunk',
  external: false,
  description: marker,
});

const ODL = 'odl-interface';

/**
 * The JSON of one interface entry, with augment members qualified by `odl-interface:` and
 * `aclservice:` (whose leaves differ per profile).
 */
export function interfaceEntry(i: Interface, profile: Profile): JsonObject {
  const where = `interface[${i.name}]`;
  checkNonEmpty(i.name, `${where}/name`);
  checkIdentity(i.type, `${where}/type`);
  const e: JsonObject = { name: i.name, type: i.type };
  if (i.enabled !== undefined) e['enabled'] = i.enabled;
  if (i.description !== undefined) e['description'] = i.description;
  if (i.parentInterface !== undefined) e[`${ODL}:parent-interface`] = i.parentInterface;
  if (i.datapathNodeIdentifier !== undefined) {
    checkUint64(i.datapathNodeIdentifier, `${where}/datapath-node-identifier`);
    e[`${ODL}:datapath-node-identifier`] = i.datapathNodeIdentifier;
  }
  if (i.vlanId !== undefined) {
    checkInteger(i.vlanId, 0, 4095, `${where}/vlan-id`);
    e[`${ODL}:vlan-id`] = i.vlanId;
  }
  if (i.l2vlanMode !== undefined) {
    checkOneOf(i.l2vlanMode, L2VLAN_MODES, `${where}/l2vlan-mode`);
    e[`${ODL}:l2vlan-mode`] = i.l2vlanMode;
  }
  if (i.external !== undefined) {
    // `when(type = l2vlan)`: ODL does not check it, but the leaf means nothing elsewhere.
    check(i.type === IF_TYPE_L2VLAN, `${where}/external`, 'only meaningful for l2vlan interfaces');
    e[`${ODL}:external`] = i.external;
  }
  if (i.acl !== undefined) Object.assign(e, interfaceAclMembers(profile, i.acl, where));
  return withPreserved(e, i.preserved);
}

export function putInterface(profile: Profile, i: Interface): WriteOp {
  return putOp(netvirtPaths(profile).interface(i.name), interfaceEntry(i, profile));
}

export function readInterface(r: EntryReader): Interface {
  const i: Interface = {
    name: r.requiredString('name'),
    type: r.required('type', r.identity('type', 'iana-if-type')),
  };
  assign(i, 'enabled', r.boolean('enabled'));
  assign(i, 'description', r.string('description'));
  assign(i, 'l2vlanMode', r.enumeration('l2vlan-mode', L2VLAN_MODES));
  assign(i, 'external', r.boolean('external'));
  assign(i, 'vlanId', r.integer('vlan-id', 0, 4095));
  assign(i, 'parentInterface', r.string('parent-interface'));
  assign(i, 'datapathNodeIdentifier', r.uint64('datapath-node-identifier'));
  assign(i, 'acl', readInterfaceAcl(r));
  assign(i, 'preserved', r.rest());
  return i;
}

/** Interfaces from a GET of the list container or of one entry, in either dialect. */
export function parseInterfaces(body: unknown): Interface[] {
  return parseList(body, 'interfaces', 'interface', readInterface);
}
