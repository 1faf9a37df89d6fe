/**
 * A RESTCONF data path, independent of the API dialect: the model code says *what* it
 * addresses (`elan:elan-instances` / `elan-instance` keyed by name) and the client decides
 * *how* it is spelled on the wire (`/restconf/config/...` segments or RFC 8040 `list=k1,k2`).
 */
export interface PathNode {
  /** Node name without module prefix, e.g. `elan-instance`. */
  name: string;
  /** Module prefix; required on the first node and wherever an augment changes module. */
  module?: string;
  /** Key values of a list entry, in the list's key order. */
  keys?: readonly string[];
}

export type DataPath = readonly PathNode[];

export type Dialect = 'bierman02' | 'rfc8040';
export const DIALECTS: readonly Dialect[] = ['bierman02', 'rfc8040'];

export type Datastore = 'config' | 'operational';

/** Percent-encodes a key value; `:` stays literal (ODL accepts it, and logs stay readable). */
export function encodeKey(value: string): string {
  return encodeURIComponent(value).replace(/%3A/gi, ':');
}

function nodeName(node: PathNode): string {
  return node.module ? `${node.module}:${node.name}` : node.name;
}

/**
 * The path part after the datastore root: `elan:elan-instances/elan-instance/n1` (bierman02,
 * each key its own segment) or `elan:elan-instances/elan-instance=n1` (RFC 8040, keys after
 * `=` joined by `,`).
 */
export function encodePath(path: DataPath, dialect: Dialect): string {
  if (path.length === 0 || !path[0]?.module)
    throw new Error('a data path starts with a module-qualified node');
  return path
    .map((node) => {
      const name = nodeName(node);
      if (!node.keys || node.keys.length === 0) return name;
      const keys = node.keys.map(encodeKey);
      return dialect === 'bierman02' ? [name, ...keys].join('/') : `${name}=${keys.join(',')}`;
    })
    .join('/');
}

/** The path with key values replaced by `{name}`, for metric labels (bounded cardinality). */
export function pathTemplate(path: DataPath): string {
  return path
    .map((node) => (node.keys && node.keys.length > 0 ? `${nodeName(node)}={key}` : nodeName(node)))
    .join('/');
}

/** The name of the JSON member that holds the addressed node: `module:name` for the top. */
export function memberName(path: DataPath): string {
  const last = path[path.length - 1];
  if (!last) throw new Error('empty data path');
  // The body member carries the module of the node it names; for a node inside the same
  // module as the top that is the top module (ODL accepts both forms, this is the canonical one).
  const module = [...path].reverse().find((n) => n.module)?.module;
  return `${module}:${last.name}`;
}

/** The parent path (the list or container an entry is POSTed into). */
export function parentPath(path: DataPath): DataPath {
  return path.slice(0, -1);
}
