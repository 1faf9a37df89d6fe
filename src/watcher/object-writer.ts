/**
 * Makes one ODL entry equal to its desired state, using a backend's owned-leaf diff (the
 * netvirt backend's from src/netvirt, coe-northbound's from its own module) against its ODL
 * cache. Both backends write through this class:
 *
 * - Nothing is written when the owned leaves are equal (so a second reconcile writes nothing).
 * - Creates are POSTs (create-only): if someone created the name since the cache was filled,
 *   ODL answers 409 instead of letting odlcoe overwrite a foreign object; the entry is then
 *   re-read and decided again (a retried POST whose first attempt did land ends there too, as
 *   "equal").
 * - Updates and deletes are planned against a fresh read of the entry, never the cache alone:
 *   the diff carries what ODL wrote into the entry (elan-tag, mac-timeout, parent-interface,
 *   learnt-ip adjacencies) into the write, and ownership is checked on what ODL holds now.
 * - Entries odlcoe does not own are never written or deleted; neither are entries that do not
 *   parse as their model.
 * - The write guard is checked before every write, and its signal goes with the write into
 *   the RESTCONF client: a reconcile that outlived its leadership stops there, and so does a
 *   write it already started (in flight or waiting for a retry).
 */
import type { Logger } from '../common/log.js';
import type { Decision, WriteOp } from '../netvirt/index.js';
import { RestconfError, type RestconfClient } from '../restconf/client.js';
import { parentPath } from '../restconf/path.js';
import type { WriteGuard } from './backend.js';
import type { WatcherMetrics } from './metrics.js';

/** A backend's cache of ODL entries, by kind (`E` maps each kind to its entry type) and name. */
export interface EntryCache<E> {
  get<K extends keyof E & string>(kind: K, name: string): E[K] | undefined;
  set<K extends keyof E & string>(kind: K, entry: E[K]): void;
  remove(kind: keyof E & string, name: string): void;
  /** Re-reads one entry from ODL into the cache (undefined: ODL has none, or it does not parse). */
  refresh<K extends keyof E & string>(kind: K, name: string): Promise<E[K] | undefined>;
  /** ODL holds an entry under this name that does not parse as its model. */
  isUnparsed(kind: keyof E & string, name: string): boolean;
}

/** A backend's owned-leaf diff of one entry: desired against actual (either may be absent). */
export type EntryDiff<E> = <K extends keyof E & string>(
  kind: K,
  name: string,
  desired: E[K] | undefined,
  actual: E[K] | undefined,
) => Decision;

export type ObjectResult =
  /** Equal to the desired state, or absent and not desired. */
  | { state: 'in-sync' }
  | { state: 'written'; op: 'create' | 'update' | 'delete' }
  /** Ours and not desired, but the caller did not allow its deletion (yet). */
  | { state: 'delete-pending' }
  /** Held by an object odlcoe does not own; `wanted`: odlcoe needs the name (a collision). */
  | { state: 'foreign'; wanted: boolean; reason: string };

export interface ConvergeOptions {
  /** Delete the entry if it is ours and not desired (default false: report `delete-pending`). */
  deleteAllowed?: boolean;
}

/** Rounds of read-decide-write before giving up on an entry that keeps changing under us. */
const MAX_ROUNDS = 4;

const UNPARSED = 'ODL holds an entry that does not parse';

export class ObjectWriter<E> {
  constructor(
    private readonly cache: EntryCache<E>,
    private readonly diff: EntryDiff<E>,
    private readonly client: RestconfClient,
    private readonly metrics: WatcherMetrics,
    private readonly logger: Logger,
  ) {}

  /** What the diff says about `desired` against the cached entry, without writing. */
  decide<K extends keyof E & string>(kind: K, name: string, desired: E[K] | undefined): Decision {
    return this.diff(kind, name, desired, this.cache.get(kind, name));
  }

  /** Whether the cached entry `name` exists and is ours (so garbage collection may look at it). */
  owns(kind: keyof E & string, name: string): boolean {
    return this.decide(kind, name, undefined).action === 'delete-candidate';
  }

  async converge<K extends keyof E & string>(
    kind: K,
    name: string,
    desired: E[K] | undefined,
    guard: WriteGuard,
    options: ConvergeOptions = {},
  ): Promise<ObjectResult> {
    const result = await this.run(kind, name, desired, guard, options);
    const desiredState =
      desired === undefined
        ? 'undesired'
        : result.state === 'foreign'
          ? 'foreign'
          : result.state === 'in-sync' || result.state === 'written'
            ? 'applied'
            : 'pending';
    this.metrics.objectState(kind, name, desiredState);
    return result;
  }

  private async run<K extends keyof E & string>(
    kind: K,
    name: string,
    desired: E[K] | undefined,
    guard: WriteGuard,
    options: ConvergeOptions,
  ): Promise<ObjectResult> {
    if (this.cache.isUnparsed(kind, name))
      return { state: 'foreign', wanted: desired !== undefined, reason: UNPARSED };
    let decision = this.decide(kind, name, desired);
    let fresh = false;
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      switch (decision.action) {
        case 'none':
          return { state: 'in-sync' };
        case 'foreign':
          return { state: 'foreign', wanted: decision.wanted, reason: decision.reason };
        case 'delete-candidate':
          if (!options.deleteAllowed) return { state: 'delete-pending' };
          break;
        case 'create':
          if (desired === undefined) throw new Error(`create of ${kind} ${name} without a desired entry`);
          if (await this.create(kind, name, desired, decision.writes, guard))
            return { state: 'written', op: 'create' };
          decision = await this.reread(kind, name, desired);
          fresh = true;
          continue;
        case 'update':
        case 'recreate':
          break;
      }
      // Update or delete: only against what ODL holds now.
      if (!fresh) {
        decision = await this.reread(kind, name, desired);
        fresh = true;
        continue;
      }
      await this.apply(decision.writes, guard);
      const op = decision.action === 'delete-candidate' ? 'delete' : 'update';
      this.metrics.writes.inc({ kind, op });
      this.logger.info(op === 'delete' ? 'deleted ODL entry' : 'updated ODL entry', {
        kind,
        name,
        ...(decision.action === 'update' || decision.action === 'recreate'
          ? { changed: decision.changed, recreated: decision.action === 'recreate' }
          : {}),
      });
      // After an update, read back what ODL holds: entries keep leaves odlcoe does not own.
      if (op === 'delete') this.cache.remove(kind, name);
      else await this.cache.refresh(kind, name);
      return { state: 'written', op };
    }
    throw new Error(`${kind} ${name} kept changing in ODL while it was being written; will retry`);
  }

  private async reread<K extends keyof E & string>(
    kind: K,
    name: string,
    desired: E[K] | undefined,
  ): Promise<Decision> {
    const actual = await this.cache.refresh(kind, name);
    if (actual === undefined && this.cache.isUnparsed(kind, name))
      return { action: 'foreign', name, wanted: desired !== undefined, reason: UNPARSED };
    return this.diff(kind, name, desired, actual);
  }

  /** POSTs a new entry; false when ODL already has one (409), which the caller re-reads. */
  private async create<K extends keyof E & string>(
    kind: K,
    name: string,
    desired: E[K],
    writes: WriteOp[],
    guard: WriteGuard,
  ): Promise<boolean> {
    const [put, ...more] = writes;
    if (!put || put.op !== 'put' || more.length > 0)
      throw new Error(`unexpected create plan for ${kind} ${name}`);
    guard.check();
    try {
      await this.client.post(parentPath(put.path), put.body, { signal: guard.signal });
    } catch (err) {
      if (err instanceof RestconfError && err.status === 409) return false;
      throw err;
    }
    this.cache.set(kind, desired);
    this.metrics.writes.inc({ kind, op: 'create' });
    this.logger.info('created ODL entry', { kind, name });
    return true;
  }

  private async apply(writes: readonly WriteOp[], guard: WriteGuard): Promise<void> {
    for (const write of writes) {
      guard.check();
      if (write.op === 'put') await this.client.put(write.path, write.body, { signal: guard.signal });
      else await this.client.delete(write.path, { signal: guard.signal });
    }
  }
}
