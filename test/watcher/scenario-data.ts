/**
 * The acceptance scenario, written out by hand: 3 nodes, 3 namespaces, 20 pods; then pods
 * a6, a7 deleted and namespace gamma deleted. The expected ODL content is built from these
 * literal tables only (names, IPs, MACs, subnet UUIDs, RDs), never by odlcoe's own code: the
 * UUIDs below were computed independently (Java's UUID.nameUUIDFromBytes, by Python's hashlib).
 * Only the UIDs the API server hands out are filled in at run time.
 */
import type { Profile } from '../../src/netvirt/profile.js';
import type { OdlLists } from './testing.js';

export const NODES = [
  {
    name: 'node-a',
    ip: '192.168.10.11',
    podCIDR: '10.244.1.0/24',
    gateway: '10.244.1.1',
    subnetId: 'e6fa3bcd-d869-3bef-b219-d47f6c886add',
  },
  {
    name: 'node-b',
    ip: '192.168.10.12',
    podCIDR: '10.244.2.0/24',
    gateway: '10.244.2.1',
    subnetId: 'b4f95666-b280-3025-bb3f-28b028266387',
  },
  {
    name: 'node-c',
    ip: '192.168.10.13',
    podCIDR: '10.244.3.0/24',
    gateway: '10.244.3.1',
    subnetId: '1bf6e83d-9be1-3871-858a-360447b18e16',
  },
] as const;

/** `UUID.nameUUIDFromBytes("odlcoe:test")`. */
export const CLUSTER_ID = 'd5b7c83d-b362-3bde-86d5-f509e6ca8560';

export const NAMESPACES = ['alpha', 'beta', 'gamma'] as const;

export interface PodRow {
  ns: string;
  name: string;
  node: string;
  ip: string;
  mac: string;
  hostNetwork?: boolean;
  /** Deleted in the scenario (alone or with its namespace). */
  deleted?: boolean;
}

export const PODS: PodRow[] = [
  { ns: 'alpha', name: 'a0', node: 'node-a', ip: '10.244.1.10', mac: '0a:58:0a:f4:01:0a' },
  { ns: 'alpha', name: 'a1', node: 'node-b', ip: '10.244.2.10', mac: '0a:58:0a:f4:02:0a' },
  { ns: 'alpha', name: 'a2', node: 'node-c', ip: '10.244.3.10', mac: '0a:58:0a:f4:03:0a' },
  { ns: 'alpha', name: 'a3', node: 'node-a', ip: '10.244.1.11', mac: '0a:58:0a:f4:01:0b' },
  { ns: 'alpha', name: 'a4', node: 'node-b', ip: '10.244.2.11', mac: '0a:58:0a:f4:02:0b' },
  { ns: 'alpha', name: 'a5', node: 'node-c', ip: '10.244.3.11', mac: '0a:58:0a:f4:03:0b' },
  { ns: 'alpha', name: 'a6', node: 'node-a', ip: '10.244.1.12', mac: '0a:58:0a:f4:01:0c', deleted: true },
  { ns: 'alpha', name: 'a7', node: 'node-b', ip: '10.244.2.12', mac: '0a:58:0a:f4:02:0c', deleted: true },
  { ns: 'beta', name: 'b0', node: 'node-a', ip: '10.244.1.20', mac: '0a:58:0a:f4:01:14' },
  { ns: 'beta', name: 'b1', node: 'node-b', ip: '10.244.2.20', mac: '0a:58:0a:f4:02:14' },
  { ns: 'beta', name: 'b2', node: 'node-c', ip: '10.244.3.20', mac: '0a:58:0a:f4:03:14' },
  { ns: 'beta', name: 'b3', node: 'node-a', ip: '10.244.1.21', mac: '0a:58:0a:f4:01:15' },
  { ns: 'beta', name: 'b4', node: 'node-b', ip: '10.244.2.21', mac: '0a:58:0a:f4:02:15' },
  { ns: 'beta', name: 'b5', node: 'node-c', ip: '10.244.3.21', mac: '0a:58:0a:f4:03:15' },
  // Host network: nothing in ODL, ever.
  { ns: 'beta', name: 'b6', node: 'node-a', ip: '192.168.10.11', mac: '', hostNetwork: true },
  { ns: 'gamma', name: 'g0', node: 'node-a', ip: '10.244.1.30', mac: '0a:58:0a:f4:01:1e', deleted: true },
  { ns: 'gamma', name: 'g1', node: 'node-b', ip: '10.244.2.30', mac: '0a:58:0a:f4:02:1e', deleted: true },
  { ns: 'gamma', name: 'g2', node: 'node-c', ip: '10.244.3.30', mac: '0a:58:0a:f4:03:1e', deleted: true },
  { ns: 'gamma', name: 'g3', node: 'node-a', ip: '10.244.1.31', mac: '0a:58:0a:f4:01:1f', deleted: true },
  { ns: 'gamma', name: 'g4', node: 'node-b', ip: '10.244.2.31', mac: '0a:58:0a:f4:02:1f', deleted: true },
];

/** RDs: namespaces get their VPNs in this order (the test waits for each before the next). */
export const RDS: Record<string, string> = { alpha: '64512:1', beta: '64512:2', gamma: '64512:3' };

/** The ELANs that remain: every node × {alpha, beta}. */
export const ELANS = [
  { name: '192.168.10.11:alpha', node: 'node-a', ns: 'alpha' },
  { name: '192.168.10.11:beta', node: 'node-a', ns: 'beta' },
  { name: '192.168.10.12:alpha', node: 'node-b', ns: 'alpha' },
  { name: '192.168.10.12:beta', node: 'node-b', ns: 'beta' },
  { name: '192.168.10.13:alpha', node: 'node-c', ns: 'alpha' },
  { name: '192.168.10.13:beta', node: 'node-c', ns: 'beta' },
];

export interface Uids {
  nodes: Record<string, string>;
  namespaces: Record<string, string>;
  pods: Record<string, string>;
}

const nodeRow = (name: string) => {
  const n = NODES.find((x) => x.name === name);
  if (!n) throw new Error(`no node ${name}`);
  return n;
};

/** What ODL must hold after the scenario, entry by entry, as ODL returns entries. */
export function expectedOdl(profile: Profile, uids: Uids, coe = profile === 'sodium'): OdlLists {
  const pods = PODS.filter((p) => !p.deleted && !p.hostNetwork).sort((a, b) =>
    `${a.ns}:${a.name}`.localeCompare(`${b.ns}:${b.name}`),
  );
  const marker = (kind: string, uid: string | undefined) => `odlcoe:test:${kind}:${uid}`;
  const adjacencyMember = profile === 'sodium' ? 'odl-l3vpn:adjacency' : 'adjacency';
  return {
    interface: pods.map((p) => ({
      name: `${p.ns}:${p.name}`,
      type: 'iana-if-type:l2vlan',
      enabled: true,
      description: marker('pod', uids.pods[`${p.ns}/${p.name}`]),
      'odl-interface:l2vlan-mode': 'trunk',
      'odl-interface:external': false,
    })),
    'elan-instance': ELANS.map((e) => ({
      'elan-instance-name': e.name,
      'segment-type': 'elan:segment-type-vxlan',
      external: false,
      description: marker('node-namespace', `${uids.nodes[e.node]}/${uids.namespaces[e.ns]}`),
      'elan-tag': 'TAG',
      'mac-timeout': 300,
    })),
    'elan-interface': pods.map((p) => ({
      name: `${p.ns}:${p.name}`,
      'elan-instance-name': `${nodeRow(p.node).ip}:${p.ns}`,
      'static-mac-entries': [{ 'mac-address': p.mac, 'ip-prefix': p.ip }],
      description: marker('pod', uids.pods[`${p.ns}/${p.name}`]),
    })),
    'vpn-instance': ['alpha', 'beta'].map((ns) =>
      profile === 'sodium'
        ? {
            'vpn-instance-name': ns,
            type: 'l3',
            l3vni: 0,
            description: marker('namespace', uids.namespaces[ns]),
            'ipv4-family': {
              'route-distinguisher': [RDS[ns]],
              vpnTargets: { vpnTarget: [{ vrfRTValue: '64512:1', vrfRTType: 'both' }] },
            },
          }
        : {
            'vpn-instance-name': ns,
            'route-distinguisher': [RDS[ns]],
            vpnTargets: { vpnTarget: [{ vrfRTValue: '64512:1', vrfRTType: 'both' }] },
            l2vpn: false,
            'bgpvpn-type': 'InternalVPN',
            'ip-address-family-configured': 'ipv4',
          },
    ),
    'vpn-interface': pods.map((p) => ({
      name: `${p.ns}:${p.name}`,
      'vpn-instance-names': [{ 'vpn-name': p.ns, 'associated-subnet-type': 'V4Subnet' }],
      'router-interface': false,
      [adjacencyMember]: [
        {
          ip_address: `${p.ip}/32`,
          adjacency_type: 'primary-adjacency',
          mac_address: p.mac,
          subnet_id: nodeRow(p.node).subnetId,
          subnet_gateway_ip: nodeRow(p.node).gateway,
        },
      ],
    })),
    // Only where ODL has the COE models (Sodium with COE).
    'k8s-nodes': (coe
      ? NODES.map((n) => ({
          uid: uids.nodes[n.name],
          'cluster-id': CLUSTER_ID,
          'host-name': n.name,
          'internal-ip-address': n.ip,
          'pod-cidr': n.podCIDR,
        }))
      : []
    ).sort((a, b) => String(a.uid).localeCompare(String(b.uid))),
    // Every release: the node networks the agents read their subnet from.
    'dhcp-network': NODES.map((n) => ({
      'network-id': `odlcoe-node:${n.name}`,
      'allocation-pool': [
        {
          subnet: n.podCIDR,
          'allocate-from': n.podCIDR.replace(/0\/24$/, '2'),
          'allocate-to': n.podCIDR.replace(/0\/24$/, '254'),
          gateway: n.gateway,
        },
      ],
    })).sort((a, b) => a['network-id'].localeCompare(b['network-id'])),
  } as OdlLists;
}

/** ODL's elan-tags are allocated in creation order: check they are distinct numbers, then mask them. */
export function maskElanTags(lists: OdlLists): OdlLists {
  const tags = lists['elan-instance'].map((e) => e['elan-tag']);
  for (const t of tags) if (typeof t !== 'number') throw new Error(`elan-tag ${String(t)} is not a number`);
  if (new Set(tags).size !== tags.length) throw new Error(`elan-tags are not distinct: ${tags.join(', ')}`);
  return { ...lists, 'elan-instance': lists['elan-instance'].map((e) => ({ ...e, 'elan-tag': 'TAG' })) };
}
