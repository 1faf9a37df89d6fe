/**
 * Per-write rules, after the API server's registry strategies: which metadata the server owns,
 * what a create defaults, what an update may change, when `generation` moves, and which names
 * and labels are valid. Pure functions from (request body, stored object) to the new object;
 * the store assigns the resourceVersion and records the event.
 */
import { randomUUID } from 'node:crypto';
import type { KubeObject, ObjectMeta, ResourceType } from './resources.js';
import { dns1123LabelError, dns1123SubdomainError, labelValueError, qualifiedNameError } from './names.js';
import { deepEqual, isObject } from './patch.js';
import type { StatusCause } from './status.js';
import { badRequest, conflict, invalid } from './status.js';

/** Metadata the server owns: a client's values are ignored (or rejected, for resourceVersion on create). */
const SYSTEM_FIELDS = [
  'uid',
  'creationTimestamp',
  'generation',
  'resourceVersion',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'selfLink',
  'managedFields',
] as const;

/** RFC 3339 with second precision, as `metav1.Time` serialises. */
export function timestamp(now: Date): string {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** `generateName` plus five random characters from the API server's alphabet (no vowels). */
export function generatedName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++)
    suffix += GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)];
  // The API server trims the prefix so the result stays within the 63-character limit.
  return prefix.slice(0, 58) + suffix;
}

function checkKindAndVersion(resource: ResourceType, body: Record<string, unknown>): void {
  const { kind, apiVersion } = body;
  if (kind !== undefined && kind !== resource.kind) {
    throw badRequest(
      `the kind of the object (${String(kind)}) does not match the kind of the request (${resource.kind})`,
    );
  }
  if (apiVersion !== undefined && apiVersion !== resource.apiVersion) {
    throw badRequest(
      `the API version of the object (${String(apiVersion)}) does not match the API version of the request (${resource.apiVersion})`,
    );
  }
}

function stringMapCauses(value: unknown, field: string, checkValues: boolean): StatusCause[] {
  if (value === undefined) return [];
  if (!isObject(value)) return [{ reason: 'FieldValueInvalid', field, message: 'must be a map of strings' }];
  const causes: StatusCause[] = [];
  for (const [key, v] of Object.entries(value)) {
    const keyError = qualifiedNameError(key);
    if (keyError)
      causes.push({ reason: 'FieldValueInvalid', field, message: `Invalid value: "${key}": ${keyError}` });
    if (typeof v !== 'string') {
      causes.push({ reason: 'FieldValueInvalid', field: `${field}.${key}`, message: 'must be a string' });
    } else if (checkValues) {
      const valueError = labelValueError(v);
      if (valueError)
        causes.push({
          reason: 'FieldValueInvalid',
          field: `${field}`,
          message: `Invalid value: "${v}": ${valueError}`,
        });
    }
  }
  return causes;
}

function nameCauses(resource: ResourceType, name: string): StatusCause[] {
  const why = resource.labelNames ? dns1123LabelError(name) : dns1123SubdomainError(name);
  return why
    ? [{ reason: 'FieldValueInvalid', field: 'metadata.name', message: `Invalid value: "${name}": ${why}` }]
    : [];
}

function metadataOf(body: Record<string, unknown>): Record<string, unknown> {
  const metadata = body.metadata ?? {};
  if (!isObject(metadata)) throw badRequest('metadata must be an object');
  return metadata;
}

/** Everything an update compares to decide whether `generation` moves: all but metadata and status. */
function specOf(obj: Record<string, unknown>): Record<string, unknown> {
  const { metadata: _m, status: _s, kind: _k, apiVersion: _a, ...rest } = obj;
  return rest;
}

/** A private copy of `body` with the resource's kind, apiVersion and `metadata`, in the API server's key order. */
function withTypeMeta(
  resource: ResourceType,
  body: Record<string, unknown>,
  metadata: ObjectMeta,
): KubeObject {
  const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = structuredClone(body);
  return { apiVersion: resource.apiVersion, kind: resource.kind, metadata, ...rest };
}

export interface CreateRequest {
  resource: ResourceType;
  /** The namespace of the request path ('' for cluster-scoped resources). */
  namespace: string;
  body: unknown;
  now: Date;
}

/**
 * The object a create stores (without resourceVersion). `name` is final unless the caller
 * retries generateName collisions by calling again.
 */
export function prepareCreate({ resource, namespace, body, now }: CreateRequest): KubeObject {
  if (!isObject(body)) throw badRequest(`the body of a ${resource.kind} create must be a JSON object`);
  checkKindAndVersion(resource, body);
  const metadata = metadataOf(body);
  if (metadata.resourceVersion !== undefined && metadata.resourceVersion !== '') {
    throw badRequest('resourceVersion should not be set on objects to be created');
  }
  const given = metadata.namespace;
  if (resource.namespaced) {
    if (given !== undefined && given !== '' && given !== namespace) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
  }
  let name = metadata.name;
  const generateName = metadata.generateName;
  if ((name === undefined || name === '') && typeof generateName === 'string' && generateName !== '')
    name = generatedName(generateName);
  if (typeof name !== 'string' || name === '') {
    throw invalid(resource.kind, resource.group, '', [
      {
        reason: 'FieldValueRequired',
        field: 'metadata.name',
        message: 'Required value: name or generateName is required',
      },
    ]);
  }
  const causes = [
    ...nameCauses(resource, name),
    ...stringMapCauses(metadata.labels, 'metadata.labels', true),
    ...stringMapCauses(metadata.annotations, 'metadata.annotations', false),
  ];
  if (causes.length > 0) throw invalid(resource.kind, resource.group, name, causes);

  const cleaned: Record<string, unknown> = { ...metadata };
  for (const f of SYSTEM_FIELDS) delete cleaned[f];
  const meta: ObjectMeta = {
    ...cleaned,
    name,
    ...(resource.namespaced ? { namespace } : {}),
    uid: randomUUID(),
    resourceVersion: '',
    generation: 1,
    creationTimestamp: timestamp(now),
  };
  if (!resource.namespaced) delete meta.namespace;
  const obj = withTypeMeta(resource, body, meta);
  applyCreateDefaults(resource, obj);
  return obj;
}

/** The few defaults odlcoe relies on: namespaces are Active, pods start Pending. */
function applyCreateDefaults(resource: ResourceType, obj: KubeObject): void {
  if (resource.group !== '') return;
  if (resource.plural === 'namespaces') {
    obj.spec = { finalizers: ['kubernetes'] };
    obj.status = { phase: 'Active' };
  } else if (resource.plural === 'pods') {
    const status = isObject(obj.status) ? obj.status : {};
    obj.status = { phase: 'Pending', ...status };
  }
}

/** `deletionTimestamp` and `deletionGracePeriodSeconds` of a stored object, when set. */
function deletionMark(obj: KubeObject): Partial<ObjectMeta> {
  const mark: Partial<ObjectMeta> = {};
  if (obj.metadata.deletionTimestamp !== undefined) mark.deletionTimestamp = obj.metadata.deletionTimestamp;
  if (obj.metadata.deletionGracePeriodSeconds !== undefined)
    mark.deletionGracePeriodSeconds = obj.metadata.deletionGracePeriodSeconds;
  return mark;
}

export interface UpdateRequest {
  resource: ResourceType;
  existing: KubeObject;
  body: unknown;
  /** `status` for writes to the status subresource. */
  subresource: 'status' | undefined;
}

/**
 * The object an update stores, or `existing` itself when nothing would change (the API server
 * then neither bumps the resourceVersion nor sends a watch event). A non-empty
 * `metadata.resourceVersion` in the body must equal the stored one: that is the optimistic
 * concurrency leader election depends on.
 */
export function prepareUpdate({ resource, existing, body, subresource }: UpdateRequest): KubeObject {
  if (!isObject(body)) throw badRequest(`the body of a ${resource.kind} update must be a JSON object`);
  checkKindAndVersion(resource, body);
  const metadata = metadataOf(body);
  const name = existing.metadata.name;
  if (metadata.name !== undefined && metadata.name !== name) {
    throw badRequest(
      `the name of the object (${String(metadata.name)}) does not match the name on the URL (${name})`,
    );
  }
  if (
    resource.namespaced &&
    metadata.namespace !== undefined &&
    metadata.namespace !== '' &&
    metadata.namespace !== existing.metadata.namespace
  ) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const rv = metadata.resourceVersion;
  if (rv !== undefined && rv !== '' && rv !== existing.metadata.resourceVersion)
    throw conflict(resource, name);
  const uid = metadata.uid;
  if (uid !== undefined && uid !== '' && uid !== existing.metadata.uid) {
    throw conflict(
      resource,
      name,
      `Precondition failed: UID in precondition: ${String(uid)}, UID in object meta: ${existing.metadata.uid}`,
    );
  }

  let next: KubeObject;
  if (subresource === 'status') {
    // A status write changes status and nothing else.
    next = { ...existing, metadata: { ...existing.metadata } };
    if (body.status === undefined) delete next.status;
    else next.status = structuredClone(body.status);
  } else {
    const causes = [
      ...stringMapCauses(metadata.labels, 'metadata.labels', true),
      ...stringMapCauses(metadata.annotations, 'metadata.annotations', false),
    ];
    if (causes.length > 0) throw invalid(resource.kind, resource.group, name, causes);
    const kept: Record<string, unknown> = { ...structuredClone(metadata) };
    for (const f of SYSTEM_FIELDS) delete kept[f];
    next = withTypeMeta(resource, body, {
      ...kept,
      name,
      ...(resource.namespaced ? { namespace: existing.metadata.namespace } : {}),
      uid: existing.metadata.uid,
      resourceVersion: existing.metadata.resourceVersion,
      generation: existing.metadata.generation ?? 1,
      creationTimestamp: existing.metadata.creationTimestamp,
      // An update can never set, change or remove the deletion mark.
      ...deletionMark(existing),
    });
    if (!resource.namespaced) delete next.metadata.namespace;
    if (resource.statusSubresource) {
      // Writes to the main resource cannot change status.
      if (existing.status === undefined) delete next.status;
      else next.status = existing.status;
    }
    if (resource.group === '' && resource.plural === 'namespaces') next.spec = existing.spec;
    if (!deepEqual(specOf(next), specOf(existing)))
      next.metadata.generation = (existing.metadata.generation ?? 1) + 1;
  }
  return deepEqual(next, existing) ? existing : next;
}

/** `DeleteOptions.preconditions`: a delete of a changed (or re-created) object fails with 409. */
export function checkDeletePreconditions(
  resource: ResourceType,
  existing: KubeObject,
  options: unknown,
): void {
  if (options === undefined) return;
  if (!isObject(options)) throw badRequest('DeleteOptions must be a JSON object');
  const pre = options.preconditions;
  if (pre === undefined || pre === null) return;
  if (!isObject(pre)) throw badRequest('DeleteOptions.preconditions must be an object');
  const name = existing.metadata.name;
  if (typeof pre.uid === 'string' && pre.uid !== existing.metadata.uid) {
    throw conflict(
      resource,
      name,
      `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${existing.metadata.uid}`,
    );
  }
  if (typeof pre.resourceVersion === 'string' && pre.resourceVersion !== existing.metadata.resourceVersion) {
    throw conflict(
      resource,
      name,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${existing.metadata.resourceVersion}`,
    );
  }
}

/** Namespaces the API server refuses to delete. */
export const UNDELETABLE_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);
