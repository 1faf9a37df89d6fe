/**
 * Would NetVirt deliver this packet? The walk follows what NetVirt programs, in the order a
 * packet meets it: the source port (bound by Genius, in an ELAN), its egress port security
 * (anti-spoofing against allowed-address-pairs, then its security groups), forwarding (bridged
 * by the ELAN when the destination is in the same one, else routed by the source's VPN through
 * adjacencies, imported routes and extra routes), then the destination port and its ingress
 * security groups. The first object that stops the packet ends the walk. Conntrack makes the
 * reply of a delivered packet pass both ports' ACLs, so only the first packet of a flow is
 * walked. Pure: it reads only the holdings it is given.
 */
import type { AceDirection } from '../acl.js';
import type { Profile } from '../profile.js';
import { addressIn, familyOf } from './addresses.js';
import type { HoldingsIndex } from './holdings.js';
import { describeMisses, evaluatePortAcls } from './port-acls.js';
import { describeProbe, type Probe } from './probe.js';
import type { Drop, Hop, ReachResult } from './result.js';
import { lookupRoute, resolveNextHop } from './vpn-routes.js';

/** A port by its ietf-interface name, an address, or both (the address then is the one used). */
export interface ReachEndpoint {
  interface?: string;
  ip?: string;
}

export interface ReachQuery {
  from: ReachEndpoint;
  to: ReachEndpoint;
  probe: Probe;
}

export class ReachQueryError extends Error {
  override readonly name = 'ReachQueryError';
}

const CONNTRACK_NOTE =
  'replies of this flow pass without a rule of their own: aclservice is stateful (conntrack commits the flow)';

class Walk {
  readonly path: Hop[] = [];
  readonly notes: string[] = [];
  drop: Drop | undefined;
  aclsPassed = false;

  hop(kind: Hop['kind'], name: string, note: string): void {
    this.path.push({ kind, name, note });
  }

  stop(drop: Drop): false {
    this.drop = drop;
    this.path.push({ kind: drop.kind, name: drop.name, note: `drops: ${drop.reason}` });
    return false;
  }
}

interface Packet {
  family: 4 | 6;
  source: string;
  destination: string;
  probe: Probe;
}

/** The port is there, enabled, bound to an OVS port, and in an existing ELAN. */
function checkPort(
  index: HoldingsIndex,
  walk: Walk,
  name: string,
  needElan: boolean,
): string | false | undefined {
  const port = index.interfaces.get(name);
  if (!port)
    return walk.stop({ kind: 'ietf-interface', name, reason: 'ODL holds no ietf-interface of this name' });
  if (port.enabled === false)
    return walk.stop({ kind: 'ietf-interface', name, reason: 'the interface is disabled (enabled false)' });
  if (port.parentInterface === undefined)
    return walk.stop({
      kind: 'ietf-interface',
      name,
      reason: `it is bound to no OVS port (no parent-interface): Genius has seen no port with iface-id ${name}`,
    });
  walk.hop('ietf-interface', name, `bound to OVS port ${port.parentInterface}`);
  const elanIf = index.elanInterfaces.get(name);
  if (!elanIf) {
    if (!needElan) return undefined;
    return walk.stop({
      kind: 'elan-interface',
      name,
      reason:
        'the port is in no ELAN: ELAN manager does not bind it, and aclservice needs its ELAN to bind its ACLs',
    });
  }
  if (!index.elanInstances.has(elanIf.elanInstanceName))
    return walk.stop({
      kind: 'elan-instance',
      name: elanIf.elanInstanceName,
      reason: `elan-interface ${name} names it, but ODL holds no such ELAN: ELAN manager ignores the interface`,
    });
  walk.hop('elan-interface', name, `in ELAN ${elanIf.elanInstanceName}`);
  return elanIf.elanInstanceName;
}

/** Port security of one port in one direction; true when the packet may go on. */
function checkPortSecurity(
  index: HoldingsIndex,
  profile: Profile,
  walk: Walk,
  name: string,
  direction: AceDirection,
  p: Packet,
): boolean {
  const port = index.interfaces.get(name);
  if (!port) return true;
  const verdict = evaluatePortAcls(port, { ...p, direction }, index, profile);
  if (verdict.state === 'off') {
    walk.notes.push(`${name}: port security is off, so no ACL applies to its ${direction}`);
    return true;
  }
  if (verdict.state === 'permitted') {
    walk.aclsPassed = true;
    walk.hop(
      'acl',
      verdict.acl,
      `rule ${verdict.rule} permits the ${direction} of ${name}${verdict.note !== undefined ? ` (${verdict.note})` : ''}`,
    );
    return true;
  }
  const reasons = describeMisses(direction, verdict.acls);
  const what = `port security is on for ${name} and no ${direction} rule of its security groups permits ${describeProbe(p.probe)} from ${p.source} to ${p.destination} (NetVirt denies by default)`;
  const only = verdict.acls.length === 1 ? verdict.acls[0] : undefined;
  return walk.stop({
    kind: only ? 'acl' : 'ietf-interface',
    name: only ? only.acl : name,
    reason: what,
    details: reasons,
    acls: verdict.acls,
  });
}

/** Egress anti-spoofing: with port security on, only MAC+IP pairs in allowed-address-pairs leave the port. */
function checkAntiSpoofing(index: HoldingsIndex, walk: Walk, name: string, source: string): boolean {
  const acl = index.interfaces.get(name)?.acl;
  if (!acl?.portSecurityEnabled) return true;
  const mac = index
    .addressesOf(name)
    .find((a) => a.ip === source)
    ?.mac?.toLowerCase();
  const allowed = acl.allowedAddressPairs.some(
    (pair) =>
      addressIn(pair.ipAddress, source) && (mac === undefined || pair.macAddress.toLowerCase() === mac),
  );
  if (allowed) return true;
  return walk.stop({
    kind: 'ietf-interface',
    name,
    reason: `port security is on and no allowed-address-pair holds ${mac ?? 'its MAC'} with ${source}: aclservice's anti-spoofing drops everything the port sends from that address`,
  });
}

interface Target {
  port: string;
  hops: Hop[];
  notes: string[];
}

type Forwarding = { targets: Target[] } | { drop: Drop; hops: Hop[] };

function forward(index: HoldingsIndex, source: string, elan: string, destination: string): Forwarding {
  const inElan = index
    .portsWithAddress(destination)
    .find((a) => index.elanInterfaces.get(a.interface)?.elanInstanceName === elan);
  if (inElan)
    return {
      targets: [
        {
          port: inElan.interface,
          hops: [
            { kind: 'elan-instance', name: elan, note: `bridges to ${inElan.interface}, in the same ELAN` },
          ],
          notes: [],
        },
      ],
    };
  const hops: Hop[] = [];
  const vpnIf = index.vpnInterfaces.get(source);
  if (!vpnIf)
    return {
      hops,
      drop: {
        kind: 'vpn-interface',
        name: source,
        reason: `${destination} is not in ELAN ${elan}, and the source has no vpn-interface: nothing routes its traffic out of its ELAN`,
      },
    };
  const vpn = vpnIf.vpnInstanceNames[0]?.vpnName;
  if (vpn === undefined)
    return { hops, drop: { kind: 'vpn-interface', name: source, reason: 'it names no VPN' } };
  hops.push({ kind: 'vpn-interface', name: source, note: `routes the port's traffic in VPN ${vpn}` });
  if (!index.vpnInstances.has(vpn))
    return {
      hops,
      drop: {
        kind: 'vpn-instance',
        name: vpn,
        reason: `vpn-interface ${source} names it, but ODL holds no such VPN`,
      },
    };
  const found = lookupRoute(index, vpn, destination);
  if (found.routes.length === 0) {
    const missed = found.notImported[0];
    const reason = missed
      ? `VPN ${vpn} does not import route ${missed.adjacency.ipAddress} of VPN ${missed.vpn} (adjacency of ${missed.vpnInterface}): ${missed.why}`
      : `no adjacency or extra route of any VPN covers ${destination}: the destination's adjacency is missing`;
    return { hops, drop: { kind: 'vpn-instance', name: vpn, reason } };
  }
  const targets: Target[] = [];
  const misses: Drop[] = [];
  for (const route of found.routes) {
    const imported =
      route.vpn === vpn ? '' : ` of VPN ${route.vpn}, imported through route target ${route.via ?? '?'}`;
    const type = route.adjacency.adjacencyType ?? 'extra-route';
    if (type !== 'extra-route') {
      targets.push({
        port: route.vpnInterface,
        hops: [
          ...hops,
          {
            kind: 'vpn-instance',
            name: vpn,
            note: `route ${route.adjacency.ipAddress} (${type} of ${route.vpnInterface}${imported})`,
          },
        ],
        notes: [],
      });
      continue;
    }
    const next = resolveNextHop(index, route);
    if ('why' in next) {
      misses.push({ kind: 'vpn-interface', name: route.vpnInterface, reason: next.why });
      continue;
    }
    targets.push({
      port: next.port,
      hops: [
        ...hops,
        {
          kind: 'vpn-instance',
          name: vpn,
          note: `extra route ${route.adjacency.ipAddress} via ${next.nextHop} (on ${route.vpnInterface}${imported}) to ${next.port}`,
        },
      ],
      notes: [
        `${destination} is an extra route: NetVirt delivers it to ${next.port}; what the node does with it then (kube-proxy) is beyond ODL`,
      ],
    });
  }
  if (targets.length === 0) return { hops, drop: misses[0]! };
  if (targets.length > 1)
    for (const t of targets)
      t.notes.push(`${targets.length} equal routes (ECMP): ${targets.map((x) => x.port).join(', ')}`);
  return { targets };
}

function resolveSource(index: HoldingsIndex, from: ReachEndpoint): { port: string; ip: string | undefined } {
  if (from.interface !== undefined)
    return { port: from.interface, ip: from.ip ?? index.addressesOf(from.interface)[0]?.ip };
  if (from.ip === undefined) throw new ReachQueryError('the source needs a port name or an address');
  if (familyOf(from.ip) === undefined)
    throw new ReachQueryError(`source ${JSON.stringify(from.ip)} is not an IP address`);
  const port = index.portsWithAddress(from.ip)[0];
  if (!port)
    throw new ReachQueryError(
      `no port in ODL has the address ${from.ip} (no adjacency, no static MAC entry)`,
    );
  return { port: port.interface, ip: from.ip };
}

/** Walks one packet from `q.from` to `q.to` through what ODL holds. */
export function analyseReach(index: HoldingsIndex, profile: Profile, q: ReachQuery): ReachResult {
  const walk = new Walk();
  const src = resolveSource(index, q.from);
  const family = src.ip === undefined ? undefined : familyOf(src.ip);
  let dstIp = q.to.ip;
  if (dstIp !== undefined && familyOf(dstIp) === undefined)
    throw new ReachQueryError(`destination ${JSON.stringify(dstIp)} is not an IP address`);
  if (dstIp === undefined) {
    if (q.to.interface === undefined)
      throw new ReachQueryError('the destination needs a port name or an address');
    dstIp = index.addressesOf(q.to.interface, family)[0]?.ip;
  }
  const result = (): ReachResult => ({
    verdict: walk.drop ? 'dropped' : 'delivered',
    source: { interface: src.port, ip: src.ip ?? '' },
    destination: { ...(q.to.interface !== undefined ? { interface: q.to.interface } : {}), ip: dstIp ?? '' },
    probe: q.probe,
    path: walk.path,
    ...(walk.drop ? { drop: walk.drop } : {}),
    notes: walk.notes,
  });
  if (src.ip === undefined || family === undefined) {
    walk.stop({
      kind: 'vpn-interface',
      name: src.port,
      reason: 'ODL holds no address for the source port (no primary adjacency, no static MAC entry)',
    });
    return result();
  }
  if (dstIp === undefined) {
    walk.stop({
      kind: 'vpn-interface',
      name: q.to.interface ?? '',
      reason: `ODL holds no IPv${family} address for the destination port (no primary adjacency, no static MAC entry)`,
    });
    return result();
  }
  if (familyOf(dstIp) !== family)
    throw new ReachQueryError(`source ${src.ip} and destination ${dstIp} are of different families`);
  if (dstIp === src.ip || index.portsWithAddress(dstIp).some((a) => a.interface === src.port)) {
    walk.notes.push(
      `${dstIp} is the source's own address: the pod's kernel loops the packet back, NetVirt never sees it`,
    );
    return result();
  }
  const packet: Packet = { family, source: src.ip, destination: dstIp, probe: q.probe };

  const elan = checkPort(index, walk, src.port, true);
  if (elan === false || elan === undefined) return result();
  if (!checkAntiSpoofing(index, walk, src.port, src.ip)) return result();
  if (!checkPortSecurity(index, profile, walk, src.port, 'egress', packet)) return result();

  const fwd = forward(index, src.port, elan, dstIp);
  if ('drop' in fwd) {
    for (const h of fwd.hops) walk.path.push(h);
    walk.stop(fwd.drop);
    return result();
  }
  // Equal routes: the packet takes one of them; the answer is the first that delivers.
  const before = walk.path.length;
  let firstDrop: { drop: Drop; path: Hop[]; notes: string[] } | undefined;
  for (const target of fwd.targets) {
    walk.path.length = before;
    walk.drop = undefined;
    const notesBefore = walk.notes.length;
    for (const h of target.hops) walk.path.push(h);
    walk.notes.push(...target.notes);
    if (q.to.interface !== undefined && q.to.interface !== target.port)
      walk.notes.push(`${dstIp} leads to ${target.port}, not to ${q.to.interface}`);
    const ok =
      checkPort(
        index,
        walk,
        target.port,
        index.interfaces.get(target.port)?.acl?.portSecurityEnabled === true,
      ) !== false && checkPortSecurity(index, profile, walk, target.port, 'ingress', packet);
    if (ok) {
      if (walk.aclsPassed) walk.notes.push(CONNTRACK_NOTE);
      return { ...result(), destination: { interface: target.port, ip: dstIp } };
    }
    firstDrop ??= { drop: walk.drop!, path: [...walk.path], notes: walk.notes.slice(notesBefore) };
    walk.notes.length = notesBefore;
  }
  walk.path.length = 0;
  walk.path.push(...firstDrop!.path);
  walk.notes.push(...firstDrop!.notes);
  walk.drop = firstDrop!.drop;
  return result();
}
