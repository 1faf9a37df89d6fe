/**
 * Graceful deletion and finalizers, after the API server's generic registry: what a DELETE
 * does to an object (`rest.BeforeDelete`, the pod strategy's `CheckGracefulDelete`,
 * `markAsDeleting`), when an update removes an object (`ShouldDeleteDuringUpdate`), and how
 * a namespace starts terminating. Pure functions from (stored object, request) to a plan; the
 * store carries the plan out, one resourceVersion and one watch event per write.
 *
 * The rule that matters most to odlcoe: a DELETE of a pod bound to a node with a grace period
 * > 0 only marks it (`deletionTimestamp`, `deletionGracePeriodSeconds`, a MODIFIED event); the
 * pod stays, Terminating, until it is deleted again with grace 0 (kubelet does that once the
 * containers have stopped). Every other pod DELETE is graceful with grace 0: the server writes
 * the mark (MODIFIED) and removes the pod (DELETED) in the same request.
 */
import type { KubeObject, ResourceType } from './resources.js';
import { NAMESPACE_TYPE } from './resources.js';
import { deepEqual, isObject } from './patch.js';
import type { StatusCause } from './status.js';
import { badRequest, invalid } from './status.js';
import { timestamp } from './strategy.js';

/** `spec.terminationGracePeriodSeconds` when the pod has none (the API server defaults it to 30). */
export const DEFAULT_TERMINATION_GRACE_SECONDS = 30;

/** The parts of `DeleteOptions` the simulator acts on (preconditions are checked apart). */
export interface DeleteRequest {
  gracePeriodSeconds?: number;
}

/**
 * `DeleteOptions` as the API server reads them: the body when the request has one, else the
 * query parameters (never a mix of the two).
 */
export function deleteRequestOf(body: unknown, query: URLSearchParams): DeleteRequest {
  if (body !== undefined) {
    if (!isObject(body)) throw badRequest('DeleteOptions must be a JSON object');
    const grace = body.gracePeriodSeconds;
    if (grace === undefined || grace === null) return {};
    if (typeof grace !== 'number' || !Number.isSafeInteger(grace))
      throw badRequest(`DeleteOptions.gracePeriodSeconds must be an integer, got ${JSON.stringify(grace)}`);
    return { gracePeriodSeconds: grace };
  }
  const text = query.get('gracePeriodSeconds');
  if (text === null || text === '') return {};
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(Number(text)))
    throw badRequest(`gracePeriodSeconds: invalid value "${text}": must be an integer`);
  return { gracePeriodSeconds: Number(text) };
}

/** What a DELETE does to one object. */
export type DeletePlan =
  /** Nothing changes (a graceful deletion is pending, or the object is already marked): 200 with the object. */
  | { action: 'keep' }
  /** Write `marked` (MODIFIED); then remove it (DELETED) when `thenRemove`. */
  | { action: 'mark'; marked: KubeObject; thenRemove: boolean }
  /** Remove the object now (DELETED). */
  | { action: 'remove' };

function finalizersOf(obj: KubeObject): string[] {
  const list = obj.metadata.finalizers;
  return Array.isArray(list) ? list.filter((f): f is string => typeof f === 'string') : [];
}

function graceOf(obj: KubeObject): number | undefined {
  const grace = obj.metadata.deletionGracePeriodSeconds;
  return typeof grace === 'number' ? grace : undefined;
}

function isPod(resource: ResourceType): boolean {
  return resource.group === '' && resource.plural === 'pods';
}

/** The object with its deletion mark set (a private copy). */
function withMark(obj: KubeObject, at: Date, grace: number, bumpGeneration: boolean): KubeObject {
  const metadata = { ...obj.metadata, deletionTimestamp: timestamp(at), deletionGracePeriodSeconds: grace };
  if (bumpGeneration && typeof metadata.generation === 'number' && metadata.generation > 0)
    metadata.generation += 1;
  return { ...obj, metadata };
}

/**
 * The pod strategy's `CheckGracefulDelete`: the requested grace period, else the pod's
 * `terminationGracePeriodSeconds`; 0 for a pod not bound to a node or already finished;
 * a negative period counts as 1.
 */
export function podGracePeriod(pod: KubeObject, requested: number | undefined): number {
  const spec = isObject(pod.spec) ? pod.spec : {};
  const status = isObject(pod.status) ? pod.status : {};
  const own = spec.terminationGracePeriodSeconds;
  let period =
    requested ??
    (typeof own === 'number' && Number.isSafeInteger(own) ? own : DEFAULT_TERMINATION_GRACE_SECONDS);
  if (typeof spec.nodeName !== 'string' || spec.nodeName === '') period = 0;
  if (status.phase === 'Succeeded' || status.phase === 'Failed') period = 0;
  if (period < 0) period = 1;
  return period;
}

/**
 * `rest.BeforeDelete` and the generic store's `Delete` for every type but namespaces.
 *
 * Pods (the only type with a graceful strategy):
 * - not yet marked: `deletionTimestamp` = now + grace, `deletionGracePeriodSeconds` = grace,
 *   generation + 1 (MODIFIED); with grace 0 and no finalizers, removed in the same request;
 * - already marked with a grace period > 0: a smaller requested grace shortens it (the
 *   timestamp moves back by the difference, never before now; a graceful request whose time
 *   is already up becomes grace 1), a larger one or none leaves the pod as it is;
 * - marked with grace 0 (or none): removed.
 * Other types, and marked pods whose grace is 0: removed at once, unless they have finalizers,
 * in which case they are marked (`deletionTimestamp` = now, grace 0, generation + 1) and go
 * when the last finalizer is removed.
 */
export function planDelete(
  resource: ResourceType,
  existing: KubeObject,
  request: DeleteRequest,
  now: Date,
): DeletePlan {
  const requested =
    request.gracePeriodSeconds !== undefined && request.gracePeriodSeconds < 0
      ? 1
      : request.gracePeriodSeconds;
  const hasFinalizers = finalizersOf(existing).length > 0;
  const markedAt = existing.metadata.deletionTimestamp;
  if (isPod(resource)) {
    if (typeof markedAt !== 'string') {
      const grace = podGracePeriod(existing, requested);
      const marked = withMark(existing, new Date(now.getTime() + grace * 1000), grace, true);
      return { action: 'mark', marked, thenRemove: grace === 0 && !hasFinalizers };
    }
    let current = graceOf(existing);
    if (current !== undefined && current < 0) current = 1;
    if (current !== undefined && current > 0) {
      if (requested === undefined || requested >= current) return { action: 'keep' };
      // Back by the old grace, forward by the new one: the time of the first request + new grace.
      let at = new Date(Date.parse(markedAt) - current * 1000 + requested * 1000);
      let grace = requested;
      if (at.getTime() < now.getTime()) {
        at = now;
        if (grace !== 0) grace = 1;
      }
      return {
        action: 'mark',
        marked: withMark(existing, at, grace, false),
        thenRemove: grace === 0 && !hasFinalizers,
      };
    }
  }
  if (!hasFinalizers) return { action: 'remove' };
  // markAsDeleting: the first mark bumps the generation; a marked object keeps its timestamp.
  const first = typeof markedAt !== 'string';
  const marked = withMark(existing, now, 0, first);
  if (!first) marked.metadata.deletionTimestamp = markedAt;
  return deepEqual(marked, existing) ? { action: 'keep' } : { action: 'mark', marked, thenRemove: false };
}

/**
 * The namespace registry's first DELETE: `deletionTimestamp` = now and phase Terminating
 * (no grace period, no generation bump). Undefined when the namespace is already terminating.
 */
export function markNamespaceTerminating(ns: KubeObject, now: Date): KubeObject | undefined {
  if (typeof ns.metadata.deletionTimestamp === 'string') return undefined;
  const status = isObject(ns.status) ? ns.status : {};
  return {
    ...ns,
    metadata: { ...ns.metadata, deletionTimestamp: timestamp(now) },
    status: { ...status, phase: 'Terminating' },
  };
}

export function isTerminating(obj: KubeObject): boolean {
  return typeof obj.metadata.deletionTimestamp === 'string';
}

/** The finalizers in `spec.finalizers` of a namespace (the namespace controller's `kubernetes`). */
export function namespaceSpecFinalizers(ns: KubeObject): string[] {
  const spec = isObject(ns.spec) ? ns.spec : {};
  return Array.isArray(spec.finalizers)
    ? spec.finalizers.filter((f): f is string => typeof f === 'string')
    : [];
}

/**
 * `ShouldDeleteDuringUpdate`: an update that leaves a marked object with no finalizers removes
 * it, when its grace period is 0 or unset (a Terminating pod with grace > 0 still waits for
 * its final DELETE). A namespace also needs an empty `spec.finalizers`.
 */
export function shouldDeleteDuringUpdate(
  resource: ResourceType,
  existing: KubeObject,
  next: KubeObject,
): boolean {
  if (finalizersOf(next).length > 0 || !isTerminating(existing)) return false;
  if (resource === NAMESPACE_TYPE && namespaceSpecFinalizers(next).length > 0) return false;
  const grace = graceOf(existing);
  return grace === undefined || grace === 0;
}

/**
 * `ValidateNoNewFinalizers`: once an object is marked for deletion its finalizers may only be
 * removed (422 otherwise).
 */
export function checkNoNewFinalizers(resource: ResourceType, existing: KubeObject, next: KubeObject): void {
  if (!isTerminating(existing)) return;
  const before = new Set(finalizersOf(existing));
  const added = [...new Set(finalizersOf(next).filter((f) => !before.has(f)))].sort();
  if (added.length === 0) return;
  const cause: StatusCause = {
    reason: 'FieldValueForbidden',
    field: 'metadata.finalizers',
    message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`,
  };
  throw invalid(resource.kind, resource.group, existing.metadata.name, [cause]);
}
