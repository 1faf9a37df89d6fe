import type { Dialect } from '../restconf/path.js';
import { entryKey, type Child, type Instance, type KeyedList } from './data.js';
import { invalidValue, malformed, RestconfError, unknownElement } from './errors.js';
import { isSixtyFourBit, parseLeafValue, ValueError, type LeafValue } from './leaf-types.js';
import {
  AmbiguousNameError,
  keyLeaves,
  resolveChild,
  type ChildIndex,
  type InnerNode,
  type LeafNode,
  type SchemaNode,
} from './schema.js';

/**
 * JSON ⇄ stored data for the emulated models.
 *
 * Input follows yangtools' JSON parser as ODL uses it: member names qualified or not (when
 * unambiguous), numbers/booleans also as strings, 64-bit numbers as strings or bare; unknown
 * members and config-false members are refused. Output follows ODL per dialect: bierman02
 * writes the top member unqualified and 64-bit integers bare; RFC 8040 qualifies the top
 * member and quotes 64-bit integers. Members whose module differs from their parent's (augments
 * such as `odl-interface:l2vlan-mode`) are qualified in both.
 */

// ---- parsing JSON text ----

const LONG_DIGITS = /\d{16,}/;

/**
 * `JSON.parse`, except that integer literals too long for a double (a bare uint64 such as a
 * datapath id) are kept exactly by turning them into strings, which the uint64 codec accepts.
 */
export function parseJsonText(text: string): unknown {
  if (text.trim() === '') throw malformed('Error parsing input: the request body is empty');
  try {
    return JSON.parse(LONG_DIGITS.test(text) ? quoteLongIntegers(text) : text);
  } catch (err) {
    throw malformed(`Error parsing input: ${(err as Error).message}`);
  }
}

function quoteLongIntegers(text: string): string {
  let out = '';
  let i = 0;
  let inString = false;
  while (i < text.length) {
    const ch = text[i]!;
    if (inString) {
      out += ch;
      if (ch === '\\') {
        out += text[i + 1] ?? '';
        i += 2;
        continue;
      }
      if (ch === '"') inString = false;
      i++;
      continue;
    }
    if (ch === '"') {
      inString = true;
      out += ch;
      i++;
      continue;
    }
    if (ch === '-' || (ch >= '0' && ch <= '9')) {
      let j = i + 1;
      while (j < text.length && /[0-9.eE+-]/.test(text[j]!)) j++;
      const literal = text.slice(i, j);
      out += /^-?\d{16,}$/.test(literal) ? `"${literal}"` : literal;
      i = j;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}

// ---- decoding (validating) ----

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function where(path: string, name: string): string {
  return path === '' ? name : `${path}/${name}`;
}

/** Resolves a member name of a JSON object among `children`, refusing unknown and config-false ones. */
export function resolveMember(
  children: ChildIndex,
  member: string,
  parentModule: string | undefined,
  path: string,
): SchemaNode {
  let node: SchemaNode | undefined;
  try {
    node = resolveChild(children, member, parentModule);
  } catch (err) {
    if (err instanceof AmbiguousNameError) throw malformed(`Error parsing input: ${err.message}`);
    throw err;
  }
  if (!node)
    throw unknownElement(
      `Error parsing input: Schema node with name ${member} was not found under ${path || '/'}`,
    );
  if (!node.config)
    throw unknownElement(
      `Error parsing input: ${where(path, member)} is config false (state data) and cannot be written`,
    );
  return node;
}

/**
 * Decodes the JSON value of one schema node. Entries of keyed lists must carry their keys;
 * mandatory leaves are checked later, on the data as it would be after the write.
 */
export function decodeValue(node: SchemaNode, raw: unknown, path: string): Child {
  const here = where(path, node.name);
  switch (node.kind) {
    case 'leaf':
      return decodeLeaf(node.type, raw, node.module, here);
    case 'leaf-list': {
      if (!Array.isArray(raw))
        throw malformed(`Error parsing input: ${here} is a leaf-list and needs a JSON array`);
      const values: LeafValue[] = [];
      for (const item of raw) {
        const value = decodeLeaf(node.type, item, node.module, here);
        if (!values.includes(value)) values.push(value);
      }
      return values;
    }
    case 'container':
      if (!isObject(raw))
        throw malformed(`Error parsing input: ${here} is a container and needs a JSON object`);
      return decodeInstance(node, raw, here);
    case 'list': {
      if (!Array.isArray(raw))
        throw malformed(`Error parsing input: ${here} is a list and needs a JSON array`);
      if (node.keys.length === 0) {
        return raw.map((item, i) => {
          if (!isObject(item))
            throw malformed(`Error parsing input: entry ${i} of ${here} is not a JSON object`);
          return decodeInstance(node, item, here);
        });
      }
      const entries: KeyedList = new Map();
      for (const item of raw) {
        const { key, entry } = decodeEntry(node, item, here);
        if (entries.has(key))
          throw malformed(`Error parsing input: ${here} has two entries with the key ${key}`);
        entries.set(key, entry);
      }
      return entries;
    }
  }
}

function decodeLeaf(type: LeafNode['type'], raw: unknown, module: string, here: string): LeafValue {
  try {
    return parseLeafValue(type, raw, module);
  } catch (err) {
    if (err instanceof ValueError) throw invalidValue(`Invalid value for ${here}: ${err.message}`);
    throw err;
  }
}

/** Decodes one entry of a keyed list, returning its key string too. */
export function decodeEntry(
  node: InnerNode & { kind: 'list' },
  raw: unknown,
  here: string,
): { key: string; entry: Instance } {
  if (!isObject(raw)) throw malformed(`Error parsing input: an entry of ${here} is not a JSON object`);
  const entry = decodeInstance(node, raw, here);
  const values: LeafValue[] = [];
  for (const keyLeaf of keyLeaves(node)) {
    const value = entry.get(keyLeaf.qname);
    if (value === undefined)
      throw malformed(`Error parsing input: an entry of ${here} lacks its key leaf ${keyLeaf.name}`);
    values.push(value as LeafValue);
  }
  return { key: entryKey(values), entry };
}

function decodeInstance(node: InnerNode, raw: Record<string, unknown>, here: string): Instance {
  const instance: Instance = new Map();
  for (const [member, value] of Object.entries(raw)) {
    const child = resolveMember(node.children, member, node.module, here);
    if (instance.has(child.qname))
      throw malformed(`Error parsing input: ${where(here, child.name)} appears twice`);
    instance.set(child.qname, decodeValue(child, value, here));
  }
  return instance;
}

/** Mandatory leaves missing in an instance, then recursively in its containers and entries. */
export function checkMandatory(node: InnerNode, instance: Instance, path: string, deep: boolean): void {
  for (const leaf of node.children.mandatory) {
    if (!instance.has(leaf.qname)) {
      throw new RestconfError(
        'application',
        'invalid-value',
        `Node ${path} is missing mandatory descendant /${leaf.name}`,
      );
    }
  }
  if (!deep) return;
  for (const [qname, value] of instance) {
    const child = node.children.byQName.get(qname);
    if (child?.kind === 'container') checkMandatory(child, value as Instance, `${path}/${child.name}`, true);
    else if (child?.kind === 'list') {
      const entries = child.keys.length === 0 ? (value as Instance[]) : (value as KeyedList).values();
      for (const entry of entries) checkMandatory(child, entry, `${path}/${child.name}`, true);
    }
  }
}

// ---- encoding ----

function encodeLeaf(node: { type: LeafNode['type'] }, value: LeafValue, dialect: Dialect): string {
  if (node.type.kind === 'empty') return '[null]';
  if (typeof value === 'string') {
    if (isSixtyFourBit(node.type)) return dialect === 'bierman02' ? value : `"${value}"`;
    return JSON.stringify(value);
  }
  return String(value);
}

function memberName(node: SchemaNode, qualified: boolean): string {
  return qualified ? node.qname : node.name;
}

/** The JSON text of one node's value (without its member name). */
export function encodeValue(node: SchemaNode, value: Child, dialect: Dialect): string {
  switch (node.kind) {
    case 'leaf':
      return encodeLeaf(node, value as LeafValue, dialect);
    case 'leaf-list':
      return `[${(value as LeafValue[]).map((v) => encodeLeaf(node, v, dialect)).join(',')}]`;
    case 'container':
      return encodeInstance(node, value as Instance, dialect);
    case 'list': {
      const entries = node.keys.length === 0 ? (value as Instance[]) : [...(value as KeyedList).values()];
      return `[${entries.map((e) => encodeInstance(node, e, dialect)).join(',')}]`;
    }
  }
}

function encodeInstance(node: InnerNode, instance: Instance, dialect: Dialect): string {
  const parts: string[] = [];
  for (const [qname, value] of instance) {
    const child = node.children.byQName.get(qname);
    if (!child) continue;
    parts.push(`"${memberName(child, child.module !== node.module)}":${encodeValue(child, value, dialect)}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * The response body for a GET of `node`: `{"<member>": value}`; a single list entry is
 * written as a one-element array, as ODL does.
 */
export function encodeDocument(
  node: SchemaNode,
  value: Child,
  dialect: Dialect,
  singleEntry: boolean,
): string {
  const name = memberName(node, dialect === 'rfc8040');
  const body =
    singleEntry && node.kind === 'list'
      ? `[${encodeInstance(node, value as Instance, dialect)}]`
      : encodeValue(node, value, dialect);
  return `{"${name}":${body}}`;
}
