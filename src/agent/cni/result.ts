/**
 * ADD results in every spec version odlcoe serves: one internal shape, converted on the way
 * out, and read back from the `prevResult` a DEL or CHECK carries. A runtime that decodes
 * strictly rejects a key its version lacks, so each version gets exactly its own keys.
 */
import { CNI_ERROR, CniError } from './error.js';
import { compareVersions, type CniVersion } from './version.js';

/**
 * An ADD result in odlcoe's own, version-independent form (the 1.1.0 shape). `formatResult`
 * turns it into what a runtime of a given spec version expects; `parsePrevResult` reads one
 * back from a DEL/CHECK `prevResult` in any supported version.
 */
export interface CniInterface {
  name: string;
  mac: string;
  /** The netns path; present only on interfaces inside the container. */
  sandbox?: string;
  mtu?: number;
}

export interface CniIp {
  /** CIDR notation: the address with its subnet's prefix length. */
  address: string;
  gateway?: string;
  /** Index into `interfaces`. */
  interface?: number;
}

export interface CniRoute {
  dst: string;
  gw?: string;
}

export interface CniDns {
  nameservers?: string[];
  domain?: string;
  search?: string[];
  options?: string[];
}

export interface CniResult {
  interfaces: CniInterface[];
  ips: CniIp[];
  routes: CniRoute[];
  dns: CniDns;
}

function ipVersion(cidr: string): '4' | '6' {
  return cidr.includes(':') ? '6' : '4';
}

/**
 * The result as JSON for `cniVersion`. 0.3.x and 0.4.0 carry `ips[].version`; 1.0.0 dropped
 * it; interface `mtu` exists only since 1.1.0 (an older runtime would reject the unknown key
 * when it decodes strictly).
 */
export function formatResult(result: CniResult, cniVersion: CniVersion): Record<string, unknown> {
  const legacy = compareVersions(cniVersion, '1.0.0') < 0;
  const withMtu = compareVersions(cniVersion, '1.1.0') >= 0;
  return {
    cniVersion,
    interfaces: result.interfaces.map((i) => ({
      name: i.name,
      mac: i.mac,
      ...(withMtu && i.mtu !== undefined ? { mtu: i.mtu } : {}),
      ...(i.sandbox !== undefined ? { sandbox: i.sandbox } : {}),
    })),
    ips: result.ips.map((ip) => ({
      ...(legacy ? { version: ipVersion(ip.address) } : {}),
      address: ip.address,
      ...(ip.gateway !== undefined ? { gateway: ip.gateway } : {}),
      ...(ip.interface !== undefined ? { interface: ip.interface } : {}),
    })),
    routes: result.routes.map((r) => ({ dst: r.dst, ...(r.gw !== undefined ? { gw: r.gw } : {}) })),
    dns: { ...result.dns },
  };
}

function fail(what: string): never {
  throw new CniError(CNI_ERROR.decode, `prevResult: ${what}`);
}

function str(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') fail(`${what} must be a non-empty string`);
  return value;
}

function optionalStr(value: unknown, what: string): string | undefined {
  return value === undefined ? undefined : str(value, what);
}

function list(value: unknown, what: string): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) fail(`${what} must be a list`);
  return value;
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(`${what} must be an object`);
  return value as Record<string, unknown>;
}

/** Reads a prevResult of any supported version (with or without `ips[].version`). */
export function parsePrevResult(value: unknown): CniResult {
  const r = record(value, 'prevResult');
  const interfaces = list(r.interfaces, 'interfaces').map((v, i) => {
    const o = record(v, `interfaces[${i}]`);
    const out: CniInterface = {
      name: str(o.name, `interfaces[${i}].name`),
      mac: optionalStr(o.mac, `interfaces[${i}].mac`) ?? '',
    };
    const sandbox = optionalStr(o.sandbox, `interfaces[${i}].sandbox`);
    if (sandbox !== undefined) out.sandbox = sandbox;
    if (typeof o.mtu === 'number') out.mtu = o.mtu;
    return out;
  });
  const ips = list(r.ips, 'ips').map((v, i) => {
    const o = record(v, `ips[${i}]`);
    const out: CniIp = { address: str(o.address, `ips[${i}].address`) };
    const gateway = optionalStr(o.gateway, `ips[${i}].gateway`);
    if (gateway !== undefined) out.gateway = gateway;
    if (o.interface !== undefined) {
      if (
        typeof o.interface !== 'number' ||
        !Number.isInteger(o.interface) ||
        o.interface < 0 ||
        o.interface >= interfaces.length
      ) {
        fail(`ips[${i}].interface must index interfaces`);
      }
      out.interface = o.interface;
    }
    return out;
  });
  const routes = list(r.routes, 'routes').map((v, i) => {
    const o = record(v, `routes[${i}]`);
    const out: CniRoute = { dst: str(o.dst, `routes[${i}].dst`) };
    const gw = optionalStr(o.gw, `routes[${i}].gw`);
    if (gw !== undefined) out.gw = gw;
    return out;
  });
  const dns = r.dns === undefined ? {} : (record(r.dns, 'dns') as CniDns);
  return { interfaces, ips, routes, dns };
}
