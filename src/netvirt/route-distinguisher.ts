/**
 * Route distinguishers and route targets (RFC 4364 §4.2 / RFC 4360 text forms) and the RD
 * allocator for namespace VPNs.
 *
 * ODL keys all VPN state (vpn-instance-op-data, FIB, labels) by RD, so two VPNs sharing an RD
 * corrupt each other: every namespace VPN needs its own. The allocator is pure: the watcher
 * recovers the RDs already in ODL (`existing`) and passes them in, so a restart re-derives
 * exactly the same assignment, and an RD once used is never reassigned while its VPN exists.
 */
import { isIP } from 'node:net';
import { ModelValidationError } from './errors.js';
import { checkLength } from './validate.js';

export interface RdParts {
  /** A decimal AS number or an IPv4 address. */
  administrator: string;
  assigned: number;
}

const UINT16_MAX = 65535;
const UINT32_MAX = 4294967295;

/** The largest assigned number the administrator's RD type leaves room for. */
export function maxAssignedNumber(administrator: string): number {
  if (isIP(administrator) === 4) return UINT16_MAX; // type 1: IPv4 : 2 bytes
  if (/^\d+$/.test(administrator)) {
    const asn = Number(administrator);
    if (asn <= UINT16_MAX) return UINT32_MAX; // type 0: 2-byte ASN : 4 bytes
    if (asn <= UINT32_MAX) return UINT16_MAX; // type 2: 4-byte ASN : 2 bytes
  }
  throw new ModelValidationError(
    'route distinguisher administrator',
    `${JSON.stringify(administrator)} is neither an AS number (0..4294967295) nor an IPv4 address`,
  );
}

/** Parses `ASN:nn` or `IPv4:nn`; throws a precise error otherwise. */
export function parseRouteDistinguisher(value: string, where = 'route-distinguisher'): RdParts {
  checkLength(value, 3, 21, where);
  const colon = value.lastIndexOf(':');
  const administrator = value.slice(0, colon);
  const number = value.slice(colon + 1);
  if (colon <= 0 || !/^\d+$/.test(number)) {
    throw new ModelValidationError(where, `${JSON.stringify(value)} is not ASN:nn or IPv4:nn`);
  }
  let max: number;
  try {
    max = maxAssignedNumber(administrator);
  } catch {
    throw new ModelValidationError(
      where,
      `${JSON.stringify(value)}: ${JSON.stringify(administrator)} is neither an AS number nor an IPv4 address`,
    );
  }
  const assigned = Number(number);
  if (assigned > max)
    throw new ModelValidationError(
      where,
      `${JSON.stringify(value)}: assigned number above ${max} for this administrator`,
    );
  return { administrator, assigned };
}

/** Route targets share the RD text form and the YANG length 3..21. */
export function checkRouteTarget(value: string, where = 'vrfRTValue'): void {
  parseRouteDistinguisher(value, where);
}

export function checkRouteDistinguisher(value: string, where = 'route-distinguisher'): void {
  parseRouteDistinguisher(value, where);
}

export interface RdAllocatorOptions {
  /** The RD administrator for this cluster's VPNs: an AS number or an IPv4 address. */
  administrator: string;
  /** The lowest assigned number to hand out (default 1). */
  first?: number;
}

export interface RdAllocation {
  /** namespace → RD, for every namespace asked about. */
  byNamespace: Map<string, string>;
  /**
   * Namespaces whose existing RD was shared with another namespace and has been replaced by a
   * fresh one (the alphabetically first namespace keeps the shared RD). Their VPN must be
   * re-created: ODL does not move VPN state to a new RD.
   */
  reassigned: string[];
}

/**
 * Keeps every namespace's existing RD and gives each namespace without one the lowest free
 * assigned number under `administrator`, in namespace-name order (so the result does not
 * depend on input order). Every RD in `existing` counts as taken, including those of
 * namespaces not asked about (their VPN still exists in ODL until garbage collection).
 */
export function allocateRouteDistinguishers(
  namespaces: Iterable<string>,
  existing: ReadonlyMap<string, string>,
  options: RdAllocatorOptions,
): RdAllocation {
  const max = maxAssignedNumber(options.administrator);
  const first = options.first ?? 1;
  if (!Number.isSafeInteger(first) || first < 0 || first > max) {
    throw new ModelValidationError('route distinguisher first number', `${first} is not in 0..${max}`);
  }

  const taken = new Set<number>();
  const owners = new Map<string, string[]>(); // rd → namespaces holding it
  for (const [ns, rd] of existing) {
    // An RD that does not parse (hand-edited in ODL) cannot equal one this allocator makes; keep it as is.
    const parts = tryParse(rd);
    if (parts?.administrator === options.administrator) taken.add(parts.assigned);
    owners.set(rd, [...(owners.get(rd) ?? []), ns]);
  }

  const byNamespace = new Map<string, string>();
  const reassigned: string[] = [];
  const wanted = [...new Set(namespaces)].sort();
  const needing: string[] = [];
  for (const ns of wanted) {
    const rd = existing.get(ns);
    const holders = rd === undefined ? [] : [...(owners.get(rd) ?? [])].sort();
    if (rd !== undefined && holders[0] === ns) {
      byNamespace.set(ns, rd);
    } else {
      if (rd !== undefined) reassigned.push(ns);
      needing.push(ns);
    }
  }

  let next = first;
  for (const ns of needing) {
    while (taken.has(next)) next += 1;
    if (next > max)
      throw new ModelValidationError(
        'route distinguisher allocation',
        `no free assigned number left under ${options.administrator} (max ${max})`,
      );
    taken.add(next);
    byNamespace.set(ns, `${options.administrator}:${next}`);
  }
  return { byNamespace, reassigned };
}

function tryParse(rd: string): RdParts | undefined {
  try {
    return parseRouteDistinguisher(rd);
  } catch {
    return undefined;
  }
}
