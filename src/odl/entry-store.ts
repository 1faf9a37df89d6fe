/**
 * Parsed ODL entries by kind and name, with the names that do not parse, and who needs whom:
 * for every entry, the entries that list it as a prerequisite (its dependants), kept as
 * entries come and go so that "may this be deleted?" is a lookup, not a scan of every list.
 * The in-memory shape of what ODL holds, shared by a one-off snapshot (odlcoectl, the sandbox)
 * and the watcher's long-lived cache.
 */
import { SetIndex } from '../common/set-index.js';
import type { KindContext, KindTable, Ref } from '../netvirt/kind.js';
import { DependantsIndex } from './dependants-index.js';
import type { OdlEntries, OdlKind } from '../netvirt/kinds.js';
import type { OwnerContext, Ownership } from '../netvirt/ownership.js';

/** What ODL holds, read-only. Known kinds are typed; any other kind of the table is `unknown`. */
export interface OdlView {
  readonly table: KindTable;
  get<K extends OdlKind>(kind: K, name: string): OdlEntries[K] | undefined;
  get(kind: string, name: string): unknown;
  values<K extends OdlKind>(kind: K): Iterable<OdlEntries[K]>;
  values(kind: string): Iterable<unknown>;
  names(kind: string): Iterable<string>;
  size(kind: string): number;
  /** ODL holds an entry under this name that does not parse as its model. */
  isUnparsed(kind: string, name: string): boolean;
  /** Entries (ours or not) that list `ref` as a prerequisite. */
  dependants(ref: Ref): Ref[];
}

/** An entry ODL holds that does not parse as its model: never written, never deleted. */
export interface UnparsedEntry {
  kind: string;
  name: string;
  error: string;
}

export class EntryStore implements OdlView {
  private maps = new Map<string, Map<string, unknown>>();
  private unparsed = new Map<string, Set<string>>();
  /**
   * Prerequisite → the entries that need it. An entry is unindexed under the prerequisites its
   * cached value lists (cached entries are never changed in place, only replaced), so no second
   * record of them is kept: at 100,000 pods that record was 50 MB.
   */
  private readonly dependantsOf = new DependantsIndex();
  /** Secondary indexes by kind: index key → names (`addIndex`). */
  private readonly secondary = new Map<
    string,
    { keyOf: (entry: unknown) => string | undefined; index: SetIndex }[]
  >();

  constructor(readonly table: KindTable) {
    for (const kind of table.kinds) {
      this.maps.set(kind, new Map());
      this.unparsed.set(kind, new Set());
    }
  }

  get<K extends OdlKind>(kind: K, name: string): OdlEntries[K] | undefined;
  get(kind: string, name: string): unknown;
  get(kind: string, name: string): unknown {
    return this.map(kind).get(name);
  }

  values<K extends OdlKind>(kind: K): Iterable<OdlEntries[K]>;
  values(kind: string): Iterable<unknown>;
  values(kind: string): Iterable<unknown> {
    return this.map(kind).values();
  }

  names(kind: string): Iterable<string> {
    return this.map(kind).keys();
  }

  size(kind: string): number {
    return this.map(kind).size;
  }

  isUnparsed(kind: string, name: string): boolean {
    return this.unparsedSet(kind).has(name);
  }

  /** Names of `kind` that do not parse. */
  unparsedNames(kind: string): Iterable<string> {
    return this.unparsedSet(kind);
  }

  dependants(ref: Ref): Ref[] {
    return this.dependantsOf.get(ref);
  }

  /**
   * Entries that name a prerequisite ODL does not hold (parsed or not): references NetVirt
   * would resolve to nothing. odlcoe never leaves one behind (an entry is kept while anything,
   * foreign or not, still needs it); an ODL user's edit can.
   */
  danglingReferences(): { from: Ref; to: Ref }[] {
    const out: { from: Ref; to: Ref }[] = [];
    for (const kind of this.table.kinds) {
      const spec = this.table.spec(kind);
      for (const [name, entry] of this.map(kind))
        for (const p of spec.prerequisites(entry))
          if (this.get(p.kind, p.name) === undefined && !this.isUnparsed(p.kind, p.name))
            out.push({ from: { kind, name }, to: { kind: p.kind, name: p.name } });
    }
    return out;
  }

  /**
   * Keeps an index of `kind`'s entries by `keyOf(entry)` (entries without one are not indexed),
   * current through every change; the returned lookup gives the names under a key, sorted.
   */
  addIndex(kind: string, keyOf: (entry: unknown) => string | undefined): (key: string) => string[] {
    const index = new SetIndex();
    for (const [name, entry] of this.map(kind)) {
      const key = keyOf(entry);
      if (key !== undefined) index.add(key, name);
    }
    const list = this.secondary.get(kind) ?? [];
    list.push({ keyOf, index });
    this.secondary.set(kind, list);
    return (key) => [...index.get(key)].sort();
  }

  /** The indexes beside the entries, by name (the watcher benchmark measures their heap). */
  indexes(): Record<string, unknown> {
    const out: Record<string, unknown> = { dependants: this.dependantsOf, unparsed: this.unparsed };
    for (const [kind, list] of this.secondary)
      list.forEach(({ index }, i) => (out[`${kind} index ${i}`] = index));
    return out;
  }

  /** Ownership rules and related entries, as a kind's rules want them. */
  context(owner: OwnerContext): KindContext {
    return { owner, get: (kind, name) => this.get(kind, name) };
  }

  ownership(kind: string, entry: unknown, owner: OwnerContext): Ownership {
    return this.table.spec(kind).ownership(entry, this.context(owner));
  }

  /** This cluster's entries of `kind`. */
  owned(kind: string, owner: OwnerContext): unknown[] {
    const ctx = this.context(owner);
    const spec = this.table.spec(kind);
    return [...this.values(kind)].filter((e) => spec.ownership(e, ctx).owner === 'ours');
  }

  set(kind: string, entry: unknown): void {
    const name = this.table.spec(kind).nameOf(entry);
    this.unindex(kind, name);
    this.map(kind).set(name, entry);
    this.unparsedSet(kind).delete(name);
    this.index(kind, name, entry);
  }

  remove(kind: string, name: string): void {
    this.unindex(kind, name);
    this.map(kind).delete(name);
    this.unparsedSet(kind).delete(name);
  }

  /** ODL holds `name` but it does not parse: forget any parsed copy, remember the name. */
  setUnparsed(kind: string, name: string): void {
    this.remove(kind, name);
    this.unparsedSet(kind).add(name);
  }

  clear(): void {
    for (const kind of this.table.kinds) this.replaceKind(kind, new Map(), new Set());
  }

  /** Replaces everything of one kind (a list read whole). */
  replaceKind(kind: string, entries: ReadonlyMap<string, unknown>, unparsed: ReadonlySet<string>): void {
    for (const name of [...this.names(kind)]) this.unindex(kind, name);
    this.maps.set(kind, new Map(entries));
    this.unparsed.set(kind, new Set(unparsed));
    for (const [name, entry] of entries) this.index(kind, name, entry);
  }

  private map(kind: string): Map<string, unknown> {
    const map = this.maps.get(kind);
    if (!map) throw new Error(`unknown ODL kind ${kind}`);
    return map;
  }

  private unparsedSet(kind: string): Set<string> {
    const set = this.unparsed.get(kind);
    if (!set) throw new Error(`unknown ODL kind ${kind}`);
    return set;
  }

  private index(kind: string, name: string, entry: unknown): void {
    const self = { kind, name };
    for (const p of this.table.spec(kind).prerequisites(entry)) this.dependantsOf.add(p, self);
    for (const { keyOf, index } of this.secondary.get(kind) ?? []) {
      const key = keyOf(entry);
      if (key !== undefined) index.add(key, name);
    }
  }

  private unindex(kind: string, name: string): void {
    const old = this.maps.get(kind)?.get(name);
    if (old === undefined) return;
    const self = { kind, name };
    for (const p of this.table.spec(kind).prerequisites(old)) this.dependantsOf.remove(p, self);
    for (const { keyOf, index } of this.secondary.get(kind) ?? []) {
      const key = keyOf(old);
      if (key !== undefined) index.remove(key, name);
    }
  }
}
