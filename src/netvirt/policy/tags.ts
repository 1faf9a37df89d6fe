/**
 * `acl-tag`s (Aluminium): since Magnesium the writer of an ACL hands out its tag (netvirt
 * 3e7aaee2f3; a remote-group rule whose ACL has none is skipped). ODL is the record, as for
 * route distinguishers: an ACL of ours keeps the tag it has, a new one gets the lowest tag of
 * odlcoe's range that no ACL in ODL holds and no ACL key has reserved (many keys plan ACLs:
 * plan-policy.ts). The range starts above Neutron's id pool
 * (ACL-TAG-POOL, 1..10000), so a controller shared with Neutron never sees one tag twice.
 */
import type { Acl } from '../acl.js';

export const ACL_TAG_FIRST = 10_001;
export const ACL_TAG_LAST = 65_535;

/**
 * Tags handed out but not yet seen in ODL, by ACL name: the ACLs are planned by many keys
 * (plan-policy.ts), and a key's new ACL is written after its plan is made, so another key
 * planning meanwhile must not hand out the same tag. One per watcher (leader term): ODL is the
 * record, a reservation only covers the time until the ACL shows up there.
 */
export type AclTagReservations = Map<string, number>;

/**
 * Tags for `names` (in that order), keeping those `ours` already carry in ODL. `undefined` for
 * a name when the range is used up. `reserved` (shared by every key that allocates) is read
 * and updated: a new tag is reserved for its name until ODL holds that name.
 */
export function allocateAclTags(
  names: readonly string[],
  actual: Iterable<Acl>,
  ours: (acl: Acl) => boolean,
  reserved: AclTagReservations = new Map(),
): Map<string, number | undefined> {
  const held = new Map<string, number>();
  const taken = new Set<number>();
  // Two of ours sharing a tag (written by hand): the lowest name keeps it, the other gets a new
  // one. Decided from ODL alone, so every key planning one of them agrees.
  const keeper = new Map<number, string>();
  for (const acl of actual) {
    if (acl.aclTag === undefined) continue;
    taken.add(acl.aclTag);
    if (!ours(acl) || held.has(acl.name)) continue;
    held.set(acl.name, acl.aclTag);
    const k = keeper.get(acl.aclTag);
    if (k === undefined || acl.name < k) keeper.set(acl.aclTag, acl.name);
  }
  for (const [name, tag] of reserved)
    if (held.has(name)) reserved.delete(name);
    else taken.add(tag);
  const out = new Map<string, number | undefined>();
  for (const name of names) {
    const tag = held.get(name);
    if (tag !== undefined && keeper.get(tag) === name) out.set(name, tag);
  }
  let next = ACL_TAG_FIRST;
  for (const name of names) {
    if (out.has(name)) continue;
    const mine = reserved.get(name);
    if (mine !== undefined) {
      out.set(name, mine);
      continue;
    }
    while (next <= ACL_TAG_LAST && taken.has(next)) next++;
    if (next > ACL_TAG_LAST) {
      out.set(name, undefined);
      continue;
    }
    out.set(name, next);
    reserved.set(name, next);
    taken.add(next++);
  }
  return out;
}
