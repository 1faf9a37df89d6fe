/**
 * ODL objects as odlcoectl names them to an operator: the model's own list names
 * (`ietf-interface`, `elan-instance`, ...), the URL an operator can GET to see the entry, and
 * whether an entry is this cluster's (src/netvirt/ownership.ts rules).
 */
import {
  k8sNodeOwnership,
  markerOwnership,
  netvirtPaths,
  vpnInstanceOwnership,
  vpnInterfaceOwnership,
  type OwnerContext,
  type Ownership,
  type Profile,
} from '../netvirt/index.js';
import type { RestconfClient } from '../restconf/client.js';
import type { DataPath } from '../restconf/path.js';
import type { OdlEntries, OdlKind, OdlState } from '../watcher/odl-state.js';

export const KIND_LABEL: Record<OdlKind, string> = {
  interface: 'ietf-interface',
  elanInstance: 'elan-instance',
  elanInterface: 'elan-interface',
  vpnInstance: 'vpn-instance',
  vpnInterface: 'vpn-interface',
  k8sNode: 'k8s-node',
};

/**
 * The order in which owned objects may be deleted: dependants first. The vpn-interface goes
 * before the ietf-interface of the same name (which is what makes it ours), interfaces before
 * the instances they name, k8s-node entries last (nothing refers to them in ODL).
 */
export const DELETE_ORDER: readonly OdlKind[] = [
  'vpnInterface',
  'elanInterface',
  'interface',
  'elanInstance',
  'vpnInstance',
  'k8sNode',
];

export function entryPath(profile: Profile, kind: OdlKind, name: string): DataPath {
  const p = netvirtPaths(profile);
  switch (kind) {
    case 'interface':
      return p.interface(name);
    case 'elanInstance':
      return p.elanInstance(name);
    case 'elanInterface':
      return p.elanInterface(name);
    case 'vpnInstance':
      return p.vpnInstance(name);
    case 'vpnInterface':
      return p.vpnInterface(name);
    case 'k8sNode':
      return p.k8sNode(name);
  }
}

/** The URL that reads the entry from ODL's config datastore (what `curl` would need). */
export function entryUrl(client: RestconfClient, profile: Profile, kind: OdlKind, name: string): string {
  return client.dataUrl(entryPath(profile, kind, name), 'config', 'GET');
}

/** Whether `entry` (of `kind`) is this cluster's. vpn-interfaces are owned through `ietf`. */
export function ownershipOf<K extends OdlKind>(
  kind: K,
  entry: OdlEntries[K],
  owner: OwnerContext,
  ietf: (name: string) => OdlEntries['interface'] | undefined,
): Ownership {
  switch (kind) {
    case 'interface':
      return markerOwnership((entry as OdlEntries['interface']).description, 'pod', owner);
    case 'elanInterface':
      return markerOwnership((entry as OdlEntries['elanInterface']).description, 'pod', owner);
    case 'elanInstance':
      return markerOwnership((entry as OdlEntries['elanInstance']).description, 'node-namespace', owner);
    case 'vpnInstance':
      return vpnInstanceOwnership(entry as OdlEntries['vpnInstance'], owner);
    case 'vpnInterface': {
      const v = entry as OdlEntries['vpnInterface'];
      return vpnInterfaceOwnership(v, ietf(v.name), owner);
    }
    case 'k8sNode':
      return k8sNodeOwnership(entry as OdlEntries['k8sNode'], owner);
  }
  throw new Error(`unknown ODL kind ${String(kind)}`);
}

/** The entries of `kind` in the snapshot that are this cluster's. */
export function ownedEntries<K extends OdlKind>(
  state: OdlState,
  kind: K,
  owner: OwnerContext,
): OdlEntries[K][] {
  const ietf = (name: string) => state.get('interface', name);
  return [...state.values(kind)].filter((e) => ownershipOf(kind, e, owner, ietf).owner === 'ours');
}
