/**
 * Makes one COE entry equal to its desired state (or removes it), using the owned-leaf diff.
 *
 * - Nothing is written when the owned leaves are equal: a second reconcile writes nothing.
 * - Creates are POSTs into the list (create-only): if someone created the uid since the cache
 *   was filled, ODL answers 409 instead of letting odlcoe overwrite it; the entry is re-read and
 *   decided again (a retried POST whose first attempt did land also ends there, as "equal").
 * - Updates (whole-entry PUT) and deletes are planned against a fresh read of the entry, so
 *   ownership is checked on what ODL holds now. A DELETE answered 404 is success.
 * - Entries that are not this cluster's are never written or deleted.
 * - The write guard is checked before every write.
 */
import type { Logger } from '../../common/log.js';
import { diffK8sNode, type Decision, type OwnerContext, type WriteOp } from '../../netvirt/index.js';
import { RestconfError, type RestconfClient } from '../../restconf/client.js';
import { parentPath } from '../../restconf/path.js';
import type { WriteGuard } from '../backend.js';
import type { WatcherMetrics } from '../metrics.js';
import { diffCoeEndpoints, diffCoePod, diffCoeService } from './diff.js';
import type { CoeEntries, CoeKind, CoeOdlCache } from './odl-cache.js';

export type WriteResult =
  /** Equal to the desired state, or absent and not desired. */
  | { state: 'in-sync' }
  | { state: 'written'; op: 'create' | 'update' | 'delete' }
  /** Held by an entry this cluster does not own; `wanted`: odlcoe needs the uid. */
  | { state: 'foreign'; wanted: boolean; reason: string };

/** Rounds of read-decide-write before giving up on an entry that keeps changing under us. */
const MAX_ROUNDS = 4;

export class CoeWriter {
  constructor(
    private readonly cache: CoeOdlCache,
    private readonly client: RestconfClient,
    private readonly owner: OwnerContext,
    private readonly metrics: WatcherMetrics,
    private readonly logger: Logger,
  ) {}

  /** What the diff says about `desired` against the cached entry, without writing. */
  decide<K extends CoeKind>(kind: K, uid: string, desired: CoeEntries[K] | undefined): Decision {
    return this.decideAgainst(kind, desired, this.cache.get(kind, uid), uid);
  }

  /** Whether the cached entry `uid` is this cluster's (so garbage collection may look at it). */
  owns(kind: CoeKind, uid: string): boolean {
    return (
      this.cache.get(kind, uid) !== undefined &&
      this.decide(kind, uid, undefined).action === 'delete-candidate'
    );
  }

  async converge<K extends CoeKind>(
    kind: K,
    uid: string,
    desired: CoeEntries[K] | undefined,
    guard: WriteGuard,
  ): Promise<WriteResult> {
    const result = await this.run(kind, uid, desired, guard);
    this.metrics.objectState(
      kind,
      uid,
      desired === undefined ? 'undesired' : result.state === 'foreign' ? 'foreign' : 'applied',
    );
    return result;
  }

  private async run<K extends CoeKind>(
    kind: K,
    uid: string,
    desired: CoeEntries[K] | undefined,
    guard: WriteGuard,
  ): Promise<WriteResult> {
    if (this.cache.isUnparsed(kind, uid))
      return {
        state: 'foreign',
        wanted: desired !== undefined,
        reason: 'ODL holds an entry that does not parse',
      };
    let decision = this.decide(kind, uid, desired);
    let fresh = false;
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      switch (decision.action) {
        case 'none':
          return { state: 'in-sync' };
        case 'foreign':
          return { state: 'foreign', wanted: decision.wanted, reason: decision.reason };
        case 'create':
          if (desired === undefined) throw new Error(`create of ${kind} ${uid} without a desired entry`);
          if (await this.create(kind, uid, desired, decision.writes, guard))
            return { state: 'written', op: 'create' };
          decision = await this.reread(kind, uid, desired);
          fresh = true;
          continue;
        case 'update':
        case 'recreate':
        case 'delete-candidate':
          break;
      }
      if (!fresh) {
        decision = await this.reread(kind, uid, desired);
        fresh = true;
        continue;
      }
      for (const write of decision.writes) {
        guard.check();
        if (write.op === 'put') await this.client.put(write.path, write.body);
        else await this.client.delete(write.path);
      }
      const op = decision.action === 'delete-candidate' ? 'delete' : 'update';
      this.metrics.writes.inc({ kind, op });
      this.logger.info(op === 'delete' ? 'deleted ODL COE entry' : 'updated ODL COE entry', {
        kind,
        uid,
        ...(decision.action === 'update' ? { changed: decision.changed } : {}),
      });
      // After an update, read back what ODL holds (k8s-node entries keep leaves odlcoe does
      // not own, such as a pod-cidr an ODL user set).
      if (op === 'delete') this.cache.remove(kind, uid);
      else await this.cache.refresh(kind, uid);
      return { state: 'written', op };
    }
    throw new Error(`${kind} ${uid} kept changing in ODL while it was being written; will retry`);
  }

  private decideAgainst<K extends CoeKind>(
    kind: K,
    desired: CoeEntries[K] | undefined,
    actual: CoeEntries[K] | undefined,
    uid: string,
  ): Decision {
    const d = desired as never;
    const a = actual as never;
    switch (kind) {
      case 'coePod':
        return diffCoePod(d, a, this.owner);
      case 'coeService':
        return diffCoeService(d, a, this.owner);
      case 'coeEndpoints':
        // Owned through the services entry of the same uid, as ODL holds it now (cached).
        return diffCoeEndpoints(d, a, this.cache.get('coeService', uid), this.owner);
      case 'k8sNode':
        return diffK8sNode(d, a, this.owner);
      default:
        throw new Error(`unknown COE kind ${String(kind)}`);
    }
  }

  private async reread<K extends CoeKind>(
    kind: K,
    uid: string,
    desired: CoeEntries[K] | undefined,
  ): Promise<Decision> {
    const actual = await this.cache.refresh(kind, uid);
    if (actual === undefined && this.cache.isUnparsed(kind, uid))
      return {
        action: 'foreign',
        name: uid,
        wanted: desired !== undefined,
        reason: 'ODL holds an entry that does not parse',
      };
    return this.decideAgainst(kind, desired, actual, uid);
  }

  /** POSTs a new entry; false when ODL already has one (409), which the caller re-reads. */
  private async create<K extends CoeKind>(
    kind: K,
    uid: string,
    desired: CoeEntries[K],
    writes: WriteOp[],
    guard: WriteGuard,
  ): Promise<boolean> {
    const [put, ...more] = writes;
    if (!put || put.op !== 'put' || more.length > 0)
      throw new Error(`unexpected create plan for ${kind} ${uid}`);
    guard.check();
    try {
      await this.client.post(parentPath(put.path), put.body);
    } catch (err) {
      if (err instanceof RestconfError && err.status === 409) return false;
      throw err;
    }
    this.cache.set(kind, desired);
    this.metrics.writes.inc({ kind, op: 'create' });
    this.logger.info('created ODL COE entry', { kind, uid });
    return true;
  }
}
