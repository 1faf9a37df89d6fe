/**
 * The allocation of a pod's attachments to odlcoe networks, as a pure function: the pod's
 * network selection, the records it already has (its `odlcoe.io/attachments` annotation), the
 * networks, and what other pods hold in, the pod's records out (attachments.ts is the contract
 * with the agent).
 *
 * - Stable: an allocation already recorded is kept while it still fits the network and the
 *   request (same network, every address in one of its subnets and not reserved, the static
 *   `ips`/`mac` unchanged); only its routes follow the network. A restarted watcher therefore
 *   changes nothing.
 * - Dynamic addresses: one per address family of the network, the lowest free address of the
 *   family's subnets in order; the MAC is derived from the first address as a pod's is
 *   (`0a:58:` + its last four bytes), skipping addresses whose MAC another attachment holds.
 * - Static requests (`ips`, `mac` of the selection element) are honoured exactly or refused
 *   with the contract's reason; a refusal allocates nothing for that interface.
 * - Selections of NADs of other plugins get no record: Multus hands those to their plugin.
 */
import { isIP } from 'node:net';
import {
  isAttachmentFailure,
  type AttachmentErrorReason,
  type AttachmentRecord,
  type AttachmentRoute,
} from './attachments.js';
import { ModelValidationError } from './errors.js';
import { canonicalIp, cidrContains, podMac } from './names.js';
import { attachmentInterfaceName } from './network-names.js';
import type { NetworkHoldings } from './attachment-holdings.js';
import {
  isReserved,
  subnetHosts,
  type NetworkDefinition,
  type NetworkSubnet,
  type OdlcoeNetwork,
} from './network-config.js';
import { parseNetworkSelection, type NetworkSelection } from './network-selection.js';

export interface AllocationInputs {
  /** The NAD `<namespace>/<name>` read (undefined: no such NAD). */
  network(namespace: string, name: string): NetworkDefinition | undefined;
  /** What attachments of other pods hold on the network `<namespace>/<name>` (attachment-holdings.ts). */
  usage(network: string): NetworkHoldings;
}

/**
 * One network's holdings during one pod's allocation: the other pods' (`base`) and what this
 * pod's attachments took so far in this call (two interfaces of one pod on one network).
 */
class Taken {
  private readonly ips = new Map<string, string>();
  private readonly macs = new Map<string, string>();
  constructor(private readonly base: NetworkHoldings) {}
  ip(ip: string): string | undefined {
    return this.ips.get(ip) ?? this.base.ipHolder(ip);
  }
  mac(mac: string): string | undefined {
    return this.macs.get(mac) ?? this.base.macHolder(mac);
  }
  take(ips: readonly string[], mac: string, holder: string): void {
    for (const ip of ips) this.ips.set(ip, holder);
    this.macs.set(mac, holder);
  }
  firstCandidate(subnet: NetworkSubnet): bigint | undefined {
    return this.base.firstCandidate?.(subnet);
  }
}

export const networkRef = (namespace: string, name: string): string => `${namespace}/${name}`;

/** The records of a pod. `networks`: its selection annotation's value (undefined: none). */
export function allocateAttachments(
  pod: { namespace: string; name: string },
  networks: string | undefined,
  existing: ReadonlyMap<string, AttachmentRecord>,
  inputs: AllocationInputs,
): Map<string, AttachmentRecord> {
  const out = new Map<string, AttachmentRecord>();
  if (networks === undefined) return out;
  let selection: NetworkSelection[];
  try {
    selection = parseNetworkSelection(networks, pod.namespace);
  } catch (err) {
    if (!(err instanceof ModelValidationError)) throw err;
    // Which interfaces were meant cannot be known: answer every default name Multus would use.
    for (const ifname of guessedInterfaces(networks))
      out.set(ifname, { network: '?/?', error: { reason: 'malformed-request', message: err.message } });
    return out;
  }
  // Addresses this pod's own attachments take, on top of the other pods'.
  const mine = new Map<string, Taken>();
  const usageOf = (network: string): Taken => {
    let u = mine.get(network);
    if (!u) {
      u = new Taken(inputs.usage(network));
      mine.set(network, u);
    }
    return u;
  };
  for (const s of selection) {
    const ref = networkRef(s.namespace, s.name);
    const fail = (reason: AttachmentErrorReason, message: string): void => {
      out.set(s.interface, {
        network: ref,
        error: { reason, message: `${s.interface} (${ref}): ${message}` },
      });
    };
    const def = inputs.network(s.namespace, s.name);
    if (def === undefined) {
      fail('unknown-network', `no NetworkAttachmentDefinition ${ref}`);
      continue;
    }
    if (def.state === 'foreign-plugin') continue;
    if (def.state === 'invalid') {
      // A NAD edited into an invalid state does not take live pods off it: what was allocated stays.
      const previous = existing.get(s.interface);
      if (previous && !isAttachmentFailure(previous) && previous.network === ref) {
        out.set(s.interface, previous);
        continue;
      }
      fail('invalid-network', `NetworkAttachmentDefinition ${ref} is invalid: ${def.message}`);
      continue;
    }
    const net = def.network;
    const usage = usageOf(ref);
    const holder = `pod ${pod.namespace}/${pod.name} ${s.interface}`;
    const result = allocateOne(net, s, existing.get(s.interface), usage);
    if ('reason' in result) {
      fail(result.reason, result.message);
      continue;
    }
    usage.take(result.ips, result.mac, holder);
    out.set(s.interface, {
      network: ref,
      interfaceName: attachmentInterfaceName(pod.namespace, pod.name, s.interface),
      ips: result.ips.map((ip) => `${ip}/${prefixOf(net, ip)}`),
      mac: result.mac,
      routes: routesOf(net, s),
    });
  }
  return out;
}

type Allocated = { ips: string[]; mac: string } | { reason: AttachmentErrorReason; message: string };

function allocateOne(
  net: OdlcoeNetwork,
  s: NetworkSelection,
  previous: AttachmentRecord | undefined,
  usage: Taken,
): Allocated {
  let staticIps: string[] | undefined;
  if (s.ips !== undefined) {
    const checked = checkStaticIps(net, s.ips, usage);
    if ('reason' in checked) return checked;
    staticIps = checked.ips;
  }
  let staticMac: string | undefined;
  if (s.mac !== undefined) {
    const mac = s.mac.toLowerCase();
    if (!isUnicastMac(mac))
      return { reason: 'malformed-mac', message: `mac ${JSON.stringify(s.mac)} is not a unicast 48-bit MAC` };
    const by = usage.mac(mac);
    if (by !== undefined) return { reason: 'mac-taken', message: `mac ${mac} is held by ${by}` };
    staticMac = mac;
  }
  const kept = keptAllocation(net, previous, staticIps, staticMac);
  if (kept) return kept;
  const ips = staticIps ?? [];
  if (staticIps === undefined) {
    const families = [...new Set(net.subnets.map((x) => x.family))];
    for (const family of families) {
      const ip = freeAddress(net, family, usage, ips.length === 0 && staticMac === undefined);
      if (ip === undefined)
        return {
          reason: 'subnet-exhausted',
          message: `no free IPv${family} address left in ${net.subnets
            .filter((x) => x.family === family)
            .map((x) => x.cidr)
            .join(', ')}`,
        };
      ips.push(ip);
    }
  }
  const mac = staticMac ?? podMac(ips[0] ?? '');
  const by = usage.mac(mac);
  if (by !== undefined)
    return { reason: 'mac-taken', message: `mac ${mac} (derived from ${ips[0] ?? '?'}) is held by ${by}` };
  return { ips, mac };
}

function checkStaticIps(
  net: OdlcoeNetwork,
  requested: readonly string[],
  usage: Taken,
): { ips: string[] } | { reason: AttachmentErrorReason; message: string } {
  const ips: string[] = [];
  for (const value of requested) {
    const [addr = '', len, ...rest] = value.split('/');
    if (isIP(addr) === 0 || rest.length > 0 || (len !== undefined && !/^\d{1,3}$/.test(len)))
      return {
        reason: 'malformed-ip',
        message: `ips entry ${JSON.stringify(value)} is not an address or address/prefix`,
      };
    const ip = canonicalIp(addr);
    const subnet = net.subnets.find((x) => cidrContains(x.cidr, ip));
    if (!subnet)
      return {
        reason: 'ip-outside-subnet',
        message: `${ip} is outside the network's subnets ${net.subnets.map((x) => x.cidr).join(', ')}`,
      };
    if (len !== undefined && len !== subnet.cidr.split('/')[1])
      return {
        reason: 'malformed-ip',
        message: `${value}: the prefix length differs from the subnet ${subnet.cidr}`,
      };
    if (isReserved(subnet, ip))
      return {
        reason: 'ip-taken',
        message: `${ip} is reserved by the network (${subnet.gateway === ip ? 'its gateway' : 'network or broadcast address, or excluded'})`,
      };
    const by = usage.ip(ip);
    if (by !== undefined) return { reason: 'ip-taken', message: `${ip} is held by ${by}` };
    if (ips.includes(ip)) return { reason: 'malformed-ip', message: `${ip} is asked for twice` };
    ips.push(ip);
  }
  if (ips.length === 0) return { reason: 'malformed-ip', message: 'ips is an empty list' };
  return { ips };
}

/** The recorded allocation, when it still fits the network and the request. */
function keptAllocation(
  net: OdlcoeNetwork,
  previous: AttachmentRecord | undefined,
  staticIps: readonly string[] | undefined,
  staticMac: string | undefined,
): { ips: string[]; mac: string } | undefined {
  if (!previous || isAttachmentFailure(previous)) return undefined;
  if (previous.network !== networkRef(net.namespace, net.name)) return undefined;
  const ips = previous.ips.map((cidr) => canonicalIp(cidr.split('/')[0] ?? ''));
  const fits = ips.every((ip) => {
    const subnet = net.subnets.find((x) => cidrContains(x.cidr, ip));
    return subnet !== undefined && !isReserved(subnet, ip);
  });
  if (!fits) return undefined;
  if (staticIps !== undefined && [...staticIps].sort().join() !== [...ips].sort().join()) return undefined;
  if (staticMac !== undefined && staticMac !== previous.mac) return undefined;
  return { ips, mac: previous.mac };
}

function freeAddress(
  net: OdlcoeNetwork,
  family: 4 | 6,
  usage: Taken,
  derivesMac: boolean,
): string | undefined {
  for (const subnet of net.subnets) {
    if (subnet.family !== family) continue;
    // Below the first candidate everything is held or reserved: the scan starts there.
    for (const ip of subnetHosts(subnet, usage.firstCandidate(subnet))) {
      if (usage.ip(ip) !== undefined) continue;
      if (derivesMac && usage.mac(podMac(ip)) !== undefined) continue;
      return ip;
    }
  }
  return undefined;
}

function prefixOf(net: OdlcoeNetwork, ip: string): string {
  const subnet = net.subnets.find((x) => cidrContains(x.cidr, ip));
  return subnet?.cidr.split('/')[1] ?? (isIP(ip) === 6 ? '128' : '32');
}

function routesOf(net: OdlcoeNetwork, s: NetworkSelection): AttachmentRoute[] {
  const routes = net.routes.map((r) => ({ ...r }));
  for (const gw of s.defaultRoute ?? [])
    routes.push({ dst: isIP(gw) === 6 ? '::/0' : '0.0.0.0/0', gw: canonicalIp(gw) });
  return routes;
}

const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/;
function isUnicastMac(mac: string): boolean {
  if (!MAC.test(mac) || mac === '00:00:00:00:00:00') return false;
  return (parseInt(mac.slice(0, 2), 16) & 1) === 0;
}

/** Multus' default names for as many elements as a malformed annotation seems to have. */
function guessedInterfaces(networks: string): string[] {
  let count = networks.split(',').length;
  try {
    const raw: unknown = JSON.parse(networks);
    if (Array.isArray(raw)) count = Math.max(1, raw.length);
  } catch {
    // Not JSON: the comma count it is.
  }
  return Array.from({ length: Math.min(count, 32) }, (_, i) => `net${i + 1}`);
}
