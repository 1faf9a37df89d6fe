/**
 * ELAN: `elan:elan-instances/elan-instance` (a broadcast domain) and
 * `elan:elan-interfaces/elan-interface` (a port's membership in one).
 */
import { assign, parseList, withPreserved, type EntryReader, type JsonObject } from './json.js';
import { OdlParseError } from './errors.js';
import { netvirtPaths } from './paths.js';
import type { Profile } from './profile.js';
import {
  check,
  checkInteger,
  checkIpAddress,
  checkLength,
  checkMac,
  checkNonEmpty,
  checkOneOf,
  UINT32_MAX,
} from './validate.js';
import { putOp, type WriteOp } from './write.js';

export const SEGMENT_TYPES = ['flat', 'vlan', 'vxlan', 'gre'] as const;
export type SegmentType = (typeof SEGMENT_TYPES)[number];

export interface ElanInstance {
  name: string;
  segmentType?: SegmentType;
  /** VLAN id or VNI. */
  segmentationId?: number;
  physicalNetworkName?: string;
  /** Written explicitly (false) by odlcoe; `=false` in YANG but defaults are never relied on. */
  external?: boolean;
  description?: string;
  /** Allocated and merged into the config entry by ELAN manager; odlcoe never sets it. */
  elanTag?: number;
  /** Merged in by ELAN manager (300 when absent); odlcoe never sets it. */
  macTimeout?: number;
  /** elan-segments, external-teps, evpn-name, l3vpn-name, ...: verbatim. */
  preserved?: JsonObject;
}

export interface StaticMacEntry {
  macAddress: string;
  /** An address without prefix length, despite the leaf's name. */
  ipPrefix?: string;
}

export interface ElanInterface {
  name: string;
  /** Mandatory: ODL's datastore refuses an elan-interface without it. */
  elanInstanceName: string;
  staticMacEntries?: StaticMacEntry[];
  description?: string;
  preserved?: JsonObject;
}

/** elan-instance and elan-interface descriptions: `length 1..254` (the empty string is invalid). */
export function checkElanDescription(value: string, where: string): void {
  checkLength(value, 1, 254, where);
}

export function elanInstanceEntry(e: ElanInstance): JsonObject {
  const where = `elan-instance[${e.name}]`;
  checkNonEmpty(e.name, `${where}/elan-instance-name`);
  const j: JsonObject = { 'elan-instance-name': e.name };
  if (e.elanTag !== undefined) {
    checkInteger(e.elanTag, 0, UINT32_MAX, `${where}/elan-tag`);
    j['elan-tag'] = e.elanTag;
  }
  if (e.segmentType !== undefined) {
    checkOneOf(e.segmentType, SEGMENT_TYPES, `${where}/segment-type`);
    j['segment-type'] = `elan:segment-type-${e.segmentType}`;
  }
  if (e.segmentationId !== undefined) {
    checkInteger(e.segmentationId, 0, UINT32_MAX, `${where}/segmentation-id`);
    j['segmentation-id'] = e.segmentationId;
  }
  if (e.physicalNetworkName !== undefined) j['physical-network-name'] = e.physicalNetworkName;
  if (e.external !== undefined) j['external'] = e.external;
  if (e.macTimeout !== undefined) {
    checkInteger(e.macTimeout, 0, 65535, `${where}/mac-timeout`);
    j['mac-timeout'] = e.macTimeout;
  }
  if (e.description !== undefined) {
    checkElanDescription(e.description, `${where}/description`);
    j['description'] = e.description;
  }
  return withPreserved(j, e.preserved);
}

export function elanInterfaceEntry(e: ElanInterface): JsonObject {
  const where = `elan-interface[${e.name}]`;
  checkNonEmpty(e.name, `${where}/name`);
  checkNonEmpty(e.elanInstanceName, `${where}/elan-instance-name`);
  const j: JsonObject = { name: e.name, 'elan-instance-name': e.elanInstanceName };
  if (e.staticMacEntries !== undefined && e.staticMacEntries.length > 0) {
    const seen = new Set<string>();
    j['static-mac-entries'] = e.staticMacEntries.map((m, i) => {
      const at = `${where}/static-mac-entries[${i}]`;
      checkMac(m.macAddress, `${at}/mac-address`);
      const key = m.macAddress.toLowerCase();
      check(!seen.has(key), `${at}/mac-address`, `duplicate list key ${m.macAddress}`);
      seen.add(key);
      const s: JsonObject = { 'mac-address': m.macAddress };
      if (m.ipPrefix !== undefined) {
        checkIpAddress(m.ipPrefix, `${at}/ip-prefix`);
        s['ip-prefix'] = m.ipPrefix;
      }
      return s;
    });
  }
  if (e.description !== undefined) {
    checkElanDescription(e.description, `${where}/description`);
    j['description'] = e.description;
  }
  return withPreserved(j, e.preserved);
}

export function putElanInstance(profile: Profile, e: ElanInstance): WriteOp {
  return putOp(netvirtPaths(profile).elanInstance(e.name), elanInstanceEntry(e));
}

export function putElanInterface(profile: Profile, e: ElanInterface): WriteOp {
  return putOp(netvirtPaths(profile).elanInterface(e.name), elanInterfaceEntry(e));
}

export function readElanInstance(r: EntryReader): ElanInstance {
  const e: ElanInstance = { name: r.requiredString('elan-instance-name') };
  const segmentType = r.identity('segment-type', 'elan');
  if (segmentType !== undefined) {
    const local = segmentType.replace(/^elan:segment-type-/, '');
    if (!(SEGMENT_TYPES as readonly string[]).includes(local)) {
      throw new OdlParseError(`${r.where}/segment-type`, `unknown identity ${JSON.stringify(segmentType)}`);
    }
    e.segmentType = local as SegmentType;
  }
  assign(e, 'segmentationId', r.integer('segmentation-id', 0, UINT32_MAX));
  assign(e, 'physicalNetworkName', r.string('physical-network-name'));
  assign(e, 'external', r.boolean('external'));
  assign(e, 'description', r.string('description'));
  assign(e, 'elanTag', r.integer('elan-tag', 0, UINT32_MAX));
  assign(e, 'macTimeout', r.integer('mac-timeout', 0, 65535));
  assign(e, 'preserved', r.rest());
  return e;
}

export function readElanInterface(r: EntryReader): ElanInterface {
  const e: ElanInterface = {
    name: r.requiredString('name'),
    elanInstanceName: r.requiredString('elan-instance-name'),
  };
  const macs = r.list('static-mac-entries', (m) => {
    const s: StaticMacEntry = { macAddress: m.requiredString('mac-address') };
    assign(s, 'ipPrefix', m.string('ip-prefix'));
    return s;
  });
  if (macs.length > 0) e.staticMacEntries = macs;
  assign(e, 'description', r.string('description'));
  assign(e, 'preserved', r.rest());
  return e;
}

export function parseElanInstances(body: unknown): ElanInstance[] {
  return parseList(body, 'elan-instances', 'elan-instance', readElanInstance);
}

export function parseElanInterfaces(body: unknown): ElanInterface[] {
  return parseList(body, 'elan-interfaces', 'elan-interface', readElanInterface);
}
