import type { LeafType } from './leaf-types.js';

/**
 * A compact, declarative YANG schema: containers, keyed and keyless lists, leaves and
 * leaf-lists, each with the module it belongs to (augments carry their own module) and the
 * `config false` flag. Models are written with the builders below (see netvirt-schema.ts);
 * `link()` turns the definitions into a tree with parent pointers and lookup maps.
 *
 * Children are identified by `module:name` (their qname), so an augment leaf never collides
 * with a base leaf of the same local name.
 */
export interface SchemaNodeBase {
  readonly name: string;
  readonly module: string;
  readonly qname: string;
  readonly config: boolean;
  parent: InnerNode | undefined;
}

export interface LeafNode extends SchemaNodeBase {
  readonly kind: 'leaf';
  readonly type: LeafType;
  readonly mandatory: boolean;
}

export interface LeafListNode extends SchemaNodeBase {
  readonly kind: 'leaf-list';
  readonly type: LeafType;
}

export interface ContainerNode extends SchemaNodeBase {
  readonly kind: 'container';
  readonly children: ChildIndex;
}

export interface ListNode extends SchemaNodeBase {
  readonly kind: 'list';
  /** Key leaf names in key order; empty for a keyless list (kept as an ordered array). */
  readonly keys: readonly string[];
  readonly children: ChildIndex;
}

export type InnerNode = ContainerNode | ListNode;
export type SchemaNode = LeafNode | LeafListNode | ContainerNode | ListNode;

/** The children of a container or list entry, by qname and by local name. */
export interface ChildIndex {
  readonly byQName: ReadonlyMap<string, SchemaNode>;
  readonly byName: ReadonlyMap<string, readonly SchemaNode[]>;
  /** Mandatory leaves (key leaves are always present and not listed). */
  readonly mandatory: readonly LeafNode[];
}

/** The top-level nodes of all loaded modules, plus the names of the loaded modules. */
export interface SchemaRoot {
  readonly modules: ReadonlySet<string>;
  readonly children: ChildIndex;
}

// ---- definitions (what the model files write) ----

type Flag = 'M' | 'ro';

interface Definition {
  kind: SchemaNode['kind'];
  /** `name` or `module:name`; an unprefixed name inherits its parent's module. */
  name: string;
  flags: readonly Flag[];
  type?: LeafType;
  keys?: readonly string[];
  children?: readonly Definition[];
}

export type { Definition };

export function leaf(name: string, type: LeafType, ...flags: Flag[]): Definition {
  return { kind: 'leaf', name, type, flags };
}

export function leafList(name: string, type: LeafType, ...flags: Flag[]): Definition {
  return { kind: 'leaf-list', name, type, flags };
}

export function container(name: string, children: readonly Definition[], ...flags: Flag[]): Definition {
  return { kind: 'container', name, children, flags };
}

/** A list keyed by `keys`; pass `[]` for a keyless list. */
export function list(
  name: string,
  keys: readonly string[],
  children: readonly Definition[],
  ...flags: Flag[]
): Definition {
  return { kind: 'list', name, keys, children, flags };
}

function splitName(name: string, inherited: string | undefined): { module: string; local: string } {
  const colon = name.indexOf(':');
  if (colon === -1) {
    if (!inherited) throw new Error(`top-level schema node "${name}" needs a module prefix`);
    return { module: inherited, local: name };
  }
  return { module: name.slice(0, colon), local: name.slice(colon + 1) };
}

function linkChildren(
  defs: readonly Definition[],
  parent: InnerNode | undefined,
  module: string | undefined,
  config: boolean,
): ChildIndex {
  const byQName = new Map<string, SchemaNode>();
  const byName = new Map<string, SchemaNode[]>();
  const mandatory: LeafNode[] = [];
  for (const def of defs) {
    const node = linkNode(def, parent, module, config);
    if (byQName.has(node.qname)) throw new Error(`duplicate schema node ${node.qname}`);
    byQName.set(node.qname, node);
    byName.set(node.name, [...(byName.get(node.name) ?? []), node]);
    if (node.kind === 'leaf' && node.mandatory) mandatory.push(node);
  }
  return { byQName, byName, mandatory };
}

function linkNode(
  def: Definition,
  parent: InnerNode | undefined,
  inheritedModule: string | undefined,
  inheritedConfig: boolean,
): SchemaNode {
  const { module, local } = splitName(def.name, inheritedModule);
  const config = inheritedConfig && !def.flags.includes('ro');
  const base = { name: local, module, qname: `${module}:${local}`, config, parent };
  switch (def.kind) {
    case 'leaf':
      return { ...base, kind: 'leaf', type: def.type!, mandatory: def.flags.includes('M') };
    case 'leaf-list':
      return { ...base, kind: 'leaf-list', type: def.type! };
    case 'container':
    case 'list': {
      const node = { ...base, kind: def.kind, keys: def.keys ?? [] } as InnerNode & { children: ChildIndex };
      node.children = linkChildren(def.children ?? [], node, module, config);
      if (node.kind === 'list') {
        for (const key of node.keys) {
          const keyLeaf = node.children.byQName.get(`${module}:${key}`);
          if (keyLeaf?.kind !== 'leaf') throw new Error(`list ${node.qname} has no key leaf ${key}`);
        }
      }
      return node;
    }
  }
}

/** Builds the schema tree of the given top-level definitions. */
export function link(modules: readonly string[], topLevel: readonly Definition[]): SchemaRoot {
  return { modules: new Set(modules), children: linkChildren(topLevel, undefined, undefined, true) };
}

/** The key leaves of a keyed list, in key order. */
export function keyLeaves(node: ListNode): LeafNode[] {
  return node.keys.map((key) => node.children.byQName.get(`${node.module}:${key}`) as LeafNode);
}

/**
 * Resolves a JSON member or URL segment name (`name` or `module:name`) among `children`.
 * An unprefixed name is accepted when exactly one child has that local name, or when one of
 * them is in `parentModule` (yangtools prefers the current namespace). Returns undefined for
 * an unknown name and throws for an ambiguous one.
 */
export function resolveChild(
  children: ChildIndex,
  name: string,
  parentModule: string | undefined,
): SchemaNode | undefined {
  const colon = name.indexOf(':');
  if (colon !== -1) return children.byQName.get(name);
  const candidates = children.byName.get(name);
  if (!candidates || candidates.length === 0) return undefined;
  if (candidates.length === 1) return candidates[0];
  const own = candidates.find((c) => c.module === parentModule);
  if (own) return own;
  throw new AmbiguousNameError(
    name,
    candidates.map((c) => c.module),
  );
}

export class AmbiguousNameError extends Error {
  override name = 'AmbiguousNameError';
  constructor(member: string, modules: readonly string[]) {
    super(`"${member}" is defined in modules ${modules.join(', ')}: qualify it as module:${member}`);
  }
}

/** `/module:top/list/...` for messages. */
export function schemaPathOf(node: SchemaNode): string {
  const parts: string[] = [];
  for (let n: SchemaNode | undefined = node; n; n = n.parent) {
    parts.unshift(!n.parent || n.parent.module !== n.module ? n.qname : n.name);
  }
  return `/${parts.join('/')}`;
}
