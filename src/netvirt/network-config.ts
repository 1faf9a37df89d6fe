/**
 * An odlcoe NetworkAttachmentDefinition (`k8s.cni.cncf.io/v1`): its `spec.config` read and
 * validated into a network, as pure code (docs/networks.md is the reference for the schema).
 *
 * A NAD is odlcoe's when its config's `type` is `odlcoe`; any other NAD belongs to another
 * plugin and is left alone. An odlcoe config never has an `ipam` member: the agent tells a
 * Multus delegate call (an extra interface) from the primary conflist call (which always
 * carries host-local `ipam`) by exactly that, and the watcher, not an IPAM plugin, allocates
 * the addresses of extra interfaces. Members the watcher does not read (`cniVersion`, `name`,
 * `mtu`, `socket`, `capabilities`, ...) are the agent's, the shim's or Multus', and left to them.
 */
import { isIP } from 'node:net';
import type { AttachmentRoute } from './attachments.js';
import { ModelValidationError } from './errors.js';
import {
  addressFromBigInt,
  addressToBigInt,
  canonicalIp,
  cidrContains,
  gatewayIp,
  parseCidr,
} from './names.js';
import { NETWORK_PREFIX, networkVpnName } from './network-names.js';

export const NAD_API_VERSION = 'k8s.cni.cncf.io/v1';
export const NAD_KIND = 'NetworkAttachmentDefinition';
export const NAD_PLURAL = 'network-attachment-definitions';
export const ODLCOE_CNI_TYPE = 'odlcoe';

/** The NAD as the API serves it (only what odlcoe reads). */
export interface NetworkAttachmentDefinition {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    /** Typed as client-node types it; a raw read (JSON) has the RFC 3339 string. */
    creationTimestamp?: Date;
  };
  spec?: { config?: string };
}

/**
 * How an odlcoe network reaches beyond its L2 domain: `l2` not at all; `vpn` through a VPN of
 * its own (isolated); `namespace` through its namespace's VPN, the one the namespace's pods'
 * primary interfaces are in (so it joins the pod network's routing domain).
 */
export const NETWORK_ROUTINGS = ['l2', 'vpn', 'namespace'] as const;
export type NetworkRouting = (typeof NETWORK_ROUTINGS)[number];

/** Whether the network's attachments get vpn-interfaces (in its own VPN or its namespace's). */
export const isRouted = (net: { routing: NetworkRouting }): boolean => net.routing !== 'l2';

export interface NetworkSubnet {
  /** Canonical network address and prefix (`10.50.0.0/24`). */
  cidr: string;
  family: 4 | 6;
  /** The subnet's gateway (reserved, never allocated); always set on a routed network. */
  gateway?: string;
  /** Inclusive ranges never allocated (exclusions), as numbers. */
  excluded: { from: bigint; to: bigint }[];
}

/** A valid odlcoe network. */
export interface OdlcoeNetwork {
  namespace: string;
  name: string;
  uid: string;
  routing: NetworkRouting;
  /** An ELAN an ODL user made, attached to and never written; undefined: odlcoe's own ELAN. */
  elan?: string;
  subnets: NetworkSubnet[];
  /** Routes every attachment gets (`gw` inside one of the subnets, or on-link). */
  routes: AttachmentRoute[];
}

/** What a NAD means to odlcoe. */
export type NetworkDefinition =
  | { state: 'odlcoe'; network: OdlcoeNetwork }
  /** Another plugin's NAD (or a config odlcoe cannot tell is its own: no `type`). */
  | { state: 'foreign-plugin' }
  | { state: 'invalid'; message: string };

/** Reads a NAD. Never throws for bad input: an invalid odlcoe config is a precise message. */
export function readNetworkDefinition(nad: NetworkAttachmentDefinition): NetworkDefinition {
  const namespace = nad.metadata?.namespace ?? '';
  const name = nad.metadata?.name ?? '';
  const uid = nad.metadata?.uid ?? '';
  const text = nad.spec?.config;
  if (text === undefined || text.trim() === '') return { state: 'foreign-plugin' };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    // Not JSON at all: Multus cannot use it either, but whose it is cannot be told.
    return looksLikeOdlcoe(text)
      ? { state: 'invalid', message: `spec.config is not JSON: ${(err as Error).message}` }
      : { state: 'foreign-plugin' };
  }
  if (!isObject(raw)) return { state: 'foreign-plugin' };
  if (Array.isArray(raw.plugins)) {
    if (raw.plugins.some((p) => isObject(p) && p.type === ODLCOE_CNI_TYPE))
      return {
        state: 'invalid',
        message: 'spec.config: an odlcoe network is a single plugin config, not a member of a "plugins" list',
      };
    return { state: 'foreign-plugin' };
  }
  if (raw.type !== ODLCOE_CNI_TYPE) return { state: 'foreign-plugin' };
  try {
    return { state: 'odlcoe', network: readOdlcoeConfig(raw, namespace, name, uid) };
  } catch (err) {
    if (!(err instanceof ModelValidationError)) throw err;
    return { state: 'invalid', message: err.message };
  }
}

const looksLikeOdlcoe = (text: string) => /"type"\s*:\s*"odlcoe"/.test(text);

function readOdlcoeConfig(
  raw: Record<string, unknown>,
  namespace: string,
  name: string,
  uid: string,
): OdlcoeNetwork {
  if (!namespace || !name || !uid)
    throw new ModelValidationError('NetworkAttachmentDefinition', 'without metadata.namespace, name or uid');
  if (raw.ipam !== undefined)
    throw new ModelValidationError(
      'spec.config/ipam',
      'an odlcoe network has no "ipam": the watcher allocates its addresses (give "subnets")',
    );
  const routing = raw.routing === undefined ? 'l2' : raw.routing;
  if (typeof routing !== 'string' || !(NETWORK_ROUTINGS as readonly string[]).includes(routing))
    throw new ModelValidationError(
      'spec.config/routing',
      `${JSON.stringify(routing)} is not "l2", "vpn" or "namespace"`,
    );
  let elan: string | undefined;
  if (raw.elan !== undefined) {
    if (typeof raw.elan !== 'string' || raw.elan === '')
      throw new ModelValidationError('spec.config/elan', 'not a non-empty ELAN name');
    if (raw.elan.startsWith(NETWORK_PREFIX))
      throw new ModelValidationError(
        'spec.config/elan',
        `${JSON.stringify(raw.elan)}: names starting with ${NETWORK_PREFIX} are odlcoe's own networks`,
      );
    if (routing !== 'l2')
      throw new ModelValidationError(
        'spec.config/routing',
        'a network on an existing ELAN is "l2": odlcoe never changes an ELAN it did not make',
      );
    elan = raw.elan;
  }
  // A routed network's VPN name must fit ODL's limit (network-names.ts).
  if (routing === 'vpn') networkVpnName(namespace, name);
  const subnets = readSubnets(raw.subnets, routing as NetworkRouting);
  const routes = readRoutes(raw.routes, subnets);
  const network: OdlcoeNetwork = {
    namespace,
    name,
    uid,
    routing: routing as NetworkRouting,
    subnets,
    routes,
  };
  if (elan !== undefined) network.elan = elan;
  return network;
}

function readSubnets(value: unknown, routing: NetworkRouting): NetworkSubnet[] {
  const where = 'spec.config/subnets';
  if (!Array.isArray(value) || value.length === 0)
    throw new ModelValidationError(where, 'not a non-empty list of {"cidr", "gateway", "exclude"}');
  const out: NetworkSubnet[] = [];
  value.forEach((s, i) => {
    const at = `${where}[${i}]`;
    if (!isObject(s)) throw new ModelValidationError(at, 'not a JSON object');
    const extra = Object.keys(s).filter((k) => !['cidr', 'gateway', 'exclude'].includes(k));
    if (extra.length > 0)
      throw new ModelValidationError(
        at,
        `unknown member(s) ${extra.map((k) => JSON.stringify(k)).join(', ')}`,
      );
    if (typeof s.cidr !== 'string') throw new ModelValidationError(`${at}/cidr`, 'not a string');
    let parsed;
    try {
      parsed = parseCidr(s.cidr);
    } catch (err) {
      if (!(err instanceof ModelValidationError)) throw err;
      throw new ModelValidationError(`${at}/cidr`, err.reason);
    }
    const cidr = `${parsed.network}/${parsed.prefixLength}`;
    if (parsed.prefixLength > (parsed.family === 4 ? 30 : 126))
      throw new ModelValidationError(`${at}/cidr`, `${cidr} is too small for a gateway and attachments`);
    for (const other of out)
      if (cidrsOverlap(other.cidr, cidr))
        throw new ModelValidationError(`${at}/cidr`, `${cidr} overlaps ${other.cidr}`);
    const subnet: NetworkSubnet = { cidr, family: parsed.family, excluded: [] };
    if (s.gateway !== undefined) {
      if (typeof s.gateway !== 'string' || isIP(s.gateway) === 0)
        throw new ModelValidationError(`${at}/gateway`, `${JSON.stringify(s.gateway)} is not an IP address`);
      const gw = canonicalIp(s.gateway);
      if (!cidrContains(cidr, gw) || !isHost(cidr, gw))
        throw new ModelValidationError(`${at}/gateway`, `${gw} is not a host address of ${cidr}`);
      subnet.gateway = gw;
    } else if (routing !== 'l2') {
      // ODL answers ARP for the gateway of a routed subnet: the first address, as for pods.
      subnet.gateway = gatewayIp(cidr);
    }
    if (s.exclude !== undefined) {
      if (!Array.isArray(s.exclude))
        throw new ModelValidationError(`${at}/exclude`, 'not a list of addresses or CIDRs');
      s.exclude.forEach((x, j) => subnet.excluded.push(readExclusion(x, cidr, `${at}/exclude[${j}]`)));
    }
    out.push(subnet);
  });
  return out;
}

function readExclusion(value: unknown, subnet: string, where: string): { from: bigint; to: bigint } {
  if (typeof value !== 'string') throw new ModelValidationError(where, 'not a string');
  if (isIP(value) !== 0) {
    if (!cidrContains(subnet, value)) throw new ModelValidationError(where, `${value} is outside ${subnet}`);
    const n = addressToBigInt(value);
    return { from: n, to: n };
  }
  let range;
  try {
    range = cidrRange(value);
  } catch (err) {
    if (!(err instanceof ModelValidationError)) throw err;
    throw new ModelValidationError(where, `${JSON.stringify(value)} is not an address or a CIDR`);
  }
  const outer = cidrRange(subnet);
  if (range.from < outer.from || range.to > outer.to)
    throw new ModelValidationError(where, `${value} is not inside ${subnet}`);
  return range;
}

function readRoutes(value: unknown, subnets: readonly NetworkSubnet[]): AttachmentRoute[] {
  const where = 'spec.config/routes';
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new ModelValidationError(where, 'not a list of {"dst", "gw"}');
  return value.map((r, i): AttachmentRoute => {
    const at = `${where}[${i}]`;
    if (!isObject(r)) throw new ModelValidationError(at, 'not a JSON object');
    if (typeof r.dst !== 'string') throw new ModelValidationError(`${at}/dst`, 'not a string');
    let dst;
    try {
      const p = parseCidr(r.dst);
      dst = `${p.network}/${p.prefixLength}`;
    } catch (err) {
      if (!(err instanceof ModelValidationError)) throw err;
      throw new ModelValidationError(`${at}/dst`, err.reason);
    }
    if (r.gw === undefined) return { dst };
    if (typeof r.gw !== 'string' || isIP(r.gw) === 0)
      throw new ModelValidationError(`${at}/gw`, `${JSON.stringify(r.gw)} is not an IP address`);
    const gw = canonicalIp(r.gw);
    if (isIP(gw) !== isIP(dst.split('/')[0] ?? ''))
      throw new ModelValidationError(`${at}/gw`, `${gw} is not of ${dst}'s family`);
    if (!subnets.some((s) => cidrContains(s.cidr, gw)))
      throw new ModelValidationError(`${at}/gw`, `${gw} is not inside any subnet of the network`);
    return { dst, gw };
  });
}

/** First and last address of a CIDR, as numbers. */
export function cidrRange(cidr: string): { from: bigint; to: bigint; family: 4 | 6 } {
  const { family, network, prefixLength } = parseCidr(cidr);
  const bits = BigInt((family === 4 ? 32 : 128) - prefixLength);
  const from = addressToBigInt(network);
  return { from, to: from + (1n << bits) - 1n, family };
}

/** Whether two CIDRs share an address (of one family, one contains the other's first address). */
export function cidrsOverlap(a: string, b: string): boolean {
  const x = cidrRange(a);
  const y = cidrRange(b);
  return x.family === y.family && x.from <= y.to && y.from <= x.to;
}

/** Neither the network address nor (IPv4) the broadcast address. */
function isHost(cidr: string, ip: string): boolean {
  const r = cidrRange(cidr);
  const n = addressToBigInt(ip);
  return n !== r.from && (r.family === 6 || n !== r.to);
}

/** Whether `ip` is never handed out on `subnet`: network, broadcast, gateway or excluded. */
export function isReserved(subnet: NetworkSubnet, ip: string): boolean {
  const n = addressToBigInt(ip);
  if (!isHost(subnet.cidr, ip)) return true;
  if (subnet.gateway !== undefined && canonicalIp(subnet.gateway) === canonicalIp(ip)) return true;
  return subnet.excluded.some((x) => n >= x.from && n <= x.to);
}

/** The allocatable addresses of a subnet in order, lowest first (from `from` on, when given). */
export function* subnetHosts(subnet: NetworkSubnet, from?: bigint): Generator<string> {
  const r = cidrRange(subnet.cidr);
  const start = from !== undefined && from > r.from ? from : r.from + 1n;
  for (let n = start; n <= r.to; n += 1n) {
    // Jump over an excluded range at once (an IPv6 exclusion may be a /64).
    const excluded = subnet.excluded.find((x) => n >= x.from && n <= x.to);
    if (excluded) {
      n = excluded.to;
      continue;
    }
    const ip = addressFromBigInt(n, r.family);
    if (!isReserved(subnet, ip)) yield ip;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
