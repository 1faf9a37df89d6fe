/**
 * ODL's own COE northbound models: `pod:coe/pods`, `service:service-information/services`,
 * `service:endpoints-info/endpoints` (types, bodies, parsers). `k8s-node` is ../k8s-node.ts:
 * both backends write it.
 */
import { isIP } from 'node:net';
import { assign, parseList, withPreserved, type EntryReader, type JsonObject } from '../json.js';
import { netvirtPaths } from '../paths.js';
import type { Profile } from '../profile.js';
import { check, checkInteger, checkIpAddress, checkOneOf, checkUuid } from '../validate.js';
import { NETWORK_TYPES, type NetworkType } from '../vpn.js';
import { putOp, type WriteOp } from '../write.js';

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

export interface CoePodInterface {
  uid: string;
  ipAddress?: string;
  networkId?: string;
  networkType?: NetworkType;
}

export interface CoePod {
  uid: string;
  name?: string;
  hostIpAddress?: string;
  clusterId?: string;
  /** Deprecated in the model, but NetVirt Sodium's PodListener skips a pod without it. */
  networkNs?: string;
  portMacAddress?: string;
  interfaces: CoePodInterface[];
  preserved?: JsonObject;
}

export interface CoeServicePort {
  name?: string;
  port?: number;
  /** A number or a port name, always as a string. */
  targetPort?: string;
  nodePort?: number;
}

export interface CoeService {
  uid: string;
  name?: string;
  clusterId?: string;
  /** Omit for headless services ("None" is not an IP address). */
  clusterIpAddress?: string;
  networkNs?: string;
  externalIpAddresses?: string[];
  loadBalancerIp?: string;
  ingressIpAddresses?: string[];
  /** Unkeyed list: order matters, replaced as a whole. */
  servicePorts?: CoeServicePort[];
  preserved?: JsonObject;
}

export interface CoeEndpointAddress {
  ipAddress?: string;
  hostName?: string;
  nodeName?: string;
}

export interface CoeEndpointPort {
  name?: string;
  port?: number;
}

export interface CoeEndpoints {
  uid: string;
  name?: string;
  networkNs?: string;
  endpointAddresses?: CoeEndpointAddress[];
  endpointPorts?: CoeEndpointPort[];
  preserved?: JsonObject;
}

function ip(j: JsonObject, leaf: string, value: string | undefined, where: string): void {
  if (value === undefined) return;
  checkIpAddress(value, `${where}/${leaf}`);
  j[leaf] = value;
}

function ips(j: JsonObject, leaf: string, values: readonly string[] | undefined, where: string): void {
  if (values === undefined || values.length === 0) return;
  values.forEach((v, i) => checkIpAddress(v, `${where}/${leaf}[${i}]`));
  j[leaf] = [...values];
}

function str(j: JsonObject, leaf: string, value: string | undefined): void {
  if (value !== undefined) j[leaf] = value;
}

function int32(j: JsonObject, leaf: string, value: number | undefined, where: string): void {
  if (value === undefined) return;
  checkInteger(value, INT32_MIN, INT32_MAX, `${where}/${leaf}`);
  j[leaf] = value;
}

/**
 * A COE pod entry. Beyond the model, NetVirt's consumer needs `network-NS` and
 * `host-ip-address` (or it ignores the pod) and reads `interface[0]`; a pod lacking them is
 * refused here rather than accepted by ODL and silently dropped.
 */
export function coePodEntry(p: CoePod): JsonObject {
  const where = `pods[${p.uid}]`;
  checkUuid(p.uid, `${where}/uid`);
  check(
    p.networkNs !== undefined && p.networkNs.length > 0,
    `${where}/network-NS`,
    'required by NetVirt PodListener (deprecated, but a pod without it is skipped)',
  );
  check(
    p.hostIpAddress !== undefined,
    `${where}/host-ip-address`,
    'required by NetVirt PodListener (a pod without it is skipped)',
  );
  check(
    p.interfaces.length > 0,
    `${where}/interface`,
    'NetVirt PodListener uses interface[0]; at least one is required',
  );
  const j: JsonObject = { uid: p.uid };
  str(j, 'name', p.name);
  if (p.clusterId !== undefined) {
    checkUuid(p.clusterId, `${where}/cluster-id`);
    j['cluster-id'] = p.clusterId;
  }
  ip(j, 'host-ip-address', p.hostIpAddress, where);
  str(j, 'network-NS', p.networkNs);
  str(j, 'port-mac-address', p.portMacAddress);
  const uids = new Set<string>();
  j['interface'] = p.interfaces.map((i, k) => {
    const at = `${where}/interface[${k}]`;
    checkUuid(i.uid, `${at}/uid`);
    check(!uids.has(i.uid), at, `duplicate list key ${i.uid}`);
    uids.add(i.uid);
    const ij: JsonObject = { uid: i.uid };
    ip(ij, 'ip-address', i.ipAddress, at);
    if (i.networkId !== undefined) {
      checkUuid(i.networkId, `${at}/network-id`);
      ij['network-id'] = i.networkId;
    }
    if (i.networkType !== undefined) {
      checkOneOf(i.networkType, NETWORK_TYPES, `${at}/network-type`);
      ij['network-type'] = i.networkType;
    }
    return ij;
  });
  return withPreserved(j, p.preserved);
}

export function coeServiceEntry(s: CoeService): JsonObject {
  const where = `services[${s.uid}]`;
  checkUuid(s.uid, `${where}/uid`);
  const j: JsonObject = { uid: s.uid };
  str(j, 'name', s.name);
  if (s.clusterId !== undefined) {
    checkUuid(s.clusterId, `${where}/cluster-id`);
    j['cluster-id'] = s.clusterId;
  }
  if (s.clusterIpAddress !== undefined) {
    check(
      isIP(s.clusterIpAddress) !== 0,
      `${where}/cluster-ip-address`,
      `${JSON.stringify(s.clusterIpAddress)} is not an IP address (omit it for headless services)`,
    );
    j['cluster-ip-address'] = s.clusterIpAddress;
  }
  str(j, 'network-NS', s.networkNs);
  ips(j, 'external-ip-address', s.externalIpAddresses, where);
  ip(j, 'load-balancer-IP', s.loadBalancerIp, where);
  ips(j, 'ingress-ip-address', s.ingressIpAddresses, where);
  if (s.servicePorts !== undefined && s.servicePorts.length > 0) {
    j['service-ports'] = s.servicePorts.map((p, i) => {
      const at = `${where}/service-ports[${i}]`;
      const pj: JsonObject = {};
      str(pj, 'name', p.name);
      int32(pj, 'port', p.port, at);
      str(pj, 'target-port', p.targetPort);
      int32(pj, 'node-port', p.nodePort, at);
      return pj;
    });
  }
  return withPreserved(j, s.preserved);
}

export function coeEndpointsEntry(e: CoeEndpoints): JsonObject {
  const where = `endpoints[${e.uid}]`;
  checkUuid(e.uid, `${where}/uid`);
  const j: JsonObject = { uid: e.uid };
  str(j, 'name', e.name);
  str(j, 'network-NS', e.networkNs);
  if (e.endpointAddresses !== undefined && e.endpointAddresses.length > 0) {
    j['endpoint-addresses'] = e.endpointAddresses.map((a, i) => {
      const aj: JsonObject = {};
      ip(aj, 'ip-address', a.ipAddress, `${where}/endpoint-addresses[${i}]`);
      str(aj, 'host-name', a.hostName);
      str(aj, 'node-name', a.nodeName);
      return aj;
    });
  }
  if (e.endpointPorts !== undefined && e.endpointPorts.length > 0) {
    j['endpoint-ports'] = e.endpointPorts.map((p, i) => {
      const pj: JsonObject = {};
      str(pj, 'name', p.name);
      int32(pj, 'port', p.port, `${where}/endpoint-ports[${i}]`);
      return pj;
    });
  }
  return withPreserved(j, e.preserved);
}

export function putCoePod(profile: Profile, p: CoePod): WriteOp {
  return putOp(netvirtPaths(profile).coePod(p.uid), coePodEntry(p));
}
export function putCoeService(profile: Profile, s: CoeService): WriteOp {
  return putOp(netvirtPaths(profile).coeService(s.uid), coeServiceEntry(s));
}
export function putCoeEndpoints(profile: Profile, e: CoeEndpoints): WriteOp {
  return putOp(netvirtPaths(profile).coeEndpoints(e.uid), coeEndpointsEntry(e));
}
export function readCoePod(r: EntryReader): CoePod {
  const p: CoePod = {
    uid: r.requiredString('uid'),
    interfaces: r.list('interface', (i) => {
      const e: CoePodInterface = { uid: i.requiredString('uid') };
      assign(e, 'ipAddress', i.string('ip-address'));
      assign(e, 'networkId', i.string('network-id'));
      assign(e, 'networkType', i.enumeration('network-type', NETWORK_TYPES));
      return e;
    }),
  };
  assign(p, 'name', r.string('name'));
  assign(p, 'hostIpAddress', r.string('host-ip-address'));
  assign(p, 'clusterId', r.string('cluster-id'));
  assign(p, 'networkNs', r.string('network-NS'));
  assign(p, 'portMacAddress', r.string('port-mac-address'));
  assign(p, 'preserved', r.rest());
  return p;
}

export function readCoeService(r: EntryReader): CoeService {
  const s: CoeService = { uid: r.requiredString('uid') };
  assign(s, 'name', r.string('name'));
  assign(s, 'clusterId', r.string('cluster-id'));
  assign(s, 'clusterIpAddress', r.string('cluster-ip-address'));
  assign(s, 'networkNs', r.string('network-NS'));
  assign(s, 'externalIpAddresses', r.strings('external-ip-address'));
  assign(s, 'loadBalancerIp', r.string('load-balancer-IP'));
  assign(s, 'ingressIpAddresses', r.strings('ingress-ip-address'));
  const ports = r.list('service-ports', (p) => {
    const e: CoeServicePort = {};
    assign(e, 'name', p.string('name'));
    assign(e, 'port', p.integer('port', INT32_MIN, INT32_MAX));
    assign(e, 'targetPort', p.string('target-port'));
    assign(e, 'nodePort', p.integer('node-port', INT32_MIN, INT32_MAX));
    return e;
  });
  if (ports.length > 0) s.servicePorts = ports;
  assign(s, 'preserved', r.rest());
  return s;
}

export function readCoeEndpoints(r: EntryReader): CoeEndpoints {
  const e: CoeEndpoints = { uid: r.requiredString('uid') };
  assign(e, 'name', r.string('name'));
  assign(e, 'networkNs', r.string('network-NS'));
  const addresses = r.list('endpoint-addresses', (a) => {
    const x: CoeEndpointAddress = {};
    assign(x, 'ipAddress', a.string('ip-address'));
    assign(x, 'hostName', a.string('host-name'));
    assign(x, 'nodeName', a.string('node-name'));
    return x;
  });
  if (addresses.length > 0) e.endpointAddresses = addresses;
  const ports = r.list('endpoint-ports', (p) => {
    const x: CoeEndpointPort = {};
    assign(x, 'name', p.string('name'));
    assign(x, 'port', p.integer('port', INT32_MIN, INT32_MAX));
    return x;
  });
  if (ports.length > 0) e.endpointPorts = ports;
  assign(e, 'preserved', r.rest());
  return e;
}

export function parseCoePods(body: unknown): CoePod[] {
  return parseList(body, 'coe', 'pods', readCoePod);
}
export function parseCoeServices(body: unknown): CoeService[] {
  return parseList(body, 'service-information', 'services', readCoeService);
}
export function parseCoeEndpoints(body: unknown): CoeEndpoints[] {
  return parseList(body, 'endpoints-info', 'endpoints', readCoeEndpoints);
}
