/**
 * One pod → its ODL objects (ietf-interface, elan-interface, vpn-interface), as a pure
 * function: plain Kubernetes objects and settings in, plain desired entries out. No I/O, no
 * clock, no randomness: the same inputs always give the same result, which is what makes
 * reconciliation level-triggered and restarts harmless. The node subnet is an input (the
 * watcher recovers it from ODL or its allocator).
 */
import type { V1Namespace, V1Node, V1Pod } from '@kubernetes/client-node';
import { isIP } from 'node:net';
import type { ElanInterface } from './elan.js';
import { ModelValidationError } from './errors.js';
import { IF_TYPE_L2VLAN, type Interface } from './interfaces.js';
import { nodeInternalIp, podAddress, podHasAnyAddress, podNetworkEligibility } from './kube.js';
import {
  cidrContains,
  elanInstanceName,
  gatewayIp,
  interfaceName,
  ownershipMarker,
  parseCidr,
  podMac,
  subnetId,
  vpnName,
} from './names.js';
import { families, type TranslateSettings } from './translate-settings.js';
import type { VpnInterface } from './vpn.js';

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
  | 'no-address-of-routed-family'
  | 'no-address';

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

export interface PodOdlObjects extends PodAttachment {
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
  | { state: 'on-network'; network: PodOdlObjects };

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
  // The attachment's fields one by one, not spread: a literal of fixed shape is built fast, and
  // stays fast as the optional members are added (this runs for every pod at every resync).
  const network: PodOdlObjects = {
    namespace: at.namespace,
    podName: at.podName,
    podUid: at.podUid,
    nodeName: at.nodeName,
    nodeIp: at.nodeIp,
    interfaceName: at.interfaceName,
    elanInstanceName: at.elanInstanceName,
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
