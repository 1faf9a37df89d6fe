/**
 * The answer to "would NetVirt deliver this packet?": the verdict, the ODL objects the packet
 * goes through in order, and the first object that drops it with the reason. Object kinds are
 * the kinds table's labels (`ietf-interface`, `elan-instance`, `vpn-instance`, `acl`, ...), so
 * an operator can look each one up with `odlcoectl dump` or a RESTCONF GET.
 */
import type { AclMiss } from './port-acls.js';
import type { Probe } from './probe.js';

export type ObjectLabel =
  'ietf-interface' | 'elan-interface' | 'elan-instance' | 'vpn-interface' | 'vpn-instance' | 'acl';

export interface Hop {
  kind: ObjectLabel;
  name: string;
  /** What this object does to the packet. */
  note: string;
}

export interface Drop {
  kind: ObjectLabel;
  name: string;
  reason: string;
  /** For an ACL drop: one line per security group saying why none of its rules matched. */
  details?: string[];
  /** For an ACL drop: every security group of the port and why none of its rules matched. */
  acls?: AclMiss[];
}

export interface ReachEnd {
  /** The port (ietf-interface name); absent for a destination no port holds. */
  interface?: string;
  ip: string;
}

export interface ReachResult {
  verdict: 'delivered' | 'dropped';
  source: ReachEnd;
  destination: ReachEnd;
  probe: Probe;
  /** The objects passed, in order; for a drop, up to and including the dropping object. */
  path: Hop[];
  drop?: Drop;
  /** What else holds (conntrack for replies, ECMP next hops, ...). */
  notes: string[];
}
