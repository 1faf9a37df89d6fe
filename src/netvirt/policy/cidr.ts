/**
 * CIDR arithmetic for `ipBlock`: NetVirt's ACLs only permit, so `cidr` minus its `except`
 * blocks becomes the smallest set of prefixes that covers exactly what remains.
 */
import { isIP } from 'node:net';
import { addressFromBigInt, addressToBigInt } from '../names.js';

export interface Prefix {
  family: 4 | 6;
  network: bigint;
  length: number;
}

/** Parses `a.b.c.d/n` or `x::/n`, clearing host bits (the API accepts them; they mean nothing). */
export function parsePrefix(text: string): Prefix | undefined {
  const slash = text.lastIndexOf('/');
  if (slash <= 0) return undefined;
  const address = text.slice(0, slash);
  const family = isIP(address);
  const length = Number(text.slice(slash + 1));
  if ((family !== 4 && family !== 6) || !/^\d{1,3}$/.test(text.slice(slash + 1))) return undefined;
  const bits = family === 4 ? 32 : 128;
  if (length > bits) return undefined;
  const mask = ((1n << BigInt(bits)) - 1n) ^ ((1n << BigInt(bits - length)) - 1n);
  return { family, network: addressToBigInt(address) & mask, length };
}

export const formatPrefix = (p: Prefix): string => `${addressFromBigInt(p.network, p.family)}/${p.length}`;

const bitsOf = (p: Prefix) => (p.family === 4 ? 32 : 128);

/** Whether `inner` lies inside `outer`. */
export function prefixContains(outer: Prefix, inner: Prefix): boolean {
  if (outer.family !== inner.family || inner.length < outer.length) return false;
  const shift = BigInt(bitsOf(outer) - outer.length);
  return inner.network >> shift === outer.network >> shift;
}

/**
 * `block` minus every prefix of `holes`, as disjoint prefixes in address order: each hole
 * inside the block splits it along the hole's path (one prefix per bit), so the result has at
 * most (hole length − block length) prefixes per hole.
 */
export function subtractPrefixes(block: Prefix, holes: readonly Prefix[]): Prefix[] {
  const inside = holes.filter(
    (h) => h.family === block.family && (prefixContains(block, h) || prefixContains(h, block)),
  );
  if (inside.some((h) => prefixContains(h, block))) return [];
  if (inside.length === 0) return [block];
  const half = BigInt(bitsOf(block) - block.length - 1);
  const low: Prefix = { family: block.family, network: block.network, length: block.length + 1 };
  const high: Prefix = {
    family: block.family,
    network: block.network | (1n << half),
    length: block.length + 1,
  };
  return [...subtractPrefixes(low, inside), ...subtractPrefixes(high, inside)];
}
