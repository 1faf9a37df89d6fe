import {
  putElanInstance,
  putElanInterface,
  putInterface,
  putK8sNode,
  putVpnInstance,
  putVpnInterface,
  type DesiredState,
  type Profile,
  type WriteOp,
} from '../../src/netvirt/index.js';
import { putDhcpNetwork } from '../../src/netvirt/dhcp.js';

/**
 * Every write of a desired state, in dependency order (what refers to what): node networks and
 * k8s-node entries (nothing) → vpn-instance → elan-instance → ietf-interface → elan-interface (→ elan-instance, interface)
 * → vpn-interface (→ vpn-instance, and owned through the ietf-interface of the same name), as
 * the watcher writes a cluster into an empty ODL. `kind` is the model's list name.
 */
export function desiredWrites(profile: Profile, d: DesiredState): { kind: string; op: WriteOp }[] {
  const tag = <T>(kind: string, items: Iterable<T>, build: (v: T) => WriteOp) =>
    [...items].map((v) => ({ kind, op: build(v) }));
  return [
    ...tag('dhcp-network', d.nodeNetworks.values(), (v) => putDhcpNetwork(profile, v)),
    ...tag('k8s-node', d.k8sNodes.values(), (v) => putK8sNode(profile, v)),
    ...tag('vpn-instance', d.vpnInstances.values(), (v) => putVpnInstance(profile, v)),
    ...tag('elan-instance', d.elanInstances.values(), (v) => putElanInstance(profile, v)),
    ...tag('interface', d.interfaces.values(), (v) => putInterface(profile, v)),
    ...tag('elan-interface', d.elanInterfaces.values(), (v) => putElanInterface(profile, v)),
    ...tag('vpn-interface', d.vpnInterfaces.values(), (v) => putVpnInterface(profile, v)),
  ];
}
