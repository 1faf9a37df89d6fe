/**
 * Naming rules: how Kubernetes objects map to ODL keys, and the ownership marker odlcoe puts in
 * the `description` of everything it creates. All deterministic, so a restarted watcher (or the
 * node agent) derives exactly the same names without asking anyone.
 */
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ModelValidationError } from './errors.js';
import { codePointLength } from './validate.js';
import { VPN_NAME_MAX } from './vpn.js';

/**
 * `fn` with its last results kept (forgotten all at once past `max` names): for the pure
 * functions every pod's translation calls with one of a few values (its node's IP, its node's
 * subnet), which cost a hash or an address parse each. A call that throws keeps nothing.
 */
function memoised(fn: (arg: string) => string, max = 4096): (arg: string) => string {
  const known = new Map<string, string>();
  return (arg) => {
    let value = known.get(arg);
    if (value === undefined) {
      value = fn(arg);
      if (known.size >= max) known.clear();
      known.set(arg, value);
    }
    return value;
  };
}

/** ietf-interface, elan-interface and vpn-interface name of a pod; also the OVS `iface-id`. */
export function interfaceName(namespace: string, podName: string): string {
  nonEmpty(namespace, 'namespace');
  nonEmpty(podName, 'pod name');
  return `${namespace}:${podName}`;
}

/**
 * ELAN instance of one namespace on one node. (The elan model's description text says "1 to 31
 * characters", but the type has no length restriction and ODL does not enforce one.)
 */
export function elanInstanceName(nodeInternalIp: string, namespace: string): string {
  if (isIP(nodeInternalIp) === 0)
    throw new ModelValidationError(
      'node internal IP',
      `${JSON.stringify(nodeInternalIp)} is not an IP address`,
    );
  nonEmpty(namespace, 'namespace');
  return `${nodeInternalIp}:${namespace}`;
}

const VPN_HASH_HEX = 16;
const VPN_PREFIX = VPN_NAME_MAX - VPN_HASH_HEX - 1;

/**
 * The namespace VPN name. `vpn-name` (how a vpn-interface refers to its VPN) is limited to 40
 * characters while namespace names go up to 63. A name that fits is used as is; a longer one
 * becomes its first 23 characters, a `.`, and the first 16 hex digits (64 bits) of the SHA-256
 * of the full name: 40 characters, stable, and still recognisable. The `.` cannot occur in a
 * namespace name (a DNS-1123 label), so a shortened name never equals a real namespace's name,
 * and two long names collide only if their SHA-256 prefixes do (about 1 in 2^32 even with
 * 2^16 long namespaces sharing a 23-character prefix).
 */
export function vpnName(namespace: string): string {
  nonEmpty(namespace, 'namespace');
  if (codePointLength(namespace) <= VPN_NAME_MAX) return namespace;
  const hash = createHash('sha256').update(namespace, 'utf8').digest('hex').slice(0, VPN_HASH_HEX);
  return `${[...namespace].slice(0, VPN_PREFIX).join('')}.${hash}`;
}

/**
 * The MAC of a pod's interface, derived from its IP so the watcher knows it without asking the
 * node: `0a:58:` (locally administered, unicast) and the four IPv4 bytes, or for IPv6 the last
 * four bytes of the address.
 */
export function podMac(ip: string): string {
  const family = isIP(ip);
  if (family === 0) throw new ModelValidationError('pod IP', `${JSON.stringify(ip)} is not an IP address`);
  const bytes = ipaddr.parse(ip).toByteArray().slice(-4);
  return ['0a', '58', ...bytes.map((b) => b.toString(16).padStart(2, '0'))].join(':');
}

/**
 * Java's `UUID.nameUUIDFromBytes(bytes)`: MD5 of the bytes themselves (no namespace UUID
 * prepended, unlike RFC 4122 `uuid3`), then version 3 and the IETF variant.
 */
export function nameUuidFromBytes(bytes: Uint8Array): string {
  const md5 = createHash('md5').update(bytes).digest();
  md5[6] = ((md5[6] ?? 0) & 0x0f) | 0x30;
  md5[8] = ((md5[8] ?? 0) & 0x3f) | 0x80;
  const hex = md5.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The adjacency `subnet_id` of pods on a node: `UUID.nameUUIDFromBytes(nodeIp.getBytes(UTF_8))`,
 * as NetVirt's COE renderer computed it.
 */
export const subnetId: (nodeIp: string) => string = memoised((nodeIp) => {
  if (isIP(nodeIp) === 0)
    throw new ModelValidationError('node IP', `${JSON.stringify(nodeIp)} is not an IP address`);
  return nameUuidFromBytes(Buffer.from(nodeIp, 'utf8'));
});

/**
 * The `cluster-id` UUID odlcoe writes into ODL's COE models: the name-based UUID of
 * `odlcoe:<cluster name>`, so every watcher of one cluster agrees on it without storing it.
 */
export function clusterUuid(clusterName: string): string {
  checkClusterName(clusterName);
  return nameUuidFromBytes(Buffer.from(`odlcoe:${clusterName}`, 'utf8'));
}

export interface ParsedCidr {
  family: 4 | 6;
  /** The network address in canonical form (RFC 5952 for IPv6). */
  network: string;
  prefixLength: number;
}

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
/** Dotted-quad IPv4 as ipaddr.js prints it (no leading zeros, four parts). */
const CANONICAL_IPV4 = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);

/** Subnets parsed lately: pods ask for their node's subnet on every plan. */
const parsedCidrs = new Map<string, Readonly<ParsedCidr>>();
const PARSED_CIDRS_MAX = 4096;

/** Parses a subnet; the address must be the network address (`10.11.1.0/24`, not `.5/24`). */
export function parseCidr(cidr: string): ParsedCidr {
  const known = parsedCidrs.get(cidr);
  if (known) return { ...known };
  const parsed = parseCidrUncached(cidr);
  if (parsedCidrs.size >= PARSED_CIDRS_MAX) parsedCidrs.clear();
  parsedCidrs.set(cidr, { ...parsed });
  return parsed;
}

function parseCidrUncached(cidr: string): ParsedCidr {
  const slash = cidr.indexOf('/');
  const address = cidr.slice(0, slash);
  const family = slash > 0 ? isIP(address) : 0;
  if ((family !== 4 && family !== 6) || !ipaddr.isValidCIDR(cidr)) {
    throw new ModelValidationError('subnet', `${JSON.stringify(cidr)} is not a CIDR`);
  }
  const [addr, prefixLength] = ipaddr.parseCIDR(cidr);
  const network =
    family === 4 ? ipaddr.IPv4.networkAddressFromCIDR(cidr) : ipaddr.IPv6.networkAddressFromCIDR(cidr);
  if (network.toString() !== addr.toString()) {
    throw new ModelValidationError(
      'subnet',
      `${JSON.stringify(cidr)} has host bits set (network address is ${network.toString()})`,
    );
  }
  return { family, network: canonicalIp(network.toString()), prefixLength };
}

/**
 * The gateway of a pod subnet: its first address (network + 1), as host-local is configured
 * and as ODL answers ARP for it. Refuses subnets too small to hold a gateway and one pod.
 */
export const gatewayIp: (podCidr: string) => string = memoised((podCidr) => {
  const { family, network, prefixLength } = parseCidr(podCidr);
  if (prefixLength > (family === 4 ? 30 : 126)) {
    throw new ModelValidationError(
      'subnet',
      `${JSON.stringify(podCidr)} is too small for a gateway and pods`,
    );
  }
  const bytes = ipaddr.parse(network).toByteArray();
  for (let i = bytes.length - 1; i >= 0; i -= 1) {
    bytes[i] = ((bytes[i] ?? 0) + 1) & 0xff;
    if (bytes[i] !== 0) break;
  }
  return canonicalIp(ipaddr.fromByteArray(bytes).toString());
});

/** Whether `ip` lies inside `cidr` (same family only). */
export function cidrContains(cidr: string, ip: string): boolean {
  const v4 = ipv4CidrContains(cidr, ip);
  if (v4 !== undefined) return v4;
  const [range, len] = ipaddr.parseCIDR(cidr);
  const addr = ipaddr.parse(ip);
  return addr.kind() === range.kind() && addr.match(range, len);
}

/** `cidrContains` for canonical IPv4 (a hot path: every pod's address against its node's subnet). */
function ipv4CidrContains(cidr: string, ip: string): boolean | undefined {
  const slash = cidr.indexOf('/');
  const network = cidr.slice(0, slash);
  const len = cidr.slice(slash + 1);
  if (slash < 0 || !/^(?:[12]?[0-9]|3[0-2])$/.test(len)) return undefined;
  if (!CANONICAL_IPV4.test(network) || !CANONICAL_IPV4.test(ip)) return undefined;
  const bits = Number(len);
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return (ipv4Number(network) & mask) >>> 0 === (ipv4Number(ip) & mask) >>> 0;
}

function ipv4Number(ip: string): number {
  let n = 0;
  for (const part of ip.split('.')) n = n * 256 + Number(part);
  return n;
}

/** An address as an unsigned number (for ranges and offsets). */
export function addressToBigInt(address: string): bigint {
  let n = 0n;
  for (const byte of ipaddr.parse(address).toByteArray()) n = (n << 8n) | BigInt(byte);
  return n;
}

/** The address of a number, spelled canonically (RFC 5952 for IPv6). */
export function addressFromBigInt(n: bigint, family: 4 | 6): string {
  const bytes: number[] = [];
  for (let i = 0; i < (family === 4 ? 4 : 16); i += 1) {
    bytes.unshift(Number(n & 0xffn));
    n >>= 8n;
  }
  const addr = ipaddr.fromByteArray(bytes);
  return addr.kind() === 'ipv6' ? (addr as ipaddr.IPv6).toRFC5952String() : addr.toString();
}

/** One spelling per address: RFC 5952 for IPv6, dotted quad for IPv4. */
export function canonicalIp(ip: string): string {
  // Kubernetes writes IPv4 addresses canonically: skip the parser for those (a hot path).
  if (CANONICAL_IPV4.test(ip)) return ip;
  const addr = ipaddr.parse(ip);
  return addr.kind() === 'ipv6' ? (addr as ipaddr.IPv6).toRFC5952String() : addr.toString();
}

// ---------------------------------------------------------------------------------------------
// ownership marker

/**
 * What the `uid` of a marker names, per kind:
 * - `pod`: the pod UID (ietf-interface, elan-interface; the vpn-interface has no description
 *   and is owned through the ietf-interface of the same name);
 * - `namespace`: the namespace UID (Sodium vpn-instance);
 * - `node-namespace`: `<node UID>/<namespace UID>` (elan-instance);
 * - `node-gateway`: the node UID (a node gateway's ietf-interface, elan-interface and ELAN);
 * - `gateway-vpn`: the cluster UUID (`clusterUuid`; Sodium's gateway vpn-instance);
 * - `network`: the NetworkAttachmentDefinition UID (a network's ELAN and Sodium VPN).
 * A marker with another UID but this cluster and kind is still ours: it belongs to an earlier
 * incarnation of the same-named object (a re-created pod) and is updated, not reported foreign.
 */
export const MARKER_KINDS = [
  'pod',
  'namespace',
  'node-namespace',
  'node-gateway',
  'gateway-vpn',
  'network',
] as const;
export type MarkerKind = (typeof MARKER_KINDS)[number];

export interface OwnershipMarker {
  clusterName: string;
  kind: MarkerKind;
  uid: string;
}

const MARKER_PREFIX = 'odlcoe';
/** The tightest description limit a marker must fit: Sodium vpn-instance, 1..242, no '?'. */
const MARKER_MAX = 242;
const CLUSTER_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A cluster name is a DNS-1123 label: it cannot contain ':' (the marker separator) or '?'. */
export function checkClusterName(clusterName: string): void {
  if (!CLUSTER_NAME.test(clusterName)) {
    throw new ModelValidationError(
      'cluster name',
      `${JSON.stringify(clusterName)} is not a DNS-1123 label (a-z, 0-9, '-', at most 63)`,
    );
  }
}

export function ownershipMarker(clusterName: string, kind: MarkerKind, uid: string): string {
  checkClusterName(clusterName);
  if (!(MARKER_KINDS as readonly string[]).includes(kind))
    throw new ModelValidationError('marker kind', `unknown kind ${JSON.stringify(kind)}`);
  if (!/^[\w./-]+$/.test(uid))
    throw new ModelValidationError(
      `${kind} uid`,
      `${JSON.stringify(uid)} is empty or has characters a marker cannot carry`,
    );
  const marker = `${MARKER_PREFIX}:${clusterName}:${kind}:${uid}`;
  if (marker.length > MARKER_MAX)
    throw new ModelValidationError(
      'ownership marker',
      `${marker.length} characters, above the ${MARKER_MAX} a vpn-instance description allows`,
    );
  return marker;
}

/** The uid of an ELAN instance's marker: node UID and namespace UID. */
export function elanMarkerUid(nodeUid: string, namespaceUid: string): string {
  return `${nodeUid}/${namespaceUid}`;
}

/** The marker in a description, or undefined when the description is not one. */
export function parseOwnershipMarker(description: string | undefined): OwnershipMarker | undefined {
  if (description === undefined) return undefined;
  const m = /^odlcoe:([a-z0-9-]+):([a-z-]+):([\w./-]+)$/.exec(description);
  if (!m) return undefined;
  const [, clusterName = '', kind = '', uid = ''] = m;
  if (!(MARKER_KINDS as readonly string[]).includes(kind)) return undefined;
  return { clusterName, kind: kind as MarkerKind, uid };
}

function nonEmpty(value: string, what: string): void {
  if (value.length === 0) throw new ModelValidationError(what, 'must not be empty');
}

/** What every gateway name starts with. A `.` and no `:`: never a `<namespace>:<pod>` name. */
export const GATEWAY_PREFIX = 'odlcoe-gw.';
/**
 * The cluster's gateway VPN. A `.` cannot be in a namespace name, and `vpnName` shortens only
 * names above 40 characters (to 40, with the `.` at 24): no namespace VPN can be called this.
 */
export const GATEWAY_VPN = 'odlcoe.gateways';

/** The name of a node's gateway interface (ietf-, elan- and vpn-interface) and of its ELAN. */
export function gatewayName(nodeName: string): string {
  if (!nodeName || nodeName.includes(':'))
    throw new ModelValidationError('node name', `${JSON.stringify(nodeName)} cannot name a gateway`);
  return `${GATEWAY_PREFIX}${nodeName}`;
}

export const isGatewayName = (name: string): boolean =>
  name.startsWith(GATEWAY_PREFIX) && !name.includes(':') && name.length > GATEWAY_PREFIX.length;

/** The node a gateway name is for (undefined: not a gateway name). */
export function nodeOfGatewayName(name: string): string | undefined {
  return isGatewayName(name) ? name.slice(GATEWAY_PREFIX.length) : undefined;
}
