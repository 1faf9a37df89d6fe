/**
 * The watcher's owned-leaf diff (src/netvirt) of the desired state against an ODL snapshot, for
 * every entry of one ODL kind, desired or present: what `gc` and `status` decide from.
 */
import {
  diffAll,
  diffElanInstance,
  diffElanInterface,
  diffInterface,
  diffK8sNode,
  diffVpnInstance,
  diffVpnInterface,
  type Decision,
  type DesiredState,
  type DiffOptions,
  type OwnerContext,
} from '../netvirt/index.js';
import type { OdlKind, OdlState } from '../watcher/odl-state.js';

/**
 * One decision per name of `kind` (sorted), as the watcher's diff makes it; names in `keep` are
 * not to be deleted even when nothing desires them.
 */
export function kindDecisions(
  kind: OdlKind,
  desired: DesiredState,
  odl: OdlState,
  owner: OwnerContext,
  keep: ReadonlySet<string> = new Set(),
): Decision[] {
  const byName = <T extends { name: string }>(
    want: ReadonlyMap<string, T>,
    have: Iterable<T>,
    diff: (d: T | undefined, a: T | undefined, o: DiffOptions) => Decision,
  ) => diffAll(want, have, (e) => e.name, diff, keep);
  switch (kind) {
    case 'interface':
      return byName(desired.interfaces, odl.values(kind), (d, a, o) => diffInterface(d, a, owner, o));
    case 'elanInterface':
      return byName(desired.elanInterfaces, odl.values(kind), (d, a, o) => diffElanInterface(d, a, owner, o));
    case 'vpnInterface':
      // A vpn-interface is owned through the ietf-interface of the same name.
      return byName(desired.vpnInterfaces, odl.values(kind), (d, a, o) =>
        diffVpnInterface(d, a, odl.get('interface', (d ?? a)?.name ?? ''), owner, o),
      );
    case 'elanInstance':
      return byName(desired.elanInstances, odl.values(kind), (d, a, o) => diffElanInstance(d, a, owner, o));
    case 'vpnInstance':
      return byName(desired.vpnInstances, odl.values(kind), (d, a, o) => diffVpnInstance(d, a, owner, o));
    case 'k8sNode':
      return diffAll(
        desired.k8sNodes,
        odl.values(kind),
        (n) => n.uid,
        (d, a, o) => diffK8sNode(d, a, owner, o),
        keep,
      );
  }
}
