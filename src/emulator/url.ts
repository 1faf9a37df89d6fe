import type { Dialect } from '../restconf/path.js';
import { entryKey } from './data.js';
import { invalidValue, malformed, RestconfError, unknownElement } from './errors.js';
import { parseLeafValue, ValueError, type LeafValue } from './leaf-types.js';
import {
  AmbiguousNameError,
  keyLeaves,
  resolveChild,
  type ChildIndex,
  type ListNode,
  type SchemaNode,
  type SchemaRoot,
} from './schema.js';

/**
 * Request paths of both dialects, resolved against the schema the way ODL resolves them:
 *
 * - bierman02 `/restconf/{config|operational}/m:top/list/k1/k2/...`: the path is split at `/`
 *   first and each segment percent-decoded after (so `%2F` stays inside a key); only containers
 *   and list entries can be addressed (a list needs all its keys, a leaf is refused).
 * - RFC 8040 `/rests/data/m:top/list=k1,k2/...`: keys after `=` separated by `,`, each
 *   percent-decoded; a list without `=` at the end addresses the whole list; leaves may be
 *   addressed.
 */
export interface Step {
  node: SchemaNode;
  /** Present for a list entry: the key values and the stored key string. */
  keyValues?: LeafValue[];
  key?: string;
}

export type UrlDatastore = 'config' | 'operational' | 'data';

export interface DataUrl {
  dialect: Dialect;
  /** `data` is the RFC 8040 unified datastore (reads choose with `?content=`). */
  datastore: UrlDatastore;
  /** Empty for the datastore root. */
  steps: Step[];
}

const DATA_ROOTS: readonly { prefix: string; dialect: Dialect; datastore: UrlDatastore }[] = [
  { prefix: '/restconf/config', dialect: 'bierman02', datastore: 'config' },
  { prefix: '/restconf/operational', dialect: 'bierman02', datastore: 'operational' },
  { prefix: '/rests/data', dialect: 'rfc8040', datastore: 'data' },
];

/** Which data root a path is under; undefined when it is not a RESTCONF data path. */
export function dataRootOf(
  pathname: string,
): { dialect: Dialect; datastore: UrlDatastore; rest: string } | undefined {
  for (const { prefix, dialect, datastore } of DATA_ROOTS) {
    if (pathname === prefix || pathname.startsWith(`${prefix}/`))
      return { dialect, datastore, rest: pathname.slice(prefix.length) };
  }
  return undefined;
}

/** Returns undefined when `pathname` is not a data URL of either dialect. */
export function parseDataUrl(schema: SchemaRoot, pathname: string): DataUrl | undefined {
  const root = dataRootOf(pathname);
  if (!root) return undefined;
  const steps =
    root.dialect === 'bierman02' ? parseBierman(schema, root.rest) : parseRfc8040(schema, root.rest);
  return { dialect: root.dialect, datastore: root.datastore, steps };
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw malformed(`URI segment "${segment}" has a bad percent-encoding`);
  }
}

function splitQName(text: string): { module?: string; name: string } {
  const colon = text.indexOf(':');
  // ODL takes a module prefix only when there is exactly one ':'.
  if (colon === -1 || text.indexOf(':', colon + 1) !== -1) return { name: text };
  return { module: text.slice(0, colon), name: text.slice(colon + 1) };
}

function parseKeys(
  list: ListNode,
  raw: readonly string[],
  describeBad: (value: string) => RestconfError,
): { keyValues: LeafValue[]; key: string } {
  const keyValues = keyLeaves(list).map((leaf, i) => {
    const text = raw[i]!;
    try {
      return parseLeafValue(leaf.type, text, leaf.module);
    } catch (err) {
      if (err instanceof ValueError) throw describeBad(text);
      throw err;
    }
  });
  return { keyValues, key: entryKey(keyValues) };
}

function parseBierman(schema: SchemaRoot, rest: string): Step[] {
  const segments = rest
    .split('/')
    .filter((s) => s !== '')
    .map(decodeSegment);
  const steps: Step[] = [];
  let children: ChildIndex = schema.children;
  let parentModule: string | undefined;
  let i = 0;
  while (i < segments.length) {
    const head = segments[i]!;
    const { module, name } = splitQName(head);
    let node: SchemaNode | undefined;
    if (steps.length === 0 && !module) {
      throw invalidValue(`First node in URI has to be in format "moduleName:nodeName"`);
    }
    if (module) {
      if (!schema.modules.has(module))
        // ControllerContext.toIdentifier checks the first node's module, collectPathArguments the others.
        throw unknownElement(
          steps.length === 0
            ? `The module named '${module}' does not exist.`
            : `"${module}" module does not exist.`,
        );
      node = children.byQName.get(`${module}:${name}`);
      if (!node) {
        throw invalidValue(
          `URI has bad format. Possible reasons:\n 1. "${head}" was not found in parent data node.\n 2. "${head}" is behind mount point.`,
        );
      }
    } else {
      try {
        node = resolveChild(children, name, parentModule);
      } catch (err) {
        if (err instanceof AmbiguousNameError) throw invalidValue(`URI has bad format. ${err.message}`);
        throw err;
      }
      if (!node) throw unknownElement(`"${name}" in URI was not found in parent data node`);
    }
    if (node.kind === 'leaf' || node.kind === 'leaf-list') {
      throw invalidValue(`URI has bad format. Node "${head}" must be Container or List yang type.`);
    }
    i++;
    if (node.kind === 'list' && node.keys.length > 0) {
      if (segments.length - i < node.keys.length) {
        throw new RestconfError('protocol', 'data-missing', `Missing key for list "${node.name}".`);
      }
      const raw = segments.slice(i, i + node.keys.length);
      for (const value of raw) {
        if (value === 'null')
          throw invalidValue(`URI has bad format. List "${node.name}" cannot contain "null" value as a key.`);
      }
      steps.push({
        node,
        ...parseKeys(node, raw, (value) => invalidValue(`${value} from URI can't be resolved.`)),
      });
      i += node.keys.length;
    } else {
      steps.push({ node });
    }
    children = node.children;
    parentModule = node.module;
  }
  return steps;
}

function parseRfc8040(schema: SchemaRoot, rest: string): Step[] {
  if (rest === '' || rest === '/') return [];
  const segments = rest.slice(1).split('/');
  const steps: Step[] = [];
  let children: ChildIndex | undefined = schema.children;
  let parentModule: string | undefined;
  for (const [index, segment] of segments.entries()) {
    if (segment === '')
      throw malformed(
        `Could not parse Instance Identifier '${rest}': Identifier cannot end with '/' or contain '//'.`,
      );
    if (!children) throw malformed(`Could not parse Instance Identifier '${rest}': a leaf has no children.`);
    const eq = segment.indexOf('=');
    const head = eq === -1 ? segment : segment.slice(0, eq);
    const { module, name } = splitQName(head);
    if (index === 0 && !module)
      throw malformed(`Could not parse Instance Identifier '${rest}': the first node needs a module prefix.`);
    if (module && !schema.modules.has(module))
      throw unknownElement(`Failed to lookup for module with name '${module}'.`);
    let node: SchemaNode | undefined;
    try {
      node = module ? children.byQName.get(`${module}:${name}`) : resolveChild(children, name, parentModule);
    } catch (err) {
      if (err instanceof AmbiguousNameError)
        throw malformed(`Could not parse Instance Identifier '${rest}': ${err.message}`);
      throw err;
    }
    if (!node)
      throw malformed(
        `Could not parse Instance Identifier '${rest}': '${head}' is not correct schema node identifier.`,
      );
    const last = index === segments.length - 1;
    if (eq === -1) {
      if (node.kind === 'list' && node.keys.length > 0 && !last) {
        throw new RestconfError(
          'protocol',
          'missing-attribute',
          `Entry '${node.qname}' requires key or value predicate to be present.`,
        );
      }
      steps.push({ node });
    } else {
      if (node.kind !== 'list' || node.keys.length === 0) {
        throw malformed(
          `Could not parse Instance Identifier '${rest}': '${head}' is not a keyed list; the emulator does not address leaf-list entries.`,
        );
      }
      const raw = segment
        .slice(eq + 1)
        .split(',')
        .map(decodeSegment);
      if (raw.length !== node.keys.length) {
        throw new RestconfError(
          'protocol',
          'missing-attribute',
          `Cannot parse input identifier '${rest}'. List ${node.qname} has ${node.keys.length} key(s), ${raw.length} given.`,
        );
      }
      steps.push({
        node,
        ...parseKeys(node, raw, (value) =>
          invalidValue(`Invalid value '${value}' for a key of ${node!.qname}.`),
        ),
      });
    }
    children = node.kind === 'container' || node.kind === 'list' ? node.children : undefined;
    parentModule = node.module;
  }
  return steps;
}

/** The URL of a data resource in a dialect (for `Location` headers). */
export function formatDataUrl(dialect: Dialect, steps: readonly Step[]): string {
  const parts: string[] = [];
  let parentModule: string | undefined;
  for (const step of steps) {
    const name = step.node.module === parentModule ? step.node.name : step.node.qname;
    parentModule = step.node.module;
    const keys = (step.keyValues ?? []).map((v) => encodeURIComponent(String(v)).replace(/%3A/gi, ':'));
    if (keys.length === 0) parts.push(name);
    else if (dialect === 'bierman02') parts.push(name, ...keys);
    else parts.push(`${name}=${keys.join(',')}`);
  }
  const root = dialect === 'bierman02' ? '/restconf/config' : '/rests/data';
  return parts.length === 0 ? root : `${root}/${parts.join('/')}`;
}
