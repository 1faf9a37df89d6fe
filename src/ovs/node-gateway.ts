/**
 * The node gateway's OVS port as Open vSwitch holds it: an internal port on the integration
 * bridge whose Interface external_ids carry the gateway interface the watcher writes into ODL
 * (`iface-id`, Genius binds the port by it), the MAC the watcher derived (`attached-mac`), its
 * address, and a key naming its node, by which the agent finds it again (pod ports have a
 * `container-id` instead, so the pod reconcile never takes it for one). The names and addresses themselves are the model's
 * (src/netvirt/gateway.ts); the agent puts them together (src/agent/node-gateway.ts).
 */
import { EXTERNAL_ID } from './external-ids.js';

/** The external_ids key that marks a node gateway port and names its node. */
export const NODE_GATEWAY_ID = 'odlcoe-node-gateway';
/**
 * The key NetVirt Sodium's COE renderer looks for (any value) to make a port a service gateway
 * (`CoeUtils.getSouthboundInterfaceDetails`): set only under the coe-northbound backend.
 */
export const SERVICE_GATEWAY_ID = 'is-service-gateway';

/** The Interface external_ids of a node gateway port. */
export function gatewayPortExternalIds(p: {
  nodeName: string;
  ifaceId: string;
  mac: string;
  address: string;
  serviceGateway?: boolean;
}): Record<string, string> {
  return {
    [EXTERNAL_ID.ifaceId]: p.ifaceId,
    [EXTERNAL_ID.attachedMac]: p.mac,
    [EXTERNAL_ID.ipAddress]: p.address,
    [NODE_GATEWAY_ID]: p.nodeName,
    ...(p.serviceGateway ? { [SERVICE_GATEWAY_ID]: 'true' } : {}),
  };
}
