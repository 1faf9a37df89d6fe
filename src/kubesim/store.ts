/**
 * The simulator's etcd: current objects in one map per resource and namespace, one global
 * resourceVersion counter, and the retained history. Every write runs synchronously to the
 * end (check, assign version, store, record, notify), so a watch registered in the same tick
 * as a list can never miss or duplicate an event.
 */
import type { EventType, StoreEvent } from './history.js';
import { EventHistory } from './history.js';
import type { Json, PatchType } from './patch.js';
import { applyPatch, deepEqual, isObject } from './patch.js';
import type { KubeObject, ResourceType } from './resources.js';
import { NAMESPACE_TYPE, RESOURCE_TYPES, resourceForKind } from './resources.js';
import type { ObjectPredicate } from './selectors.js';
import type { DeletePlan } from './deletion.js';
import {
  checkNoNewFinalizers,
  isTerminating,
  markNamespaceTerminating,
  namespaceSpecFinalizers,
  planDelete,
  shouldDeleteDuringUpdate,
} from './deletion.js';
import {
  ApiError,
  alreadyExists,
  badRequest,
  forbidden,
  namespaceTerminating,
  notFound,
  tooLargeResourceVersion,
  tooOldResourceVersion,
} from './status.js';
import {
  UNDELETABLE_NAMESPACES,
  checkDeletePreconditions,
  prepareCreate,
  prepareUpdate,
} from './strategy.js';

export type StoreListener = (event: StoreEvent) => void;

export interface ListOptions {
  /** Only this namespace; undefined lists every namespace (and is the only choice for cluster-scoped types). */
  namespace?: string | undefined;
  predicate?: ObjectPredicate | undefined;
  limit?: number | undefined;
  continueToken?: string | undefined;
  resourceVersion?: string | undefined;
  resourceVersionMatch?: string | undefined;
}

export interface ListResult {
  items: KubeObject[];
  resourceVersion: string;
  continueToken?: string;
  remainingItemCount?: number;
}

export interface WriteOptions {
  dryRun?: boolean;
}

export interface DeleteWriteOptions extends WriteOptions {
  /** `DeleteOptions.gracePeriodSeconds` (from the body, else the query). */
  gracePeriodSeconds?: number | undefined;
}

interface ContinueToken {
  rv: number;
  start: string;
}

const CONTINUE_VERSION = 'kubesim/v1';

const EXPIRED_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: CONTINUE_VERSION, rv: token.rv, start: token.start })).toString(
    'base64url',
  );
}

function decodeContinue(text: string): ContinueToken {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (
      isObject(value) &&
      value.v === CONTINUE_VERSION &&
      Number.isSafeInteger(value.rv) &&
      typeof value.start === 'string'
    ) {
      return { rv: value.rv as number, start: value.start };
    }
  } catch {
    // fall through to the error below
  }
  throw badRequest('continue key is not valid: not a token this server issued');
}

/** Parses a client's resourceVersion; the simulator's versions are decimal integers. */
export function parseResourceVersion(text: string): number {
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text)))
    throw badRequest(`invalid resource version "${text}"`);
  return Number(text);
}

/** The sort (and continue) key of an object: `namespace/name`, or `name` when cluster-scoped. */
function keyOf(obj: KubeObject): string {
  const ns = obj.metadata.namespace;
  return ns === undefined ? obj.metadata.name : `${ns}/${obj.metadata.name}`;
}

export class ObjectStore {
  private rv = 0;
  /** resource → namespace ('' when cluster-scoped) → name → object. */
  private readonly tables = new Map<ResourceType, Map<string, Map<string, KubeObject>>>();
  private readonly listeners = new Set<StoreListener>();
  readonly history: EventHistory;
  /**
   * The last snapshot a list built: a paged list asks for the same one page after page, and
   * building it (every object, history undone, sorted) per page made listing N objects cost
   * O(N² / limit): minutes for 100,000 pods. A snapshot at a version never changes (stored
   * objects are replaced, not changed in place), so it stays valid for as long as it is kept.
   */
  private lastSnapshot:
    | { resource: ResourceType; namespace: string | undefined; atRv: number; rows: [string, KubeObject][] }
    | undefined;

  constructor(
    historyLimit: number,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.history = new EventHistory(historyLimit);
    for (const r of RESOURCE_TYPES) this.tables.set(r, new Map());
  }

  get resourceVersion(): number {
    return this.rv;
  }

  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private table(resource: ResourceType): Map<string, Map<string, KubeObject>> {
    const table = this.tables.get(resource);
    if (!table) throw new Error(`resource ${resource.plural} is not registered`);
    return table;
  }

  get(resource: ResourceType, namespace: string, name: string): KubeObject | undefined {
    return this.table(resource).get(namespace)?.get(name);
  }

  /** Current objects, unordered; `namespace` narrows a namespaced type. */
  *objects(resource: ResourceType, namespace?: string): Generator<KubeObject> {
    const table = this.table(resource);
    if (namespace !== undefined) {
      const names = table.get(namespace);
      if (names) yield* names.values();
      return;
    }
    for (const names of table.values()) yield* names.values();
  }

  count(resource: ResourceType): number {
    let n = 0;
    for (const names of this.table(resource).values()) n += names.size;
    return n;
  }

  // -------------------------------------------------------------------------------------------
  // Reads

  /**
   * One page of a list, consistent at one resourceVersion: the current one for a first page,
   * the first page's for every continuation (rebuilt from history; 410 once compacted).
   */
  list(resource: ResourceType, options: ListOptions): ListResult {
    const { namespace, predicate, limit, continueToken } = options;
    let atRv = this.rv;
    let start = '';
    if (continueToken !== undefined && continueToken !== '') {
      if (options.resourceVersion !== undefined && options.resourceVersion !== '') {
        throw badRequest('specifying resource version is not allowed when using continue');
      }
      const token = decodeContinue(continueToken);
      if (token.rv > this.rv)
        throw badRequest('continue key is not valid: its resource version is in the future');
      if (!this.history.covers(token.rv)) {
        throw new ApiError(
          410,
          'Expired',
          EXPIRED_CONTINUE,
          undefined,
          encodeContinue({ rv: this.rv, start: token.start }),
        );
      }
      atRv = token.rv;
      start = token.start;
    } else if (options.resourceVersion !== undefined && options.resourceVersion !== '') {
      const requested = parseResourceVersion(options.resourceVersion);
      if (requested > this.rv) throw tooLargeResourceVersion(requested, this.rv);
      if (options.resourceVersionMatch === 'Exact') {
        if (!this.history.covers(requested))
          throw tooOldResourceVersion(options.resourceVersion, this.history.oldestStart);
        atRv = requested;
      } else if (
        options.resourceVersionMatch !== undefined &&
        options.resourceVersionMatch !== '' &&
        options.resourceVersionMatch !== 'NotOlderThan'
      ) {
        throw badRequest(
          `resourceVersionMatch: Unsupported value: "${options.resourceVersionMatch}": supported values: "Exact", "NotOlderThan"`,
        );
      }
    } else if (options.resourceVersionMatch !== undefined && options.resourceVersionMatch !== '') {
      throw badRequest('resourceVersionMatch is forbidden unless resourceVersion is provided');
    }
    if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 0))
      throw badRequest(`limit must be a non-negative integer, got ${limit}`);

    const candidates = this.snapshot(resource, namespace, atRv);
    const items: KubeObject[] = [];
    let index = 0;
    if (start !== '') {
      // Binary search for the first key after the previous page's last key.
      let lo = 0;
      let hi = candidates.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((candidates[mid] as [string, KubeObject])[0] <= start) lo = mid + 1;
        else hi = mid;
      }
      index = lo;
    }
    const pageSize = limit === undefined || limit === 0 ? Infinity : limit;
    for (; index < candidates.length && items.length < pageSize; index++) {
      const obj = (candidates[index] as [string, KubeObject])[1];
      if (!predicate || predicate(obj)) items.push(obj);
    }
    const result: ListResult = { items, resourceVersion: String(atRv) };
    if (index < candidates.length) {
      const lastKey = (candidates[index - 1] as [string, KubeObject])[0];
      result.continueToken = encodeContinue({ rv: atRv, start: lastKey });
      if (!predicate) result.remainingItemCount = candidates.length - index;
    }
    return result;
  }

  /** The objects as of `atRv`, sorted by key: current state with later history undone. */
  private snapshot(
    resource: ResourceType,
    namespace: string | undefined,
    atRv: number,
  ): [string, KubeObject][] {
    const last = this.lastSnapshot;
    if (last?.resource === resource && last.namespace === namespace && last.atRv === atRv) return last.rows;
    const rows = this.buildSnapshot(resource, namespace, atRv);
    this.lastSnapshot = { resource, namespace, atRv, rows };
    return rows;
  }

  private buildSnapshot(
    resource: ResourceType,
    namespace: string | undefined,
    atRv: number,
  ): [string, KubeObject][] {
    const byKey = new Map<string, KubeObject>();
    for (const obj of this.objects(resource, namespace)) byKey.set(keyOf(obj), obj);
    if (atRv < this.rv) {
      const undone = new Set<string>();
      for (const event of this.history.after(atRv)) {
        if (event.resource !== resource) continue;
        if (namespace !== undefined && event.object.metadata.namespace !== namespace) continue;
        const key = keyOf(event.object);
        // The first change after atRv tells what the object was at atRv.
        if (undone.has(key)) continue;
        undone.add(key);
        if (event.previous) byKey.set(key, event.previous);
        else byKey.delete(key);
      }
    }
    return [...byKey.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }

  // -------------------------------------------------------------------------------------------
  // Writes

  /**
   * The NamespaceLifecycle admission check of a create: the namespace must exist (404) and not
   * be terminating (403 with the NamespaceTerminating cause).
   */
  private admitCreate(resource: ResourceType, namespace: string, body: unknown): void {
    if (!resource.namespaced) return;
    const ns = this.get(NAMESPACE_TYPE, '', namespace);
    if (!ns) throw notFound(NAMESPACE_TYPE, namespace);
    if (isTerminating(ns) || (isObject(ns.status) && ns.status.phase === 'Terminating')) {
      const meta = isObject(body) && isObject(body.metadata) ? body.metadata : {};
      // As the admission plugin names it: before name generation.
      const name =
        typeof meta.name === 'string' && meta.name !== ''
          ? meta.name
          : typeof meta.generateName === 'string' && meta.generateName !== ''
            ? meta.generateName
            : 'Unknown';
      throw namespaceTerminating(resource, namespace, name);
    }
  }

  create(resource: ResourceType, namespace: string, body: unknown, options: WriteOptions = {}): KubeObject {
    this.admitCreate(resource, namespace, body);
    const obj = this.prepareUniqueCreate(
      resource,
      namespace,
      body,
      (ns, name) => this.get(resource, ns, name) !== undefined,
    );
    if (options.dryRun) return obj;
    return this.commit(resource, 'ADDED', obj, undefined);
  }

  /** prepareCreate, retrying generateName collisions as the API server does (409 if they persist). */
  private prepareUniqueCreate(
    resource: ResourceType,
    namespace: string,
    body: unknown,
    exists: (namespace: string, name: string) => boolean,
  ): KubeObject {
    for (let attempt = 0; ; attempt++) {
      const obj = prepareCreate({
        resource,
        namespace: resource.namespaced ? namespace : '',
        body,
        now: this.now(),
      });
      const ns = obj.metadata.namespace ?? '';
      if (!exists(ns, obj.metadata.name)) return obj;
      const generated =
        isObject(body) && isObject(body.metadata) && !body.metadata.name && body.metadata.generateName;
      if (!generated || attempt >= 8) throw alreadyExists(resource, obj.metadata.name);
    }
  }

  /** PUT: replaces the object (or its status); creates it for types that allow create-on-update. */
  update(
    resource: ResourceType,
    namespace: string,
    name: string,
    body: unknown,
    subresource: 'status' | undefined,
    options: WriteOptions = {},
  ): { object: KubeObject; created: boolean } {
    const existing = this.get(resource, namespace, name);
    if (!existing) {
      if (!resource.createOnUpdate || subresource !== undefined) throw notFound(resource, name);
      if (
        isObject(body) &&
        isObject(body.metadata) &&
        body.metadata.name !== undefined &&
        body.metadata.name !== name
      ) {
        throw badRequest(
          `the name of the object (${String(body.metadata.name)}) does not match the name on the URL (${name})`,
        );
      }
      // The API server creates here even when the body carries a (stale) resourceVersion.
      const named = isObject(body)
        ? {
            ...body,
            metadata: { ...(isObject(body.metadata) ? body.metadata : {}), name, resourceVersion: '' },
          }
        : body;
      return { object: this.create(resource, namespace, named, options), created: true };
    }
    const next = prepareUpdate({ resource, existing, body, subresource });
    return { object: this.commitUpdate(resource, existing, next, options), created: false };
  }

  /**
   * Stores an update (or patch): nothing when nothing changes; a removal when it takes the last
   * finalizer off an object marked for deletion (`ShouldDeleteDuringUpdate`), which answers the
   * removed object; else the new state (MODIFIED).
   */
  private commitUpdate(
    resource: ResourceType,
    existing: KubeObject,
    next: KubeObject,
    options: WriteOptions,
  ): KubeObject {
    if (next === existing) return existing;
    checkNoNewFinalizers(resource, existing, next);
    if (options.dryRun) return next;
    if (shouldDeleteDuringUpdate(resource, existing, next)) return this.remove(resource, existing);
    return this.commit(resource, 'MODIFIED', next, existing);
  }

  patch(
    resource: ResourceType,
    namespace: string,
    name: string,
    type: PatchType,
    patch: Json,
    subresource: 'status' | undefined,
    options: WriteOptions = {},
  ): KubeObject {
    const existing = this.get(resource, namespace, name);
    if (!existing) throw notFound(resource, name);
    const patched = applyPatch(type, existing as unknown as Json, patch);
    if (!isObject(patched))
      throw new ApiError(422, 'Invalid', `the patched ${resource.kind} is not a JSON object`);
    const next = prepareUpdate({ resource, existing, body: patched, subresource });
    return this.commitUpdate(resource, existing, next, options);
  }

  /**
   * DELETE of one object, with the API server's graceful deletion and finalizers (see
   * deletion.ts): a pod bound to a node is only marked and stays until deleted with grace 0;
   * an object with finalizers is only marked; a namespace turns Terminating, its objects are
   * deleted (pods gracefully), and it goes once nothing is left in it. Answers the object as
   * the request left it (marked, or removed with the removal's version).
   */
  delete(
    resource: ResourceType,
    namespace: string,
    name: string,
    deleteOptions: unknown,
    options: DeleteWriteOptions = {},
  ): KubeObject {
    const existing = this.get(resource, namespace, name);
    if (!existing) throw notFound(resource, name);
    if (resource === NAMESPACE_TYPE && UNDELETABLE_NAMESPACES.has(name)) {
      throw forbidden(`namespaces "${name}" is forbidden: this namespace may not be deleted`, {
        name,
        kind: 'namespaces',
      });
    }
    checkDeletePreconditions(resource, existing, deleteOptions);
    if (resource === NAMESPACE_TYPE) return this.deleteNamespace(existing, options);
    const plan = planDelete(
      resource,
      existing,
      { gracePeriodSeconds: options.gracePeriodSeconds },
      this.now(),
    );
    return this.carryOut(resource, existing, plan, options);
  }

  private carryOut(
    resource: ResourceType,
    existing: KubeObject,
    plan: DeletePlan,
    options: WriteOptions,
  ): KubeObject {
    switch (plan.action) {
      case 'keep':
        return existing;
      case 'remove':
        return options.dryRun ? existing : this.remove(resource, existing);
      case 'mark': {
        if (options.dryRun) return plan.marked;
        const stored = this.commit(resource, 'MODIFIED', plan.marked, existing);
        return plan.thenRemove ? this.remove(resource, stored) : stored;
      }
    }
  }

  /**
   * The namespace registry's DELETE: the first one marks the namespace Terminating, then (as
   * the namespace controller would) deletes every object in it and finishes the namespace if
   * that left it empty. Later ones change nothing while the namespace still has its
   * `kubernetes` finalizer.
   */
  private deleteNamespace(ns: KubeObject, options: WriteOptions): KubeObject {
    const name = ns.metadata.name;
    const marked = markNamespaceTerminating(ns, this.now());
    if (marked) {
      if (options.dryRun) return marked;
      const stored = this.commit(NAMESPACE_TYPE, 'MODIFIED', marked, ns);
      this.deleteNamespaceContent(name);
      this.finishNamespace(name);
      return stored;
    }
    if (namespaceSpecFinalizers(ns).length > 0) return ns;
    return this.carryOut(NAMESPACE_TYPE, ns, planDelete(NAMESPACE_TYPE, ns, {}, this.now()), options);
  }

  /** The namespace controller's content deletion: every object, with default DeleteOptions. */
  private deleteNamespaceContent(namespace: string): void {
    for (const r of RESOURCE_TYPES) {
      if (!r.namespaced) continue;
      const inNamespace = [...this.objects(r, namespace)].sort((a, b) =>
        a.metadata.name < b.metadata.name ? -1 : 1,
      );
      for (const obj of inNamespace) {
        const current = this.get(r, namespace, obj.metadata.name);
        if (current) this.carryOut(r, current, planDelete(r, current, {}, this.now()), {});
      }
    }
  }

  /**
   * Once a terminating namespace is empty, the namespace controller removes its `kubernetes`
   * finalizer (the finalize subresource); that update removes the namespace when no other
   * finalizer holds it (`ShouldDeleteNamespaceDuringUpdate`).
   */
  private finishNamespace(namespace: string): void {
    const ns = this.get(NAMESPACE_TYPE, '', namespace);
    if (!ns || !isTerminating(ns)) return;
    for (const r of RESOURCE_TYPES) if (r.namespaced && (this.table(r).get(namespace)?.size ?? 0) > 0) return;
    const remaining = namespaceSpecFinalizers(ns).filter((f) => f !== 'kubernetes');
    const spec: Record<string, unknown> = { ...(isObject(ns.spec) ? ns.spec : {}) };
    if (remaining.length > 0) spec.finalizers = remaining;
    else delete spec.finalizers;
    const next: KubeObject = { ...ns, spec };
    if (shouldDeleteDuringUpdate(NAMESPACE_TYPE, ns, next)) this.remove(NAMESPACE_TYPE, ns);
    else if (!deepEqual(next, ns)) this.commit(NAMESPACE_TYPE, 'MODIFIED', next, ns);
  }

  /** Removes an object (DELETED); the last object of a terminating namespace lets it go. */
  private remove(resource: ResourceType, obj: KubeObject): KubeObject {
    const removed = this.commit(resource, 'DELETED', obj, obj);
    if (resource.namespaced && obj.metadata.namespace !== undefined)
      this.finishNamespace(obj.metadata.namespace);
    return removed;
  }

  /** DELETE on a collection: every matching object, each as a DELETE of its own. */
  deleteCollection(
    resource: ResourceType,
    namespace: string | undefined,
    predicate: ObjectPredicate | undefined,
    deleteOptions: unknown,
    options: DeleteWriteOptions = {},
  ): KubeObject[] {
    const doomed = this.list(resource, { namespace, predicate }).items;
    if (resource === NAMESPACE_TYPE) {
      const kept = doomed.find((ns) => UNDELETABLE_NAMESPACES.has(ns.metadata.name));
      if (kept)
        throw forbidden(
          `namespaces "${kept.metadata.name}" is forbidden: this namespace may not be deleted`,
          { name: kept.metadata.name, kind: 'namespaces' },
        );
    }
    for (const obj of doomed) checkDeletePreconditions(resource, obj, deleteOptions);
    if (options.dryRun) return doomed;
    const results: KubeObject[] = [];
    for (const obj of doomed) {
      // An earlier deletion (a namespace's) may already have taken it.
      if (!this.get(resource, obj.metadata.namespace ?? '', obj.metadata.name)) continue;
      results.push(
        this.delete(resource, obj.metadata.namespace ?? '', obj.metadata.name, undefined, {
          gracePeriodSeconds: options.gracePeriodSeconds,
        }),
      );
    }
    return results;
  }

  /**
   * Creates many objects of any served kinds in order (namespaces first where they are needed),
   * all or nothing: every item is checked before the first one is stored.
   */
  seed(items: readonly unknown[]): KubeObject[] {
    const planned = new Map<ResourceType, Set<string>>();
    const isPlanned = (r: ResourceType, ns: string, name: string) =>
      planned.get(r)?.has(`${ns}/${name}`) === true;
    const prepared: { resource: ResourceType; obj: KubeObject }[] = [];
    items.forEach((item, index) => {
      try {
        if (!isObject(item) || typeof item.apiVersion !== 'string' || typeof item.kind !== 'string') {
          throw badRequest('every item needs apiVersion and kind');
        }
        const resource = resourceForKind(item.apiVersion, item.kind);
        if (!resource) throw badRequest(`${item.apiVersion} ${item.kind} is not a kind this server serves`);
        const meta = isObject(item.metadata) ? item.metadata : {};
        const namespace = resource.namespaced
          ? typeof meta.namespace === 'string' && meta.namespace !== ''
            ? meta.namespace
            : 'default'
          : '';
        if (resource.namespaced && !isPlanned(NAMESPACE_TYPE, '', namespace))
          this.admitCreate(resource, namespace, item);
        const obj = this.prepareUniqueCreate(
          resource,
          namespace,
          item,
          (ns, name) => this.get(resource, ns, name) !== undefined || isPlanned(resource, ns, name),
        );
        let names = planned.get(resource);
        if (!names) planned.set(resource, (names = new Set()));
        names.add(`${obj.metadata.namespace ?? ''}/${obj.metadata.name}`);
        prepared.push({ resource, obj });
      } catch (err) {
        if (err instanceof ApiError)
          throw new ApiError(err.code, err.reason, `items[${index}]: ${err.message}`, err.details);
        throw err;
      }
    });
    return prepared.map(({ resource, obj }) => this.commit(resource, 'ADDED', obj, undefined));
  }

  /** Drops every retained event: watches and continuations from any earlier version get 410. */
  compact(): void {
    this.history.compact();
  }

  /** Assigns the next resourceVersion, stores the change, records it and tells the watches. */
  private commit(
    resource: ResourceType,
    type: EventType,
    obj: KubeObject,
    previous: KubeObject | undefined,
  ): KubeObject {
    this.rv += 1;
    const stored: KubeObject = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(this.rv) } };
    const table = this.table(resource);
    const ns = stored.metadata.namespace ?? '';
    if (type === 'DELETED') {
      const names = table.get(ns);
      names?.delete(stored.metadata.name);
      if (names?.size === 0) table.delete(ns);
    } else {
      let names = table.get(ns);
      if (!names) table.set(ns, (names = new Map()));
      names.set(stored.metadata.name, stored);
    }
    const event: StoreEvent = { rv: this.rv, type, resource, object: stored, previous };
    this.history.append(event);
    for (const listener of this.listeners) listener(event);
    return stored;
  }
}
