/**
 * Makes one ODL entry equal to its desired state, by the rules of its kind (the kinds table:
 * src/netvirt/kinds.ts) against the watcher's ODL cache. Both backends write through this class:
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
 * - Order, as the table declares it: an entry is written only once its prerequisites exist
 *   (and are ours where it must be so), and deleted only once nothing needs it any more; when
 *   that does not hold, nothing is written and the result says which entries are awaited
 *   (`blocked`), for the watcher to wait on them. Between the check and the write no retire of
 *   a prerequisite can start, and while an entry is being retired nothing new may start to
 *   need it (`DependencyGate`): both decide from the cache and then await ODL, so without the
 *   gate a pod could POST its elan-interface while the retire of its ELAN awaits its re-read.
 * - The write guard is checked before every write, and its signal goes with the write into
 *   the RESTCONF client: a reconcile that outlived its leadership stops there, and so does a
 *   write it already started (in flight or waiting for a retry).
 */
import type { Logger } from '../common/log.js';
import type { Decision } from '../netvirt/decision.js';
import type { KindContext, KindTable, Prerequisite, Ref } from '../netvirt/kind.js';
import { refKey } from '../netvirt/kind.js';
import type { OwnerContext } from '../netvirt/ownership.js';
import type { WriteOp } from '../netvirt/write.js';
import { PrerequisiteNotWritten, RestconfError, type RestconfClient } from '../restconf/client.js';
import { parentPath } from '../restconf/path.js';
import type { EntryCache } from './entry-cache.js';
import type { WatcherMetrics } from './metrics.js';
import type { WriteGuard } from './reconcile.js';

export type ObjectResult =
  /** Equal to the desired state, or absent and not desired. */
  | { state: 'in-sync' }
  | { state: 'written'; op: 'create' | 'update' | 'delete' }
  /** Ours and not desired, but the caller did not allow its deletion (yet). */
  | { state: 'delete-pending' }
  /** Held by an object odlcoe does not own; `wanted`: odlcoe needs the name (a collision). */
  | { state: 'foreign'; wanted: boolean; reason: string }
  /**
   * Not written: the order the table declares does not allow it yet. `awaits`: the entries to
   * wait for (prerequisites to appear, dependants to go). `foreign`: some of them are held by
   * objects odlcoe does not own, which will not change soon.
   */
  | { state: 'blocked'; awaits: Ref[]; foreign: boolean; reason: string };

export interface ConvergeOptions {
  /** Delete the entry if it is ours and not desired (default false: report `delete-pending`). */
  deleteAllowed?: boolean;
  /**
   * Asked right before a delete, after the entry was re-read: false when the entry is needed
   * again (the cluster changed while ODL answered); nothing is deleted then.
   */
  stillUnneeded?: () => boolean;
}

/** Rounds of read-decide-write before giving up on an entry that keeps changing under us. */
const MAX_ROUNDS = 4;

const UNPARSED = 'ODL holds an entry that does not parse';

/**
 * Retires and attaches in flight, per entry. JS runs one reconcile step at a time, so each
 * check-and-mark is atomic as long as it is not split by an await.
 */
class DependencyGate {
  private readonly retiring = new Set<string>();
  private readonly attaching = new Map<string, number>();

  isRetiring(ref: Ref): boolean {
    return this.retiring.has(refKey(ref));
  }

  /** Marks `ref` as retiring; false (nothing marked) while something is being attached to it. */
  beginRetire(ref: Ref): boolean {
    const key = refKey(ref);
    if ((this.attaching.get(key) ?? 0) > 0 || this.retiring.has(key)) return false;
    this.retiring.add(key);
    return true;
  }

  endRetire(ref: Ref): void {
    this.retiring.delete(refKey(ref));
  }

  /** Counts an attach to each of `refs` in flight; the returned release (idempotent) ends it. */
  beginAttach(refs: readonly Ref[]): () => void {
    const keys = refs.map(refKey);
    for (const key of keys) this.attaching.set(key, (this.attaching.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const key of keys) {
        const left = (this.attaching.get(key) ?? 1) - 1;
        if (left > 0) this.attaching.set(key, left);
        else this.attaching.delete(key);
      }
    };
  }
}

export class ObjectWriter {
  private readonly gate = new DependencyGate();
  private readonly table: KindTable;
  /**
   * Creates of ours in flight (POSTed, ODL has not answered), by entry: what a write that needs
   * one of them waits for, instead of being turned away as `blocked` and reconciled again once
   * the entry appears. With batched writes the instance a pod attaches to is usually still in
   * an open batch when the pod's reconcile reaches its interfaces.
   */
  private readonly creating = new Map<string, Promise<unknown>>();

  constructor(
    private readonly cache: EntryCache,
    private readonly owner: OwnerContext,
    private readonly client: RestconfClient,
    private readonly metrics: WatcherMetrics,
    private readonly logger: Logger,
  ) {
    this.table = cache.table;
  }

  private get context(): KindContext {
    return this.cache.context(this.owner);
  }

  /** What the kind's diff says about `desired` against the cached entry, without writing. */
  decide(kind: string, name: string, desired: unknown): Decision {
    return this.diff(kind, name, desired, this.cache.get(kind, name));
  }

  /**
   * Whether the cached entry is as `desired` says (undefined: absent) with nothing to write:
   * what `converge` answers `in-sync` for without any I/O.
   */
  inSync(kind: string, name: string, desired: unknown): boolean {
    if (this.cache.isUnparsed(kind, name)) return false;
    const actual = this.cache.get(kind, name);
    // Missing and wanted is a create, without building it (a first start asks this of every key).
    if (actual === undefined) return desired === undefined;
    return this.diff(kind, name, desired, actual).action === 'none';
  }

  /**
   * An entry found `inSync`: recorded as `converge` records an `in-sync` result (the object
   * state the progress figures count), without deciding again.
   */
  settle(kind: string, name: string, desired: unknown): ObjectResult {
    const result: ObjectResult = { state: 'in-sync' };
    this.recordState(kind, name, desired, result);
    return result;
  }

  /** Whether the cached entry `name` exists and is ours (so garbage collection may look at it). */
  owns(kind: string, name: string): boolean {
    return this.decide(kind, name, undefined).action === 'delete-candidate';
  }

  /** Whether `ref` may be needed by a new entry now: present, ours if it must be, not being retired. */
  private prerequisiteState(p: Prerequisite): 'ok' | 'missing' | 'retiring' | 'foreign' {
    const entry = this.cache.get(p.kind, p.name);
    if (entry === undefined) return 'missing';
    if (p.owned && this.table.spec(p.kind).ownership(entry, this.context).owner !== 'ours') return 'foreign';
    return this.gate.isRetiring(p) ? 'retiring' : 'ok';
  }

  async converge(
    kind: string,
    name: string,
    desired: unknown,
    guard: WriteGuard,
    options: ConvergeOptions = {},
  ): Promise<ObjectResult> {
    const result = await this.run(kind, name, desired, guard, options);
    this.recordState(kind, name, desired, result);
    return result;
  }

  private recordState(kind: string, name: string, desired: unknown, result: ObjectResult): void {
    const desiredState =
      desired === undefined
        ? 'undesired'
        : result.state === 'foreign'
          ? 'foreign'
          : result.state === 'in-sync' || result.state === 'written'
            ? 'applied'
            : 'pending';
    this.metrics.objectState(kind, name, desiredState);
  }

  private async run(
    kind: string,
    name: string,
    desired: unknown,
    guard: WriteGuard,
    options: ConvergeOptions,
  ): Promise<ObjectResult> {
    if (this.cache.isUnparsed(kind, name))
      return { state: 'foreign', wanted: desired !== undefined, reason: UNPARSED };
    let decision = this.decide(kind, name, desired);
    if (decision.action === 'update' || decision.action === 'recreate') {
      // An update is planned against a re-read: a prerequisite whose create is in flight is
      // waited for first, then the entry is decided again.
      const creating = this.prerequisites(kind, desired).creating;
      if (creating.length > 0) {
        await Promise.allSettled(creating);
        decision = this.decide(kind, name, desired);
      }
    }
    // (A create's prerequisites are looked at right before its write, below.)
    if (decision.action === 'update' || decision.action === 'recreate') {
      const blocked = this.prerequisites(kind, desired).blocked;
      if (blocked) return blocked;
    }
    let fresh = false;
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      switch (decision.action) {
        case 'none':
          return { state: 'in-sync' };
        case 'foreign':
          return { state: 'foreign', wanted: decision.wanted, reason: decision.reason };
        case 'delete-candidate':
          if (!options.deleteAllowed) return { state: 'delete-pending' };
          return this.retire(kind, name, guard, options);
        case 'create': {
          const created = await this.create(
            kind,
            name,
            desired,
            decision.action === 'create' ? decision.writes : [],
            guard,
          );
          if (typeof created === 'object') return created;
          if (created === 'created') return { state: 'written', op: 'create' };
          if (created === 'prerequisite-failed') {
            // Not sent: a create it was to follow failed. Decided again from the cache (which
            // says by now whether that entry exists after all).
            decision = this.decide(kind, name, desired);
            continue;
          }
          decision = await this.reread(kind, name, desired);
          fresh = true;
          continue;
        }
        case 'update':
        case 'recreate':
          break;
      }
      // Update: only against what ODL holds now.
      if (!fresh) {
        decision = await this.reread(kind, name, desired);
        fresh = true;
        continue;
      }
      const d = decision;
      const done = await this.attached(kind, desired, () => this.apply(d.writes, guard));
      if (done !== undefined) return done;
      this.metrics.writes.inc({ kind, op: 'update' });
      this.logger.info('updated ODL entry', {
        kind,
        name,
        changed: d.changed,
        recreated: d.action === 'recreate',
      });
      // Read back what ODL holds: entries keep leaves odlcoe does not own.
      await this.cache.refresh(kind, name);
      return { state: 'written', op: 'update' };
    }
    throw new Error(`${kind} ${name} kept changing in ODL while it was being written; will retry`);
  }

  /**
   * An update that needs `desired`'s prerequisites: checked and counted as attaching, in one
   * step. (A prerequisite still being created blocks it: it waited for those before deciding.)
   */
  private async attached<T>(
    kind: string,
    desired: unknown,
    write: () => Promise<T>,
  ): Promise<T | Extract<ObjectResult, { state: 'blocked' }>> {
    const { blocked, needed } = this.prerequisites(kind, desired);
    if (blocked) return blocked;
    const release = this.gate.beginAttach(needed);
    try {
      return await write();
    } finally {
      release();
    }
  }

  /**
   * `desired`'s prerequisites that are not usable now (`blocked`, undefined when all are), and
   * the creates of ours in flight among the missing ones (`creating`). With `follow`, a
   * prerequisite being created does not block: the write can follow its create.
   */
  private prerequisites(
    kind: string,
    desired: unknown,
    follow = false,
  ): {
    blocked?: Extract<ObjectResult, { state: 'blocked' }>;
    creating: Promise<unknown>[];
    /** Every prerequisite (what a write of it attaches to). */
    needed: readonly Prerequisite[];
  } {
    const creating: Promise<unknown>[] = [];
    if (desired === undefined) return { creating, needed: [] };
    const needed = this.table.spec(kind).prerequisites(desired);
    const problems: { p: Prerequisite; state: 'missing' | 'retiring' | 'foreign' }[] = [];
    for (const p of needed) {
      const state = this.prerequisiteState(p);
      if (state === 'ok') continue;
      const create = state === 'missing' ? this.creating.get(refKey(p)) : undefined;
      if (create) creating.push(create);
      if (!(create && follow)) problems.push({ p, state });
    }
    if (problems.length === 0) return { creating, needed };
    return {
      creating,
      needed,
      blocked: {
        state: 'blocked',
        awaits: problems.map((x) => ({ kind: x.p.kind, name: x.p.name })),
        foreign: problems.some((x) => x.state === 'foreign'),
        reason: problems
          .map(
            (x) =>
              `${this.table.label(x.p.kind)} ${x.p.name} ${x.state === 'foreign' ? 'is not ours' : x.state === 'missing' ? 'does not exist yet' : 'is being removed'}`,
          )
          .join('; '),
      },
    };
  }

  /**
   * Deletes an entry of ours once nothing needs it: its dependants (ours: awaited; foreign:
   * kept for them, reported) are looked at before, and again after the entry is re-read, with
   * the entry marked as retiring from the first await to the end.
   */
  private async retire(
    kind: string,
    name: string,
    guard: WriteGuard,
    options: ConvergeOptions,
  ): Promise<ObjectResult> {
    const ref = { kind, name };
    let needed = this.blockedByDependants(ref);
    if (needed?.foreign) {
      // Other writers change their entries without the watcher hearing of it: look at the
      // ones in the way again, or a foreign entry deleted since would keep ours until a resync.
      for (const d of needed.awaits) await this.cache.refresh(d.kind, d.name);
      needed = this.blockedByDependants(ref);
    }
    if (needed) return needed;
    const gated = this.table.dependantKinds(kind).length > 0;
    if (gated && !this.gate.beginRetire(ref))
      return {
        state: 'blocked',
        awaits: [],
        foreign: false,
        reason: 'an entry that needs it is being written',
      };
    try {
      // Only against what ODL holds now (ownership included).
      const decision = await this.reread(kind, name, undefined);
      if (decision.action !== 'delete-candidate')
        return decision.action === 'foreign'
          ? { state: 'foreign', wanted: false, reason: decision.reason }
          : { state: 'in-sync' };
      const still = this.blockedByDependants(ref);
      if (still) return still;
      if (options.stillUnneeded && !options.stillUnneeded())
        return { state: 'blocked', awaits: [], foreign: false, reason: 'needed again' };
      await this.apply(decision.writes, guard);
      this.cache.remove(kind, name);
      this.metrics.writes.inc({ kind, op: 'delete' });
      this.logger.info('deleted ODL entry', { kind, name });
      return { state: 'written', op: 'delete' };
    } finally {
      if (gated) this.gate.endRetire(ref);
    }
  }

  private blockedByDependants(ref: Ref): Extract<ObjectResult, { state: 'blocked' }> | undefined {
    const dependants = this.cache.dependants(ref);
    if (dependants.length === 0) return undefined;
    const foreign = dependants.filter(
      (d) => this.decide(d.kind, d.name, undefined).action !== 'delete-candidate',
    );
    return {
      state: 'blocked',
      awaits: dependants,
      foreign: foreign.length > 0,
      reason: `still needed by ${dependants
        .slice(0, 5)
        .map((d) => `${this.table.label(d.kind)} ${d.name}`)
        .join(', ')}${dependants.length > 5 ? ` and ${dependants.length - 5} more` : ''}`,
    };
  }

  private diff(kind: string, name: string, desired: unknown, actual: unknown): Decision {
    return this.table.spec(kind).diff(desired, actual, this.context, { name });
  }

  private async reread(kind: string, name: string, desired: unknown): Promise<Decision> {
    const actual = await this.cache.refresh(kind, name);
    if (actual === undefined && this.cache.isUnparsed(kind, name))
      return { action: 'foreign', name, wanted: desired !== undefined, reason: UNPARSED };
    return this.diff(kind, name, desired, actual);
  }

  /**
   * POSTs a new entry once its prerequisites allow it (the kinds table): present, or being
   * created by a write of ours in flight, which the POST then follows (`after`). Checked and
   * counted as attaching in one step (no await between). `exists`: ODL already has one (409),
   * which the caller re-reads; `prerequisite-failed`: not sent, because a create it was to
   * follow failed.
   */
  private async create(
    kind: string,
    name: string,
    desired: unknown,
    writes: WriteOp[],
    guard: WriteGuard,
  ): Promise<'created' | 'exists' | 'prerequisite-failed' | Extract<ObjectResult, { state: 'blocked' }>> {
    const [put, ...more] = writes;
    if (!put || put.op !== 'put' || more.length > 0)
      throw new Error(`unexpected create plan for ${kind} ${name}`);
    const { blocked, creating, needed } = this.prerequisites(kind, desired, true);
    if (blocked) return blocked;
    guard.check();
    const release = this.gate.beginAttach(needed);
    const ref = refKey({ kind, name });
    let posted: Promise<void> | undefined;
    try {
      posted = this.client.post(parentPath(put.path), put.body, {
        signal: guard.signal,
        ...(creating.length > 0 ? { after: creating } : {}),
      });
      this.creating.set(ref, posted);
      await posted;
    } catch (err) {
      if (err instanceof RestconfError && err.status === 409) return 'exists';
      if (err instanceof PrerequisiteNotWritten) return 'prerequisite-failed';
      throw err;
    } finally {
      if (posted && this.creating.get(ref) === posted) this.creating.delete(ref);
      release();
    }
    this.cache.set(kind, desired);
    this.metrics.writes.inc({ kind, op: 'create' });
    this.logger.info('created ODL entry', { kind, name });
    return 'created';
  }

  private async apply(writes: readonly WriteOp[], guard: WriteGuard): Promise<undefined> {
    for (const write of writes) {
      guard.check();
      if (write.op === 'put') await this.client.put(write.path, write.body, { signal: guard.signal });
      else await this.client.delete(write.path, { signal: guard.signal });
    }
    return undefined;
  }
}
