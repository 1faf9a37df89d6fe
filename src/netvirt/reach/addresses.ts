/**
 * Address tests on what ODL holds, which others may have written loosely: an
 * allowed-address-pair is an address or a prefix, and a prefix may have host bits set (ODL
 * stores what it is given). A value that is neither never matches, rather than throwing.
 */
import { isIP } from 'node:net';
import { canonicalIp, cidrContains } from '../names.js';

/** Whether `ip` is the address, or lies in the prefix, `value`. */
export function addressIn(value: string, ip: string): boolean {
  try {
    if (!value.includes('/')) return isIP(value) !== 0 && canonicalIp(value) === canonicalIp(ip);
    return cidrContains(value, ip);
  } catch {
    return false;
  }
}

/** The address of an adjacency's `ip_address` (`10.0.0.5/32` → `10.0.0.5`), if it names one host. */
export function hostOf(prefix: string): string | undefined {
  const [address, length] = prefix.split('/');
  if (address === undefined || isIP(address) === 0) return undefined;
  const family = isIP(address);
  if (length !== undefined && Number(length) !== (family === 4 ? 32 : 128)) return undefined;
  return canonicalIp(address);
}

/** The prefix length of a route's `ip_address` (an address alone is a host route); NaN when malformed. */
export function prefixLength(prefix: string): number {
  const [address, length] = prefix.split('/');
  const family = isIP(address ?? '');
  if (family === 0) return Number.NaN;
  if (length === undefined) return family === 4 ? 32 : 128;
  const n = Number(length);
  return /^\d{1,3}$/.test(length) && n <= (family === 4 ? 32 : 128) ? n : Number.NaN;
}

export function familyOf(ip: string): 4 | 6 | undefined {
  const f = isIP(ip);
  return f === 4 || f === 6 ? f : undefined;
}
