/**
 * OVSDB's JSON encoding of values (RFC 7047 section 5.1): a uuid is ["uuid", "<uuid>"], a
 * reference to a row inserted in the same transaction ["named-uuid", "<name>"], a set
 * ["set", [...]] (a set of exactly one element may be written as the bare element, and
 * ovsdb-server does so), a map ["map", [[key, value], ...]].
 */

export type OvsdbAtom = string | number | boolean | ['uuid', string] | ['named-uuid', string];
export type OvsdbValue = OvsdbAtom | ['set', OvsdbAtom[]] | ['map', [OvsdbAtom, OvsdbAtom][]];

/** Thrown when ovsdb-server answers with a value of another shape than the schema promises. */
export class OvsdbDecodeError extends Error {
  override name = 'OvsdbDecodeError';
}

export function uuid(value: string): ['uuid', string] {
  return ['uuid', value];
}

export function namedUuid(name: string): ['named-uuid', string] {
  return ['named-uuid', name];
}

export function ovsSet(values: OvsdbAtom[]): ['set', OvsdbAtom[]] {
  return ['set', values];
}

/** A string→string map (external_ids, other_config), keys in a stable order. */
export function ovsMap(record: Record<string, string>): ['map', [string, string][]] {
  return [
    'map',
    Object.keys(record)
      .sort()
      .map((k) => [k, record[k] as string]),
  ];
}

/** The elements of a set column (a bare element is a set of one). */
export function decodeSet(value: unknown): unknown[] {
  if (Array.isArray(value) && value[0] === 'set') {
    if (!Array.isArray(value[1])) throw new OvsdbDecodeError(`malformed OVSDB set ${JSON.stringify(value)}`);
    return value[1] as unknown[];
  }
  return value === undefined ? [] : [value];
}

export function decodeUuid(value: unknown): string {
  if (Array.isArray(value) && value[0] === 'uuid' && typeof value[1] === 'string') return value[1];
  throw new OvsdbDecodeError(`expected an OVSDB uuid, got ${JSON.stringify(value)}`);
}

/** A string→string map column. */
export function decodeMap(value: unknown): Record<string, string> {
  if (!Array.isArray(value) || value[0] !== 'map' || !Array.isArray(value[1])) {
    throw new OvsdbDecodeError(`expected an OVSDB map, got ${JSON.stringify(value)}`);
  }
  const out: Record<string, string> = {};
  for (const pair of value[1] as unknown[]) {
    if (!Array.isArray(pair) || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') {
      throw new OvsdbDecodeError(`expected a string map entry, got ${JSON.stringify(pair)}`);
    }
    out[pair[0]] = pair[1];
  }
  return out;
}

/** An optional scalar column ("min": 0, "max": 1): the value, or undefined for the empty set. */
export function decodeOptional(value: unknown): unknown {
  return decodeSet(value)[0];
}
