/**
 * Which routes a VPN's FIB holds, by vpnmanager's rules: its own vpn-interfaces' adjacencies,
 * plus those of every other VPN that has a route distinguisher and exports a route target the
 * VPN imports (`VpnUtil.getVpnsImportingMyRoute`: "Internal vpn … do not export/import routes";
 * `getRts` counts `both` as import and export; netvirt `stable/aluminium:vpnmanager/impl/.../
 * VpnUtil.java`). An extra route is programmed from the first of its next hops only
 * (`VpnInterfaceManager.processVpnInterfaceAdjacencies`), resolved among the primary
 * adjacencies of its own VPN.
 */
import { vpnRouteDistinguishers } from '../ownership.js';
import type { VpnInstance, VpnTarget } from '../vpn.js';
import { addressIn, hostOf, prefixLength } from './addresses.js';
import type { HoldingsIndex, VpnRoute } from './holdings.js';

function targets(v: VpnInstance): VpnTarget[] {
  if (v.profile === 'aluminium') return v.vpnTargets;
  return [...(v.ipv4Family?.vpnTargets ?? []), ...(v.ipv6Family?.vpnTargets ?? [])];
}

/** Route-target values a VPN imports or exports (`both` counts as either). */
export function routeTargets(v: VpnInstance, way: 'import' | 'export'): string[] {
  const type = way === 'import' ? 'import_extcommunity' : 'export_extcommunity';
  return [
    ...new Set(
      targets(v)
        .filter((t) => t.type === type || t.type === 'both')
        .map((t) => t.value),
    ),
  ];
}

export type Import = { imports: true; via?: string } | { imports: false; why: string };

/** Whether `into`'s FIB holds the routes of VPN `from`. */
export function importsRoutes(index: HoldingsIndex, into: string, from: string): Import {
  if (into === from) return { imports: true };
  const source = index.vpnInstances.get(from);
  const target = index.vpnInstances.get(into);
  if (!source) return { imports: false, why: `its VPN ${from} does not exist in ODL` };
  if (!target) return { imports: false, why: `VPN ${into} does not exist in ODL` };
  if (vpnRouteDistinguishers(source).length === 0)
    return {
      imports: false,
      why: `VPN ${from} has no route distinguisher, so vpnmanager exports none of its routes`,
    };
  const exported = routeTargets(source, 'export');
  const imported = routeTargets(target, 'import');
  const common = exported.find((rt) => imported.includes(rt));
  if (common !== undefined) return { imports: true, via: common };
  return {
    imports: false,
    why: `VPN ${from} exports route targets [${exported.join(', ')}] and VPN ${into} imports [${imported.join(', ')}]: none in common`,
  };
}

const isHostRoute = (r: VpnRoute) => (r.adjacency.adjacencyType ?? 'extra-route') !== 'extra-route';

export interface RouteLookup {
  /** The most specific routes that cover the address in the VPN's FIB (several: ECMP). */
  routes: (VpnRoute & { via?: string })[];
  /** Routes that cover it in other VPNs and why this VPN does not have them. */
  notImported: (VpnRoute & { why: string })[];
}

/** Longest-prefix match of `ip` in the FIB of VPN `vpn`; host adjacencies win ties over extra routes. */
export function lookupRoute(index: HoldingsIndex, vpn: string, ip: string): RouteLookup {
  const covering = index.routes.filter(
    (r) => !Number.isNaN(prefixLength(r.adjacency.ipAddress)) && addressIn(r.adjacency.ipAddress, ip),
  );
  const visible: (VpnRoute & { via?: string })[] = [];
  const notImported: (VpnRoute & { why: string })[] = [];
  for (const r of covering) {
    const imp = importsRoutes(index, vpn, r.vpn);
    if (imp.imports) visible.push(imp.via !== undefined ? { ...r, via: imp.via } : r);
    else notImported.push({ ...r, why: imp.why });
  }
  const best = Math.max(...visible.map((r) => prefixLength(r.adjacency.ipAddress)));
  const longest = visible.filter((r) => prefixLength(r.adjacency.ipAddress) === best);
  const hosts = longest.filter(isHostRoute);
  return { routes: hosts.length > 0 ? hosts : longest, notImported };
}

/** The port an extra route's (first) next hop names in the route's VPN, or why there is none. */
export function resolveNextHop(
  index: HoldingsIndex,
  route: VpnRoute,
): { port: string; nextHop: string } | { why: string } {
  const nextHop = route.adjacency.nextHopIpList?.[0];
  if (nextHop === undefined) return { why: `extra route ${route.adjacency.ipAddress} has no next hop` };
  const port = index.routes.find(
    (r) => r.vpn === route.vpn && isHostRoute(r) && hostOf(r.adjacency.ipAddress) === hostOf(nextHop),
  );
  if (!port)
    return {
      why: `extra route ${route.adjacency.ipAddress}'s next hop ${nextHop} is no port's adjacency in VPN ${route.vpn}: vpnmanager cannot resolve it`,
    };
  return { port: port.vpnInterface, nextHop };
}
