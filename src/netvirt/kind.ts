/**
 * What odlcoe knows about one kind of ODL entry, in one place: where its list lives per model
 * profile (the dialect only changes how a path is spelled, see restconf/path.ts), its key, how
 * an entry is parsed and built, which leaves odlcoe owns (its diff), how ownership is marked,
 * what must exist before an entry of it is written and what must be gone before one is deleted,
 * and how an operator sees it. kinds.ts holds the table; every program iterates it (the
 * watcher's cache, writer and garbage collection, odlcoectl's commands, the sandbox), so a new
 * kind is one `OdlKindSpec` plus its translation.
 */
import type { DataPath } from '../restconf/path.js';
import type { Decision, DiffOptions } from './decision.js';
import type { JsonObject } from './json.js';
import type { OwnerContext, Ownership } from './ownership.js';
import type { Profile } from './profile.js';

/** One entry, by kind and name (its list key). */
export interface Ref {
  kind: string;
  name: string;
}

export const refKey = (ref: Ref): string => `${ref.kind}/${ref.name}`;

/**
 * An entry that must exist before another is written (and may only be deleted after it).
 * `owned`: it must also be this cluster's (a pod never attaches to a foreign ELAN that happens
 * to carry the name it needs; an entry owned through another needs that one to be ours).
 */
export interface Prerequisite extends Ref {
  owned: boolean;
}

/** What a kind's rules may look at besides the entry itself. */
export interface KindContext {
  owner: OwnerContext;
  /** The entry ODL holds under `kind`/`name`, as far as the caller knows (cache or snapshot). */
  get(kind: string, name: string): unknown;
}

export interface OdlKindSpec<T> {
  /** The name odlcoe's code and metrics use (`elanInstance`). */
  readonly kind: string;
  /** The model's own list name, as odlcoectl shows it (`elan-instance`). */
  readonly label: string;
  /** The YANG module that defines the list, per profile (what ODL must have for the kind). */
  module(profile: Profile): string;
  /** The list node: read whole at load and by odlcoectl. */
  list(profile: Profile): DataPath;
  /** One entry. */
  entry(profile: Profile, name: string): DataPath;
  /** The key member of a raw entry: what an entry that does not parse is reported under. */
  readonly keyMember: string;
  /** One raw list entry as ODL returned it, parsed; throws when it does not fit the model. */
  parse(profile: Profile, raw: Record<string, unknown>): T;
  nameOf(entry: T): string;
  /** The entry's body, validated against the model (a PUT or POST carries it). */
  build(profile: Profile, entry: T): JsonObject;
  /** Whose entry this is (a marker, a cluster id, a signature, or another entry it hangs off). */
  ownership(actual: T, ctx: KindContext): Ownership;
  /** How ownership is marked, for operators and docs. */
  readonly ownershipRule: string;
  /** The owned-leaf diff: what to write so that `actual` becomes `desired`. */
  diff(desired: T | undefined, actual: T | undefined, ctx: KindContext, opts?: DiffOptions): Decision;
  /** Kinds whose entries this kind's entries may need first (the order of creates and deletes). */
  readonly after: readonly string[];
  /** The entries `entry` needs first: each must exist before it is written and outlive it. */
  prerequisites(entry: T): Prerequisite[];
  /**
   * The key whose plan owns the entry `name` (keys.ts, coe/keys.ts): garbage collection finds
   * entries whose Kubernetes object is gone through it, and a key waiting for the entry has it
   * reconciled. Undefined: no key of odlcoe's owns such a name.
   */
  ownerKey(name: string, ctx: KindContext): string | undefined;
  /** One line for an operator (odlcoectl, logs). */
  summary(entry: T): string;
}

/** A kind whose entry type is not known statically (the table as a whole). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyKindSpec = OdlKindSpec<any>;

/**
 * A set of kinds (a backend's, odlcoectl's, a test's): lookup by kind, and the orders derived
 * from `after`: dependants first for deletes (ties in table order, so a table lists its kinds
 * dependants first), prerequisites first for creates (the reverse), so no order is ever
 * written down twice.
 */
export class KindTable {
  private readonly byKind = new Map<string, AnyKindSpec>();
  /** Kinds in the order their entries may be deleted. */
  readonly deleteOrder: readonly string[];
  /** Kinds in the order their entries may be created: the reverse. */
  readonly createOrder: readonly string[];

  constructor(specs: readonly AnyKindSpec[]) {
    for (const spec of specs) {
      if (this.byKind.has(spec.kind)) throw new Error(`kind ${spec.kind} is listed twice`);
      this.byKind.set(spec.kind, spec);
    }
    this.deleteOrder = dependantsFirst(specs);
    this.createOrder = [...this.deleteOrder].reverse();
  }

  get kinds(): string[] {
    return [...this.byKind.keys()];
  }

  has(kind: string): boolean {
    return this.byKind.has(kind);
  }

  spec(kind: string): AnyKindSpec {
    const spec = this.byKind.get(kind);
    if (!spec) throw new Error(`unknown ODL kind ${kind}`);
    return spec;
  }

  label(kind: string): string {
    return this.spec(kind).label;
  }

  /** Kinds whose entries may need an entry of `kind` (so must be looked at before it is deleted). */
  dependantKinds(kind: string): string[] {
    return [...this.byKind.values()].filter((s) => s.after.includes(kind)).map((s) => s.kind);
  }

  /**
   * The kinds whose module ODL has, in this profile: a release without the COE models has no
   * k8s-node kind, and nothing reads, writes or collects entries of a kind it lacks.
   */
  restrictedTo(profile: Profile, modules: readonly string[]): KindTable {
    const has = new Set(modules);
    return new KindTable([...this.byKind.values()].filter((s) => has.has(s.module(profile))));
  }

  /** A table with more kinds (a later feature's, a test's). */
  with(...specs: AnyKindSpec[]): KindTable {
    return new KindTable([...this.byKind.values(), ...specs]);
  }
}

/** Kahn's algorithm over `after`, dependants first, restricted to the kinds present; ties keep table order. */
function dependantsFirst(specs: readonly AnyKindSpec[]): string[] {
  const left = new Map(specs.map((s) => [s.kind, s]));
  const out: string[] = [];
  while (left.size > 0) {
    const needed = new Set([...left.values()].flatMap((s) => s.after));
    const next = [...left.values()].find((s) => !needed.has(s.kind));
    if (!next)
      throw new Error(`the kinds' "after" declarations form a cycle: ${[...left.keys()].join(', ')}`);
    left.delete(next.kind);
    out.push(next.kind);
  }
  return out;
}
