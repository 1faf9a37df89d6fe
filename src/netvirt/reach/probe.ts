/**
 * The packet a reachability question is about: its transport protocol and destination port.
 * Without a port the probe is an ICMP echo request (what `ping` sends): the one packet every
 * pod can answer whatever it listens on.
 */
import { ModelValidationError } from '../errors.js';
import { PROTOCOL_NUMBERS } from '../acl.js';

export const PROBE_PROTOCOLS = ['tcp', 'udp', 'sctp', 'icmp'] as const;
export type ProbeProtocol = (typeof PROBE_PROTOCOLS)[number];

export type Probe = { protocol: 'tcp' | 'udp' | 'sctp'; port: number } | { protocol: 'icmp' };

/** ICMP echo request: type 8 for IPv4, 128 for ICMPv6; code 0 for both. */
export const ECHO_REQUEST = { 4: { type: 8, code: 0 }, 6: { type: 128, code: 0 } } as const;

/** `N/tcp`, `N/udp`, `N/sctp` (`N` alone is TCP, as a Kubernetes port defaults to TCP). */
export function parseProbe(spec: string | undefined): Probe {
  if (spec === undefined) return { protocol: 'icmp' };
  const m = /^(\d{1,5})(?:\/([a-zA-Z]+))?$/.exec(spec.trim());
  const where = `port ${JSON.stringify(spec)}`;
  if (!m) throw new ModelValidationError(where, 'give it as <port>/<tcp|udp|sctp>, e.g. 8080/tcp');
  const port = Number(m[1]);
  if (port < 1 || port > 65535) throw new ModelValidationError(where, 'a port is 1..65535');
  const protocol = (m[2] ?? 'tcp').toLowerCase();
  if (protocol !== 'tcp' && protocol !== 'udp' && protocol !== 'sctp')
    throw new ModelValidationError(where, `protocol ${m[2]} is not one of tcp, udp, sctp`);
  return { protocol, port };
}

/** The IP protocol number of a probe for an address family (ICMP over IPv6 is ICMPv6). */
export function probeProtocolNumber(probe: Probe, family: 4 | 6): number {
  if (probe.protocol === 'icmp') return family === 6 ? PROTOCOL_NUMBERS.icmpv6 : PROTOCOL_NUMBERS.icmp;
  return PROTOCOL_NUMBERS[probe.protocol];
}

export function describeProbe(probe: Probe): string {
  return probe.protocol === 'icmp' ? 'ICMP echo' : `${probe.protocol.toUpperCase()} port ${probe.port}`;
}
