/**
 * YANG Patch (RFC 8072, and the draft form ODL's bierman02 `/restconf` takes) as ODL Sodium and
 * Aluminium read and answer it: the request document the write batcher sends and the
 * `yang-patch-status` answer it reads. Facts and sources: docs/restconf-client.md.
 */
import { decodeErrorBody, type RestconfErrorDetail } from './errors.js';
import type { Dialect } from './path.js';

/** The media type both dialects take (Aluminium's RFC 8040 also takes `application/yang-patch+json`). */
export const YANG_PATCH_MEDIA_TYPE = 'application/yang.patch+json';
export const YANG_PATCH_STATUS_ACCEPT = 'application/yang.patch-status+json, application/json;q=0.9';

export type PatchOperation = 'create' | 'replace' | 'merge' | 'delete' | 'remove';

export interface PatchEdit {
  editId: string;
  operation: PatchOperation;
  /** Instance-identifier relative to the patch URL (the datastore root). */
  target: string;
  value?: unknown;
}

/**
 * The request body. Members of each edit are written in the order ODL's reader needs them:
 * `edit-id`, `operation`, `target`, then `value`. bierman02 (and RFC 8040 when `value` comes
 * before `target`) re-serialises the value through a buffer that knows only strings, objects
 * and arrays, so on bierman02 numbers and booleans go as strings (`valueForDialect`).
 */
export function patchDocument(patchId: string, edits: readonly PatchEdit[], dialect: Dialect): string {
  return JSON.stringify({
    'ietf-yang-patch:yang-patch': {
      'patch-id': patchId,
      edit: edits.map((e) => ({
        'edit-id': e.editId,
        operation: e.operation,
        target: e.target,
        ...(e.value !== undefined
          ? { value: dialect === 'bierman02' ? stringScalars(e.value) : e.value }
          : {}),
      })),
    },
  });
}

/**
 * Whether a value survives bierman02's value buffer once numbers and booleans are strings:
 * no `null` (an `empty` leaf's `[null]`), no string with a quote, backslash or control
 * character (the buffer copies strings without escaping them).
 */
export function bufferSafe(value: unknown): boolean {
  if (value === null) return false;
  if (typeof value === 'string') return ![...value].some((ch) => ch === '"' || ch === '\\' || ch < ' ');
  if (typeof value === 'number' || typeof value === 'boolean') return true;
  if (Array.isArray(value)) return value.every(bufferSafe);
  if (typeof value === 'object') return Object.values(value as object).every(bufferSafe);
  return false;
}

function stringScalars(value: unknown): unknown {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map(stringScalars);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, stringScalars(v)]));
  return value;
}

/** What a `yang-patch-status` answer says. */
export interface PatchStatus {
  ok: boolean;
  /** Errors of the patch as a whole (a failed commit). */
  globalErrors: RestconfErrorDetail[];
  /** Per edit: `ok`, or its errors. Edits after the first failure are not listed. */
  edits: Map<string, { ok: true } | { ok: false; errors: RestconfErrorDetail[] }>;
}

/** Parses a `yang-patch-status` document; undefined when the body is not one. */
export function parsePatchStatus(body: string): PatchStatus | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!isObject(doc)) return undefined;
  const status = doc['ietf-yang-patch:yang-patch-status'] ?? doc['yang-patch-status'];
  if (!isObject(status)) return undefined;
  const errorsOf = (holder: Record<string, unknown>): RestconfErrorDetail[] =>
    holder.errors === undefined ? [] : decodeErrorBody(JSON.stringify({ errors: holder.errors })).details;
  const edits: PatchStatus['edits'] = new Map();
  const editStatus = status['edit-status'];
  const list = isObject(editStatus) ? editStatus.edit : undefined;
  for (const entry of Array.isArray(list) ? list : []) {
    if (!isObject(entry) || typeof entry['edit-id'] !== 'string') continue;
    const errors = errorsOf(entry);
    edits.set(entry['edit-id'], errors.length > 0 ? { ok: false, errors } : { ok: true });
  }
  return { ok: 'ok' in status, globalErrors: errorsOf(status), edits };
}

/** The HTTP status a single write answers with for an error tag (ODL's `ErrorTag` table). */
export function statusOfTag(tag: string | undefined): number {
  switch (tag) {
    case 'data-exists':
    case 'in-use':
    case 'lock-denied':
    case 'resource-denied':
      return 409;
    case 'data-missing':
      return 404;
    case 'access-denied':
      return 403;
    case 'too-big':
      return 413;
    case 'operation-not-supported':
      return 501;
    case 'operation-failed':
      return 500;
    case 'resource-denied-transport':
      return 503;
    default:
      return 400;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
