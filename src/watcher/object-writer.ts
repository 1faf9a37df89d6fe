/**
 * Makes one ODL entry equal to its desired state, using the owned-leaf diff of src/netvirt.
 *
 * - Nothing is written when the owned leaves are equal (so a second reconcile writes nothing).
 * - Creates are POSTs (create-only): if someone created the name since the cache was filled,
 *   ODL answers 409 instead of letting odlcoe overwrite a foreign object; the entry is then
 *   re-read and decided again.
 * - Updates and deletes are planned against a fresh read of the entry, never the cache alone:
 *   the diff carries what ODL wrote into the entry (elan-tag, mac-timeout, parent-interface,
 *   learnt-ip adjacencies) into the write, and ownership is checked on what ODL holds now.
 * - Entries without odlcoe's marker are never written or deleted.
 * - The write guard is checked before every write: a reconcile that outlived its leadership
 *   stops there.
 */
import type { Logger } from '../common/log.js';
import {
  diffElanInstance,
  diffElanInterface,
  diffInterface,
  diffK8sNode,
  diffVpnInstance,
  diffVpnInterface,
  type Decision,
  type OwnerContext,
  type WriteOp,
} from '../netvirt/index.js';
import { RestconfError, type RestconfClient } from '../restconf/client.js';
import { parentPath } from '../restconf/path.js';
import type { WriteGuard } from './backend.js';
import type { WatcherMetrics } from './metrics.js';
import type { OdlEntries, OdlKind, OdlState } from './odl-state.js';

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

export class ObjectWriter {
  constructor(
    private readonly state: OdlState,
    private readonly client: RestconfClient,
    private readonly owner: OwnerContext,
    private readonly metrics: WatcherMetrics,
    private readonly logger: Logger,
  ) {}

  /** What the diff says about `desired` against the cached entry, without writing. */
  decide<K extends OdlKind>(kind: K, name: string, desired: OdlEntries[K] | undefined): Decision {
    return this.decideAgainst(kind, name, desired, this.state.get(kind, name));
  }

  async converge<K extends OdlKind>(
    kind: K,
    name: string,
    desired: OdlEntries[K] | undefined,
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

  private async run<K extends OdlKind>(
    kind: K,
    name: string,
    desired: OdlEntries[K] | undefined,
    guard: WriteGuard,
    options: ConvergeOptions,
  ): Promise<ObjectResult> {
    if (this.state.isUnparsed(kind, name)) {
      return {
        state: 'foreign',
        wanted: desired !== undefined,
        reason: 'ODL holds an entry that does not parse',
      };
    }
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
      if (op === 'delete') this.state.remove(kind, name);
      else await this.state.refresh(kind, name);
      return { state: 'written', op };
    }
    throw new Error(`${kind} ${name} kept changing in ODL while it was being written; will retry`);
  }

  private decideAgainst<K extends OdlKind>(
    kind: K,
    name: string,
    desired: OdlEntries[K] | undefined,
    actual: OdlEntries[K] | undefined,
  ): Decision {
    // The diff needs one side to name the entry; with neither there is nothing to do.
    if (desired === undefined && actual === undefined) return { action: 'none', name };
    const ctx = this.owner;
    const d = desired as never;
    const a = actual as never;
    switch (kind) {
      case 'interface':
        return diffInterface(d, a, ctx);
      case 'elanInstance':
        return diffElanInstance(d, a, ctx);
      case 'elanInterface':
        return diffElanInterface(d, a, ctx);
      case 'vpnInstance':
        return diffVpnInstance(d, a, ctx);
      case 'vpnInterface':
        // Owned through the ietf-interface of the same name.
        return diffVpnInterface(d, a, this.state.get('interface', name), ctx);
      case 'k8sNode':
        return diffK8sNode(d, a, ctx);
      default:
        throw new Error(`unknown ODL kind ${String(kind)}`);
    }
  }

  private async reread<K extends OdlKind>(
    kind: K,
    name: string,
    desired: OdlEntries[K] | undefined,
  ): Promise<Decision> {
    const actual = await this.state.refresh(kind, name);
    if (actual === undefined && this.state.isUnparsed(kind, name)) {
      return {
        action: 'foreign',
        name,
        wanted: desired !== undefined,
        reason: 'ODL holds an entry that does not parse',
      };
    }
    return this.decideAgainst(kind, name, desired, actual);
  }

  /** POSTs a new entry; false when ODL already has one (409), which the caller re-reads. */
  private async create<K extends OdlKind>(
    kind: K,
    name: string,
    desired: OdlEntries[K],
    writes: WriteOp[],
    guard: WriteGuard,
  ): Promise<boolean> {
    const [put, ...more] = writes;
    if (!put || put.op !== 'put' || more.length > 0)
      throw new Error(`unexpected create plan for ${kind} ${name}`);
    guard.check();
    try {
      await this.client.post(parentPath(put.path), put.body);
    } catch (err) {
      if (err instanceof RestconfError && err.status === 409) return false;
      throw err;
    }
    this.state.set(kind, desired);
    this.metrics.writes.inc({ kind, op: 'create' });
    this.logger.info('created ODL entry', { kind, name });
    return true;
  }

  private async apply(writes: readonly WriteOp[], guard: WriteGuard): Promise<void> {
    for (const write of writes) {
      guard.check();
      if (write.op === 'put') await this.client.put(write.path, write.body);
      else await this.client.delete(write.path);
    }
  }
}
