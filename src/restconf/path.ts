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
  /**
   * The names of the key leaves, in the same order. URLs do not need them; a YANG-Patch target
   * (an instance-identifier, `list[key='value']`) does, so a write to a path without them is
   * never batched.
   */
  keyNames?: readonly string[];
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

/**
 * The path as an instance-identifier in ODL's string codec form, every node and key qualified
 * with its module: `/elan:elan-instances/elan:elan-instance[elan:elan-instance-name='n1']`.
 * Undefined when a list entry lacks its key names, or a key value holds both quote characters
 * (an XPath literal cannot hold both).
 */
export function instanceIdentifier(path: DataPath): string | undefined {
  if (path.length === 0 || !path[0]?.module) return undefined;
  let module = path[0].module;
  let out = '';
  for (const node of path) {
    module = node.module ?? module;
    out += `/${module}:${node.name}`;
    const keys = node.keys ?? [];
    if (keys.length === 0) continue;
    if (node.keyNames?.length !== keys.length) return undefined;
    for (const [i, value] of keys.entries()) {
      const quote = value.includes("'") ? '"' : "'";
      if (value.includes(quote)) return undefined;
      out += `[${module}:${node.keyNames[i]}=${quote}${value}${quote}]`;
    }
  }
  return out;
}
