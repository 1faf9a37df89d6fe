import { isIPv4, isIPv6 } from 'node:net';

/**
 * YANG leaf types of the emulated models, and the JSON input rules ODL (yangtools' JSON codecs)
 * applies to them: numbers and booleans may arrive as strings, 64-bit integers as strings or
 * bare numbers, identityrefs as `module:identity` (the prefix may be dropped only when the
 * identity is in the leaf's own module), enums by name.
 *
 * Values are stored normalised: int8..int32/uint8..uint32 as JS numbers, int64/uint64 as
 * decimal strings (a double cannot hold them), booleans as booleans, identityrefs always
 * prefixed, strings as given.
 */
export type StringFormat = 'ip-address' | 'ip-prefix' | 'ip-prefix-or-address' | 'phys-address' | 'uuid';

export type LeafType =
  | { kind: 'string'; length?: readonly [number, number]; format?: StringFormat; forbidden?: string }
  | { kind: 'integer'; name: IntegerName; min: bigint; max: bigint }
  | { kind: 'boolean' }
  | { kind: 'enumeration'; values: readonly string[] }
  | { kind: 'identityref'; identities: readonly string[] }
  /** YANG `empty`: present or not; JSON `[null]`, stored as `true`. */
  | { kind: 'empty' };

export type IntegerName = 'int8' | 'int16' | 'int32' | 'int64' | 'uint8' | 'uint16' | 'uint32' | 'uint64';

export type LeafValue = string | number | boolean;

const INTEGER_BOUNDS: Record<IntegerName, readonly [bigint, bigint]> = {
  int8: [-128n, 127n],
  int16: [-32768n, 32767n],
  int32: [-2147483648n, 2147483647n],
  int64: [-9223372036854775808n, 9223372036854775807n],
  uint8: [0n, 255n],
  uint16: [0n, 65535n],
  uint32: [0n, 4294967295n],
  uint64: [0n, 18446744073709551615n],
};

export const string = (
  options: { length?: readonly [number, number]; forbidden?: string } = {},
): LeafType => ({
  kind: 'string',
  ...options,
});
export const formatted = (format: StringFormat): LeafType => ({ kind: 'string', format });
export const boolean: LeafType = { kind: 'boolean' };
export const enumeration = (...values: string[]): LeafType => ({ kind: 'enumeration', values });
export const identityref = (...identities: string[]): LeafType => ({ kind: 'identityref', identities });
export const empty: LeafType = { kind: 'empty' };

/** An integer type, optionally restricted by a YANG `range` (inclusive bounds). */
export function integer(name: IntegerName, range?: readonly [number | bigint, number | bigint]): LeafType {
  const [min, max] = INTEGER_BOUNDS[name];
  return {
    kind: 'integer',
    name,
    min: range ? BigInt(range[0]) : min,
    max: range ? BigInt(range[1]) : max,
  };
}

/** True for the types RFC 7951 writes as JSON strings (and bierman02 writes bare). */
export function isSixtyFourBit(type: LeafType): boolean {
  return type.kind === 'integer' && (type.name === 'int64' || type.name === 'uint64');
}

/** A problem with one value; the caller adds where it was found. */
export class ValueError extends Error {
  override name = 'ValueError';
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const PHYS_ADDRESS = /^(?:[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2})*)?$/;
const INTEGER_TEXT = /^[+-]?[0-9]+$/;
// ietf-inet-types allows a zone index (`%eth0`) on both address families.
const ZONE = /^[\p{N}\p{L}]+$/u;

function isIpAddress(text: string): boolean {
  const percent = text.indexOf('%');
  const address = percent === -1 ? text : text.slice(0, percent);
  if (percent !== -1 && !ZONE.test(text.slice(percent + 1))) return false;
  return isIPv4(address) || isIPv6(address);
}

function isIpPrefix(text: string): boolean {
  const slash = text.lastIndexOf('/');
  if (slash === -1) return false;
  const address = text.slice(0, slash);
  const length = text.slice(slash + 1);
  if (!/^(?:0|[1-9][0-9]{0,2})$/.test(length)) return false;
  if (isIPv4(address)) return Number(length) <= 32;
  return isIPv6(address) && Number(length) <= 128;
}

const FORMAT_CHECKS: Record<StringFormat, (text: string) => boolean> = {
  'ip-address': isIpAddress,
  'ip-prefix': isIpPrefix,
  'ip-prefix-or-address': (text) => isIpPrefix(text) || isIpAddress(text),
  'phys-address': (text) => PHYS_ADDRESS.test(text),
  uuid: (text) => UUID.test(text),
};

function describe(raw: unknown): string {
  return typeof raw === 'string' ? `"${raw}"` : (JSON.stringify(raw) ?? String(raw));
}

/**
 * Parses a JSON input value (or a URL key, always a string) for a leaf of `type` in module
 * `leafModule`, returning the normalised value or throwing `ValueError`.
 */
export function parseLeafValue(type: LeafType, raw: unknown, leafModule: string): LeafValue {
  switch (type.kind) {
    case 'string': {
      // yangtools reads string leaves with nextString(), which also takes a JSON number.
      if (typeof raw !== 'string' && typeof raw !== 'number')
        throw new ValueError(`${describe(raw)} is not a string`);
      const text = String(raw);
      if (type.length) {
        const length = [...text].length;
        if (length < type.length[0] || length > type.length[1]) {
          throw new ValueError(
            `"${text}" has length ${length}, outside ${type.length[0]}..${type.length[1]}`,
          );
        }
      }
      if (type.forbidden) {
        for (const ch of type.forbidden) {
          if (text.includes(ch)) throw new ValueError(`"${text}" contains the forbidden character '${ch}'`);
        }
      }
      if (type.format && !FORMAT_CHECKS[type.format](text)) {
        throw new ValueError(`"${text}" is not a valid ${type.format}`);
      }
      return text;
    }
    case 'integer': {
      let text: string;
      if (typeof raw === 'number') {
        if (!Number.isInteger(raw)) throw new ValueError(`${raw} is not an integer`);
        text = raw.toString();
      } else if (typeof raw === 'string') {
        text = raw.trim();
      } else {
        throw new ValueError(`${describe(raw)} is not an integer`);
      }
      if (!INTEGER_TEXT.test(text)) throw new ValueError(`${describe(raw)} is not a valid ${type.name}`);
      const value = BigInt(text);
      if (value < type.min || value > type.max) {
        throw new ValueError(`${text} is outside the range ${type.min}..${type.max} of this ${type.name}`);
      }
      return isSixtyFourBit(type) ? value.toString() : Number(value);
    }
    case 'boolean':
      if (raw === true || raw === 'true') return true;
      if (raw === false || raw === 'false') return false;
      throw new ValueError(`${describe(raw)} is not a boolean`);
    case 'enumeration':
      if (typeof raw === 'string' && type.values.includes(raw)) return raw;
      throw new ValueError(`${describe(raw)} is not one of ${type.values.join(', ')}`);
    case 'identityref': {
      if (typeof raw !== 'string') throw new ValueError(`${describe(raw)} is not an identityref`);
      const qualified = raw.includes(':') ? raw : `${leafModule}:${raw}`;
      if (type.identities.includes(qualified)) return qualified;
      throw new ValueError(`${describe(raw)} is not one of the identities ${type.identities.join(', ')}`);
    }
    case 'empty':
      // RFC 7951 §6.9: an empty leaf is `[null]`.
      if (Array.isArray(raw) && raw.length === 1 && raw[0] === null) return true;
      throw new ValueError(`${describe(raw)} is not [null] (the value of an empty leaf)`);
  }
}
