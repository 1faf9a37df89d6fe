import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodePath } from '../restconf/path.js';
import { diffAll, type Decision } from './decision.js';
import {
  diffElanInstance,
  diffElanInterface,
  diffInterface,
  diffVpnInstance,
  diffVpnInterface,
} from './diff.js';
import { diffK8sNode, type K8sNode } from './k8s-node.js';
import type { ElanInstance, ElanInterface } from './elan.js';
import type { Interface } from './interfaces.js';
import { recoverRouteDistinguishers, type OwnerContext } from './ownership.js';
import type { VpnInstance, VpnInterface } from './vpn.js';

const sodium: OwnerContext = {
  clusterName: 'prod',
  profile: 'sodium',
  routeTarget: '64512:100',
  rdAdministrator: '64512',
};
const aluminium: OwnerContext = { ...sodium, profile: 'aluminium' };
const U1 = 'bbbbbbbb-0000-4000-8000-00000000000b';
const U2 = 'cccccccc-0000-4000-8000-00000000000c';
const M1 = `odlcoe:prod:pod:${U1}`;
const M2 = `odlcoe:prod:pod:${U2}`;
const SUBNET = 'e1618560-81d4-3072-9c57-0b10e6cf83a8';

/** Writes as (method, bierman02 URL, body) triples, the way they reach the wire. */
function wire(d: Decision): unknown[] {
  if (!('writes' in d)) return [];
  return d.writes.map((w) =>
    w.op === 'put'
      ? ['PUT', encodePath(w.path, 'bierman02'), w.body]
      : ['DELETE', encodePath(w.path, 'bierman02')],
  );
}

const desiredIf: Interface = {
  name: 'default:nginx-1',
  type: 'iana-if-type:l2vlan',
  enabled: true,
  l2vlanMode: 'trunk',
  external: false,
  description: M2,
};
const actualIf: Interface = {
  name: 'default:nginx-1',
  type: 'iana-if-type:l2vlan',
  enabled: true,
  l2vlanMode: 'trunk',
  external: false,
  description: M1,
  parentInterface: 'veth0a0b0c0d',
  preserved: { 'odl-interface:node-identifier': [{ 'topology-id': 'ovsdb:1', 'node-id': 'n1' }] },
};

describe('diff: ietf-interface', () => {
  it('creates a missing interface with exactly the desired body', () => {
    const d = diffInterface(desiredIf, undefined, sodium);
    assert.equal(d.action, 'create');
    assert.deepEqual(wire(d), [
      [
        'PUT',
        'ietf-interfaces:interfaces/interface/default:nginx-1',
        {
          'ietf-interfaces:interface': [
            {
              name: 'default:nginx-1',
              type: 'iana-if-type:l2vlan',
              enabled: true,
              description: M2,
              'odl-interface:l2vlan-mode': 'trunk',
              'odl-interface:external': false,
            },
          ],
        },
      ],
    ]);
  });

  it("ignores Genius's parent-interface and unknown members", () => {
    assert.deepEqual(diffInterface({ ...desiredIf, description: M1 }, actualIf, sodium), {
      action: 'none',
      name: 'default:nginx-1',
    });
  });

  it('updates the marker of a re-created pod, carrying what Genius wrote', () => {
    const d = diffInterface(desiredIf, actualIf, sodium);
    assert.equal(d.action, 'update');
    assert.deepEqual(d.action === 'update' && d.changed, ['description']);
    assert.deepEqual(wire(d), [
      [
        'PUT',
        'ietf-interfaces:interfaces/interface/default:nginx-1',
        {
          'ietf-interfaces:interface': [
            {
              name: 'default:nginx-1',
              type: 'iana-if-type:l2vlan',
              enabled: true,
              description: M2,
              'odl-interface:parent-interface': 'veth0a0b0c0d',
              'odl-interface:l2vlan-mode': 'trunk',
              'odl-interface:external': false,
              'odl-interface:node-identifier': [{ 'topology-id': 'ovsdb:1', 'node-id': 'n1' }],
            },
          ],
        },
      ],
    ]);
  });

  it('writes an owned leaf that ODL lacks (external absent means false to Genius, true to YANG)', () => {
    const { external: _e, ...noExternal } = actualIf;
    const d = diffInterface({ ...desiredIf, description: M1 }, noExternal, sodium);
    assert.deepEqual(d.action === 'update' && d.changed, ['external']);
  });

  it("never touches an interface without this cluster's marker", () => {
    assert.deepEqual(
      diffInterface(desiredIf, { ...actualIf, description: undefined as unknown as string }, sodium),
      {
        action: 'foreign',
        name: 'default:nginx-1',
        wanted: true,
        reason: 'no description (no odlcoe marker)',
      },
    );
    const other = diffInterface(desiredIf, { ...actualIf, description: `odlcoe:staging:pod:${U1}` }, sodium);
    assert.deepEqual(other, {
      action: 'foreign',
      name: 'default:nginx-1',
      wanted: true,
      reason: 'owned by odlcoe cluster staging',
    });
    const kind = diffInterface(
      undefined,
      { ...actualIf, description: `odlcoe:prod:namespace:${U1}` },
      sodium,
    );
    assert.deepEqual(kind, {
      action: 'foreign',
      name: 'default:nginx-1',
      wanted: false,
      reason: 'marker of kind namespace, expected pod',
    });
  });

  it('proposes deleting an unwanted interface of ours, unless its desired state is unknown', () => {
    const d = diffInterface(undefined, actualIf, sodium);
    assert.deepEqual(wire(d), [['DELETE', 'ietf-interfaces:interfaces/interface/default:nginx-1']]);
    assert.equal(d.action, 'delete-candidate');
    assert.deepEqual(diffInterface(undefined, actualIf, sodium, { keep: true }), {
      action: 'none',
      name: 'default:nginx-1',
    });
  });
});

describe('diff: elan', () => {
  const EM = `odlcoe:prod:node-namespace:${U1}/${U2}`;
  const desired: ElanInstance = {
    name: '192.168.56.101:default',
    segmentType: 'vxlan',
    external: false,
    description: EM,
  };

  it("ignores ELAN manager's elan-tag and mac-timeout, and carries them into an update", () => {
    const actual: ElanInstance = { ...desired, elanTag: 5001, macTimeout: 300 };
    assert.equal(diffElanInstance(desired, actual, sodium).action, 'none');
    const d = diffElanInstance(
      { ...desired, description: `odlcoe:prod:node-namespace:${U2}/${U2}` },
      actual,
      sodium,
    );
    assert.deepEqual(wire(d), [
      [
        'PUT',
        'elan:elan-instances/elan-instance/192.168.56.101:default',
        {
          'elan:elan-instance': [
            {
              'elan-instance-name': '192.168.56.101:default',
              'elan-tag': 5001,
              'segment-type': 'elan:segment-type-vxlan',
              external: false,
              'mac-timeout': 300,
              description: `odlcoe:prod:node-namespace:${U2}/${U2}`,
            },
          ],
        },
      ],
    ]);
  });

  it('elan-interface: MACs compare case-insensitively; a re-created pod without IP loses the old entry', () => {
    const actual: ElanInterface = {
      name: 'default:nginx-1',
      elanInstanceName: 'e',
      staticMacEntries: [{ macAddress: '0A:58:0A:0B:01:05', ipPrefix: '10.11.1.5' }],
      description: M1,
    };
    const same: ElanInterface = {
      ...actual,
      staticMacEntries: [{ macAddress: '0a:58:0a:0b:01:05', ipPrefix: '10.11.1.5' }],
    };
    assert.equal(diffElanInterface(same, actual, sodium).action, 'none');
    const fresh: ElanInterface = { name: 'default:nginx-1', elanInstanceName: 'e', description: M2 };
    const d = diffElanInterface(fresh, actual, sodium);
    assert.deepEqual(d.action === 'update' && d.changed, ['description', 'static-mac-entries']);
    assert.deepEqual(wire(d), [
      [
        'PUT',
        'elan:elan-interfaces/elan-interface/default:nginx-1',
        { 'elan:elan-interface': [{ name: 'default:nginx-1', 'elan-instance-name': 'e', description: M2 }] },
      ],
    ]);
  });
});

describe('diff: vpn-instance', () => {
  const NM = `odlcoe:prod:namespace:${U1}`;
  const desired: VpnInstance = {
    profile: 'sodium',
    name: 'default',
    type: 'l3',
    l3vni: 0,
    description: NM,
    ipv4Family: { routeDistinguishers: ['64512:1'], vpnTargets: [{ value: '64512:100', type: 'both' }] },
  };

  it('Sodium: unowned family members are ignored and carried; an RT change is an update', () => {
    const actual: VpnInstance = {
      ...desired,
      ipv4Family: { ...desired.ipv4Family!, preserved: { 'apply-label': { 'apply-label-per-route': true } } },
    };
    assert.equal(diffVpnInstance(desired, actual, sodium).action, 'none');
    const changed: VpnInstance = {
      ...desired,
      ipv4Family: {
        routeDistinguishers: ['64512:1'],
        vpnTargets: [
          { value: '64512:100', type: 'both' },
          { value: '64512:200', type: 'export_extcommunity' },
        ],
      },
    };
    const d = diffVpnInstance(changed, actual, sodium);
    assert.deepEqual(d.action === 'update' && d.changed, ['ipv4-family']);
    assert.deepEqual(wire(d), [
      [
        'PUT',
        'l3vpn:vpn-instances/vpn-instance/default',
        {
          'l3vpn:vpn-instance': [
            {
              'vpn-instance-name': 'default',
              type: 'l3',
              l3vni: 0,
              description: NM,
              'ipv4-family': {
                'route-distinguisher': ['64512:1'],
                vpnTargets: {
                  vpnTarget: [
                    { vrfRTValue: '64512:100', vrfRTType: 'both' },
                    { vrfRTValue: '64512:200', vrfRTType: 'export_extcommunity' },
                  ],
                },
                'apply-label': { 'apply-label-per-route': true },
              },
            },
          ],
        },
      ],
    ]);
  });

  it('Sodium: an RD change is a delete and create', () => {
    const d = diffVpnInstance(
      { ...desired, ipv4Family: { ...desired.ipv4Family!, routeDistinguishers: ['64512:7'] } },
      desired,
      sodium,
    );
    assert.equal(d.action, 'recreate');
    assert.deepEqual(
      wire(d).map((w) => (w as unknown[]).slice(0, 2)),
      [
        ['DELETE', 'l3vpn:vpn-instances/vpn-instance/default'],
        ['PUT', 'l3vpn:vpn-instances/vpn-instance/default'],
      ],
    );
  });

  it('Aluminium: owned by signature (one RD of ours, exactly the cluster RT, InternalVPN)', () => {
    const alu: VpnInstance = {
      profile: 'aluminium',
      name: 'default',
      routeDistinguishers: ['64512:1'],
      vpnTargets: [{ value: '64512:100', type: 'both' }],
      l2vpn: false,
      bgpvpnType: 'InternalVPN',
      ipAddressFamilyConfigured: 'ipv4',
    };
    assert.equal(diffVpnInstance(alu, alu, aluminium).action, 'none');
    assert.equal(diffVpnInstance(undefined, alu, aluminium).action, 'delete-candidate');
    const theirs = diffVpnInstance(alu, { ...alu, routeDistinguishers: ['65000:1'] }, aluminium);
    assert.deepEqual(theirs, {
      action: 'foreign',
      name: 'default',
      wanted: true,
      reason: 'route distinguishers [65000:1] are not one RD under 64512',
    });
    assert.equal(
      diffVpnInstance(alu, { ...alu, vpnTargets: [{ value: '65000:1', type: 'both' }] }, aluminium).action,
      'foreign',
    );
    assert.equal(diffVpnInstance(alu, { ...alu, bgpvpnType: 'BGPVPN' }, aluminium).action, 'foreign');
    assert.throws(() => diffVpnInstance(desired, undefined, aluminium), /sodium entry/);
  });

  it('recovers the RDs of our VPNs for the allocator', () => {
    const long = 'a-very-long-namespace-name-that-exceeds-forty-chars';
    const vpns: VpnInstance[] = [
      desired,
      {
        ...desired,
        name: 'a-very-long-namespace-n.1b818bd3c8395575',
        ipv4Family: { routeDistinguishers: ['64512:2'], vpnTargets: [] },
      },
      { ...desired, name: 'orphan', ipv4Family: { routeDistinguishers: ['64512:3'], vpnTargets: [] } },
      {
        ...desired,
        name: 'theirs',
        description: 'hand made',
        ipv4Family: { routeDistinguishers: ['64512:4'], vpnTargets: [] },
      },
    ];
    assert.deepEqual(
      [...recoverRouteDistinguishers(vpns, ['default', long], sodium)],
      [
        ['default', '64512:1'],
        [long, '64512:2'],
        ['vpn-instance:orphan', '64512:3'],
      ],
    );
  });
});

describe('diff: vpn-interface', () => {
  const ietf: Interface = { ...actualIf, description: M1 };
  const primary = {
    ipAddress: '10.11.1.5/32',
    macAddress: '0a:58:0a:0b:01:05',
    adjacencyType: 'primary-adjacency' as const,
    subnetId: SUBNET,
    subnetGatewayIp: '10.11.1.1',
  };
  const learnt = {
    ipAddress: '10.11.1.77/32',
    macAddress: '0a:58:0a:0b:01:4d',
    adjacencyType: 'learnt-ip' as const,
  };
  const desired: VpnInterface = {
    name: 'default:nginx-1',
    vpnInstanceNames: [{ vpnName: 'default', associatedSubnetType: 'V4Subnet' }],
    routerInterface: false,
    adjacencies: [primary],
  };
  const actual: VpnInterface = { ...desired, dpnId: '1', adjacencies: [primary, learnt] };

  it('ignores learnt-ip adjacencies and dpn-id', () => {
    assert.equal(diffVpnInterface(desired, actual, ietf, sodium).action, 'none');
  });

  it('replaces only the primary adjacency when the pod address changes, never the list', () => {
    const next = { ...primary, ipAddress: '10.11.1.9/32', macAddress: '0a:58:0a:0b:01:09' };
    const d = diffVpnInterface({ ...desired, adjacencies: [next] }, actual, ietf, sodium);
    assert.deepEqual(d.action === 'update' && d.changed, ['adjacency']);
    assert.deepEqual(wire(d), [
      ['DELETE', 'l3vpn:vpn-interfaces/vpn-interface/default:nginx-1/odl-l3vpn:adjacency/10.11.1.5%2F32'],
      [
        'PUT',
        'l3vpn:vpn-interfaces/vpn-interface/default:nginx-1/odl-l3vpn:adjacency/10.11.1.9%2F32',
        {
          'odl-l3vpn:adjacency': [
            {
              ip_address: '10.11.1.9/32',
              adjacency_type: 'primary-adjacency',
              mac_address: '0a:58:0a:0b:01:09',
              subnet_id: SUBNET,
              subnet_gateway_ip: '10.11.1.1',
            },
          ],
        },
      ],
    ]);
  });

  it('an entry-level change PUTs the entry with the learnt-ip adjacency and dpn-id carried (Aluminium)', () => {
    const d = diffVpnInterface(
      { ...desired, vpnInstanceNames: [{ vpnName: 'default', associatedSubnetType: 'V4AndV6Subnets' }] },
      actual,
      ietf,
      aluminium,
    );
    assert.deepEqual(d.action === 'update' && d.changed, ['vpn-instance-names']);
    assert.deepEqual(wire(d), [
      [
        'PUT',
        'l3vpn-instances-interfaces:vpn-interfaces/vpn-interface/default:nginx-1',
        {
          'l3vpn-instances-interfaces:vpn-interface': [
            {
              name: 'default:nginx-1',
              'vpn-instance-names': [{ 'vpn-name': 'default', 'associated-subnet-type': 'V4AndV6Subnets' }],
              'dpn-id': '1',
              'router-interface': false,
              adjacency: [
                {
                  ip_address: '10.11.1.5/32',
                  adjacency_type: 'primary-adjacency',
                  mac_address: '0a:58:0a:0b:01:05',
                  subnet_id: SUBNET,
                  subnet_gateway_ip: '10.11.1.1',
                },
                {
                  ip_address: '10.11.1.77/32',
                  adjacency_type: 'learnt-ip',
                  mac_address: '0a:58:0a:0b:01:4d',
                },
              ],
            },
          ],
        },
      ],
    ]);
  });

  it('another VPN is a delete and create: nothing learnt in the old VPN rides along', () => {
    const moved = {
      ...desired,
      vpnInstanceNames: [{ vpnName: 'other', associatedSubnetType: 'V4Subnet' as const }],
    };
    const d = diffVpnInterface(moved, actual, ietf, sodium);
    assert.equal(d.action, 'recreate');
    assert.deepEqual(wire(d), [
      ['DELETE', 'l3vpn:vpn-interfaces/vpn-interface/default:nginx-1'],
      [
        'PUT',
        'l3vpn:vpn-interfaces/vpn-interface/default:nginx-1',
        {
          'l3vpn:vpn-interface': [
            {
              name: 'default:nginx-1',
              'vpn-instance-names': [{ 'vpn-name': 'other', 'associated-subnet-type': 'V4Subnet' }],
              'router-interface': false,
              'odl-l3vpn:adjacency': [
                {
                  ip_address: '10.11.1.5/32',
                  adjacency_type: 'primary-adjacency',
                  mac_address: '0a:58:0a:0b:01:05',
                  subnet_id: SUBNET,
                  subnet_gateway_ip: '10.11.1.1',
                },
              ],
            },
          ],
        },
      ],
    ]);
  });

  it('is owned through the ietf-interface of the same name', () => {
    assert.deepEqual(diffVpnInterface(desired, actual, undefined, sodium), {
      action: 'foreign',
      name: 'default:nginx-1',
      wanted: true,
      reason: 'no ietf-interface default:nginx-1 to establish ownership',
    });
    assert.equal(
      diffVpnInterface(undefined, actual, { ...ietf, description: 'hand made' }, sodium).action,
      'foreign',
    );
    assert.deepEqual(wire(diffVpnInterface(undefined, actual, ietf, sodium)), [
      ['DELETE', 'l3vpn:vpn-interfaces/vpn-interface/default:nginx-1'],
    ]);
  });
});

describe('diff: k8s-node and whole kinds', () => {
  const CL = '0324e7d5-3718-3d84-a2a8-0aa05e57b912';
  const N = '11111111-1111-4111-8111-111111111111';
  const desired: K8sNode = { uid: N, clusterId: CL, hostName: 'node-1', internalIpAddress: '192.168.56.101' };

  it("keeps an ODL user's pod-cidr when the watcher does not know the subnet", () => {
    const actual = { ...desired, podCidr: '10.11.1.0/24' };
    assert.equal(diffK8sNode(desired, actual, sodium).action, 'none');
    const d = diffK8sNode({ ...desired, hostName: 'node-1.example' }, actual, sodium);
    assert.deepEqual(wire(d), [
      [
        'PUT',
        `k8s-node:k8s-nodes-info/k8s-nodes/${N}`,
        {
          'k8s-node:k8s-nodes': [
            {
              uid: N,
              'cluster-id': CL,
              'host-name': 'node-1.example',
              'internal-ip-address': '192.168.56.101',
              'pod-cidr': '10.11.1.0/24',
            },
          ],
        },
      ],
    ]);
    assert.deepEqual(diffK8sNode({ ...desired, podCidr: '10.11.2.0/24' }, actual, sodium).action, 'update');
    assert.equal(diffK8sNode(desired, { ...actual, clusterId: U1 }, sodium).action, 'foreign');
  });

  it('diffAll pairs desired and actual by name, sorted, honouring keep', () => {
    const desiredMap = new Map([
      ['default:nginx-1', { ...desiredIf, description: M1 }],
      ['default:new', { ...desiredIf, name: 'default:new' }],
    ]);
    const actuals = [
      actualIf,
      { ...actualIf, name: 'default:gone' },
      { ...actualIf, name: 'default:kept' },
      { ...actualIf, name: 'x:theirs', description: 'hand made' },
    ];
    const decisions = diffAll(
      desiredMap,
      actuals,
      (i) => i.name,
      (d, a, o) => diffInterface(d, a, sodium, o),
      new Set(['default:kept']),
    );
    assert.deepEqual(
      decisions.map((d) => [d.name, d.action]),
      [
        ['default:gone', 'delete-candidate'],
        ['default:kept', 'none'],
        ['default:new', 'create'],
        ['default:nginx-1', 'none'],
        ['x:theirs', 'foreign'],
      ],
    );
  });

  it('decides none for a diff of nothing (neither desired nor actual), under the name it is given', () => {
    assert.deepEqual(diffInterface(undefined, undefined, sodium, { name: 'default:gone' }), {
      action: 'none',
      name: 'default:gone',
    });
    assert.deepEqual(diffElanInstance(undefined, undefined, sodium), { action: 'none', name: '' });
    assert.equal(diffElanInterface(undefined, undefined, sodium).action, 'none');
    for (const ctx of [sodium, aluminium])
      assert.deepEqual(diffVpnInstance(undefined, undefined, ctx, { name: 'shop' }), {
        action: 'none',
        name: 'shop',
      });
    assert.equal(diffVpnInterface(undefined, undefined, undefined, sodium).action, 'none');
    assert.deepEqual(diffK8sNode(undefined, undefined, sodium, { name: U1 }), { action: 'none', name: U1 });
    // The name only stands in for a missing entry; an entry names itself.
    assert.equal(diffInterface(desiredIf, undefined, sodium, { name: 'other' }).name, desiredIf.name);
  });
});
