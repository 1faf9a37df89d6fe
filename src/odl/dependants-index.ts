/**
 * Who needs whom among ODL entries: prerequisite (kind, name) → the entries (kind, name) that
 * list it. Kept for every entry of the watcher's cache, so at 100,000 pods it holds 400,000
 * links (each pod's elan- and vpn-interface need its ietf-interface and their instance).
 *
 * Compact on purpose: it keeps the names it is given (the cache's own strings; a `kind/name` key
 * would be a new string per link), and most prerequisites have one or two dependants (a pod's
 * interface, a one-pod ELAN), which a flat array holds in a few words where a Set takes a hash
 * table; a prerequisite with many dependants (a namespace's VPN) gets a Set per kind.
 */
import type { Ref } from '../netvirt/kind.js';

/** Up to this many dependants: a flat `[kind, name, kind, name, …]` array. */
const FLAT_MAX = 8;

/** A prerequisite's dependants: flat pairs (replaced, never grown in place), or names by kind. */
type Members = readonly string[] | Map<string, Set<string>>;

export class DependantsIndex {
  /** Prerequisite kind → prerequisite name → its dependants. */
  private readonly byKind = new Map<string, Map<string, Members>>();

  add(prerequisite: Ref, dependant: Ref): void {
    let byName = this.byKind.get(prerequisite.kind);
    if (!byName) this.byKind.set(prerequisite.kind, (byName = new Map()));
    const members = byName.get(prerequisite.name);
    if (members === undefined) {
      byName.set(prerequisite.name, [dependant.kind, dependant.name]);
      return;
    }
    if (isFlat(members)) {
      if (indexOfPair(members, dependant) >= 0) return;
      if (members.length < FLAT_MAX * 2) {
        // A new array of the exact size: push() would grow the backing store by half plus 16
        // slots, 170 bytes for a pair (7 MB at 30,000 pods).
        byName.set(prerequisite.name, [...members, dependant.kind, dependant.name]);
        return;
      }
      const sets = new Map<string, Set<string>>();
      for (let i = 0; i < members.length; i += 2) addTo(sets, members[i]!, members[i + 1]!);
      byName.set(prerequisite.name, sets);
      addTo(sets, dependant.kind, dependant.name);
      return;
    }
    addTo(members, dependant.kind, dependant.name);
  }

  remove(prerequisite: Ref, dependant: Ref): void {
    const byName = this.byKind.get(prerequisite.kind);
    const members = byName?.get(prerequisite.name);
    if (!byName || members === undefined) return;
    if (isFlat(members)) {
      const at = indexOfPair(members, dependant);
      if (at < 0) return;
      if (members.length === 2) byName.delete(prerequisite.name);
      else byName.set(prerequisite.name, [...members.slice(0, at), ...members.slice(at + 2)]);
      return;
    }
    const names = members.get(dependant.kind);
    names?.delete(dependant.name);
    if (names?.size === 0) members.delete(dependant.kind);
    // Back to a flat array once few enough remain, so that churn does not leave Sets behind.
    let count = 0;
    for (const set of members.values()) count += set.size;
    if (count > FLAT_MAX) return;
    if (count === 0) {
      byName.delete(prerequisite.name);
      return;
    }
    const flat: string[] = [];
    for (const [kind, set] of members) for (const name of set) flat.push(kind, name);
    byName.set(prerequisite.name, flat);
  }

  /** The dependants of `prerequisite`, sorted by kind, then name. */
  get(prerequisite: Ref): Ref[] {
    const members = this.byKind.get(prerequisite.kind)?.get(prerequisite.name);
    const out: Ref[] = [];
    if (isFlat(members))
      for (let i = 0; i < members.length; i += 2) out.push({ kind: members[i]!, name: members[i + 1]! });
    else if (members) for (const [kind, set] of members) for (const name of set) out.push({ kind, name });
    return out.sort((a, b) => compare(a.kind, b.kind) || compare(a.name, b.name));
  }

  /** Prerequisites with at least one dependant (for heap accounting and tests). */
  get size(): number {
    let n = 0;
    for (const byName of this.byKind.values()) n += byName.size;
    return n;
  }

  clear(): void {
    this.byKind.clear();
  }
}

// Array.isArray does not narrow a readonly array out of a union.
const isFlat = (m: Members | undefined): m is readonly string[] => Array.isArray(m);

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function indexOfPair(flat: readonly string[], ref: Ref): number {
  for (let i = 0; i < flat.length; i += 2) if (flat[i] === ref.kind && flat[i + 1] === ref.name) return i;
  return -1;
}

function addTo(sets: Map<string, Set<string>>, kind: string, name: string): void {
  let set = sets.get(kind);
  if (!set) sets.set(kind, (set = new Set()));
  set.add(name);
}
