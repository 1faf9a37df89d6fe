/**
 * The reconcile contract between the watcher's core (watcher.ts) and a backend: one call per
 * key, `reconcile(key, guard) → ReconcileOutcome`; throwing means "failed: retry with backoff".
 * Richer than controller-runtime's `Result{Requeue, RequeueAfter}`: every outcome is named and
 * counted per key kind (`odlcoe_watcher_reconciles_total`), and a key that waits for ODL
 * entries says which, so the core can get them made (or removed) and wake it when they change.
 */
import type { Ref } from '../netvirt/kind.js';

/**
 * How a reconcile ended (besides throwing).
 * - `synced`: ODL is right for this key.
 * - `deferred`: the desired state cannot be known yet (a pod whose node is not known); what
 *   exists is kept and a later event will enqueue the key again.
 * - `waiting`: the order of entries does not allow a write yet: prerequisites must appear (an
 *   instance its interfaces need) or dependants go (interfaces an instance's deletion must wait
 *   for). `on` names them: the core reconciles the keys that own them and wakes this key when
 *   one changes; `retryAfterMs` is the safety net. Not converged.
 * - `grace`: an unneeded instance inside its grace period; look again when it ends.
 * - `foreign`: a name odlcoe needs is held by an object it does not own; reported, retried slowly.
 * - `exhausted`: a resource pool (node subnets) is used up; reported, retried slowly.
 * - `polling`: right as far as the watcher can make it, but waiting for someone else (an ODL
 *   user to set a node's pod-cidr); look again after `retryAfterMs`.
 */
export type ReconcileOutcome =
  | { result: 'synced' | 'deferred' }
  | { result: 'waiting'; retryAfterMs: number; on: Ref[] }
  | { result: 'grace' | 'foreign' | 'exhausted' | 'polling'; retryAfterMs: number };

/** Checked before every write: leadership or the queue may have ended since the reconcile began. */
export interface WriteGuard {
  check(): void;
  /**
   * Fires when leadership or the queue ends. Every write passes it to the RESTCONF client
   * (`{ signal }`), so a write in flight or waiting for a retry is abandoned at once rather
   * than landing after another replica took over.
   */
  readonly signal: AbortSignal;
}

/** The kind of a key (`pod/ns/name` → `pod`), for metric labels. */
export function keyKind(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? key : key.slice(0, slash);
}
