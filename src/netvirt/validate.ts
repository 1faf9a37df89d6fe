/**
 * Checks for values ODL would refuse with 400 (length, pattern, range) or accept and then
 * silently ignore (a malformed IP in a leaf NetVirt parses later). The builders call these so
 * that a bad value fails here, with the leaf named, instead of as a RESTCONF error or a
 * quietly broken data path.
 */
import { isIP } from 'node:net';
import { ModelValidationError } from './errors.js';

export function check(condition: boolean, where: string, reason: string): asserts condition {
  if (!condition) throw new ModelValidationError(where, reason);
}

export function checkNonEmpty(value: string, where: string): void {
  check(value.length > 0, where, 'must not be empty');
}

/**
 * The characters (code points) of `value`, as `[...value].length` counts them (a lone
 * surrogate is one), without building that array: every entry built checks its description.
 */
export function codePointLength(value: string): number {
  let n = value.length;
  for (let i = 0; i < value.length - 1; i += 1) {
    const c = value.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        n -= 1;
        i += 1;
      }
    }
  }
  return n;
}

/** A YANG `string { length min..max }`, counted in characters as YANG does. */
export function checkLength(value: string, min: number, max: number, where: string): void {
  const n = codePointLength(value);
  check(n >= min && n <= max, where, `length ${n} outside ${min}..${max}: ${JSON.stringify(value)}`);
}

export function checkInteger(value: number, min: number, max: number, where: string): void {
  check(
    Number.isSafeInteger(value) && value >= min && value <= max,
    where,
    `${value} is not an integer in ${min}..${max}`,
  );
}

export const UINT32_MAX = 4294967295;

export function checkUint64(value: string, where: string): void {
  check(
    /^\d{1,20}$/.test(value) && BigInt(value) <= 0xffffffffffffffffn,
    where,
    `${JSON.stringify(value)} is not a uint64`,
  );
}

/** ietf-inet-types ip-address (no prefix length; the optional %zone is not used by odlcoe). */
export function checkIpAddress(value: string, where: string): void {
  check(isIP(value) !== 0, where, `${JSON.stringify(value)} is not an IPv4 or IPv6 address`);
}

/** ietf-inet-types ip-prefix: `a.b.c.d/0..32` or `x::/0..128`. */
export function checkIpPrefix(value: string, where: string): void {
  const slash = value.lastIndexOf('/');
  const addr = value.slice(0, slash);
  const len = value.slice(slash + 1);
  const family = slash > 0 ? isIP(addr) : 0;
  const max = family === 4 ? 32 : 128;
  check(
    family !== 0 && /^\d{1,3}$/.test(len) && Number(len) <= max,
    where,
    `${JSON.stringify(value)} is not an IP prefix`,
  );
}

/**
 * ietf-yang-types phys-address. The YANG pattern also matches the empty string; a MAC that
 * empty is never what a port means, so it is refused here.
 */
export function checkMac(value: string, where: string): void {
  check(
    /^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$/.test(value),
    where,
    `${JSON.stringify(value)} is not a MAC address`,
  );
}

export function checkUuid(value: string, where: string): void {
  check(
    /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(value),
    where,
    `${JSON.stringify(value)} is not a UUID`,
  );
}

/** identityref in JSON: `module:identity`. */
export function checkIdentity(value: string, where: string): void {
  check(
    /^[A-Za-z_][\w.-]*:[A-Za-z_][\w.-]*$/.test(value),
    where,
    `${JSON.stringify(value)} is not a module:identity identityref`,
  );
}

export function checkOneOf<T extends string>(
  value: string,
  values: readonly T[],
  where: string,
): asserts value is T {
  check(
    (values as readonly string[]).includes(value),
    where,
    `${JSON.stringify(value)} is not one of ${values.join('|')}`,
  );
}
