/**
 * A node's gateway under the coe-northbound backend, in the form NetVirt Sodium's COE renderer
 * expects a service gateway (netvirt `stable/sodium:coe/impl/.../listeners/
 * TerminationPointStateListener.java`, `utils/CoeUtils.java`):
 *
 * - the renderer names every pod's interface `<cluster-id>:<pod name>`
 *   (`CoeUtils.buildInterfaceName(pods.getClusterId(), pods.getName())`, called by PodListener),
 *   and binds the OVS port whose `external_ids:iface-id` carries that name — so the agent uses
 *   the same name as iface-id under this backend (`coeInterfaceName`);
 * - a port that also carries `external_ids:is-service-gateway` (any value) becomes a
 *   `service-gateway` once its pod entry exists, and the renderer puts every Service's ClusterIP
 *   route on that port's vpn-interface itself (`ServiceListener`,
 *   `CoeUtils.updateVpnInterfaceWithExtraRouteAdjacency`).
 *
 * So the watcher writes one `pod:coe/pods` entry per node gateway: the gateway's address and
 * MAC (the same as under the netvirt backend: the node subnet's second address, the MAC derived
 * from it), the node's InternalIP as host, named `odlcoe-gw.<node>` in the `network-NS`
 * `odlcoe.node-gateways`. A `.` is never in a namespace name (a DNS-1123 label), so no pod of
 * the cluster can be mistaken for a gateway, whatever its name.
 */
import type { V1Node } from '@kubernetes/client-node';
import { ModelValidationError } from '../errors.js';
import { gatewayAddress } from '../gateway.js';
import { nodeInternalIp } from '../kube.js';
import { clusterUuid, gatewayName, nameUuidFromBytes, nodeOfGatewayName, podMac } from '../names.js';
import { coePodEntry, type CoePod } from './model.js';

/** The `network-NS` of gateway pod entries: not a possible namespace name. */
export const COE_GATEWAY_NAMESPACE = 'odlcoe.node-gateways';

/** The interface NetVirt Sodium's COE renderer makes for a pod entry, and the OVS iface-id it binds. */
export function coeInterfaceName(clusterName: string, podName: string): string {
  if (!podName) throw new ModelValidationError('pod name', 'empty');
  return `${clusterUuid(clusterName)}:${podName}`;
}

/** The uid of a node's gateway pod entry: stable per cluster and node uid. */
export function coeGatewayUid(clusterName: string, nodeUid: string): string {
  return nameUuidFromBytes(Buffer.from(`odlcoe:${clusterName}:node-gateway:${nodeUid}`, 'utf8'));
}

/** The node a pod entry is the gateway of (undefined: a pod's entry). */
export function nodeOfCoeGateway(entry: Pick<CoePod, 'networkNs' | 'name'>): string | undefined {
  return entry.networkNs === COE_GATEWAY_NAMESPACE && entry.name ? nodeOfGatewayName(entry.name) : undefined;
}

/**
 * The gateway pod entry of a node whose pod subnet is `podCidr`; throws ModelValidationError
 * when the node has no uid or InternalIP, or the subnet is too small to reserve the address.
 */
export function translateCoeGateway(node: V1Node, podCidr: string, clusterName: string): CoePod {
  const nodeName = node.metadata?.name ?? '';
  const uid = node.metadata?.uid;
  if (!uid) throw new ModelValidationError(`node ${nodeName}`, 'has no metadata.uid');
  const hostIp = nodeInternalIp(node);
  if (hostIp === undefined) throw new ModelValidationError(`node ${nodeName}`, 'has no InternalIP');
  const address = gatewayAddress(podCidr);
  const clusterId = clusterUuid(clusterName);
  const gatewayUid = coeGatewayUid(clusterName, uid);
  const entry: CoePod = {
    uid: gatewayUid,
    name: gatewayName(nodeName),
    clusterId,
    hostIpAddress: hostIp,
    networkNs: COE_GATEWAY_NAMESPACE,
    portMacAddress: podMac(address),
    interfaces: [{ uid: gatewayUid, ipAddress: address, networkId: clusterId, networkType: 'VXLAN' }],
  };
  coePodEntry(entry);
  return entry;
}
