import ipaddr from 'ipaddr.js';

/**
 * The pod's MAC address, derived from its IP so that the watcher can write the same MAC into
 * ODL (elan static MAC, vpn adjacency) without asking the node: `0a:58:` (locally administered,
 * unicast) followed by the four IPv4 bytes, or the last four bytes of an IPv6 address.
 * The same convention as ovn-kubernetes, so addresses stay recognisable.
 */
export function podMacFromIp(ip: string): string {
  if (!ipaddr.isValid(ip)) throw new Error(`cannot derive a MAC from "${ip}": not an IP address`);
  const bytes = ipaddr.parse(ip).toByteArray();
  const tail = bytes.slice(-4);
  return ['0a', '58', ...tail.map((b) => b.toString(16).padStart(2, '0'))].join(':');
}
