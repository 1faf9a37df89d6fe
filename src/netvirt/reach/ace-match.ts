/**
 * Whether one ACE lets one packet through, by what aclservice programs for it rather than by
 * what the YANG suggests (netvirt `aclservice/impl/.../utils/AclServiceOFFlowBuilder.java`,
 * `AclServiceUtils.java`, `IngressAclServiceImpl` / `EgressAclServiceImpl`; netvirt-features
 * §3.1):
 * - every ACE permits: no code reads `actions`, so a `deny` action permits too;
 * - an ACE without `direction` is never programmed (aclservice dereferences it unchecked);
 * - the networks match literally: `source-*-network` against the packet's source,
 *   `destination-*-network` against its destination, and the family is whichever leaf is
 *   present; an ACE with no family gets no ethertype match, which a protocol-less flow does not
 *   need but a TCP/UDP flow does (OpenFlow refuses a port match without it);
 * - no protocol: an IP match only, ports ignored; TCP/UDP: source and destination ranges are
 *   separate flows (either one matching is enough); ICMP: a range's lower port is the type and
 *   its upper port the code, and `protocol 1` on an IPv6 ACE means ICMPv6; any other protocol
 *   (SCTP, ICMPv6 as 58) ignores ports;
 * - `remote-group-id`: the far address must be an allowed-address-pair IP of a port that lists
 *   that ACL in `security-groups` with port security on; on Aluminium a remote ACL without
 *   `acl-tag` makes aclservice skip the ACE ("remoteAclTag … invalid").
 */
import { aceFamily, type Ace, type AceDirection, type Acl } from '../acl.js';
import type { Profile } from '../profile.js';
import { addressIn } from './addresses.js';
import { ECHO_REQUEST, probeProtocolNumber, type Probe } from './probe.js';

/** One packet as an ACL on one port sees it. */
export interface AclPacket {
  direction: AceDirection;
  family: 4 | 6;
  source: string;
  destination: string;
  probe: Probe;
}

/** What an ACE's `remote-group-id` needs: the ACL, and its members' allowed addresses. */
export interface RemoteGroups {
  acl(name: string): Acl | undefined;
  /** Allowed-address-pair IPs (addresses or prefixes) of the ports in the group with port security on. */
  memberAddresses(aclName: string): readonly { interface: string; address: string }[];
}

export type AceOutcome = { matches: true; note?: string } | { matches: false; why: string };

const no = (why: string): AceOutcome => ({ matches: false, why });

function networksMatch(ace: Ace, p: AclPacket): AceOutcome | undefined {
  const m = ace.matches;
  const src = p.family === 4 ? m.sourceIpv4Network : m.sourceIpv6Network;
  const dst = p.family === 4 ? m.destinationIpv4Network : m.destinationIpv6Network;
  if (src !== undefined && !addressIn(src, p.source))
    return no(`source ${p.source} is outside source-ipv${p.family}-network ${src}`);
  if (dst !== undefined && !addressIn(dst, p.destination))
    return no(`destination ${p.destination} is outside destination-ipv${p.family}-network ${dst}`);
  return undefined;
}

function portsMatch(ace: Ace, p: AclPacket, protocol: number): AceOutcome {
  const { sourcePortRange: sr, destinationPortRange: dr } = ace.matches;
  const probe = p.probe;
  if (probe.protocol === 'icmp') {
    if (protocol !== 1) return { matches: true, note: `ports are ignored for protocol ${protocol}` };
    const echo = ECHO_REQUEST[p.family];
    const ranges = [sr, dr].filter((r) => r !== undefined);
    if (ranges.length === 0 || ranges.some((r) => r.lower === echo.type && r.upper === echo.code))
      return { matches: true };
    return no(
      `matches ICMP type/code ${ranges.map((r) => `${r.lower}/${r.upper}`).join(', ')}, not echo request ${echo.type}/${echo.code}`,
    );
  }
  if (probe.protocol === 'sctp')
    return { matches: true, note: 'aclservice ignores ports for protocols other than TCP, UDP and ICMP' };
  if (dr === undefined && sr === undefined) return { matches: true };
  if (dr !== undefined && probe.port >= dr.lower && probe.port <= dr.upper) return { matches: true };
  const parts: string[] = [];
  if (dr !== undefined) parts.push(`destination port ${probe.port} is outside ${dr.lower}-${dr.upper}`);
  if (sr !== undefined)
    parts.push(`its source-port-range ${sr.lower}-${sr.upper} matches the client's port, which is ephemeral`);
  return no(parts.join('; '));
}

function remoteGroupMatch(
  ace: Ace,
  p: AclPacket,
  groups: RemoteGroups,
  profile: Profile,
): AceOutcome | undefined {
  const group = ace.remoteGroupId;
  if (group === undefined) return undefined;
  const remoteAcl = groups.acl(group);
  if (profile === 'aluminium' && remoteAcl?.aclTag === undefined)
    return no(
      `remote group ${group} ${remoteAcl ? 'has no acl-tag' : 'does not exist'}: Aluminium's aclservice skips the rule`,
    );
  const far = p.direction === 'ingress' ? p.source : p.destination;
  const members = groups.memberAddresses(group);
  const hit = members.find((m) => addressIn(m.address, far));
  if (hit)
    return { matches: true, note: `${far} is an allowed address of ${hit.interface}, a member of ${group}` };
  return no(
    `${far} is no allowed-address-pair of the ${new Set(members.map((m) => m.interface)).size} port(s) with port security on in remote group ${group}`,
  );
}

/** Whether `ace` lets `p` through; ACEs of the other direction are the caller's to skip. */
export function matchAce(ace: Ace, p: AclPacket, groups: RemoteGroups, profile: Profile): AceOutcome {
  if (ace.direction === undefined) return no('it has no direction, so aclservice never programs it');
  const family = aceFamily(ace.matches);
  const protocol = ace.matches.protocol;
  if (family === undefined && (protocol === 6 || protocol === 17))
    return no('it has no address family: its TCP/UDP flows lack the ethertype OpenFlow requires');
  if (family !== undefined && family !== p.family)
    return no(`it is an IPv${family} rule, the packet is IPv${p.family}`);
  const nets = networksMatch(ace, p);
  if (nets) return nets;
  const packetProtocol = probeProtocolNumber(p.probe, p.family);
  // aclservice turns protocol 1 on an IPv6 ACE into ICMPv6.
  const aceProtocol = protocol === 1 && family === 6 ? 58 : protocol;
  if (aceProtocol !== undefined && aceProtocol !== packetProtocol)
    return no(`protocol ${aceProtocol} is not the packet's ${packetProtocol}`);
  const ports: AceOutcome = aceProtocol === undefined ? { matches: true } : portsMatch(ace, p, aceProtocol);
  if (!ports.matches) return ports;
  const remote = remoteGroupMatch(ace, p, groups, profile);
  if (remote && !remote.matches) return remote;
  const notes = [
    ports.note,
    remote?.note,
    ace.action === 'deny' ? 'its action is deny, but aclservice permits on every ACE' : undefined,
  ].filter((n) => n !== undefined);
  return notes.length > 0 ? { matches: true, note: notes.join('; ') } : { matches: true };
}
