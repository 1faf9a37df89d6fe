/**
 * Networks routed through their namespace's VPN (`"routing": "namespace"`) and the addresses
 * they may not use, as a pure function.
 *
 * Every namespace VPN imports and exports the cluster route target, so every namespace VPN holds
 * the /32 (/128) route of every pod and of every attachment of such a network, whichever
 * namespace it is in. vpnmanager keys a VPN's routes (`vrfEntry`, by RD and prefix) and its
 * `prefix-to-interface` entries (by VPN id and prefix) by the address alone: a second interface
 * with an address already routed there replaces the first one's route (the last one written
 * wins), and the two gateways' ARP answers would compete on the same subnet. So a
 * namespace-routed network must share no address with:
 *
 * - the pod subnets: the cluster CIDR the watcher carves node subnets from (`subnets.source
 *   allocate`), and every node's pod subnet as the watcher knows it (any source);
 * - the Service ranges (`services.cidrs`): their routes are in the VPNs that import the cluster
 *   route target too;
 * - another namespace-routed network, in any namespace.
 *
 * Overlap is shared addresses: two CIDRs of one family overlap when one contains the other's
 * first address (a /24 inside a /16 overlaps it; two IPv4 and IPv6 subnets never do). Between
 * two networks the older one (`creationTimestamp`, then `<namespace>/<name>`) keeps its
 * routing and the newer one is refused, so a new NAD can never take routes from a working one.
 * Networks with `l2` or their own VPN (`vpn`) share no VPN with anything and are not checked.
 */
import { ModelValidationError } from './errors.js';
import { parseCidr } from './names.js';
import {
  cidrsOverlap,
  type NetworkAttachmentDefinition,
  type NetworkDefinition,
  type OdlcoeNetwork,
} from './network-config.js';

/** A subnet the namespace VPNs already route, and what it is (for the message). */
export interface RoutedSubnet {
  cidr: string;
  what: string;
}

/** A routed subnet from a CIDR as configured or read (undefined: not a CIDR, so not compared). */
export function routedSubnet(cidr: string, what: string): RoutedSubnet | undefined {
  try {
    const p = parseCidr(cidr.trim());
    return { cidr: `${p.network}/${p.prefixLength}`, what };
  } catch (err) {
    if (!(err instanceof ModelValidationError)) throw err;
    return undefined;
  }
}

export interface NamespaceRoutedCandidate {
  network: OdlcoeNetwork;
  /** The NAD's creationTimestamp (RFC 3339; an unknown one sorts last). */
  created: string;
}

/**
 * The namespace-routed networks that are refused (`<ns>/<name>` → why), given every valid
 * namespace-routed network and the subnets the namespace VPNs route besides them.
 */
export function namespaceRoutingConflicts(
  candidates: readonly NamespaceRoutedCandidate[],
  routed: readonly RoutedSubnet[],
): Map<string, string> {
  const refByNet = (n: OdlcoeNetwork) => `${n.namespace}/${n.name}`;
  const order = [...candidates].sort(
    (a, b) =>
      compare(a.created || '\uffff', b.created || '\uffff') ||
      compare(refByNet(a.network), refByNet(b.network)),
  );
  const accepted: RoutedSubnet[] = [...routed];
  const refused = new Map<string, string>();
  for (const { network } of order) {
    const clash = firstClash(network, accepted);
    if (clash) {
      refused.set(
        refByNet(network),
        `spec.config/subnets: ${clash.subnet} overlaps ${clash.with.what} ${clash.with.cidr}, routed in the same VPNs (every namespace VPN imports the cluster route target): with "routing": "namespace" the network's addresses must be unique among the pod network's; use other subnets, or "vpn" or "l2"`,
      );
      continue;
    }
    for (const s of network.subnets)
      accepted.push({ cidr: s.cidr, what: `network ${refByNet(network)}'s subnet` });
  }
  return refused;
}

/** A NAD's creationTimestamp as RFC 3339 ('' when unknown): a Date or, read raw, a string. */
export function createdAt(nad: NetworkAttachmentDefinition): string {
  const t: unknown = nad.metadata?.creationTimestamp;
  return t instanceof Date ? t.toISOString() : typeof t === 'string' ? t : '';
}

/**
 * The refused namespace-routed networks among `nads` (each read with `read`), against the
 * subnets `routed()` gives (asked only when there is a namespace-routed network at all).
 */
export function namespaceRoutingConflictsOf(
  nads: readonly NetworkAttachmentDefinition[],
  read: (nad: NetworkAttachmentDefinition) => NetworkDefinition,
  routed: () => RoutedSubnet[],
): Map<string, string> {
  const candidates: NamespaceRoutedCandidate[] = [];
  for (const nad of nads) {
    const def = read(nad);
    if (def.state === 'odlcoe' && def.network.routing === 'namespace')
      candidates.push({ network: def.network, created: createdAt(nad) });
  }
  return candidates.length === 0 ? new Map() : namespaceRoutingConflicts(candidates, routed());
}

function firstClash(
  network: OdlcoeNetwork,
  routed: readonly RoutedSubnet[],
): { subnet: string; with: RoutedSubnet } | undefined {
  for (const s of network.subnets)
    for (const r of routed) if (cidrsOverlap(s.cidr, r.cidr)) return { subnet: s.cidr, with: r };
  return undefined;
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
