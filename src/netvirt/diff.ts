/**
 * The owned-leaf diff: given the desired entry (from translation) and the actual one (parsed
 * from ODL), decide what to write. Only the leaves odlcoe owns are compared; what ODL adds to
 * our entries (`elan-tag`, `mac-timeout`, `parent-interface`, `learnt-ip` adjacencies, unknown
 * members) never causes a write, and every planned write carries it forward.
 *
 * Write strategy per kind (RESTCONF has no compare-and-set, so the safest write is the one that
 * does not touch what ODL writes concurrently):
 * - ietf-interface, elan-instance, elan-interface, Sodium/Aluminium vpn-instance, k8s-node:
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
 */
import type { DataPath } from '../restconf/path.js';
import { k8sNodeEntry, type K8sNode } from './coe.js';
import { elanInstanceEntry, elanInterfaceEntry, type ElanInstance, type ElanInterface } from './elan.js';
import { interfaceEntry, type Interface } from './interfaces.js';
import { canonicalIp } from './names.js';
import {
  k8sNodeOwnership,
  markerOwnership,
  vpnInstanceOwnership,
  vpnInterfaceOwnership,
  vpnRouteDistinguisher,
  type OwnerContext,
  type Ownership,
} from './ownership.js';
import { netvirtPaths } from './paths.js';
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

export type Decision =
  /** Absent in ODL: create it. */
  | { action: 'create'; name: string; writes: WriteOp[] }
  /** Ours, and owned leaves differ (`changed` names them). */
  | { action: 'update'; name: string; changed: string[]; writes: WriteOp[] }
  /** Ours, and a leaf that ODL cannot change in place differs: delete, then create. */
  | { action: 'recreate'; name: string; changed: string[]; writes: WriteOp[] }
  /** Nothing to do (equal, absent on both sides, or kept because its desired state is unknown). */
  | { action: 'none'; name: string }
  /** Ours and no longer desired. Garbage collection decides when (informers synced, grace period). */
  | { action: 'delete-candidate'; name: string; writes: WriteOp[] }
  /** Not ours: never written. `wanted` means odlcoe needs this name (a collision to report). */
  | { action: 'foreign'; name: string; wanted: boolean; reason: string };

// ---------------------------------------------------------------------------------------------
// comparison

/** A canonical JSON text: object members sorted, undefined members dropped. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${members.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Owned leaves (by YANG name) whose canonical values differ. */
export function changedLeaves(desired: Record<string, unknown>, actual: Record<string, unknown>): string[] {
  const names = new Set([...Object.keys(desired), ...Object.keys(actual)]);
  return [...names].filter((n) => canonicalJson(desired[n]) !== canonicalJson(actual[n])).sort();
}

const sorted = <T>(items: readonly T[] | undefined, key: (t: T) => string): T[] | undefined =>
  items === undefined || items.length === 0
    ? undefined
    : [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));

const ip = (value: string | undefined): string | undefined => {
  if (value === undefined) return undefined;
  try {
    return canonicalIp(value);
  } catch {
    return value;
  }
};

/** `10.0.0.5/32` and `fd00:0::5/128` spelled canonically, anything else as is. */
const prefix = (value: string): string => {
  const slash = value.lastIndexOf('/');
  return slash < 0
    ? (ip(value) ?? value)
    : `${ip(value.slice(0, slash)) ?? value.slice(0, slash)}${value.slice(slash)}`;
};

const targets = (t: readonly VpnTarget[]) =>
  sorted(t, (x) => x.value)?.map((x) => ({ value: x.value, type: x.type }));
const family = (f: VpnAddressFamily | undefined) =>
  f && { rds: sorted(f.routeDistinguishers, (x) => x), targets: targets(f.vpnTargets) };

// ---------------------------------------------------------------------------------------------
// the generic decision

interface Spec<T> {
  path(name: string): DataPath;
  ownership(actual: T): Ownership;
  owned(entry: T): Record<string, unknown>;
  create(desired: T): WriteOp[];
  update(desired: T, actual: T, changed: string[]): { action: 'update' | 'recreate'; writes: WriteOp[] };
}

function decide<T>(
  spec: Spec<T>,
  name: string,
  desired: T | undefined,
  actual: T | undefined,
  keep: boolean,
): Decision {
  if (actual === undefined)
    return desired === undefined
      ? { action: 'none', name }
      : { action: 'create', name, writes: spec.create(desired) };
  const ownership = spec.ownership(actual);
  if (ownership.owner === 'foreign')
    return { action: 'foreign', name, wanted: desired !== undefined, reason: ownership.reason };
  if (desired === undefined)
    return keep
      ? { action: 'none', name }
      : { action: 'delete-candidate', name, writes: [deleteOp(spec.path(name))] };
  const changed = changedLeaves(spec.owned(desired), spec.owned(actual));
  if (changed.length === 0) return { action: 'none', name };
  const { action, writes } = spec.update(desired, actual, changed);
  return { action, name, changed, writes };
}

/** Desired with the actual entry's non-owned leaves (everything not in `ownedKeys`) carried forward. */
function carry<T extends object>(desired: T, actual: T, ownedKeys: readonly (keyof T)[]): T {
  const merged = { ...actual };
  for (const key of ownedKeys) {
    if (desired[key] === undefined) delete merged[key];
    else merged[key] = desired[key];
  }
  return merged;
}

/**
 * The name a decision is about. Neither a desired nor an actual entry is a diff of nothing,
 * which decides `none` (nothing to write) under `opts.name`, or under no name ('').
 */
function nameOf(
  desired: { name: string } | undefined,
  actual: { name: string } | undefined,
  opts: DiffOptions,
): string {
  if (desired && actual && desired.name !== actual.name)
    throw new Error(`diff of different entries ${desired.name} and ${actual.name}`);
  return desired?.name ?? actual?.name ?? opts.name ?? '';
}

// ---------------------------------------------------------------------------------------------
// per kind

export interface DiffOptions {
  /** The desired state is unknown (a deferred pod): never delete. */
  keep?: boolean;
  /** The entry's name, for a decision when neither side is given (a caller diffing by name). */
  name?: string;
}

const INTERFACE_OWNED = ['type', 'enabled', 'l2vlanMode', 'external', 'description'] as const;

export function diffInterface(
  desired: Interface | undefined,
  actual: Interface | undefined,
  ctx: OwnerContext,
  opts: DiffOptions = {},
): Decision {
  const paths = netvirtPaths(ctx.profile);
  return decide<Interface>(
    {
      path: paths.interface,
      ownership: (a) => markerOwnership(a.description, 'pod', ctx),
      owned: (e) => ({
        type: e.type,
        enabled: e.enabled,
        'l2vlan-mode': e.l2vlanMode,
        external: e.external,
        description: e.description,
      }),
      create: (d) => [putOp(paths.interface(d.name), interfaceEntry(d))],
      update: (d, a) => ({
        action: 'update',
        writes: [putOp(paths.interface(d.name), interfaceEntry(carry(d, a, INTERFACE_OWNED)))],
      }),
    },
    nameOf(desired, actual, opts),
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
      ownership: (a) => markerOwnership(a.description, 'node-namespace', ctx),
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
    nameOf(desired, actual, opts),
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
      ownership: (a) => markerOwnership(a.description, 'pod', ctx),
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
    nameOf(desired, actual, opts),
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
    nameOf(desired, actual, opts),
    desired,
    actual,
    opts.keep === true,
  );
}

const isPrimary = (a: Adjacency) => a.adjacencyType === 'primary-adjacency';
const adjacencyOwned = (a: Adjacency) => ({
  ip: prefix(a.ipAddress),
  mac: a.macAddress?.toLowerCase(),
  subnet: a.subnetId?.toLowerCase(),
  gateway: ip(a.subnetGatewayIp),
  nextHops: a.nextHopIpList,
  pnf: a.physNetworkFunc,
});

/**
 * vpn-interface. Owned: `vpn-instance-names`, `router-interface` and the primary adjacency
 * entries; learnt-ip and extra-route adjacencies, `dpn-id` and the rest belong to others.
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
        adjacency: sorted(e.adjacencies.filter(isPrimary).map(adjacencyOwned), (a) => a.ip),
      }),
      create: (d) => [putOp(paths.vpnInterface(d.name), vpnInterfaceEntry(ctx.profile, d))],
      update: (d, a, changed) => {
        const byKey = (list: Adjacency[]) => new Map(list.map((x) => [prefix(x.ipAddress), x]));
        const actualAll = byKey(a.adjacencies);
        const desiredPrimary = byKey(d.adjacencies.filter(isPrimary));
        // Ours are replaced; anything ODL or a user added under another key rides along.
        const carried = a.adjacencies.filter(
          (x) => !isPrimary(x) && !desiredPrimary.has(prefix(x.ipAddress)),
        );
        const withPreserved = (x: Adjacency): Adjacency => {
          const old = actualAll.get(prefix(x.ipAddress));
          return old?.preserved && isPrimary(old) ? { ...x, preserved: old.preserved } : x;
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
        for (const x of a.adjacencies.filter(isPrimary)) {
          if (!desiredPrimary.has(prefix(x.ipAddress)))
            writes.push(deleteOp(paths.adjacency(d.name, x.ipAddress)));
        }
        for (const [key, x] of desiredPrimary) {
          const old = actualAll.get(key);
          if (
            !old ||
            !isPrimary(old) ||
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
    nameOf(desired, actual, opts),
    desired,
    actual,
    opts.keep === true,
  );
}

/**
 * k8s-node. `pod-cidr` is owned only when the desired entry has one: in the `odl` subnet mode
 * an ODL user writes it, and a watcher that does not know the subnet must not erase it.
 */
export function diffK8sNode(
  desired: K8sNode | undefined,
  actual: K8sNode | undefined,
  ctx: OwnerContext,
  opts: DiffOptions = {},
): Decision {
  const paths = netvirtPaths(ctx.profile);
  const podCidrOwned = desired?.podCidr !== undefined;
  const owned = [
    'clusterId',
    'hostName',
    'externalIpAddress',
    'internalIpAddress',
    ...(podCidrOwned ? (['podCidr'] as const) : []),
  ] as const;
  const node = (n: K8sNode | undefined) => n && { ...n, name: n.uid };
  const d = node(desired);
  const a = node(actual);
  return decide<K8sNode & { name: string }>(
    {
      path: paths.k8sNode,
      ownership: (x) => k8sNodeOwnership(x, ctx),
      owned: (e) => ({
        'cluster-id': e.clusterId?.toLowerCase(),
        'host-name': e.hostName,
        'external-ip-address': ip(e.externalIpAddress),
        'internal-ip-address': ip(e.internalIpAddress),
        'pod-cidr': podCidrOwned ? e.podCidr : undefined,
      }),
      create: (x) => [putOp(paths.k8sNode(x.uid), k8sNodeEntry(strip(x)))],
      update: (x, y) => ({
        action: 'update',
        writes: [putOp(paths.k8sNode(x.uid), k8sNodeEntry(strip(carry(x, y, owned))))],
      }),
    },
    nameOf(d, a, opts),
    d,
    a,
    opts.keep === true,
  );
}

function strip(n: K8sNode & { name: string }): K8sNode {
  const { name: _name, ...rest } = n;
  return rest;
}

/**
 * Decisions for a whole kind: every desired name and every actual entry, sorted by name.
 * `diffOne` is one of the per-kind functions with its context bound; `keep` holds names whose
 * desired state is unknown (DesiredState.keep), which are never deleted.
 */
export function diffAll<T>(
  desired: ReadonlyMap<string, T>,
  actual: Iterable<T>,
  keyOf: (entry: T) => string,
  diffOne: (desired: T | undefined, actual: T | undefined, opts: DiffOptions) => Decision,
  keep: ReadonlySet<string> = new Set(),
): Decision[] {
  const actualByKey = new Map<string, T>();
  for (const a of actual) actualByKey.set(keyOf(a), a);
  const keys = [...new Set([...desired.keys(), ...actualByKey.keys()])].sort();
  return keys.map((k) => diffOne(desired.get(k), actualByKey.get(k), { keep: keep.has(k) }));
}
