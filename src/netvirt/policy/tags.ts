/**
 * `acl-tag`s (Aluminium): since Magnesium the writer of an ACL hands out its tag (netvirt
 * 3e7aaee2f3; a remote-group rule whose ACL has none is skipped). ODL is the record, as for
 * route distinguishers: an ACL of ours keeps the tag it has, a new one gets the lowest tag of
 * odlcoe's range that no ACL in ODL holds. The range starts above Neutron's id pool
 * (ACL-TAG-POOL, 1..10000), so a controller shared with Neutron never sees one tag twice.
 */
import type { Acl } from '../acl.js';

export const ACL_TAG_FIRST = 10_001;
export const ACL_TAG_LAST = 65_535;

/**
 * Tags for `names` (in that order), keeping those `ours` already carry in ODL. `undefined` for
 * a name when the range is used up.
 */
export function allocateAclTags(
  names: readonly string[],
  actual: Iterable<Acl>,
  ours: (acl: Acl) => boolean,
): Map<string, number | undefined> {
  const held = new Map<string, number>();
  const taken = new Set<number>();
  for (const acl of actual) {
    if (acl.aclTag === undefined) continue;
    if (ours(acl) && !held.has(acl.name)) held.set(acl.name, acl.aclTag);
    taken.add(acl.aclTag);
  }
  const out = new Map<string, number | undefined>();
  // Two of ours sharing a tag (written by hand): the first keeps it, the other gets a new one.
  const kept = new Set<number>();
  let next = ACL_TAG_FIRST;
  for (const name of names) {
    const tag = held.get(name);
    if (tag !== undefined && !kept.has(tag)) {
      kept.add(tag);
      out.set(name, tag);
    }
  }
  for (const name of names) {
    if (out.has(name)) continue;
    while (next <= ACL_TAG_LAST && taken.has(next)) next++;
    out.set(name, next <= ACL_TAG_LAST ? next : undefined);
    taken.add(next++);
  }
  return out;
}
