/**
 * What ODL holds that decides where a packet goes, indexed for the questions the analysis
 * asks: which port has this address, which ports are in this ELAN or VPN, which ports are
 * members of this security group. Built from parsed config entries of the kinds table (read
 * from ODL, never from the watcher); a kind ODL has no model for is simply empty.
 */
import type { Acl } from '../acl.js';
import type { ElanInstance, ElanInterface } from '../elan.js';
import type { Interface } from '../interfaces.js';
import type { OdlEntries, OdlKind } from '../kinds.js';
import type { Adjacency, VpnInstance, VpnInterface } from '../vpn.js';
import { familyOf, hostOf } from './addresses.js';

export interface OdlHoldings {
  interfaces: Iterable<Interface>;
  elanInstances: Iterable<ElanInstance>;
  elanInterfaces: Iterable<ElanInterface>;
  vpnInstances: Iterable<VpnInstance>;
  vpnInterfaces: Iterable<VpnInterface>;
  acls: Iterable<Acl>;
}

/** The holdings of a view of ODL (an `EntryStore`), `kinds` being the kinds it has lists for. */
export function holdingsOf(
  view: { values<K extends OdlKind>(kind: K): Iterable<OdlEntries[K]> },
  kinds: readonly string[],
): OdlHoldings {
  const of = <K extends OdlKind>(kind: K): OdlEntries[K][] =>
    kinds.includes(kind) ? [...view.values(kind)] : [];
  return {
    interfaces: of('interface'),
    elanInstances: of('elanInstance'),
    elanInterfaces: of('elanInterface'),
    vpnInstances: of('vpnInstance'),
    vpnInterfaces: of('vpnInterface'),
    acls: of('acl'),
  };
}

/** A route of a VPN: one adjacency of one vpn-interface. */
export interface VpnRoute {
  vpn: string;
  vpnInterface: string;
  adjacency: Adjacency;
}

/** A port's own address and MAC, as ODL knows them (adjacency first, then the static MAC entry). */
export interface PortAddress {
  interface: string;
  ip: string;
  mac?: string;
  /** Where ODL holds the address. */
  from: 'primary-adjacency' | 'learnt-ip' | 'static-mac-entry';
}

const byName = <T>(items: Iterable<T>, name: (t: T) => string) =>
  new Map([...items].map((t) => [name(t), t]));

export class HoldingsIndex {
  readonly interfaces: Map<string, Interface>;
  readonly elanInstances: Map<string, ElanInstance>;
  readonly elanInterfaces: Map<string, ElanInterface>;
  readonly vpnInstances: Map<string, VpnInstance>;
  readonly vpnInterfaces: Map<string, VpnInterface>;
  /** ACLs by `acl-name` (aclservice looks security groups up as `ipv4-acl` entries). */
  readonly acls: Map<string, Acl>;
  /** Every adjacency of every vpn-interface, per VPN it names. */
  readonly routes: VpnRoute[] = [];
  private readonly addresses = new Map<string, PortAddress[]>();
  private readonly members = new Map<string, { interface: string; address: string }[]>();

  constructor(h: OdlHoldings) {
    this.interfaces = byName(h.interfaces, (i) => i.name);
    this.elanInstances = byName(h.elanInstances, (e) => e.name);
    this.elanInterfaces = byName(h.elanInterfaces, (e) => e.name);
    this.vpnInstances = byName(h.vpnInstances, (v) => v.name);
    this.vpnInterfaces = byName(h.vpnInterfaces, (v) => v.name);
    this.acls = new Map(
      [...h.acls].filter((a) => a.type.endsWith(':ipv4-acl')).map((a) => [a.name, a] as const),
    );
    for (const v of this.vpnInterfaces.values()) {
      for (const vpn of v.vpnInstanceNames)
        for (const adjacency of v.adjacencies)
          this.routes.push({ vpn: vpn.vpnName, vpnInterface: v.name, adjacency });
      for (const a of v.adjacencies) {
        const ip = hostOf(a.ipAddress);
        if (ip === undefined || (a.adjacencyType ?? 'extra-route') === 'extra-route') continue;
        this.addAddress({
          interface: v.name,
          ip,
          ...(a.macAddress !== undefined ? { mac: a.macAddress } : {}),
          from: a.adjacencyType === 'learnt-ip' ? 'learnt-ip' : 'primary-adjacency',
        });
      }
    }
    for (const e of this.elanInterfaces.values())
      for (const s of e.staticMacEntries ?? []) {
        const ip = s.ipPrefix === undefined ? undefined : hostOf(s.ipPrefix);
        if (ip !== undefined)
          this.addAddress({ interface: e.name, ip, mac: s.macAddress, from: 'static-mac-entry' });
      }
    for (const i of this.interfaces.values()) {
      const acl = i.acl;
      if (!acl?.portSecurityEnabled) continue;
      for (const g of acl.securityGroups)
        for (const p of acl.allowedAddressPairs) {
          const list = this.members.get(g) ?? [];
          list.push({ interface: i.name, address: p.ipAddress });
          this.members.set(g, list);
        }
    }
  }

  private addAddress(a: PortAddress): void {
    const list = this.addresses.get(a.ip) ?? [];
    if (!list.some((x) => x.interface === a.interface)) list.push(a);
    this.addresses.set(a.ip, list);
  }

  /** The ports ODL holds this address for (one, unless ODL is inconsistent). */
  portsWithAddress(ip: string): PortAddress[] {
    return this.addresses.get(ip) ?? [];
  }

  /** A port's own addresses of a family, adjacencies first. */
  addressesOf(interfaceName: string, family?: 4 | 6): PortAddress[] {
    const found: PortAddress[] = [];
    for (const list of this.addresses.values())
      for (const a of list)
        if (a.interface === interfaceName && (family === undefined || familyOf(a.ip) === family))
          found.push(a);
    const rank = { 'primary-adjacency': 0, 'learnt-ip': 1, 'static-mac-entry': 2 } as const;
    return found.sort((x, y) => rank[x.from] - rank[y.from]);
  }

  /** Allowed-address-pair IPs of the ports with port security on that list `aclName`. */
  memberAddresses(aclName: string): readonly { interface: string; address: string }[] {
    return this.members.get(aclName) ?? [];
  }

  acl(name: string): Acl | undefined {
    return this.acls.get(name);
  }
}
