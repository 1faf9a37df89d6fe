/**
 * The owned-leaf decision every kind of ODL entry is judged by: given the desired entry (from
 * translation) and the actual one (parsed from ODL), create it, update the leaves odlcoe owns,
 * leave it, or report it as someone else's. One generic rule (`decide`) for every kind; what
 * differs per kind (which leaves are owned, how ownership is marked, how an update is written)
 * is its `DecisionSpec`, given by the kind's diff (diff.ts, k8s-node.ts, coe/diff.ts).
 */
import type { DataPath } from '../restconf/path.js';
import type { Ownership } from './ownership.js';
import { canonicalJson, sameJson } from './json.js';
import { deleteOp, type WriteOp } from './write.js';

export { canonicalJson };

export type Decision =
  /** Absent in ODL: create it. */
  | { action: 'create'; name: string; writes: WriteOp[] }
  /** Ours, and owned leaves differ (`changed` names them). */
  | { action: 'update'; name: string; changed: string[]; writes: WriteOp[] }
  /** Ours, and a leaf that ODL cannot change in place differs: delete, then create. */
  | { action: 'recreate'; name: string; changed: string[]; writes: WriteOp[] }
  /** Nothing to do (equal, absent on both sides, or kept because its desired state is unknown). */
  | { action: 'none'; name: string }
  /** Ours and no longer desired. Garbage collection decides when (informers synced, grace period). */
  | { action: 'delete-candidate'; name: string; writes: WriteOp[] }
  /** Not ours: never written. `wanted` means odlcoe needs this name (a collision to report). */
  | { action: 'foreign'; name: string; wanted: boolean; reason: string };

export interface DiffOptions {
  /** The desired state is unknown (a deferred pod): never delete. */
  keep?: boolean;
  /** The entry's name, for a decision when neither side is given (a caller diffing by name). */
  name?: string;
}

/** Owned leaves (by YANG name) whose canonical values differ. */
export function changedLeaves(desired: Record<string, unknown>, actual: Record<string, unknown>): string[] {
  const changed: string[] = [];
  for (const n of Object.keys(desired)) if (!sameJson(desired[n], actual[n])) changed.push(n);
  for (const n of Object.keys(actual))
    if (!Object.hasOwn(desired, n) && !sameJson(undefined, actual[n])) changed.push(n);
  return changed.sort();
}

/** What a kind's diff tells the generic decision. */
export interface DecisionSpec<T> {
  path(name: string): DataPath;
  ownership(actual: T): Ownership;
  /** The leaves odlcoe owns, by YANG name, in a canonical spelling. */
  owned(entry: T): Record<string, unknown>;
  create(desired: T): WriteOp[];
  update(desired: T, actual: T, changed: string[]): { action: 'update' | 'recreate'; writes: WriteOp[] };
}

export function decide<T>(
  spec: DecisionSpec<T>,
  name: string,
  desired: T | undefined,
  actual: T | undefined,
  keep: boolean,
): Decision {
  if (actual === undefined)
    return desired === undefined
      ? { action: 'none', name }
      : { action: 'create', name, writes: spec.create(desired) };
  const ownership = spec.ownership(actual);
  if (ownership.owner === 'foreign')
    return { action: 'foreign', name, wanted: desired !== undefined, reason: ownership.reason };
  if (desired === undefined)
    return keep
      ? { action: 'none', name }
      : { action: 'delete-candidate', name, writes: [deleteOp(spec.path(name))] };
  const changed = changedLeaves(spec.owned(desired), spec.owned(actual));
  if (changed.length === 0) return { action: 'none', name };
  const { action, writes } = spec.update(desired, actual, changed);
  return { action, name, changed, writes };
}

/**
 * The name a decision is about. Neither a desired nor an actual entry is a diff of nothing,
 * which decides `none` (nothing to write) under `opts.name`, or under no name ('').
 */
export function decisionName<T>(
  desired: T | undefined,
  actual: T | undefined,
  nameOf: (entry: T) => string,
  opts: DiffOptions,
): string {
  const d = desired === undefined ? undefined : nameOf(desired);
  const a = actual === undefined ? undefined : nameOf(actual);
  if (d !== undefined && a !== undefined && d !== a)
    throw new Error(`diff of different entries ${d} and ${a}`);
  return d ?? a ?? opts.name ?? '';
}

/** Desired with the actual entry's non-owned members (everything not in `ownedKeys`) carried forward. */
export function carry<T extends object>(desired: T, actual: T, ownedKeys: readonly (keyof T)[]): T {
  const merged = { ...actual };
  for (const key of ownedKeys) {
    if (desired[key] === undefined) delete merged[key];
    else merged[key] = desired[key];
  }
  return merged;
}

/**
 * Decisions for a whole kind: every desired name and every actual entry, sorted by name.
 * `diffOne` is a kind's diff with its context bound; `keep` holds names whose desired state is
 * unknown, which are never deleted.
 */
export function diffAll<T>(
  desired: ReadonlyMap<string, T>,
  actual: Iterable<T>,
  keyOf: (entry: T) => string,
  diffOne: (desired: T | undefined, actual: T | undefined, opts: DiffOptions) => Decision,
  keep: ReadonlySet<string> = new Set(),
): Decision[] {
  const actualByKey = new Map<string, T>();
  for (const a of actual) actualByKey.set(keyOf(a), a);
  const keys = [...new Set([...desired.keys(), ...actualByKey.keys()])].sort();
  return keys.map((k) => diffOne(desired.get(k), actualByKey.get(k), { keep: keep.has(k), name: k }));
}
