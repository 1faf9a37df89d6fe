/**
 * Reading ODL's JSON. ODL's two RESTCONF dialects spell the same data differently (bierman02:
 * unqualified top member, bare 64-bit numbers; RFC 8040: qualified top member, 64-bit numbers
 * as strings), and ODL accepts and sometimes echoes numbers and booleans as strings. Every
 * reader here therefore looks members up by their *local* name (with or without a module
 * prefix) and accepts both spellings of a scalar.
 */
import { OdlParseError } from './errors.js';

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
export interface JsonObject {
  [member: string]: JsonValue;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `odl-interface:l2vlan-mode` → `l2vlan-mode`. */
export function localName(member: string): string {
  const colon = member.indexOf(':');
  return colon < 0 ? member : member.slice(colon + 1);
}

const COLON = ':'.charCodeAt(0);

/** The JSON member of `obj` whose local name is `name`, however it is qualified. */
export function findMember(obj: JsonObject, name: string): { member: string; value: JsonValue } | undefined {
  if (Object.hasOwn(obj, name)) return { member: name, value: obj[name] as JsonValue };
  // A qualified spelling (`module:name`), looked for without building a list of the members:
  // an optional leaf that is absent is asked for of every entry of a 100,000-entry list.
  for (const member in obj) {
    if (
      member.length > name.length &&
      member.charCodeAt(member.length - name.length - 1) === COLON &&
      member.endsWith(name) &&
      member.indexOf(':') === member.length - name.length - 1
    )
      return { member, value: obj[member] as JsonValue };
  }
  return undefined;
}

/**
 * A cursor over one JSON object that remembers which members were read, so that whatever
 * odlcoe does not model can be kept verbatim (`rest()`) and carried into later writes.
 */
export class EntryReader {
  private readonly consumed = new Set<string>();

  constructor(
    readonly obj: JsonObject,
    readonly where: string,
  ) {}

  static of(value: unknown, where: string): EntryReader {
    if (!isJsonObject(value)) throw new OdlParseError(where, `expected an object, got ${describe(value)}`);
    return new EntryReader(value, where);
  }

  private take(name: string): JsonValue | undefined {
    const found = findMember(this.obj, name);
    if (!found) return undefined;
    this.consumed.add(found.member);
    return found.value === null ? undefined : found.value;
  }

  /** Marks members as known but not kept (config-false leaves that must never be written back). */
  drop(...names: string[]): void {
    for (const name of names) this.take(name);
  }

  string(name: string): string | undefined {
    const v = this.take(name);
    if (v === undefined) return undefined;
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    throw new OdlParseError(`${this.where}/${name}`, `expected a string, got ${describe(v)}`);
  }

  /** `value` read from member `name`, which the model makes a key or mandatory. */
  required<T>(name: string, value: T | undefined): T {
    if (value === undefined)
      throw new OdlParseError(`${this.where}/${name}`, 'missing (it is a key or mandatory leaf)');
    return value;
  }

  requiredString(name: string): string {
    const v = this.string(name);
    if (v === undefined)
      throw new OdlParseError(`${this.where}/${name}`, 'missing (it is a key or mandatory leaf)');
    return v;
  }

  /** An identityref, normalised to `module:identity` (ODL may drop the prefix of its own module). */
  identity(name: string, ownModule: string): string | undefined {
    const v = this.string(name);
    if (v === undefined) return undefined;
    return v.includes(':') ? v : `${ownModule}:${v}`;
  }

  /** int8..uint32: a JSON number or a decimal string. */
  integer(name: string, min: number, max: number): number | undefined {
    const v = this.take(name);
    if (v === undefined) return undefined;
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new OdlParseError(
        `${this.where}/${name}`,
        `expected an integer in ${min}..${max}, got ${describe(v)}`,
      );
    }
    return n;
  }

  /**
   * uint64, kept as a decimal string. bierman02 answers with a bare JSON number; above 2^53
   * `JSON.parse` has already rounded it, and writing the rounded value back would corrupt it.
   */
  uint64(name: string): string | undefined {
    const v = this.take(name);
    if (v === undefined) return undefined;
    if (typeof v === 'string' && /^\d+$/.test(v)) return v;
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
    if (typeof v === 'number' && Number.isInteger(v) && v > 0) {
      throw new OdlParseError(
        `${this.where}/${name}`,
        `uint64 ${v} exceeds 2^53 and lost precision in JSON parsing`,
      );
    }
    throw new OdlParseError(`${this.where}/${name}`, `expected a uint64, got ${describe(v)}`);
  }

  boolean(name: string): boolean | undefined {
    const v = this.take(name);
    if (v === undefined) return undefined;
    if (v === true || v === 'true') return true;
    if (v === false || v === 'false') return false;
    throw new OdlParseError(`${this.where}/${name}`, `expected a boolean, got ${describe(v)}`);
  }

  enumeration<T extends string>(name: string, values: readonly T[]): T | undefined {
    const v = this.string(name);
    if (v === undefined) return undefined;
    if (!(values as readonly string[]).includes(v)) {
      throw new OdlParseError(
        `${this.where}/${name}`,
        `expected one of ${values.join('|')}, got ${JSON.stringify(v)}`,
      );
    }
    return v as T;
  }

  /** A leaf-list of strings (`[]` when absent). */
  strings(name: string): string[] | undefined {
    const v = this.take(name);
    if (v === undefined) return undefined;
    const items = Array.isArray(v) ? v : [v];
    return items.map((item, i) => {
      if (typeof item === 'string' || typeof item === 'number') return String(item);
      throw new OdlParseError(`${this.where}/${name}[${i}]`, `expected a string, got ${describe(item)}`);
    });
  }

  /** A list (keyed or not) parsed entry by entry; absent means empty. */
  list<T>(name: string, parse: (entry: EntryReader) => T): T[] {
    const v = this.take(name);
    if (v === undefined) return [];
    if (!Array.isArray(v))
      throw new OdlParseError(`${this.where}/${name}`, `expected a list, got ${describe(v)}`);
    return v.map((item, i) => parse(EntryReader.of(item, `${this.where}/${name}[${i}]`)));
  }

  /** A container; absent stays undefined. */
  container<T>(name: string, parse: (entry: EntryReader) => T): T | undefined {
    const v = this.take(name);
    if (v === undefined) return undefined;
    return parse(EntryReader.of(v, `${this.where}/${name}`));
  }

  /** Every member not read so far, verbatim; undefined when there is none. */
  rest(): JsonObject | undefined {
    const out: JsonObject = {};
    let any = false;
    for (const [member, value] of Object.entries(this.obj)) {
      if (this.consumed.has(member)) continue;
      out[member] = value;
      any = true;
    }
    return any ? out : undefined;
  }
}

/**
 * The entries of a list from a GET answer, whatever was addressed: the top container
 * (`{"elan:elan-instances":{"elan-instance":[…]}}`, or unqualified from bierman02), or one entry
 * (`{"elan-instance":[…]}`). A container without the list (ODL omits empty lists) is empty.
 */
export function listEntries(
  body: unknown,
  container: string,
  list: string,
): { entries: JsonValue[]; where: string } {
  if (!isJsonObject(body))
    throw new OdlParseError(container, `expected a JSON object, got ${describe(body)}`);
  const top = findMember(body, container);
  if (top) {
    if (top.value === null) return { entries: [], where: `${container}/${list}` };
    if (!isJsonObject(top.value))
      throw new OdlParseError(container, `expected a container, got ${describe(top.value)}`);
    const inner = findMember(top.value, list);
    if (!inner || inner.value === null) return { entries: [], where: `${container}/${list}` };
    if (!Array.isArray(inner.value))
      throw new OdlParseError(`${container}/${list}`, `expected a list, got ${describe(inner.value)}`);
    return { entries: inner.value, where: `${container}/${list}` };
  }
  const direct = findMember(body, list);
  if (direct) {
    if (!Array.isArray(direct.value))
      throw new OdlParseError(list, `expected a list, got ${describe(direct.value)}`);
    return { entries: direct.value, where: list };
  }
  throw new OdlParseError(
    container,
    `neither ${container} nor ${list} in members [${Object.keys(body).join(', ')}]`,
  );
}

/** Parses every list entry of a GET answer with `parse`. */
export function parseList<T>(
  body: unknown,
  container: string,
  list: string,
  parse: (entry: EntryReader) => T,
): T[] {
  const { entries, where } = listEntries(body, container, list);
  return entries.map((entry, i) => parse(EntryReader.of(entry, `${where}[${i}]`)));
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${JSON.stringify(value)}`;
}

/**
 * Appends members odlcoe does not model (as ODL returned them) to a body under construction.
 * A modelled member always wins, so a stale copy can never override what odlcoe decided.
 */
export function withPreserved(entry: JsonObject, preserved: JsonObject | undefined): JsonObject {
  if (!preserved) return entry;
  const known = new Set(Object.keys(entry).map(localName));
  for (const [member, value] of Object.entries(preserved)) {
    if (!known.has(localName(member))) entry[member] = value;
  }
  return entry;
}

/** Sets an optional property only when there is a value, so absent stays absent (no `undefined` members). */
export function assign<T extends object, K extends keyof T>(
  target: T,
  key: K,
  value: T[K] | undefined,
): void {
  if (value !== undefined) target[key] = value;
}

/**
 * Whether `a` and `b` have the same canonical JSON text (`canonicalJson(a) === canonicalJson(b)`),
 * without writing either: a resync compares every owned leaf of every entry, and most are
 * the same string on both sides.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null)
    return canonicalJson(a) === canonicalJson(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i += 1) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let members = 0;
  for (const key of Object.keys(x)) {
    if (x[key] === undefined) continue;
    members += 1;
    if (!sameJson(x[key], y[key])) return false;
  }
  for (const key of Object.keys(y)) if (y[key] !== undefined) members -= 1;
  return members === 0;
}

/** A canonical JSON text: object members sorted, undefined members dropped. */
export function canonicalJson(value: unknown): string {
  // One pass, and an object's keys sorted only when they are not in order already (owned-leaf
  // records usually are): every diff runs this over owned leaves, and a node gateway's
  // vpn-interface carries one adjacency per Service IP, re-planned on every Service change.
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i += 1) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${out}]`;
  }
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj);
    for (let i = 1; i < keys.length; i += 1)
      if ((keys[i - 1] as string) > (keys[i] as string)) {
        keys.sort();
        break;
      }
    let out = '{';
    let first = true;
    for (const key of keys) {
      const v = obj[key];
      if (v === undefined) continue;
      out += `${first ? '' : ','}${JSON.stringify(key)}:${canonicalJson(v)}`;
      first = false;
    }
    return `${out}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
