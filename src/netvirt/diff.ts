/**
 * The owned-leaf diff: given the desired entry (from translation) and the actual one (parsed
 * from ODL), decide what to write. Only the leaves odlcoe owns are compared; what ODL adds to
 * our entries (`elan-tag`, `mac-timeout`, `parent-interface`, `learnt-ip` adjacencies, unknown
 * members) never causes a write, and every planned write carries it forward.
 *
 * Write strategy per kind (RESTCONF has no compare-and-set, so the safest write is the one that
 * does not touch what ODL writes concurrently):
 * - ietf-interface, elan-instance, elan-interface, Sodium/Aluminium vpn-instance:
 *   PUT of the whole entry = desired owned leaves + every other leaf of the actual entry as
 *   read. ODL writes into these once, right after creation (elan-tag, mac-timeout,
 *   parent-interface); odlcoe updates them rarely (a marker after a pod was re-created), so the
 *   window for losing a concurrent addition is one read-modify-write after a rare event.
 * - vpn-interface: NetVirt keeps adding `learnt-ip` adjacencies at any time. When only the
 *   primary adjacency differs, the plan PUTs/DELETEs that adjacency entry alone and never
 *   rewrites the list; only a change of the entry's own leaves PUTs the entry (carrying every
 *   non-primary adjacency forward).
 * - vpn-instance whose RD changed: delete and create (`recreate`). vpnmanager keys all VPN state
 *   by RD and does not move it to a new one.
 * - vpn-interface whose VPN changed (an extra network's routing changed): delete and create
 *   (`recreate`), so that no adjacency of the old VPN is carried into the new one.
 */
import { carry, canonicalJson, decide, decisionName, type Decision, type DiffOptions } from './decision.js';
import { elanInstanceEntry, elanInterfaceEntry, type ElanInstance, type ElanInterface } from './elan.js';
import type { InterfaceAcl } from './acl.js';
import { interfaceEntry, type Interface } from './interfaces.js';
import { ip, prefix, sorted } from './canonical.js';
import {
  markerOwnership,
  vpnInstanceOwnership,
  elanMarkerKind,
  interfaceMarkerKind,
  vpnInterfaceOwnership,
  vpnRouteDistinguisher,
  type OwnerContext,
} from './ownership.js';
import { netvirtPaths } from './paths.js';
import { isGatewayName } from './names.js';
import {
  adjacencyEntry,
  vpnInstanceEntry,
  vpnInterfaceEntry,
  type Adjacency,
  type VpnAddressFamily,
  type VpnInstance,
  type VpnInterface,
  type VpnTarget,
} from './vpn.js';
import { deleteOp, putOp, type WriteOp } from './write.js';

const targets = (t: readonly VpnTarget[]) =>
  sorted(t, (x) => x.value)?.map((x) => ({ value: x.value, type: x.type }));
const family = (f: VpnAddressFamily | undefined) =>
  f && { rds: sorted(f.routeDistinguishers, (x) => x), targets: targets(f.vpnTargets) };

// ---------------------------------------------------------------------------------------------
// per kind

const INTERFACE_OWNED = ['type', 'enabled', 'l2vlanMode', 'external', 'description'] as const;
const INTERFACE_OWNED_WITH_ACL = [...INTERFACE_OWNED, 'acl'] as const;

/**
 * The interface-acl augment is odlcoe's only while it enforces NetworkPolicy, which the desired
 * entry says by carrying it: otherwise whatever port security someone else set stays.
 */
export function interfaceAclOwned(acl: InterfaceAcl | undefined): unknown {
  return (
    acl && {
      enabled: acl.portSecurityEnabled,
      groups: sorted(
        acl.securityGroups.map((g) => g.toLowerCase()),
        (g) => g,
      ),
      pairs: sorted(
        acl.allowedAddressPairs.map((p) => ({ mac: p.macAddress.toLowerCase(), ip: prefix(p.ipAddress) })),
        (p) => `${p.mac} ${p.ip}`,
      ),
      type: acl.interfaceType,
    }
  );
}

export function diffInterface(
  desired: Interface | undefined,
  actual: Interface | undefined,
  ctx: OwnerContext,
  opts: DiffOptions = {},
): Decision {
  const paths = netvirtPaths(ctx.profile);
  const ownsAcl = desired?.acl !== undefined;
  return decide<Interface>(
    {
      path: paths.interface,
      ownership: (a) => markerOwnership(a.description, interfaceMarkerKind(a.name), ctx),
      owned: (e) => ({
        type: e.type,
        enabled: e.enabled,
        'l2vlan-mode': e.l2vlanMode,
        external: e.external,
        description: e.description,
        'interface-acl': ownsAcl ? interfaceAclOwned(e.acl) : undefined,
      }),
      create: (d) => [putOp(paths.interface(d.name), interfaceEntry(d, ctx.profile))],
      update: (d, a) => ({
        action: 'update',
        writes: [
          putOp(
            paths.interface(d.name),
            interfaceEntry(carry(d, a, ownsAcl ? INTERFACE_OWNED_WITH_ACL : INTERFACE_OWNED), ctx.profile),
          ),
        ],
      }),
    },
    decisionName(desired, actual, (e) => e.name, opts),
    desired,
    actual,
    opts.keep === true,
  );
}

const ELAN_INSTANCE_OWNED = [
  'segmentType',
  'segmentationId',
  'physicalNetworkName',
  'external',
  'description',
] as const;

export function diffElanInstance(
  desired: ElanInstance | undefined,
  actual: ElanInstance | undefined,
  ctx: OwnerContext,
  opts: DiffOptions = {},
): Decision {
  const paths = netvirtPaths(ctx.profile);
  return decide<ElanInstance>(
    {
      path: paths.elanInstance,
      ownership: (a) => markerOwnership(a.description, elanMarkerKind(a.name), ctx),
      owned: (e) => ({
        'segment-type': e.segmentType,
        'segmentation-id': e.segmentationId,
        'physical-network-name': e.physicalNetworkName,
        external: e.external,
        description: e.description,
      }),
      create: (d) => [putOp(paths.elanInstance(d.name), elanInstanceEntry(d))],
      // elan-tag and mac-timeout (ELAN manager's) ride along unchanged.
      update: (d, a) => ({
        action: 'update',
        writes: [putOp(paths.elanInstance(d.name), elanInstanceEntry(carry(d, a, ELAN_INSTANCE_OWNED)))],
      }),
    },
    decisionName(desired, actual, (e) => e.name, opts),
    desired,
    actual,
    opts.keep === true,
  );
}

const ELAN_INTERFACE_OWNED = ['elanInstanceName', 'staticMacEntries', 'description'] as const;

export function diffElanInterface(
  desired: ElanInterface | undefined,
  actual: ElanInterface | undefined,
  ctx: OwnerContext,
  opts: DiffOptions = {},
): Decision {
  const paths = netvirtPaths(ctx.profile);
  return decide<ElanInterface>(
    {
      path: paths.elanInterface,
      ownership: (a) => markerOwnership(a.description, interfaceMarkerKind(a.name), ctx),
      owned: (e) => ({
        'elan-instance-name': e.elanInstanceName,
        'static-mac-entries': sorted(
          e.staticMacEntries?.map((m) => ({ mac: m.macAddress.toLowerCase(), ip: ip(m.ipPrefix) })),
          (m) => m.mac,
        ),
        description: e.description,
      }),
      create: (d) => [putOp(paths.elanInterface(d.name), elanInterfaceEntry(d))],
      update: (d, a) => ({
        action: 'update',
        writes: [putOp(paths.elanInterface(d.name), elanInterfaceEntry(carry(d, a, ELAN_INTERFACE_OWNED)))],
      }),
    },
    decisionName(desired, actual, (e) => e.name, opts),
    desired,
    actual,
    opts.keep === true,
  );
}

function vpnInstanceOwned(v: VpnInstance): Record<string, unknown> {
  if (v.profile === 'sodium') {
    return {
      type: v.type,
      l3vni: v.l3vni,
      description: v.description,
      'ipv4-family': family(v.ipv4Family),
      'ipv6-family': family(v.ipv6Family),
    };
  }
  return {
    'route-distinguisher': sorted(v.routeDistinguishers, (x) => x),
    vpnTargets: targets(v.vpnTargets),
    l2vpn: v.l2vpn,
    'bgpvpn-type': v.bgpvpnType,
    'ip-address-family-configured': v.ipAddressFamilyConfigured,
    l3vni: v.l3vni,
  };
}

/** Desired VPN with the actual entry's unowned parts (entry and family members) carried forward. */
function carryVpnInstance(d: VpnInstance, a: VpnInstance): VpnInstance {
  if (d.profile === 'sodium' && a.profile === 'sodium') {
    const fam = (df: VpnAddressFamily | undefined, af: VpnAddressFamily | undefined) =>
      df && (af?.preserved ? { ...df, preserved: af.preserved } : df);
    const merged = { ...d };
    if (a.preserved) merged.preserved = a.preserved;
    const v4 = fam(d.ipv4Family, a.ipv4Family);
    const v6 = fam(d.ipv6Family, a.ipv6Family);
    if (v4) merged.ipv4Family = v4;
    if (v6) merged.ipv6Family = v6;
    return merged;
  }
  return a.preserved ? { ...d, preserved: a.preserved } : d;
}

export function diffVpnInstance(
  desired: VpnInstance | undefined,
  actual: VpnInstance | undefined,
  ctx: OwnerContext,
  opts: DiffOptions = {},
): Decision {
  const paths = netvirtPaths(ctx.profile);
  for (const v of [desired, actual]) {
    if (v && v.profile !== ctx.profile)
      throw new Error(
        `vpn-instance ${v.name} is a ${v.profile} entry, the controller profile is ${ctx.profile}`,
      );
  }
  return decide<VpnInstance>(
    {
      path: paths.vpnInstance,
      ownership: (a) => vpnInstanceOwnership(a, ctx),
      owned: vpnInstanceOwned,
      create: (d) => [putOp(paths.vpnInstance(d.name), vpnInstanceEntry(d))],
      update: (d, a) => {
        const put = putOp(paths.vpnInstance(d.name), vpnInstanceEntry(carryVpnInstance(d, a)));
        const oldRd = vpnRouteDistinguisher(a);
        if (oldRd !== undefined && oldRd !== vpnRouteDistinguisher(d))
          return { action: 'recreate', writes: [deleteOp(paths.vpnInstance(d.name)), put] };
        return { action: 'update', writes: [put] };
      },
    },
    decisionName(desired, actual, (e) => e.name, opts),
    desired,
    actual,
    opts.keep === true,
  );
}

const isPrimary = (a: Adjacency) => a.adjacencyType === 'primary-adjacency';
// Members in sorted order: canonicalJson then has nothing to sort (a gateway has one per Service IP).
const adjacencyOwned = (a: Adjacency) => ({
  gateway: ip(a.subnetGatewayIp),
  ip: prefix(a.ipAddress),
  mac: a.macAddress?.toLowerCase(),
  nextHops: a.nextHopIpList,
  pnf: a.physNetworkFunc,
  subnet: a.subnetId?.toLowerCase(),
});

/**
 * vpn-interface. Owned: `vpn-instance-names`, `router-interface` and the primary adjacency
 * entries; learnt-ip and extra-route adjacencies, `dpn-id` and the rest belong to others.
 * On a node gateway's vpn-interface the extra routes are odlcoe's too (the Service routes).
 * `ietfInterface` is the actual ietf-interface of the same name (it carries the ownership).
 */
export function diffVpnInterface(
  desired: VpnInterface | undefined,
  actual: VpnInterface | undefined,
  ietfInterface: Interface | undefined,
  ctx: OwnerContext,
  opts: DiffOptions = {},
): Decision {
  const paths = netvirtPaths(ctx.profile);
  const name = (desired ?? actual)?.name ?? opts.name ?? '';
  const isOwnedAdjacency = isGatewayName(name)
    ? (x: Adjacency) => isPrimary(x) || (x.adjacencyType ?? 'extra-route') === 'extra-route'
    : isPrimary;
  const entryOwned = (e: VpnInterface) => ({
    'vpn-instance-names': sorted(
      e.vpnInstanceNames.map((n) => ({ name: n.vpnName, type: n.associatedSubnetType })),
      (n) => n.name,
    ),
    'router-interface': e.routerInterface,
  });
  return decide<VpnInterface>(
    {
      path: paths.vpnInterface,
      ownership: (a) => vpnInterfaceOwnership(a, ietfInterface, ctx),
      owned: (e) => ({
        ...entryOwned(e),
        adjacency: sorted(e.adjacencies.filter(isOwnedAdjacency).map(adjacencyOwned), (a) => a.ip),
      }),
      create: (d) => [putOp(paths.vpnInterface(d.name), vpnInterfaceEntry(ctx.profile, d))],
      update: (d, a, changed) => {
        const byKey = (list: Adjacency[]) => new Map(list.map((x) => [prefix(x.ipAddress), x]));
        const actualAll = byKey(a.adjacencies);
        const desiredPrimary = byKey(d.adjacencies.filter(isOwnedAdjacency));
        // Ours are replaced; anything ODL or a user added under another key rides along.
        const carried = a.adjacencies.filter(
          (x) => !isOwnedAdjacency(x) && !desiredPrimary.has(prefix(x.ipAddress)),
        );
        const withPreserved = (x: Adjacency): Adjacency => {
          const old = actualAll.get(prefix(x.ipAddress));
          return old?.preserved && isOwnedAdjacency(old) ? { ...x, preserved: old.preserved } : x;
        };
        const vpns = (e: VpnInterface) =>
          e.vpnInstanceNames
            .map((n) => n.vpnName)
            .sort()
            .join(',');
        if (vpns(a) !== vpns(d))
          // Another VPN (a network's routing changed): delete and create, so that nothing of the
          // old VPN rides along (learnt-ip adjacencies learnt there, extra routes) and vpnmanager
          // removes the interface from the old VPN before the new one takes its addresses,
          // instead of its in-place swap (which waits a fixed 2 s between the two).
          return {
            action: 'recreate',
            writes: [
              deleteOp(paths.vpnInterface(d.name)),
              putOp(paths.vpnInterface(d.name), vpnInterfaceEntry(ctx.profile, d)),
            ],
          };
        if (changed.some((c) => c !== 'adjacency')) {
          const merged: VpnInterface = {
            ...a,
            vpnInstanceNames: d.vpnInstanceNames,
            adjacencies: [...[...desiredPrimary.values()].map(withPreserved), ...carried],
          };
          if (d.routerInterface === undefined) delete merged.routerInterface;
          else merged.routerInterface = d.routerInterface;
          return {
            action: 'update',
            writes: [putOp(paths.vpnInterface(d.name), vpnInterfaceEntry(ctx.profile, merged))],
          };
        }
        const writes: WriteOp[] = [];
        for (const x of a.adjacencies.filter(isOwnedAdjacency)) {
          if (!desiredPrimary.has(prefix(x.ipAddress)))
            writes.push(deleteOp(paths.adjacency(d.name, x.ipAddress)));
        }
        for (const [key, x] of desiredPrimary) {
          const old = actualAll.get(key);
          if (
            !old ||
            !isOwnedAdjacency(old) ||
            canonicalJson(adjacencyOwned(old)) !== canonicalJson(adjacencyOwned(x))
          ) {
            const target = withPreserved(x);
            writes.push(
              putOp(
                paths.adjacency(d.name, old ? old.ipAddress : x.ipAddress),
                adjacencyEntry(old ? { ...target, ipAddress: old.ipAddress } : target),
              ),
            );
          }
        }
        return { action: 'update', writes };
      },
    },
    decisionName(desired, actual, (e) => e.name, opts),
    desired,
    actual,
    opts.keep === true,
  );
}
