/**
 * One port's ACLs in one direction, as aclservice enforces them: nothing when port security is
 * off (`AclServiceUtils.isOfInterest`); once it is on, default deny, and a packet passes when
 * any live ACE of any of the port's security groups permits it (permit-only rules, so their
 * order and the order of the groups do not matter). ACEs marked `deleted` are on their way
 * out: aclservice has removed their flows, so they permit nothing.
 */
import { liveAces, type AceDirection } from '../acl.js';
import type { Interface } from '../interfaces.js';
import type { Profile } from '../profile.js';
import { matchAce, type AclPacket, type RemoteGroups } from './ace-match.js';

/** Why one rule of an ACL did not let the packet through. */
export interface RuleMiss {
  rule: string;
  why: string;
}

/** One security group of the port, and why none of its rules matched. */
export interface AclMiss {
  acl: string;
  /** False when the port names an ACL that ODL does not hold. */
  exists: boolean;
  /** Live rules of the direction that did not match. */
  rules: RuleMiss[];
  /** Rules of this direction marked deleted (aclservice is removing them). */
  deletedRules: string[];
  /** Live rules of the other direction (they never apply here). */
  otherDirection: number;
}

export type PortAclVerdict =
  | { state: 'off' }
  | { state: 'permitted'; acl: string; rule: string; note?: string }
  | { state: 'denied'; acls: AclMiss[] };

export function evaluatePortAcls(
  port: Interface,
  packet: AclPacket,
  groups: RemoteGroups,
  profile: Profile,
): PortAclVerdict {
  const acl = port.acl;
  if (!acl?.portSecurityEnabled) return { state: 'off' };
  const misses: AclMiss[] = [];
  for (const name of acl.securityGroups) {
    const found = groups.acl(name);
    if (!found) {
      misses.push({ acl: name, exists: false, rules: [], deletedRules: [], otherDirection: 0 });
      continue;
    }
    const live = liveAces(found);
    const mine = (d: AceDirection | undefined) => d === undefined || d === packet.direction;
    const miss: AclMiss = {
      acl: name,
      exists: true,
      rules: [],
      deletedRules: found.aces.filter((a) => a.deleted === true && mine(a.direction)).map((a) => a.ruleName),
      otherDirection: live.filter((a) => !mine(a.direction)).length,
    };
    for (const ace of live.filter((a) => mine(a.direction))) {
      const outcome = matchAce(ace, packet, groups, profile);
      if (outcome.matches)
        return {
          state: 'permitted',
          acl: name,
          rule: ace.ruleName,
          ...(outcome.note !== undefined ? { note: outcome.note } : {}),
        };
      miss.rules.push({ rule: ace.ruleName, why: outcome.why });
    }
    misses.push(miss);
  }
  return { state: 'denied', acls: misses };
}

/** One line per ACL saying why it let nothing through (for a drop's reason). */
export function describeMisses(direction: AceDirection, misses: readonly AclMiss[]): string[] {
  if (misses.length === 0)
    return ['the port has port security on and no security group: everything is dropped'];
  return misses.map((m) => {
    if (!m.exists) return `acl ${m.acl}: named in security-groups but ODL holds no such ACL`;
    const parts = [
      `acl ${m.acl}: ${m.rules.length === 0 ? `no live ${direction} rule` : `no ${direction} rule matched`}`,
    ];
    for (const r of m.rules) parts.push(`rule ${r.rule}: ${r.why}`);
    if (m.deletedRules.length > 0)
      parts.push(`rule(s) marked deleted (being removed by aclservice): ${m.deletedRules.join(', ')}`);
    return parts.join('; ');
  });
}
