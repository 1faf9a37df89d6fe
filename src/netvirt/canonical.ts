/**
 * Canonical spellings for comparing what odlcoe wants with what ODL holds: the same value may
 * come back from ODL in another form (IPv6 zero compression, MAC and UUID case, list order
 * where the order carries no meaning), and such a difference must never cause a write.
 */
import { isIP } from 'node:net';
import { canonicalIp } from './names.js';

/** A list sorted by `key`; undefined when empty (an empty list and an absent one are equal). */
export const sorted = <T>(items: readonly T[] | undefined, key: (t: T) => string): T[] | undefined =>
  items === undefined || items.length === 0
    ? undefined
    : [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));

/** An IP literal spelled canonically; anything that does not parse as is. */
export const ip = (value: string | undefined): string | undefined => {
  if (value === undefined) return undefined;
  try {
    return canonicalIp(value);
  } catch {
    return value;
  }
};

/** `10.0.0.5/32` and `fd00:0::5/128` spelled canonically, anything else as is. */
export const prefix = (value: string): string => {
  const slash = value.lastIndexOf('/');
  return slash < 0
    ? (ip(value) ?? value)
    : `${ip(value.slice(0, slash)) ?? value.slice(0, slash)}${value.slice(slash)}`;
};

export const lower = (value: string | undefined): string | undefined => value?.toLowerCase();

export const nonEmpty = <T>(items: T[]): T[] | undefined => (items.length === 0 ? undefined : items);

/** Numeric order of IP literals, IPv4 before IPv6, so keyless lists have one canonical order. */
export function compareIp(a: string, b: string): number {
  const fa = isIP(a);
  const fb = isIP(b);
  if (fa !== fb) return fa - fb;
  if (fa === 4) {
    const na = a.split('.').reduce((n, o) => n * 256 + Number(o), 0);
    const nb = b.split('.').reduce((n, o) => n * 256 + Number(o), 0);
    return na - nb;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A set of IP literals, canonical and ordered; undefined when empty. */
export const ipSet = (values: readonly string[] | undefined): string[] | undefined =>
  values === undefined || values.length === 0
    ? undefined
    : [...new Set(values.map((v) => ip(v) ?? v))].sort(compareIp);
