/**
 * Which ODL entries are odlcoe's (this cluster's). Only those are ever updated or deleted;
 * anything else with a colliding name is reported as foreign.
 *
 * Most entries carry the marker `odlcoe:<cluster>:<kind>:<uid>` in `description`. Three kinds
 * have no description leaf and are owned through something else:
 * - vpn-interface: through the ietf-interface of the same name (its `name` is a leafref to
 *   it). Create the ietf-interface before the vpn-interface and delete it after.
 * - Aluminium vpn-instance: through its signature, exactly one RD under this cluster's RD
 *   administrator, exactly the cluster route target (`both`) and `bgpvpn-type InternalVPN`.
 *   Operators must give each cluster its own RD administrator (or number range) on a shared
 *   controller; two clusters sharing one would also share a routing domain.
 * The gateway VPN (gateway.ts) is owned like a namespace VPN, except that it carries one RD
 * per node gateway (all under the cluster's RD administrator) and its Sodium marker is of kind
 * `gateway-vpn`. A node gateway's entries carry `node-gateway` markers.
 * (k8s-node entries: k8s-node.ts; COE entries: coe/ownership.ts.)
 */
import {
  GATEWAY_VPN,
  isGatewayName,
  type MarkerKind,
  type OwnershipMarker,
  parseOwnershipMarker,
  vpnName,
} from './names.js';
import type { Interface } from './interfaces.js';
import { isNetworkInstanceName } from './network-names.js';
import type { Profile } from './profile.js';
import { parseRouteDistinguisher } from './route-distinguisher.js';
import type { VpnInstance, VpnInterface } from './vpn.js';

export interface OwnerContext {
  clusterName: string;
  profile: Profile;
  /** The cluster route target (Aluminium VPN ownership). */
  routeTarget: string;
  /** The RD administrator the cluster allocates under (Aluminium VPN ownership). */
  rdAdministrator: string;
  /**
   * The key planning a desired ACL of this cluster, where NetworkPolicy is enforced (its name
   * is a hash: the watcher learns the owners from the ACL plans). Undefined, or undefined for
   * a name: the sweep key `network-policy`, which removes what nothing needs.
   */
  aclKey?(name: string): string | undefined;
}

export type Ownership = { owner: 'ours'; marker?: OwnershipMarker } | { owner: 'foreign'; reason: string };

/** Ownership by the description marker. */
export function markerOwnership(
  description: string | undefined,
  kind: MarkerKind,
  ctx: OwnerContext,
): Ownership {
  const marker = parseOwnershipMarker(description);
  if (!marker)
    return {
      owner: 'foreign',
      reason:
        description === undefined
          ? 'no description (no odlcoe marker)'
          : `description ${JSON.stringify(description)} is not an odlcoe marker`,
    };
  if (marker.clusterName !== ctx.clusterName)
    return { owner: 'foreign', reason: `owned by odlcoe cluster ${marker.clusterName}` };
  if (marker.kind !== kind)
    return { owner: 'foreign', reason: `marker of kind ${marker.kind}, expected ${kind}` };
  return { owner: 'ours', marker };
}

/** The marker kind an interface (or ELAN) of this name carries: a node gateway's or a pod's. */
export const interfaceMarkerKind = (name: string): MarkerKind =>
  isGatewayName(name) ? 'node-gateway' : 'pod';

const administratorOf = (rd: string): string | undefined => {
  try {
    return parseRouteDistinguisher(rd).administrator;
  } catch {
    return undefined;
  }
};

/** The marker kind an ELAN of this name carries. */
export const elanMarkerKind = (name: string): MarkerKind =>
  isGatewayName(name) ? 'node-gateway' : isNetworkInstanceName(name) ? 'network' : 'node-namespace';

/**
 * A network's VPN (network-names.ts): Sodium by its `network` marker; Aluminium by its
 * signature, one RD under the cluster's RD administrator, that RD as its only route target
 * (`both`), `InternalVPN`.
 */
function networkVpnOwnership(v: VpnInstance, ctx: OwnerContext): Ownership {
  if (v.profile === 'sodium') return markerOwnership(v.description, 'network', ctx);
  const [rd, ...moreRds] = v.routeDistinguishers;
  if (rd === undefined || moreRds.length > 0 || administratorOf(rd) !== ctx.rdAdministrator)
    return {
      owner: 'foreign',
      reason: `route distinguishers [${v.routeDistinguishers.join(', ')}] are not one RD under ${ctx.rdAdministrator}`,
    };
  const [target, ...moreTargets] = v.vpnTargets;
  if (!target || target.value !== rd || target.type !== 'both' || moreTargets.length > 0)
    return { owner: 'foreign', reason: `route targets are not exactly its RD ${rd} (both)` };
  if (v.bgpvpnType !== 'InternalVPN')
    return { owner: 'foreign', reason: `bgpvpn-type ${v.bgpvpnType ?? '(absent)'} is not InternalVPN` };
  return { owner: 'ours' };
}

export function vpnInstanceOwnership(v: VpnInstance, ctx: OwnerContext): Ownership {
  if (isNetworkInstanceName(v.name)) return networkVpnOwnership(v, ctx);
  const gateway = v.name === GATEWAY_VPN;
  if (v.profile === 'sodium')
    return markerOwnership(v.description, gateway ? 'gateway-vpn' : 'namespace', ctx);
  const rds = v.routeDistinguishers;
  const [target, ...moreTargets] = v.vpnTargets;
  const underUs = rds.length > 0 && rds.every((rd) => administratorOf(rd) === ctx.rdAdministrator);
  if (!underUs || (!gateway && rds.length > 1)) {
    return {
      owner: 'foreign',
      reason: `route distinguishers [${rds.join(', ')}] are not ${gateway ? 'RDs' : 'one RD'} under ${ctx.rdAdministrator}`,
    };
  }
  if (!target || target.value !== ctx.routeTarget || target.type !== 'both' || moreTargets.length > 0) {
    return { owner: 'foreign', reason: `route targets are not exactly ${ctx.routeTarget} (both)` };
  }
  if (v.bgpvpnType !== 'InternalVPN')
    return { owner: 'foreign', reason: `bgpvpn-type ${v.bgpvpnType ?? '(absent)'} is not InternalVPN` };
  return { owner: 'ours' };
}

/** A vpn-interface is ours when the ietf-interface of the same name is. */
export function vpnInterfaceOwnership(
  v: VpnInterface,
  ietfInterface: Interface | undefined,
  ctx: OwnerContext,
): Ownership {
  if (!ietfInterface || ietfInterface.name !== v.name)
    return { owner: 'foreign', reason: `no ietf-interface ${v.name} to establish ownership` };
  const o = markerOwnership(ietfInterface.description, interfaceMarkerKind(v.name), ctx);
  return o.owner === 'ours' ? o : { owner: 'foreign', reason: `ietf-interface ${v.name}: ${o.reason}` };
}

/** The RD of a VPN as written by odlcoe (Sodium: the ipv4-family's, else the ipv6-family's). */
export function vpnRouteDistinguisher(v: VpnInstance): string | undefined {
  if (v.profile === 'aluminium') return v.routeDistinguishers[0];
  return v.ipv4Family?.routeDistinguishers[0] ?? v.ipv6Family?.routeDistinguishers[0];
}

/** Every RD of a VPN, in its configured order (the gateway VPN has one per node). */
export function vpnRouteDistinguishers(v: VpnInstance): string[] {
  return v.profile === 'aluminium'
    ? v.routeDistinguishers
    : [...(v.ipv4Family?.routeDistinguishers ?? []), ...(v.ipv6Family?.routeDistinguishers ?? [])];
}

/**
 * The `existing` input of allocateRouteDistinguishers, recovered from the VPNs in ODL: for
 * each of this cluster's VPNs, namespace → RD when the VPN is named for one of `namespaces`,
 * otherwise `vpn-instance:<name>` → RD (a VPN awaiting garbage collection still holds its RD).
 */
export function recoverRouteDistinguishers(
  actual: Iterable<VpnInstance>,
  namespaces: Iterable<string>,
  ctx: OwnerContext,
): Map<string, string> {
  const byVpnName = new Map<string, string>();
  for (const ns of namespaces) byVpnName.set(vpnName(ns), ns);
  const out = new Map<string, string>();
  for (const v of actual) {
    if (vpnInstanceOwnership(v, ctx).owner !== 'ours') continue;
    const rd = vpnRouteDistinguisher(v);
    if (rd === undefined) continue;
    out.set(byVpnName.get(v.name) ?? `vpn-instance:${v.name}`, rd);
  }
  return out;
}
