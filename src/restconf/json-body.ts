import type { DataPath } from './path.js';

/**
 * Parses a RESTCONF JSON body. ODL's old `/restconf` writes 64-bit numbers (`dpn-id`,
 * `datapath-node-identifier`) as bare JSON numbers, which `JSON.parse` would silently round
 * past 2^53. Integers outside the safe range are therefore read as strings, which is also
 * how RFC 7951 (and so `/rests`) writes them: callers see one form from either dialect.
 */
export function parseRestconfJson(text: string): unknown {
  return JSON.parse(/\d{16}/.test(text) ? quoteUnsafeIntegers(text) : text);
}

/** Wraps integer literals beyond Number.MAX_SAFE_INTEGER (outside strings) in quotes. */
export function quoteUnsafeIntegers(text: string): string {
  let out = '';
  let copiedUpTo = 0;
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '"') {
      // Skip the whole string literal, honouring escapes.
      i += 1;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i += 1;
      continue;
    }
    if (ch === '-' || (ch !== undefined && ch >= '0' && ch <= '9')) {
      const start = i;
      i += 1;
      while (i < text.length && /[0-9.eE+-]/.test(text[i] ?? '')) i += 1;
      const literal = text.slice(start, i);
      if (/^-?\d+$/.test(literal) && !Number.isSafeInteger(Number(literal))) {
        out += `${text.slice(copiedUpTo, start)}"${literal}"`;
        copiedUpTo = i;
      }
      continue;
    }
    i += 1;
  }
  return out + text.slice(copiedUpTo);
}

/**
 * The list entries in a GET answer for a list path (`.../elan-instance`) or an entry path
 * (`.../elan-instance/n1`). The top member is `elan:elan-instance` on RFC 8040 and
 * `elan-instance` on bierman02; its value is the list of entries. An entry path may also
 * come back as a single object. Anything else is a protocol problem and throws.
 */
export function listEntries(body: unknown, path: DataPath): Record<string, unknown>[] {
  const last = path[path.length - 1];
  if (!last) throw new Error('empty data path');
  if (body === undefined) return [];
  if (!isObject(body))
    throw new Error(`expected a JSON object holding "${last.name}", got ${describe(body)}`);
  const keys = Object.keys(body);
  if (keys.length === 0) return [];
  const member = findMember(body, last.name);
  if (member === undefined) {
    throw new Error(
      `expected member "${last.name}" in the response, got ${keys.map((k) => `"${k}"`).join(', ')}`,
    );
  }
  return entriesOf(member, body[member], last.keys !== undefined && last.keys.length > 0);
}

/**
 * The entries of the list `path` names, from a GET answer for its parent (a container or a
 * list entry). The old `/restconf` refuses to read a list without keys (404 "Missing key for
 * list"), so on bierman02 the client reads the parent and picks the list out of it. The list
 * member may be qualified (`odl-l3vpn:adjacency`, an augment) or not; an absent member means
 * an empty list.
 */
export function listEntriesFromParent(body: unknown, path: DataPath): Record<string, unknown>[] {
  const last = path[path.length - 1];
  const parent = path[path.length - 2];
  if (!last || !parent) throw new Error('a list path with a parent is needed');
  if (body === undefined) return [];
  if (!isObject(body))
    throw new Error(`expected a JSON object holding "${parent.name}", got ${describe(body)}`);
  const parentMember = findMember(body, parent.name);
  if (parentMember === undefined) {
    if (Object.keys(body).length === 0) return [];
    throw new Error(
      `expected member "${parent.name}" in the response, got ${Object.keys(body)
        .map((k) => `"${k}"`)
        .join(', ')}`,
    );
  }
  let node = body[parentMember];
  // A list entry comes back as a one-element list.
  if (Array.isArray(node)) {
    if (node.length !== 1)
      throw new Error(`"${parentMember}" holds ${node.length} entries where one was addressed`);
    node = node[0];
  }
  if (!isObject(node))
    throw new Error(`"${parentMember}" is ${describe(node)}, not a container or list entry`);
  const member = findMember(node, last.name);
  return member === undefined ? [] : entriesOf(member, node[member], false);
}

/** The member named `name`, unqualified or qualified with exactly one module prefix. */
function findMember(body: Record<string, unknown>, name: string): string | undefined {
  return Object.keys(body).find(
    (k) => k === name || (k.endsWith(`:${name}`) && k.indexOf(':') === k.length - name.length - 1),
  );
}

function entriesOf(member: string, value: unknown, entryPath: boolean): Record<string, unknown>[] {
  if (Array.isArray(value)) {
    const bad = value.findIndex((e) => !isObject(e));
    if (bad >= 0) throw new Error(`entry ${bad} of "${member}" is ${describe(value[bad])}, not an object`);
    return value as Record<string, unknown>[];
  }
  if (isObject(value) && entryPath) return [value];
  throw new Error(`"${member}" is ${describe(value)}, not a list of entries`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
