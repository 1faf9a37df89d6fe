/**
 * The `iface-id` the agent puts on a pod's and on the node gateway's OVS port: the name of the
 * ietf-interface ODL binds the port by, so it must be the name the watcher's backend makes ODL
 * use.
 *
 * - `netvirt`: the watcher writes the interfaces itself, named `<namespace>:<pod>` and
 *   `odlcoe-gw.<node>` (src/netvirt/names.ts).
 * - `coe-northbound`: NetVirt Sodium's COE renderer makes them from the watcher's pod entries
 *   and names them `<cluster-id>:<pod name>` (src/netvirt/coe/gateway.ts has the source); the
 *   gateway's pod entry is named `odlcoe-gw.<node>`, and its port is marked
 *   `is-service-gateway`, which is what makes the renderer route Services through it.
 *
 * Under `coe-northbound` the iface-id does not name the namespace, so every pod port also
 * records `<namespace>/<pod>` in `external_ids:odlcoe-pod` (src/ovs/external-ids.ts), which is
 * what the agent's own reconcile reads.
 */
import { coeInterfaceName } from '../netvirt/coe/gateway.js';
import { gatewayName, interfaceName } from '../netvirt/names.js';

export type IfaceNaming = { backend: 'netvirt' } | { backend: 'coe-northbound'; clusterName: string };

export function podIfaceId(naming: IfaceNaming, namespace: string, pod: string): string {
  return naming.backend === 'coe-northbound'
    ? coeInterfaceName(naming.clusterName, pod)
    : interfaceName(namespace, pod);
}

export function gatewayIfaceId(naming: IfaceNaming, nodeName: string): string {
  return naming.backend === 'coe-northbound'
    ? coeInterfaceName(naming.clusterName, gatewayName(nodeName))
    : gatewayName(nodeName);
}

/** Whether the gateway port is marked for Sodium's COE renderer (`is-service-gateway`). */
export const marksServiceGateway = (naming: IfaceNaming): boolean => naming.backend === 'coe-northbound';
