/**
 * A planned RESTCONF write, independent of dialect. The RESTCONF client spells the path
 * (`encodePath`) and sends the body as given.
 */
import { memberName, type DataPath } from '../restconf/path.js';
import type { JsonObject } from './json.js';

export type WriteOp =
  /** Create or replace the addressed list entry with `body`. */
  | { op: 'put'; path: DataPath; body: JsonObject }
  /** Remove the addressed node; 404 counts as done. */
  | { op: 'delete'; path: DataPath };

/**
 * The body of a PUT: the addressed entry as a one-element list under the member named by the
 * last path element, qualified with its module (`{"elan:elan-instance":[{…}]}`). ODL answers
 * 400 if the member differs from the last URL element.
 */
export function entryBody(path: DataPath, entry: JsonObject): JsonObject {
  return { [memberName(path)]: [entry] };
}

export function putOp(path: DataPath, entry: JsonObject): WriteOp {
  return { op: 'put', path, body: entryBody(path, entry) };
}

export function deleteOp(path: DataPath): WriteOp {
  return { op: 'delete', path };
}
