/**
 * The contract between the watcher and the agent for a pod's extra interfaces (Multus
 * attachments of odlcoe NetworkAttachmentDefinitions): the watcher allocates each attachment's
 * address and MAC cluster-wide and records the outcome in one pod annotation; the agent reads it
 * when Multus calls the plugin for that interface. One record per interface name (`net1`, the
 * `interface` of the pod's network selection element, or Multus' default `net<i+1>`), so the
 * agent finds its record by `CNI_IFNAME` alone.
 *
 * The annotation is the only place an allocation lives: a restarted watcher recovers every
 * allocation from it, so addresses never move while a pod lives (ovn-kubernetes keeps its
 * `k8s.ovn.org/pod-networks` the same way).
 */
import { isIP } from 'node:net';
import { ModelValidationError } from './errors.js';

export const ATTACHMENTS_ANNOTATION = 'odlcoe.io/attachments';

/** Why an attachment could not be allocated: the agent fails the CNI ADD with this reason. */
export const ATTACHMENT_ERROR_REASONS = [
  /** The pod's `k8s.v1.cni.cncf.io/networks` annotation does not parse. */
  'malformed-request',
  /** The selection element names a NetworkAttachmentDefinition that does not exist. */
  'unknown-network',
  /** The NetworkAttachmentDefinition exists but its config is invalid (its Event says why). */
  'invalid-network',
  /** A static `ips` entry that is not an IP or CIDR. */
  'malformed-ip',
  /** A static IP outside every subnet of the network. */
  'ip-outside-subnet',
  /** A static IP that another attachment holds (or the network reserves: gateway, exclusions). */
  'ip-taken',
  /** A static `mac` that is not a unicast 48-bit MAC. */
  'malformed-mac',
  /** A static MAC another attachment on the same network holds. */
  'mac-taken',
  /** No free address left in the network's subnet. */
  'subnet-exhausted',
] as const;
export type AttachmentErrorReason = (typeof ATTACHMENT_ERROR_REASONS)[number];

export interface AttachmentRoute {
  /** Destination prefix (`0.0.0.0/0` for the default route asked by `default-route`). */
  dst: string;
  /** Next hop; absent = on-link. */
  gw?: string;
}

/** An allocated attachment: everything the agent needs to wire it. */
export interface AttachmentAllocation {
  /** The NetworkAttachmentDefinition, `<namespace>/<name>`. */
  network: string;
  /** The ietf-/elan-/vpn-interface name in ODL, and the OVS port's `external_ids:iface-id`. */
  interfaceName: string;
  /** The interface's addresses, each with its subnet's prefix length (`10.20.0.5/24`). */
  ips: string[];
  /** Lower-case, colon-separated. */
  mac: string;
  /** The routes to set in the pod for this interface (the network's, plus the default route when asked). */
  routes: AttachmentRoute[];
}

/** An attachment the watcher refused: the agent fails the ADD with this, nothing is wired. */
export interface AttachmentFailure {
  network: string;
  error: { reason: AttachmentErrorReason; message: string };
}

export type AttachmentRecord = AttachmentAllocation | AttachmentFailure;

export const isAttachmentFailure = (r: AttachmentRecord): r is AttachmentFailure => 'error' in r;

/** Interface names Multus may use inside the pod (Linux IFNAMSIZ - 1, no `/`, `:` or spaces). */
const IFNAME = /^[A-Za-z0-9_.-]{1,15}$/;
const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;

/**
 * The annotation's value: interface name → record. Throws ModelValidationError naming the
 * offending member, so a hand-edited or foreign annotation is reported, never half-read.
 */
export function parseAttachments(value: string): Map<string, AttachmentRecord> {
  let raw: unknown;
  try {
    raw = JSON.parse(value);
  } catch (err) {
    throw new ModelValidationError(ATTACHMENTS_ANNOTATION, `not JSON: ${(err as Error).message}`);
  }
  if (!isObject(raw)) throw new ModelValidationError(ATTACHMENTS_ANNOTATION, 'not a JSON object');
  const out = new Map<string, AttachmentRecord>();
  for (const [ifname, rec] of Object.entries(raw)) {
    const where = `${ATTACHMENTS_ANNOTATION}[${ifname}]`;
    if (!IFNAME.test(ifname)) throw new ModelValidationError(where, 'not a valid interface name');
    out.set(ifname, parseRecord(rec, where));
  }
  return out;
}

/** The annotation's value for `records`, interface names sorted, so equal content is an equal string. */
export function formatAttachments(records: ReadonlyMap<string, AttachmentRecord>): string {
  const sorted = [...records.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify(Object.fromEntries(sorted.map(([k, r]) => [k, canonicalRecord(r)])));
}

function canonicalRecord(r: AttachmentRecord): AttachmentRecord {
  if (isAttachmentFailure(r))
    return { network: r.network, error: { reason: r.error.reason, message: r.error.message } };
  return {
    network: r.network,
    interfaceName: r.interfaceName,
    ips: [...r.ips],
    mac: r.mac,
    routes: r.routes.map((x) => (x.gw === undefined ? { dst: x.dst } : { dst: x.dst, gw: x.gw })),
  };
}

function parseRecord(rec: unknown, where: string): AttachmentRecord {
  if (!isObject(rec)) throw new ModelValidationError(where, 'not a JSON object');
  const network = str(rec.network, `${where}/network`);
  if (!/^[^/]+\/[^/]+$/.test(network))
    throw new ModelValidationError(
      `${where}/network`,
      `${JSON.stringify(network)} is not <namespace>/<name>`,
    );
  if (rec.error !== undefined) {
    if (!isObject(rec.error)) throw new ModelValidationError(`${where}/error`, 'not a JSON object');
    const reason = str(rec.error.reason, `${where}/error/reason`);
    if (!(ATTACHMENT_ERROR_REASONS as readonly string[]).includes(reason))
      throw new ModelValidationError(`${where}/error/reason`, `unknown reason ${JSON.stringify(reason)}`);
    return {
      network,
      error: {
        reason: reason as AttachmentErrorReason,
        message: str(rec.error.message, `${where}/error/message`),
      },
    };
  }
  const interfaceName = str(rec.interfaceName, `${where}/interfaceName`);
  if (interfaceName.length === 0) throw new ModelValidationError(`${where}/interfaceName`, 'empty');
  if (!Array.isArray(rec.ips) || rec.ips.length === 0)
    throw new ModelValidationError(`${where}/ips`, 'not a non-empty list');
  const ips = rec.ips.map((ip, i) => cidr(ip, `${where}/ips[${i}]`));
  const mac = str(rec.mac, `${where}/mac`);
  if (!MAC.test(mac))
    throw new ModelValidationError(`${where}/mac`, `${JSON.stringify(mac)} is not a lower-case MAC`);
  if (!Array.isArray(rec.routes)) throw new ModelValidationError(`${where}/routes`, 'not a list');
  const routes = rec.routes.map((r, i): AttachmentRoute => {
    const at = `${where}/routes[${i}]`;
    if (!isObject(r)) throw new ModelValidationError(at, 'not a JSON object');
    const dst = cidr(r.dst, `${at}/dst`);
    if (r.gw === undefined) return { dst };
    const gw = str(r.gw, `${at}/gw`);
    if (isIP(gw) === 0)
      throw new ModelValidationError(`${at}/gw`, `${JSON.stringify(gw)} is not an IP address`);
    return { dst, gw };
  });
  return { network, interfaceName, ips, mac, routes };
}

function cidr(v: unknown, where: string): string {
  const s = str(v, where);
  // node:net's isIP, not ipaddr.js' parser: that one also takes octal and hex forms (`010.1.1.1`)
  // which `ip` reads differently.
  const [addr = '', len = '', ...rest] = s.split('/');
  const family = isIP(addr);
  const max = family === 4 ? 32 : 128;
  if (family === 0 || rest.length > 0 || !/^\d{1,3}$/.test(len) || Number(len) > max)
    throw new ModelValidationError(where, `${JSON.stringify(s)} is not an address/prefix`);
  return s;
}

function str(v: unknown, where: string): string {
  if (typeof v !== 'string') throw new ModelValidationError(where, 'not a string');
  return v;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
