/**
 * Kubernetes → NetVirt, as pure functions: plain Kubernetes objects and settings in, plain
 * desired ODL entries out. No I/O, no clock, no randomness: the same cluster view always gives
 * the same result, which is what makes reconciliation level-triggered and restarts harmless.
 *
 * Stateful inputs (namespace RDs, node subnets) are passed in explicitly; the watcher recovers
 * them from ODL and its own allocators.
 */
import type { V1Namespace, V1Node, V1Pod } from '@kubernetes/client-node';
import { isIP } from 'node:net';
import type { K8sNode } from './coe.js';
import type { ElanInstance, ElanInterface, SegmentType } from './elan.js';
import { ModelValidationError } from './errors.js';
import { IF_TYPE_L2VLAN, type Interface } from './interfaces.js';
import {
  nodeExternalIp,
  nodeHostName,
  nodeInternalIp,
  podAddress,
  podHasAnyAddress,
  podNetworkEligibility,
  type IpFamily,
} from './kube.js';
import {
  checkClusterName,
  cidrContains,
  clusterUuid,
  elanInstanceName,
  elanMarkerUid,
  gatewayIp,
  interfaceName,
  ownershipMarker,
  parseCidr,
  podMac,
  subnetId,
  vpnName,
} from './names.js';
import type { Profile } from './profile.js';
import { checkRouteDistinguisher, checkRouteTarget } from './route-distinguisher.js';
import type { IpAddressFamilyConfigured, VpnAddressFamily, VpnInstance, VpnInterface } from './vpn.js';

export interface TranslateSettings {
  /** DNS-1123 label; goes into every ownership marker. */
  clusterName: string;
  profile: Profile;
  /** The cluster route target every namespace VPN imports and exports (`vrfRTType both`). */
  routeTarget: string;
  /** ELAN segment type. ELANs are per node, so VXLAN is the only type that needs no provider network. */
  segmentType: Extract<SegmentType, 'vxlan'>;
  /** Address families routed through the VPNs, in preference order. Default `['ipv4']`. */
  ipFamilies?: readonly IpFamily[];
}

/** Everything one pod's translation depends on. */
export interface PodContext {
  /** The pod's node (by `spec.nodeName`), if known. */
  node?: V1Node;
  /** The pod's namespace, if known. */
  namespace?: V1Namespace;
  /** The node's pod subnet (CIDR), if assigned yet. */
  nodeSubnet?: string;
}

export type DeferralCode =
  | 'invalid-object'
  | 'namespace-unknown'
  | 'node-unknown'
  | 'node-without-internal-ip'
  | 'node-subnet-unknown'
  | 'node-subnet-invalid'
  | 'ip-outside-node-subnet'
  | 'no-address-of-routed-family';

/** Why (part of) a pod's desired state cannot be computed now. Existing ODL state must be kept. */
export interface Deferral {
  code: DeferralCode;
  message: string;
}

/** Where an on-network pod attaches: its namespace, its node and the ELAN of the two. */
export interface PodAttachment {
  namespace: string;
  podName: string;
  podUid: string;
  nodeName: string;
  /** The node's InternalIP (as odlcoe picks it), which names the ELAN. */
  nodeIp: string;
  interfaceName: string;
  elanInstanceName: string;
}

export interface PodNetwork extends PodAttachment {
  vpnName: string;
  /** The routed pod address, once the pod has one. */
  address?: string;
  interface: Interface;
  elanInterface: ElanInterface;
  /** Present once the pod has an address and its node subnet is known. */
  vpnInterface?: VpnInterface;
  /**
   * Set when the vpn-interface cannot be computed although the pod has an address: the
   * reconciler must leave any existing vpn-interface alone (neither update nor delete it).
   */
  vpnInterfaceDeferred?: Deferral;
}

export type PodTranslation =
  /** Nothing of this pod belongs in ODL (any existing objects named for it are stale). */
  | { state: 'off-network'; reason: string }
  /** The pod is (probably) on the network but its objects cannot be computed: keep what exists. */
  | { state: 'deferred'; deferral: Deferral; namespace?: string; interfaceName?: string }
  | { state: 'on-network'; network: PodNetwork };

function families(settings: TranslateSettings): readonly IpFamily[] {
  const f = settings.ipFamilies ?? ['ipv4'];
  if (f.length === 0 || new Set(f).size !== f.length) {
    throw new ModelValidationError(
      'settings.ipFamilies',
      `must list ipv4 and/or ipv6 once each, got ${JSON.stringify(f)}`,
    );
  }
  return f;
}

/** Validates the settings once, with precise errors, before any object is built. */
export function checkTranslateSettings(settings: TranslateSettings): void {
  checkClusterName(settings.clusterName);
  checkRouteTarget(settings.routeTarget, 'settings.routeTarget');
  if (settings.segmentType !== 'vxlan') {
    throw new ModelValidationError(
      'settings.segmentType',
      `only vxlan is supported, got ${JSON.stringify(settings.segmentType)}`,
    );
  }
  families(settings);
}

function meta(obj: { metadata?: { name?: string; namespace?: string; uid?: string } }): {
  name?: string;
  namespace?: string;
  uid?: string;
} {
  return obj.metadata ?? {};
}

/**
 * The first half of `translatePod`: whether the pod is on the pod network, and where it
 * attaches, without building its objects (cheap enough to ask of every pod of a namespace).
 * `placed` exactly when `translatePod` gives `on-network` (unless a value of the pod fails
 * validation while its objects are built).
 */
export type PodPlacement =
  Exclude<PodTranslation, { state: 'on-network' }> | { state: 'placed'; attachment: PodAttachment };

export function placePod(pod: V1Pod, ctx: PodContext): PodPlacement {
  const { name, namespace, uid } = meta(pod);
  if (!name || !namespace || !uid) {
    return {
      state: 'deferred',
      deferral: { code: 'invalid-object', message: 'pod without metadata.name, namespace or uid' },
    };
  }
  const eligibility = podNetworkEligibility(pod);
  if (!eligibility.onNetwork) return { state: 'off-network', reason: eligibility.reason };
  const ifName = interfaceName(namespace, name);
  const nodeName = pod.spec?.nodeName ?? '';

  const defer = (code: DeferralCode, message: string): PodPlacement => ({
    state: 'deferred',
    deferral: { code, message },
    namespace,
    interfaceName: ifName,
  });
  if (!ctx.namespace || meta(ctx.namespace).name !== namespace || !meta(ctx.namespace).uid) {
    return defer('namespace-unknown', `namespace ${namespace} is not known yet`);
  }
  if (!ctx.node || meta(ctx.node).name !== nodeName)
    return defer('node-unknown', `node ${nodeName} is not known yet`);
  const nodeIp = nodeInternalIp(ctx.node);
  if (!nodeIp) return defer('node-without-internal-ip', `node ${nodeName} has no InternalIP address`);
  return {
    state: 'placed',
    attachment: {
      namespace,
      podName: name,
      podUid: uid,
      nodeName,
      nodeIp,
      interfaceName: ifName,
      elanInstanceName: elanInstanceName(nodeIp, namespace),
    },
  };
}

/** The objects one pod needs in ODL (or why it needs none, or why they cannot be known yet). */
export function translatePod(pod: V1Pod, ctx: PodContext, settings: TranslateSettings): PodTranslation {
  const placement = placePod(pod, ctx);
  if (placement.state !== 'placed') return placement;
  const at = placement.attachment;
  const marker = ownershipMarker(settings.clusterName, 'pod', at.podUid);
  const network: PodNetwork = {
    ...at,
    vpnName: vpnName(at.namespace),
    interface: {
      name: at.interfaceName,
      type: IF_TYPE_L2VLAN,
      enabled: true,
      l2vlanMode: 'trunk',
      // YANG default true, Genius reads absence as false: say what is meant (an internal port),
      // so neither a reader that honours defaults nor one that does not gets it wrong.
      external: false,
      description: marker,
    },
    elanInterface: { name: at.interfaceName, elanInstanceName: at.elanInstanceName, description: marker },
  };

  const address = podAddress(pod, families(settings));
  if (address === undefined) {
    if (podHasAnyAddress(pod)) {
      network.vpnInterfaceDeferred = {
        code: 'no-address-of-routed-family',
        message: `pod has no address of the routed families (${families(settings).join(', ')})`,
      };
    }
    return { state: 'on-network', network };
  }
  const mac = podMac(address);
  network.address = address;
  network.elanInterface.staticMacEntries = [{ macAddress: mac, ipPrefix: address }];

  const subnet = ctx.nodeSubnet;
  if (subnet === undefined) {
    network.vpnInterfaceDeferred = {
      code: 'node-subnet-unknown',
      message: `pod subnet of node ${at.nodeName} is not known yet`,
    };
    return { state: 'on-network', network };
  }
  try {
    parseCidr(subnet);
  } catch (err) {
    if (!(err instanceof ModelValidationError)) throw err;
    network.vpnInterfaceDeferred = {
      code: 'node-subnet-invalid',
      message: `node ${at.nodeName}: ${err.message}`,
    };
    return { state: 'on-network', network };
  }
  if (!cidrContains(subnet, address)) {
    network.vpnInterfaceDeferred = {
      code: 'ip-outside-node-subnet',
      message: `pod address ${address} is outside node ${at.nodeName}'s pod subnet ${subnet}`,
    };
    return { state: 'on-network', network };
  }
  const v6 = isIP(address) === 6;
  network.vpnInterface = {
    name: at.interfaceName,
    vpnInstanceNames: [{ vpnName: network.vpnName, associatedSubnetType: v6 ? 'V6Subnet' : 'V4Subnet' }],
    routerInterface: false,
    adjacencies: [
      {
        ipAddress: `${address}/${v6 ? 128 : 32}`,
        macAddress: mac,
        adjacencyType: 'primary-adjacency',
        subnetId: subnetId(at.nodeIp),
        subnetGatewayIp: gatewayIp(subnet),
      },
    ],
  };
  return { state: 'on-network', network };
}

// ---------------------------------------------------------------------------------------------
// instance needs: the rules `translateCluster` and the watcher's per-key reconcilers share

/**
 * What one pod means to the instances pods attach to (its namespace's VPN, its node × namespace
 * ELAN):
 * - `none`: not on the pod network (or naming no namespace): it needs no instance;
 * - `attached`: it needs its namespace's VPN and the ELAN `elanInstanceName` (on `nodeName`);
 * - `unplaced`: on the network, but its namespace or node (or the node's InternalIP) is not
 *   known yet, so the ELAN it will use cannot be named: its namespace's instances are kept.
 */
export type InstanceUse =
  | { use: 'none' }
  | { use: 'attached'; namespace: string; nodeName: string; elanInstanceName: string }
  | { use: 'unplaced'; namespace: string };

/** The instance use of a pod, from its translation or (cheaper) its placement. */
export function instanceUse(t: PodTranslation | PodPlacement): InstanceUse {
  switch (t.state) {
    case 'off-network':
      return { use: 'none' };
    case 'deferred':
      return t.namespace === undefined ? { use: 'none' } : { use: 'unplaced', namespace: t.namespace };
    case 'placed':
    case 'on-network': {
      const a = t.state === 'placed' ? t.attachment : t.network;
      return {
        use: 'attached',
        namespace: a.namespace,
        nodeName: a.nodeName,
        elanInstanceName: a.elanInstanceName,
      };
    }
  }
}

/**
 * Whether an instance (VPN, ELAN) must exist:
 * - `desired`: yes, as translated;
 * - `keep`: cannot be known yet (a pod it may serve is not placed): leave what ODL holds,
 *   neither create nor delete it;
 * - `unneeded`: no pod needs it (the watcher deletes it after the grace period).
 */
export type InstanceNeed = 'desired' | 'keep' | 'unneeded';

/**
 * The VPN of `namespace`: needed while any pod of it is on the network (placed or not), and
 * kept, not built, while the namespace object itself is not known yet (its uid goes into the
 * marker). `uses` may include pods of other namespaces.
 */
export function vpnInstanceNeed(
  namespace: string,
  namespaceKnown: boolean,
  uses: Iterable<InstanceUse>,
): InstanceNeed {
  for (const u of uses)
    if (u.use !== 'none' && u.namespace === namespace) return namespaceKnown ? 'desired' : 'keep';
  return 'unneeded';
}

/**
 * Whether every ELAN of `namespace` must be kept: a pod of it is on the network but cannot be
 * placed yet, so the ELAN it will use (named by its node's address) cannot be named.
 */
export function keepsElansOf(namespace: string, uses: Iterable<InstanceUse>): boolean {
  for (const u of uses) if (u.use === 'unplaced' && u.namespace === namespace) return true;
  return false;
}

/** The ELAN `elanInstanceName` of `namespace` on one node: needed by the pods attached to it. */
export function elanInstanceNeed(
  elanInstanceName: string,
  namespace: string,
  uses: readonly InstanceUse[],
): InstanceNeed {
  if (uses.some((u) => u.use === 'attached' && u.elanInstanceName === elanInstanceName)) return 'desired';
  return keepsElansOf(namespace, uses) ? 'keep' : 'unneeded';
}

/**
 * The VPN of a namespace. Sodium: `type l3` and `l3vni 0` written explicitly (0 = not an
 * L3VPN-over-VXLAN/EVPN instance; the COE renderer wrote the same), RD and route target in
 * `ipv4-family` (and `ipv6-family` when IPv6 is routed), the marker in `description`.
 * Aluminium: `bgpvpn-type InternalVPN` (the default, BGPVPN, makes NetVirt treat it as a BGP
 * VPN to be advertised through a DC gateway; internal VPNs are what NetVirt uses for routers
 * within the cloud), `l2vpn false` and `ip-address-family-configured` explicit; Aluminium's
 * vpn-instance has no description leaf, so it carries no marker (see ownership.ts).
 */
export function translateVpnInstance(
  namespace: V1Namespace,
  routeDistinguisher: string,
  settings: TranslateSettings,
): VpnInstance {
  const { name, uid } = meta(namespace);
  if (!name || !uid) throw new ModelValidationError('namespace', 'namespace without metadata.name or uid');
  checkRouteDistinguisher(routeDistinguisher, `route distinguisher of namespace ${name}`);
  const fams = families(settings);
  const target = { value: settings.routeTarget, type: 'both' as const };
  if (settings.profile === 'sodium') {
    const family = (): VpnAddressFamily => ({
      routeDistinguishers: [routeDistinguisher],
      vpnTargets: [{ ...target }],
    });
    const v: VpnInstance = {
      profile: 'sodium',
      name: vpnName(name),
      type: 'l3',
      l3vni: 0,
      description: ownershipMarker(settings.clusterName, 'namespace', uid),
    };
    if (fams.includes('ipv4')) v.ipv4Family = family();
    if (fams.includes('ipv6')) v.ipv6Family = family();
    return v;
  }
  const configured: IpAddressFamilyConfigured =
    fams.length === 2 ? 'ipv4-and-ipv6' : fams[0] === 'ipv6' ? 'ipv6' : 'ipv4';
  return {
    profile: 'aluminium',
    name: vpnName(name),
    routeDistinguishers: [routeDistinguisher],
    vpnTargets: [target],
    l2vpn: false,
    bgpvpnType: 'InternalVPN',
    ipAddressFamilyConfigured: configured,
  };
}

/**
 * The ELAN of a namespace on a node. `external false` explicitly (an internal network, as the
 * COE renderer wrote it). No `segmentation-id`: these ELANs never span nodes (traffic between
 * nodes is routed through the namespace VPN), and ELAN manager keys an ELAN without a VNI by
 * the `elan-tag` it allocates uniquely, so no cluster-wide VNI allocator is needed.
 */
export function translateElanInstance(
  node: V1Node,
  namespace: V1Namespace,
  settings: TranslateSettings,
): ElanInstance {
  const nodeUid = meta(node).uid;
  const { name: ns, uid: nsUid } = meta(namespace);
  const nodeIp = nodeInternalIp(node);
  if (!nodeUid || !nodeIp)
    throw new ModelValidationError(
      `node ${meta(node).name ?? '?'}`,
      'needs a uid and an InternalIP for an ELAN',
    );
  if (!ns || !nsUid) throw new ModelValidationError('namespace', 'namespace without metadata.name or uid');
  return {
    name: elanInstanceName(nodeIp, ns),
    segmentType: settings.segmentType,
    external: false,
    description: ownershipMarker(settings.clusterName, 'node-namespace', elanMarkerUid(nodeUid, nsUid)),
  };
}

/** The k8s-node entry of a node (keyed by node UID); `pod-cidr` once the node has a subnet. */
export function translateNode(
  node: V1Node,
  nodeSubnet: string | undefined,
  settings: TranslateSettings,
): K8sNode {
  const uid = meta(node).uid;
  if (!uid) throw new ModelValidationError(`node ${meta(node).name ?? '?'}`, 'node without metadata.uid');
  const n: K8sNode = { uid, clusterId: clusterUuid(settings.clusterName) };
  const hostName = nodeHostName(node);
  if (hostName) n.hostName = hostName;
  const internal = nodeInternalIp(node);
  if (internal) n.internalIpAddress = internal;
  const external = nodeExternalIp(node);
  if (external) n.externalIpAddress = external;
  if (nodeSubnet !== undefined) {
    const { network, prefixLength } = parseCidr(nodeSubnet);
    n.podCidr = `${network}/${prefixLength}`;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------
// the whole cluster

export interface ClusterView {
  nodes: readonly V1Node[];
  namespaces: readonly V1Namespace[];
  pods: readonly V1Pod[];
  /** namespace name → RD (from `allocateRouteDistinguishers`). */
  routeDistinguishers: ReadonlyMap<string, string>;
  /** node name → pod subnet CIDR. */
  nodeSubnets: ReadonlyMap<string, string>;
}

/** Names whose desired state is unknown right now: garbage collection must leave them alone. */
export interface KeptNames {
  interfaces: Set<string>;
  elanInterfaces: Set<string>;
  vpnInterfaces: Set<string>;
  vpnInstances: Set<string>;
  /**
   * Namespaces with a pod whose ELAN cannot be named (its node is unknown or has no
   * InternalIP): keep every elan-instance of ours named `<ip>:<namespace>` for them.
   */
  elanNamespaces: Set<string>;
}

export interface DesiredState {
  interfaces: Map<string, Interface>;
  elanInterfaces: Map<string, ElanInterface>;
  vpnInterfaces: Map<string, VpnInterface>;
  elanInstances: Map<string, ElanInstance>;
  vpnInstances: Map<string, VpnInstance>;
  /** By node UID. */
  k8sNodes: Map<string, K8sNode>;
  pods: Map<string, PodTranslation>;
  /** Pods (by `namespace/name`) and nodes whose state could not be fully computed, and why. */
  deferred: { object: string; deferral: Deferral }[];
  keep: KeptNames;
}

/** Namespaces that need a VPN: those with at least one pod on the pod network. */
export function namespacesNeedingVpn(pods: readonly V1Pod[]): Set<string> {
  const out = new Set<string>();
  for (const pod of pods) {
    const ns = pod.metadata?.namespace;
    if (ns && pod.metadata?.name && podNetworkEligibility(pod).onNetwork) out.add(ns);
  }
  return out;
}

function byName<T extends { metadata?: { name?: string } }>(items: readonly T[]): Map<string, T> {
  const m = new Map<string, T>();
  for (const item of items) if (item.metadata?.name) m.set(item.metadata.name, item);
  return m;
}

/**
 * Desired ODL state for the whole cluster. Throws (ModelValidationError) only for bad settings
 * or a missing RD of a namespace that needs a VPN (allocate first, with namespacesNeedingVpn);
 * a single odd Kubernetes object is reported in `deferred`, never allowed to block the rest.
 */
export function translateCluster(view: ClusterView, settings: TranslateSettings): DesiredState {
  checkTranslateSettings(settings);
  const nodes = byName(view.nodes);
  const namespaces = byName(view.namespaces);
  const out: DesiredState = {
    interfaces: new Map(),
    elanInterfaces: new Map(),
    vpnInterfaces: new Map(),
    elanInstances: new Map(),
    vpnInstances: new Map(),
    k8sNodes: new Map(),
    pods: new Map(),
    deferred: [],
    keep: {
      interfaces: new Set(),
      elanInterfaces: new Set(),
      vpnInterfaces: new Set(),
      vpnInstances: new Set(),
      elanNamespaces: new Set(),
    },
  };
  const elanNeeds = new Map<string, { node: V1Node; namespace: V1Namespace }>();
  /** Instance uses of the pods, by namespace. */
  const uses = new Map<string, InstanceUse[]>();
  const use = (u: InstanceUse) => {
    if (u.use === 'none') return;
    const list = uses.get(u.namespace);
    if (list) list.push(u);
    else uses.set(u.namespace, [u]);
  };

  const pods = [...view.pods].sort((a, b) => podKey(a).localeCompare(podKey(b)));
  for (const pod of pods) {
    const key = podKey(pod);
    const nodeName = pod.spec?.nodeName;
    const ns = pod.metadata?.namespace;
    const nodeSubnet = nodeName ? view.nodeSubnets.get(nodeName) : undefined;
    const ctx: PodContext = {};
    const node = nodeName ? nodes.get(nodeName) : undefined;
    const namespace = ns ? namespaces.get(ns) : undefined;
    if (node) ctx.node = node;
    if (namespace) ctx.namespace = namespace;
    if (nodeSubnet !== undefined) ctx.nodeSubnet = nodeSubnet;
    let t: PodTranslation;
    try {
      t = translatePod(pod, ctx, settings);
    } catch (err) {
      if (!(err instanceof ModelValidationError)) throw err;
      t = { state: 'deferred', deferral: { code: 'invalid-object', message: err.message } };
      if (ns && pod.metadata?.name)
        Object.assign(t, { namespace: ns, interfaceName: interfaceName(ns, pod.metadata.name) });
    }
    out.pods.set(key, t);
    if (t.state === 'off-network') continue;
    if (t.state === 'deferred') {
      out.deferred.push({ object: `pod ${key}`, deferral: t.deferral });
      if (t.interfaceName) {
        out.keep.interfaces.add(t.interfaceName);
        out.keep.elanInterfaces.add(t.interfaceName);
        out.keep.vpnInterfaces.add(t.interfaceName);
      }
      use(instanceUse(t));
      continue;
    }
    const n = t.network;
    if (out.interfaces.has(n.interface.name)) {
      // Cannot happen with a consistent cache (names are unique per namespace); never let one pod overwrite another.
      out.deferred.push({
        object: `pod ${key}`,
        deferral: { code: 'invalid-object', message: `interface name ${n.interface.name} already taken` },
      });
      continue;
    }
    out.interfaces.set(n.interface.name, n.interface);
    out.elanInterfaces.set(n.elanInterface.name, n.elanInterface);
    if (n.vpnInterface) out.vpnInterfaces.set(n.vpnInterface.name, n.vpnInterface);
    if (n.vpnInterfaceDeferred) {
      out.deferred.push({ object: `pod ${key}`, deferral: n.vpnInterfaceDeferred });
      out.keep.vpnInterfaces.add(n.interface.name);
    }
    if (node && namespace) elanNeeds.set(n.elanInstanceName, { node, namespace });
    use(instanceUse(t));
  }

  for (const [name, { node, namespace }] of [...elanNeeds].sort(([a], [b]) => a.localeCompare(b))) {
    out.elanInstances.set(name, translateElanInstance(node, namespace, settings));
  }
  for (const ns of [...uses.keys()].sort()) {
    const nsUses = uses.get(ns) ?? [];
    if (keepsElansOf(ns, nsUses)) out.keep.elanNamespaces.add(ns);
    const namespace = namespaces.get(ns);
    const need = vpnInstanceNeed(ns, namespace !== undefined, nsUses);
    if (need === 'keep') out.keep.vpnInstances.add(vpnName(ns));
    if (need !== 'desired' || !namespace) continue;
    const rd = view.routeDistinguishers.get(ns);
    if (rd === undefined) {
      throw new ModelValidationError(
        `route distinguisher of namespace ${ns}`,
        'not allocated (allocate for namespacesNeedingVpn() before translating)',
      );
    }
    const vpn = translateVpnInstance(namespace, rd, settings);
    out.vpnInstances.set(vpn.name, vpn);
  }
  for (const node of [...view.nodes].sort((a, b) =>
    (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
  )) {
    const name = node.metadata?.name ?? '';
    try {
      const entry = translateNode(node, view.nodeSubnets.get(name), settings);
      out.k8sNodes.set(entry.uid, entry);
    } catch (err) {
      if (!(err instanceof ModelValidationError)) throw err;
      out.deferred.push({
        object: `node ${name}`,
        deferral: { code: 'invalid-object', message: err.message },
      });
    }
  }
  return out;
}

function podKey(pod: V1Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}
