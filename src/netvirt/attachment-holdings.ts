/**
 * What the attachments of every pod hold on each network (addresses, MACs), as an index kept
 * up to date one pod at a time, so that allocating one pod's attachments costs what that pod
 * asks for, not what the whole cluster holds (the allocation of N pods one after the other
 * would otherwise be quadratic).
 *
 * - `set(pod, records)` replaces what one pod holds (undefined or no records: it holds nothing
 *   any more); the watcher calls it for every pod change it sees and for every record it writes.
 * - `holdings(network, except)` answers who holds an address or a MAC, not counting the pod
 *   `except` (the one being allocated: its own records are kept or replaced, never in its way).
 * - `firstCandidate(network, subnet)` says where the lowest free address of a subnet may be:
 *   every address below it is held or reserved (gateway, exclusion, network address). It only
 *   moves up while addresses below are found held, and down when one is released, so the
 *   lowest-free scan does not walk over every held address again for every pod.
 *
 * Two pods may hold the same address (records written by hand, or an old watcher's): each
 * holder is kept, and the address is free only when the last one lets it go.
 */
import { isAttachmentFailure, type AttachmentRecord } from './attachments.js';
import { addressFromBigInt, addressToBigInt, canonicalIp } from './names.js';
import { cidrRange, isReserved, type NetworkSubnet } from './network-config.js';

/** Who holds what on one network, for one allocation (attachment-allocation.ts). */
export interface NetworkHoldings {
  /** Who holds `ip` (canonical), for messages: `pod <ns>/<name> <ifname>`; undefined: free. */
  ipHolder(ip: string): string | undefined;
  macHolder(mac: string): string | undefined;
  /** Where to start the lowest-free scan of `subnet` (undefined: at its start). */
  firstCandidate?(subnet: NetworkSubnet): bigint | undefined;
}

/** One pod's hold on a value: the pod (`<ns>/<name>`) and its interface. */
interface Holder {
  pod: string;
  ifname: string;
}

class NetworkIndex {
  readonly ips = new Map<string, Holder[]>();
  readonly macs = new Map<string, Holder[]>();
  /** Subnet (as `subnetKey`) → its range and `at`: every address of it below is held or reserved. */
  readonly cursors = new Map<string, { from: bigint; to: bigint; at: bigint }>();
}

const add = (map: Map<string, Holder[]>, key: string, h: Holder) => {
  const list = map.get(key);
  if (list) list.push(h);
  else map.set(key, [h]);
};

const remove = (map: Map<string, Holder[]>, key: string, pod: string): boolean => {
  const list = map.get(key);
  if (!list) return false;
  const rest = list.filter((h) => h.pod !== pod);
  if (rest.length === list.length) return false;
  if (rest.length === 0) map.delete(key);
  else map.set(key, rest);
  return true;
};

const holderOf = (list: Holder[] | undefined, except: string): string | undefined => {
  const h = list?.find((x) => x.pod !== except);
  return h && `pod ${h.pod} ${h.ifname}`;
};

/** A subnet's cursor key: its reserved addresses are part of it (a NAD edit starts it over). */
const subnetKey = (s: NetworkSubnet): string =>
  `${s.cidr} ${s.gateway ?? ''} ${s.excluded.map((x) => `${x.from}-${x.to}`).join(',')}`;

export class AttachmentHoldings {
  private readonly networks = new Map<string, NetworkIndex>();
  /** Pod → the allocated records it holds (refusals hold nothing). */
  private readonly pods = new Map<
    string,
    { network: string; ifname: string; ips: string[]; mac: string }[]
  >();

  /** Number of pods holding something. */
  get size(): number {
    return this.pods.size;
  }

  clear(): void {
    this.networks.clear();
    this.pods.clear();
  }

  /** What `pod` (`<ns>/<name>`) holds from now on (undefined: nothing). */
  set(pod: string, records: ReadonlyMap<string, AttachmentRecord> | undefined): void {
    for (const old of this.pods.get(pod) ?? []) {
      const net = this.networks.get(old.network);
      if (!net) continue;
      for (const ip of old.ips) if (remove(net.ips, ip, pod)) this.released(net, ip);
      remove(net.macs, old.mac, pod);
    }
    this.pods.delete(pod);
    const held = [...(records ?? [])].flatMap(([ifname, r]) =>
      isAttachmentFailure(r)
        ? []
        : [
            {
              network: r.network,
              ifname,
              ips: r.ips.map((c) => canonicalIp(c.split('/')[0] ?? '')),
              mac: r.mac,
            },
          ],
    );
    if (held.length === 0) return;
    this.pods.set(pod, held);
    for (const h of held) {
      let net = this.networks.get(h.network);
      if (!net) {
        net = new NetworkIndex();
        this.networks.set(h.network, net);
      }
      const holder = { pod, ifname: h.ifname };
      for (const ip of h.ips) add(net.ips, ip, holder);
      add(net.macs, h.mac, holder);
    }
  }

  /** A released address: the cursor of its subnet goes back to it if it was above. */
  private released(net: NetworkIndex, ip: string): void {
    if (net.cursors.size === 0) return;
    const n = addressToBigInt(ip);
    for (const c of net.cursors.values()) if (n >= c.from && n <= c.to && n < c.at) c.at = n;
  }

  /** Who holds what on `network`, `except` (`<ns>/<name>`) not counted. */
  holdings(network: string, except: string): NetworkHoldings {
    const net = this.networks.get(network);
    if (!net) return { ipHolder: () => undefined, macHolder: () => undefined };
    return {
      ipHolder: (ip) => holderOf(net.ips.get(ip), except),
      macHolder: (mac) => holderOf(net.macs.get(mac), except),
      firstCandidate: (subnet) => this.advance(net, subnet),
    };
  }

  /** Moves the subnet's cursor over held and reserved addresses; returns it. */
  private advance(net: NetworkIndex, subnet: NetworkSubnet): bigint {
    const key = subnetKey(subnet);
    const range = cidrRange(subnet.cidr);
    let cursor = net.cursors.get(key);
    if (!cursor) {
      cursor = { from: range.from, to: range.to, at: range.from };
      net.cursors.set(key, cursor);
    }
    while (cursor.at <= range.to) {
      const at = cursor.at;
      // Jump over an excluded range at once (an IPv6 exclusion may be a /64).
      const excluded = subnet.excluded.find((x) => at >= x.from && at <= x.to);
      if (excluded) {
        cursor.at = excluded.to + 1n;
        continue;
      }
      const ip = addressFromBigInt(at, range.family);
      // Held by anyone, the pod being allocated included: its own kept addresses are not free.
      if (!net.ips.has(ip) && !isReserved(subnet, ip)) break;
      cursor.at = at + 1n;
    }
    return cursor.at;
  }
}
