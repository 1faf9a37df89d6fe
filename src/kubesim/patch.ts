/**
 * The three PATCH formats the API server accepts (server-side apply excepted): JSON merge
 * patch (RFC 7386), JSON patch (RFC 6902, client-node's default) and strategic merge patch for
 * the list fields odlcoe and kubectl touch. Every function returns a new value and never
 * modifies its inputs, because stored objects are shared with open watches and list snapshots.
 */
import { ApiError, badRequest } from './status.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/** A patch that is well formed but cannot be applied to this object (422, as the API server). */
function unprocessable(message: string): ApiError {
  return new ApiError(422, 'Invalid', message);
}

/** RFC 7386: objects merge recursively, `null` deletes, everything else replaces. */
export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return patch;
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Strategic merge patch

/**
 * List fields that merge instead of replace, from the Kubernetes API types' `patchStrategy`
 * and `patchMergeKey` tags. A string is the merge key of a list of objects; `true` marks a list
 * of scalars merged as a set. `[]` in a path steps into list elements.
 */
const MERGE_LISTS: Record<string, string | true> = {
  'metadata.ownerReferences': 'uid',
  'metadata.finalizers': true,
  'spec.containers': 'name',
  'spec.initContainers': 'name',
  'spec.ephemeralContainers': 'name',
  'spec.containers[].ports': 'containerPort',
  'spec.containers[].env': 'name',
  'spec.containers[].volumeMounts': 'mountPath',
  'spec.initContainers[].env': 'name',
  'spec.initContainers[].volumeMounts': 'mountPath',
  'spec.volumes': 'name',
  'spec.imagePullSecrets': 'name',
  'spec.ports': 'port',
  'spec.podCIDRs': true,
  'status.conditions': 'type',
  'status.podIPs': 'ip',
  'status.hostIPs': 'ip',
  'status.addresses': 'type',
};

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ORDER = '$setElementOrder/';
const DELETE_FROM_PRIMITIVE = '$deleteFromPrimitiveList/';

/** Applies a strategic merge patch to an object. */
export function strategicMergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) throw badRequest('strategic merge patch must be a JSON object');
  return mergeMap(target, patch, '') ?? {};
}

function mergeMap(target: Json | undefined, patch: JsonObject, path: string): Json | undefined {
  const directive = patch[DIRECTIVE];
  if (directive === 'delete') return undefined;
  if (directive === 'replace') return withoutDirectives(patch);
  if (directive !== undefined)
    throw badRequest(`unknown patch directive ${JSON.stringify(directive)} at "${path || '.'}"`);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key === RETAIN_KEYS || key.startsWith(SET_ORDER)) continue;
    if (key.startsWith(DELETE_FROM_PRIMITIVE)) {
      const field = key.slice(DELETE_FROM_PRIMITIVE.length);
      const current = out[field];
      if (!Array.isArray(value)) throw badRequest(`${key} must be a list`);
      if (Array.isArray(current)) out[field] = current.filter((x) => !value.some((v) => deepEqual(v, x)));
      continue;
    }
    const childPath = path ? `${path}.${key}` : key;
    if (value === null) {
      delete out[key];
    } else if (isObject(value)) {
      const merged = mergeMap(out[key], value, childPath);
      if (merged === undefined) delete out[key];
      else out[key] = merged;
    } else if (Array.isArray(value)) {
      out[key] = mergeList(out[key], value, childPath);
    } else {
      out[key] = value;
    }
  }
  const retain = patch[RETAIN_KEYS];
  if (retain !== undefined) {
    if (!Array.isArray(retain) || !retain.every((k) => typeof k === 'string'))
      throw badRequest(`${RETAIN_KEYS} must be a list of strings`);
    for (const key of Object.keys(out)) if (!retain.includes(key)) delete out[key];
  }
  return out;
}

function withoutDirectives(value: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value))
    if (k !== DIRECTIVE && k !== RETAIN_KEYS && !k.startsWith(SET_ORDER)) out[k] = v;
  return out;
}

function mergeList(target: Json | undefined, patch: Json[], path: string): Json[] {
  const strategy = MERGE_LISTS[path];
  const replace = patch.some((x) => isObject(x) && x[DIRECTIVE] === 'replace');
  if (replace) return patch.filter((x) => !(isObject(x) && x[DIRECTIVE] === 'replace'));
  if (strategy === undefined) return patch;
  const current = Array.isArray(target) ? [...target] : [];
  if (strategy === true) {
    for (const value of patch) if (!current.some((x) => deepEqual(x, value))) current.push(value);
    return current;
  }
  const elementPath = `${path}[]`;
  for (const element of patch) {
    if (!isObject(element)) throw badRequest(`elements of ${path} must be objects merged by "${strategy}"`);
    const key = element[strategy];
    if (key === undefined) throw badRequest(`an element of ${path} has no merge key "${strategy}"`);
    const at = current.findIndex((x) => isObject(x) && deepEqual(x[strategy], key));
    if (element[DIRECTIVE] === 'delete') {
      if (at >= 0) current.splice(at, 1);
      continue;
    }
    const merged = mergeMap(at >= 0 ? current[at] : undefined, element, elementPath);
    if (merged === undefined) continue;
    if (at >= 0) current[at] = merged;
    else current.push(merged);
  }
  return current;
}

// ---------------------------------------------------------------------------------------------
// JSON patch

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: Json;
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw badRequest(`JSON pointer "${pointer}" must start with "/"`);
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function arrayIndex(list: Json[], token: string, pointer: string, forAdd: boolean): number {
  if (forAdd && token === '-') return list.length;
  if (!/^(0|[1-9]\d*)$/.test(token)) throw unprocessable(`invalid array index "${token}" in "${pointer}"`);
  const index = Number(token);
  if (index > list.length || (!forAdd && index === list.length))
    throw unprocessable(`array index ${index} out of range in "${pointer}"`);
  return index;
}

/** The container (object or array) holding the pointer's last token, cloned along the way. */
function parentOf(root: Json, tokens: string[], pointer: string): Json {
  let at = root;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(at)) at = at[arrayIndex(at, token, pointer, false)] as Json;
    else if (isObject(at) && Object.hasOwn(at, token)) at = at[token] as Json;
    else throw unprocessable(`path "${pointer}" does not exist`);
  }
  if (!Array.isArray(at) && !isObject(at)) throw unprocessable(`path "${pointer}" does not exist`);
  return at;
}

function read(root: Json, pointer: string): Json {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return root;
  const parent = parentOf(root, tokens, pointer);
  const last = tokens[tokens.length - 1] as string;
  if (Array.isArray(parent)) return parent[arrayIndex(parent, last, pointer, false)] as Json;
  if (isObject(parent) && Object.hasOwn(parent, last)) return parent[last] as Json;
  throw unprocessable(`path "${pointer}" does not exist`);
}

function remove(root: Json, pointer: string): Json {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) throw unprocessable('cannot remove the whole document');
  const parent = parentOf(root, tokens, pointer);
  const last = tokens[tokens.length - 1] as string;
  if (Array.isArray(parent)) {
    const [removed] = parent.splice(arrayIndex(parent, last, pointer, false), 1);
    return removed as Json;
  }
  if (isObject(parent) && Object.hasOwn(parent, last)) {
    const removed = parent[last] as Json;
    delete parent[last];
    return removed;
  }
  throw unprocessable(`unable to remove nonexistent key "${last}" at "${pointer}"`);
}

function add(root: Json, pointer: string, value: Json, replace: boolean): Json {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return value;
  const parent = parentOf(root, tokens, pointer);
  const last = tokens[tokens.length - 1] as string;
  if (Array.isArray(parent)) {
    const index = arrayIndex(parent, last, pointer, !replace);
    parent.splice(index, replace ? 1 : 0, value);
  } else if (isObject(parent)) {
    if (replace && !Object.hasOwn(parent, last))
      throw unprocessable(`unable to replace nonexistent key "${last}" at "${pointer}"`);
    parent[last] = value;
  }
  return root;
}

/** RFC 6902. Operations apply in order to a private copy; any failure rejects the whole patch. */
export function jsonPatch(target: Json, patch: Json): Json {
  if (!Array.isArray(patch)) throw badRequest('a JSON patch must be a list of operations');
  let doc = structuredClone(target);
  for (const raw of patch) {
    if (!isObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      throw badRequest('every JSON patch operation needs string "op" and "path"');
    }
    const op = raw as unknown as Operation;
    const needsValue = op.op === 'add' || op.op === 'replace' || op.op === 'test';
    if (needsValue && !Object.hasOwn(raw, 'value'))
      throw badRequest(`JSON patch "${op.op}" at "${op.path}" needs a "value"`);
    if ((op.op === 'move' || op.op === 'copy') && typeof op.from !== 'string')
      throw badRequest(`JSON patch "${op.op}" needs a string "from"`);
    switch (op.op) {
      case 'add':
        doc = add(doc, op.path, structuredClone(op.value as Json), false);
        break;
      case 'replace':
        doc = add(doc, op.path, structuredClone(op.value as Json), true);
        break;
      case 'remove':
        remove(doc, op.path);
        break;
      case 'move': {
        const value = remove(doc, op.from as string);
        doc = add(doc, op.path, value, false);
        break;
      }
      case 'copy':
        doc = add(doc, op.path, structuredClone(read(doc, op.from as string)), false);
        break;
      case 'test':
        if (!deepEqual(read(doc, op.path), op.value))
          throw unprocessable(`JSON patch test failed at "${op.path}"`);
        break;
      default:
        throw badRequest(`unknown JSON patch operation "${op.op}"`);
    }
  }
  return doc;
}

export const PATCH_TYPES = {
  'application/merge-patch+json': mergePatch,
  'application/strategic-merge-patch+json': strategicMergePatch,
  'application/json-patch+json': jsonPatch,
} as const;

export type PatchType = keyof typeof PATCH_TYPES;

export function isPatchType(contentType: string): contentType is PatchType {
  return Object.hasOwn(PATCH_TYPES, contentType);
}

export function applyPatch(type: PatchType, target: Json, patch: Json): Json {
  if (type === 'application/merge-patch+json') return mergePatch(target, patch);
  if (type === 'application/strategic-merge-patch+json') return strategicMergePatch(target, patch);
  return jsonPatch(target, patch);
}
