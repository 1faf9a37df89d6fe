/**
 * The instances pods attach to: a VPN per namespace and an ELAN per node × namespace. When
 * each is needed (the rules every planner shares: the watcher's per-key plans, the whole-cluster
 * fold, odlcoectl) and what it holds.
 */
import type { V1Namespace, V1Node } from '@kubernetes/client-node';
import type { ElanInstance } from './elan.js';
import { ModelValidationError } from './errors.js';
import { nodeInternalIp } from './kube.js';
import { elanInstanceName, elanMarkerUid, ownershipMarker, vpnName } from './names.js';
import { checkRouteDistinguisher } from './route-distinguisher.js';
import type { PodPlacement, PodTranslation } from './translate-pod.js';
import { families, type TranslateSettings } from './translate-settings.js';
import type { IpAddressFamilyConfigured, VpnAddressFamily, VpnInstance } from './vpn.js';

function meta(obj: { metadata?: { name?: string; namespace?: string; uid?: string } }): {
  name?: string;
  namespace?: string;
  uid?: string;
} {
  return obj.metadata ?? {};
}

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
  return vpnInstanceOf(
    vpnName(name),
    [routeDistinguisher],
    ownershipMarker(settings.clusterName, 'namespace', uid),
    settings,
  );
}

/**
 * A VPN with these RDs and the cluster route target, in the profile's shape (see
 * translateVpnInstance); `marker` goes into Sodium's description (Aluminium has none).
 */
export function vpnInstanceOf(
  name: string,
  rds: readonly string[],
  marker: string,
  settings: TranslateSettings,
): VpnInstance {
  const fams = families(settings);
  const target = { value: settings.routeTarget, type: 'both' as const };
  if (settings.profile === 'sodium') {
    const family = (): VpnAddressFamily => ({
      routeDistinguishers: [...rds],
      vpnTargets: [{ ...target }],
    });
    const v: VpnInstance = { profile: 'sodium', name, type: 'l3', l3vni: 0, description: marker };
    if (fams.includes('ipv4')) v.ipv4Family = family();
    if (fams.includes('ipv6')) v.ipv6Family = family();
    return v;
  }
  const configured: IpAddressFamilyConfigured =
    fams.length === 2 ? 'ipv4-and-ipv6' : fams[0] === 'ipv6' ? 'ipv6' : 'ipv4';
  return {
    profile: 'aluminium',
    name,
    routeDistinguishers: [...rds],
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
