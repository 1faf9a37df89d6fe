import type { V1Namespace, V1Node, V1Pod } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodePath } from '../restconf/path.js';
import { putK8sNode } from './k8s-node.js';
import { putElanInstance, putElanInterface } from './elan.js';
import { putInterface } from './interfaces.js';
import type { Profile } from './profile.js';
import {
  elanInstanceNeed,
  instanceUse,
  keepsElansOf,
  namespacesNeedingVpn,
  placePod,
  translateCluster,
  translateElanInstance,
  translateNode,
  translatePod,
  translateVpnInstance,
  vpnInstanceNeed,
  type InstanceUse,
  type PodContext,
  type PodOdlObjects as PodNetwork,
  type PodTranslation,
  type TranslateSettings,
} from './index.js';
import { putVpnInstance, putVpnInterface } from './vpn.js';
import type { WriteOp } from './write.js';

// ------------------------------------------------------------------ fixtures
const NODE1_UID = '11111111-1111-4111-8111-111111111111';
const NODE2_UID = '22222222-2222-4222-8222-222222222222';
const NS_UID = 'aaaaaaaa-0000-4000-8000-00000000000a';
const POD_UID = 'bbbbbbbb-0000-4000-8000-00000000000b';
const POD_UID2 = 'cccccccc-0000-4000-8000-00000000000c';
// subnetId('192.168.56.101'), computed with python3 (see names.test.ts)
const SUBNET_ID_101 = 'e1618560-81d4-3072-9c57-0b10e6cf83a8';
// python3 recipe of names.test.ts on "odlcoe:prod"
const CLUSTER_UUID = '0324e7d5-3718-3d84-a2a8-0aa05e57b912';

function node(name: string, uid: string, addresses: { type: string; address: string }[]): V1Node {
  return { metadata: { name, uid }, status: { addresses } };
}
const node1 = node('node-1', NODE1_UID, [
  { type: 'InternalIP', address: '192.168.56.101' },
  { type: 'ExternalIP', address: '203.0.113.1' },
  { type: 'Hostname', address: 'node-1.example' },
]);
const node2 = node('node-2', NODE2_UID, [{ type: 'InternalIP', address: '192.168.56.102' }]);
const ns = (name: string, uid = NS_UID): V1Namespace => ({ metadata: { name, uid } });

interface PodOpts {
  namespace?: string;
  name?: string;
  uid?: string;
  nodeName?: string;
  ips?: string[];
  phase?: string;
  hostNetwork?: boolean;
  deleting?: boolean;
}
function pod(o: PodOpts = {}): V1Pod {
  const p: V1Pod = {
    metadata: { namespace: o.namespace ?? 'default', name: o.name ?? 'nginx-1', uid: o.uid ?? POD_UID },
    spec: { containers: [{ name: 'c' }] },
    status: { phase: o.phase ?? 'Running' },
  };
  if (o.nodeName !== undefined || !('nodeName' in o)) p.spec!.nodeName = o.nodeName ?? 'node-1';
  if (o.hostNetwork) p.spec!.hostNetwork = true;
  if (o.ips && o.ips.length > 0) {
    p.status!.podIP = o.ips[0];
    p.status!.podIPs = o.ips.map((ip) => ({ ip }));
  }
  if (o.deleting) p.metadata!.deletionTimestamp = new Date('2024-01-01T00:00:00Z');
  return p;
}

const settings = (profile: Profile, extra: Partial<TranslateSettings> = {}): TranslateSettings => ({
  clusterName: 'prod',
  profile,
  routeTarget: '64512:100',
  segmentType: 'vxlan',
  ...extra,
});
const ctx = { node: node1, namespace: ns('default'), nodeSubnet: '10.11.1.0/24' };

function onNetwork(t: PodTranslation): PodNetwork {
  assert.equal(t.state, 'on-network', JSON.stringify(t));
  if (t.state !== 'on-network') throw new Error('unreachable');
  return t.network;
}
function wire(op: WriteOp): { url: string; body: unknown } {
  if (op.op !== 'put') throw new Error('expected a PUT');
  return { url: encodePath(op.path, 'bierman02'), body: op.body };
}

const MARKER = `odlcoe:prod:pod:${POD_UID}`;

// ------------------------------------------------------------------ pods
describe('translatePod', () => {
  it('gives a running pod an interface, an elan-interface with its MAC and a vpn-interface (Sodium)', () => {
    const n = onNetwork(translatePod(pod({ ips: ['10.11.1.5'] }), ctx, settings('sodium')));
    assert.deepEqual(wire(putInterface('sodium', n.interface)), {
      url: 'ietf-interfaces:interfaces/interface/default:nginx-1',
      body: {
        'ietf-interfaces:interface': [
          {
            name: 'default:nginx-1',
            type: 'iana-if-type:l2vlan',
            enabled: true,
            description: MARKER,
            'odl-interface:l2vlan-mode': 'trunk',
            'odl-interface:external': false,
          },
        ],
      },
    });
    assert.deepEqual(wire(putElanInterface('sodium', n.elanInterface)), {
      url: 'elan:elan-interfaces/elan-interface/default:nginx-1',
      body: {
        'elan:elan-interface': [
          {
            name: 'default:nginx-1',
            'elan-instance-name': '192.168.56.101:default',
            'static-mac-entries': [{ 'mac-address': '0a:58:0a:0b:01:05', 'ip-prefix': '10.11.1.5' }],
            description: MARKER,
          },
        ],
      },
    });
    assert.ok(n.vpnInterface);
    assert.deepEqual(wire(putVpnInterface('sodium', n.vpnInterface)), {
      url: 'l3vpn:vpn-interfaces/vpn-interface/default:nginx-1',
      body: {
        'l3vpn:vpn-interface': [
          {
            name: 'default:nginx-1',
            'vpn-instance-names': [{ 'vpn-name': 'default', 'associated-subnet-type': 'V4Subnet' }],
            'router-interface': false,
            'odl-l3vpn:adjacency': [
              {
                ip_address: '10.11.1.5/32',
                adjacency_type: 'primary-adjacency',
                mac_address: '0a:58:0a:0b:01:05',
                subnet_id: SUBNET_ID_101,
                subnet_gateway_ip: '10.11.1.1',
              },
            ],
          },
        ],
      },
    });
    assert.equal(n.vpnInterfaceDeferred, undefined);
    assert.equal(n.elanInstanceName, '192.168.56.101:default');
    assert.equal(n.vpnName, 'default');
  });

  it('writes the Aluminium vpn-interface with an unprefixed adjacency', () => {
    const n = onNetwork(translatePod(pod({ ips: ['10.11.1.5'] }), ctx, settings('aluminium')));
    assert.ok(n.vpnInterface);
    assert.deepEqual(wire(putVpnInterface('aluminium', n.vpnInterface)), {
      url: 'l3vpn-instances-interfaces:vpn-interfaces/vpn-interface/default:nginx-1',
      body: {
        'l3vpn-instances-interfaces:vpn-interface': [
          {
            name: 'default:nginx-1',
            'vpn-instance-names': [{ 'vpn-name': 'default', 'associated-subnet-type': 'V4Subnet' }],
            'router-interface': false,
            adjacency: [
              {
                ip_address: '10.11.1.5/32',
                adjacency_type: 'primary-adjacency',
                mac_address: '0a:58:0a:0b:01:05',
                subnet_id: SUBNET_ID_101,
                subnet_gateway_ip: '10.11.1.1',
              },
            ],
          },
        ],
      },
    });
  });

  it('Pending without an IP: interface and elan-interface only; Running with an IP adds MAC and VPN', () => {
    const pending = onNetwork(translatePod(pod({ phase: 'Pending' }), ctx, settings('sodium')));
    assert.deepEqual(pending.elanInterface, {
      name: 'default:nginx-1',
      elanInstanceName: '192.168.56.101:default',
      description: MARKER,
    });
    assert.equal(pending.vpnInterface, undefined);
    assert.equal(
      pending.vpnInterfaceDeferred,
      undefined,
      'no IP yet is not a deferral: there is nothing to route',
    );
    assert.equal(pending.address, undefined);

    const running = onNetwork(translatePod(pod({ ips: ['10.11.1.5'] }), ctx, settings('sodium')));
    assert.deepEqual(running.interface, pending.interface);
    assert.deepEqual(running.elanInterface.staticMacEntries, [
      { macAddress: '0a:58:0a:0b:01:05', ipPrefix: '10.11.1.5' },
    ]);
    assert.equal(running.vpnInterface?.adjacencies[0]?.ipAddress, '10.11.1.5/32');
  });

  it('marks a re-created pod of the same name with its new UID', () => {
    const first = onNetwork(translatePod(pod({ ips: ['10.11.1.5'] }), ctx, settings('sodium')));
    const second = onNetwork(
      translatePod(pod({ uid: POD_UID2, ips: ['10.11.1.9'] }), ctx, settings('sodium')),
    );
    assert.equal(first.interface.name, second.interface.name);
    assert.equal(second.interface.description, `odlcoe:prod:pod:${POD_UID2}`);
    assert.equal(second.elanInterface.description, `odlcoe:prod:pod:${POD_UID2}`);
    assert.deepEqual(second.elanInterface.staticMacEntries, [
      { macAddress: '0a:58:0a:0b:01:09', ipPrefix: '10.11.1.9' },
    ]);
  });

  it('routes an IPv6 pod with /128, V6Subnet and the last four address bytes as MAC', () => {
    const n = onNetwork(
      translatePod(
        pod({ ips: ['fd00:10:244:1::a05'] }),
        { ...ctx, nodeSubnet: 'fd00:10:244:1::/64' },
        settings('sodium', { ipFamilies: ['ipv6'] }),
      ),
    );
    assert.deepEqual(n.elanInterface.staticMacEntries, [
      { macAddress: '0a:58:00:00:0a:05', ipPrefix: 'fd00:10:244:1::a05' },
    ]);
    assert.deepEqual(n.vpnInterface, {
      name: 'default:nginx-1',
      vpnInstanceNames: [{ vpnName: 'default', associatedSubnetType: 'V6Subnet' }],
      routerInterface: false,
      adjacencies: [
        {
          ipAddress: 'fd00:10:244:1::a05/128',
          macAddress: '0a:58:00:00:0a:05',
          adjacencyType: 'primary-adjacency',
          subnetId: SUBNET_ID_101,
          subnetGatewayIp: 'fd00:10:244:1::1',
        },
      ],
    });
  });

  it('prefers IPv4 for a dual-stack pod (in either podIPs order)', () => {
    for (const ips of [
      ['10.11.1.5', 'fd00::5'],
      ['fd00::5', '10.11.1.5'],
    ]) {
      const n = onNetwork(translatePod(pod({ ips }), ctx, settings('sodium')));
      assert.equal(n.address, '10.11.1.5');
    }
  });

  it('defers the vpn-interface of a pod with only an address of an unrouted family', () => {
    const n = onNetwork(translatePod(pod({ ips: ['fd00::5'] }), ctx, settings('sodium')));
    assert.equal(n.vpnInterface, undefined);
    assert.equal(n.vpnInterfaceDeferred?.code, 'no-address-of-routed-family');
  });

  it('gives nothing to hostNetwork, finished or unscheduled pods', () => {
    const off = (p: V1Pod) => translatePod(p, ctx, settings('sodium'));
    assert.deepEqual(off(pod({ hostNetwork: true, ips: ['192.168.56.101'] })), {
      state: 'off-network',
      reason: 'uses the host network',
    });
    assert.deepEqual(off(pod({ phase: 'Succeeded', ips: ['10.11.1.5'] })), {
      state: 'off-network',
      reason: 'finished (Succeeded)',
    });
    assert.deepEqual(off(pod({ phase: 'Failed' })), { state: 'off-network', reason: 'finished (Failed)' });
    assert.deepEqual(off(pod({ nodeName: '', phase: 'Pending' })), {
      state: 'off-network',
      reason: 'not scheduled yet',
    });
  });

  it('keeps the network of a terminating pod (deletionTimestamp) until it is gone', () => {
    const n = onNetwork(translatePod(pod({ ips: ['10.11.1.5'], deleting: true }), ctx, settings('sodium')));
    assert.ok(n.vpnInterface);
  });

  it('names the VPN of a long namespace by its shortened form, the interface by the full name', () => {
    const long = 'a-very-long-namespace-name-that-exceeds-forty-chars';
    const n = onNetwork(
      translatePod(
        pod({ namespace: long, ips: ['10.11.1.5'] }),
        { ...ctx, namespace: ns(long) },
        settings('sodium'),
      ),
    );
    assert.equal(n.interface.name, `${long}:nginx-1`);
    assert.equal(n.elanInstanceName, `192.168.56.101:${long}`);
    assert.deepEqual(n.vpnInterface?.vpnInstanceNames, [
      { vpnName: 'a-very-long-namespace-n.1b818bd3c8395575', associatedSubnetType: 'V4Subnet' },
    ]);
  });

  it('defers a pod whose node, node InternalIP or namespace is unknown', () => {
    const p = pod({ ips: ['10.11.1.5'] });
    assert.deepEqual(translatePod(p, { namespace: ns('default') }, settings('sodium')), {
      state: 'deferred',
      deferral: { code: 'node-unknown', message: 'node node-1 is not known yet' },
      namespace: 'default',
      interfaceName: 'default:nginx-1',
    });
    const noIp = node('node-1', NODE1_UID, [{ type: 'Hostname', address: 'node-1' }]);
    const t = translatePod(p, { node: noIp, namespace: ns('default') }, settings('sodium'));
    assert.equal(t.state === 'deferred' && t.deferral.code, 'node-without-internal-ip');
    const u = translatePod(p, { node: node1 }, settings('sodium'));
    assert.equal(u.state === 'deferred' && u.deferral.code, 'namespace-unknown');
    const bad = translatePod({ metadata: { name: 'x' } }, ctx, settings('sodium'));
    assert.equal(bad.state === 'deferred' && bad.deferral.code, 'invalid-object');
  });

  it('defers only the vpn-interface while the node subnet is unknown, invalid, or does not hold the IP', () => {
    const p = pod({ ips: ['10.11.1.5'] });
    const unknown = onNetwork(translatePod(p, { node: node1, namespace: ns('default') }, settings('sodium')));
    assert.equal(unknown.vpnInterface, undefined);
    assert.equal(unknown.vpnInterfaceDeferred?.code, 'node-subnet-unknown');
    assert.deepEqual(unknown.elanInterface.staticMacEntries, [
      { macAddress: '0a:58:0a:0b:01:05', ipPrefix: '10.11.1.5' },
    ]);
    const outside = onNetwork(translatePod(p, { ...ctx, nodeSubnet: '10.11.2.0/24' }, settings('sodium')));
    assert.equal(outside.vpnInterfaceDeferred?.code, 'ip-outside-node-subnet');
    assert.equal(outside.vpnInterface, undefined);
    const invalid = onNetwork(translatePod(p, { ...ctx, nodeSubnet: '10.11.1.5/24' }, settings('sodium')));
    assert.equal(invalid.vpnInterfaceDeferred?.code, 'node-subnet-invalid');
  });
});

// ------------------------------------------------------------------ instances and nodes
describe('translateVpnInstance / translateElanInstance / translateNode', () => {
  it('Sodium VPN: type l3, l3vni 0, RD and cluster RT (both) in ipv4-family, namespace marker', () => {
    assert.deepEqual(
      wire(putVpnInstance('sodium', translateVpnInstance(ns('default'), '64512:1', settings('sodium')))),
      {
        url: 'l3vpn:vpn-instances/vpn-instance/default',
        body: {
          'l3vpn:vpn-instance': [
            {
              'vpn-instance-name': 'default',
              type: 'l3',
              l3vni: 0,
              description: `odlcoe:prod:namespace:${NS_UID}`,
              'ipv4-family': {
                'route-distinguisher': ['64512:1'],
                vpnTargets: { vpnTarget: [{ vrfRTValue: '64512:100', vrfRTType: 'both' }] },
              },
            },
          ],
        },
      },
    );
  });

  it('Sodium VPN routing both families has both family containers', () => {
    const v = translateVpnInstance(
      ns('default'),
      '64512:1',
      settings('sodium', { ipFamilies: ['ipv4', 'ipv6'] }),
    );
    assert.deepEqual(v.profile === 'sodium' && v.ipv6Family, {
      routeDistinguishers: ['64512:1'],
      vpnTargets: [{ value: '64512:100', type: 'both' }],
    });
  });

  it('Aluminium VPN: InternalVPN, l2vpn false, family configured, no description', () => {
    assert.deepEqual(
      wire(
        putVpnInstance('aluminium', translateVpnInstance(ns('default'), '64512:1', settings('aluminium'))),
      ),
      {
        url: 'l3vpn-instances-interfaces:vpn-instances/vpn-instance/default',
        body: {
          'l3vpn-instances-interfaces:vpn-instance': [
            {
              'vpn-instance-name': 'default',
              'route-distinguisher': ['64512:1'],
              vpnTargets: { vpnTarget: [{ vrfRTValue: '64512:100', vrfRTType: 'both' }] },
              l2vpn: false,
              'bgpvpn-type': 'InternalVPN',
              'ip-address-family-configured': 'ipv4',
            },
          ],
        },
      },
    );
    const v6 = translateVpnInstance(
      ns('default'),
      '64512:1',
      settings('aluminium', { ipFamilies: ['ipv6'] }),
    );
    assert.equal(v6.profile === 'aluminium' && v6.ipAddressFamilyConfigured, 'ipv6');
    const both = translateVpnInstance(
      ns('default'),
      '64512:1',
      settings('aluminium', { ipFamilies: ['ipv6', 'ipv4'] }),
    );
    assert.equal(both.profile === 'aluminium' && both.ipAddressFamilyConfigured, 'ipv4-and-ipv6');
  });

  it('refuses a bad RD for a VPN', () => {
    assert.throws(
      () => translateVpnInstance(ns('default'), '1', settings('sodium')),
      /route distinguisher of namespace default/,
    );
  });

  it('ELAN: <node IP>:<namespace>, vxlan, external false, node×namespace marker', () => {
    assert.deepEqual(
      wire(putElanInstance('sodium', translateElanInstance(node1, ns('default'), settings('sodium')))),
      {
        url: 'elan:elan-instances/elan-instance/192.168.56.101:default',
        body: {
          'elan:elan-instance': [
            {
              'elan-instance-name': '192.168.56.101:default',
              'segment-type': 'elan:segment-type-vxlan',
              external: false,
              description: `odlcoe:prod:node-namespace:${NODE1_UID}/${NS_UID}`,
            },
          ],
        },
      },
    );
  });

  it('k8s-node: node UID, cluster UUID, host name, IPs, pod CIDR once known', () => {
    assert.deepEqual(wire(putK8sNode('sodium', translateNode(node1, '10.11.1.0/24', settings('sodium')))), {
      url: `k8s-node:k8s-nodes-info/k8s-nodes/${NODE1_UID}`,
      body: {
        'k8s-node:k8s-nodes': [
          {
            uid: NODE1_UID,
            'cluster-id': CLUSTER_UUID,
            'host-name': 'node-1.example',
            'external-ip-address': '203.0.113.1',
            'internal-ip-address': '192.168.56.101',
            'pod-cidr': '10.11.1.0/24',
          },
        ],
      },
    });
    assert.deepEqual(translateNode(node2, undefined, settings('sodium')), {
      uid: NODE2_UID,
      clusterId: CLUSTER_UUID,
      hostName: 'node-2',
      internalIpAddress: '192.168.56.102',
    });
  });
});

// ------------------------------------------------------------------ the cluster
describe('translateCluster', () => {
  const ns2 = ns('shop', 'aaaaaaaa-0000-4000-8000-0000000000ff');
  const pods = [
    pod({ name: 'a', uid: POD_UID, ips: ['10.11.1.5'] }),
    pod({ name: 'b', uid: POD_UID2, nodeName: 'node-2', ips: ['10.11.2.7'] }),
    pod({
      namespace: 'shop',
      name: 'c',
      uid: 'dddddddd-0000-4000-8000-00000000000d',
      nodeName: 'node-2',
      phase: 'Pending',
    }),
    pod({
      namespace: 'infra',
      name: 'agent',
      uid: 'eeeeeeee-0000-4000-8000-00000000000e',
      hostNetwork: true,
    }),
    pod({
      namespace: 'default',
      name: 'job',
      uid: 'ffffffff-0000-4000-8000-00000000000f',
      phase: 'Succeeded',
      ips: ['10.11.1.6'],
    }),
    pod({ namespace: 'ghost', name: 'g', uid: '99999999-0000-4000-8000-000000000009', ips: ['10.11.1.8'] }),
    pod({
      name: 'lost',
      uid: '88888888-0000-4000-8000-000000000008',
      nodeName: 'node-9',
      ips: ['10.11.9.2'],
    }),
  ];
  const view = {
    nodes: [node2, node1],
    namespaces: [ns('default'), ns2, ns('infra', 'aaaaaaaa-0000-4000-8000-0000000000ee')],
    pods,
    routeDistinguishers: new Map([
      ['default', '64512:1'],
      ['shop', '64512:2'],
    ]),
    nodeSubnets: new Map([
      ['node-1', '10.11.1.0/24'],
      ['node-2', '10.11.2.0/24'],
    ]),
  };

  it('needs VPNs only for namespaces with pods on the pod network', () => {
    assert.deepEqual([...namespacesNeedingVpn(pods)].sort(), ['default', 'ghost', 'shop']);
  });

  it('builds one ELAN per node × namespace, one VPN per namespace, one entry per pod and node', () => {
    const d = translateCluster(view, settings('sodium'));
    assert.deepEqual([...d.interfaces.keys()], ['default:a', 'default:b', 'shop:c']);
    assert.deepEqual([...d.elanInterfaces.keys()], ['default:a', 'default:b', 'shop:c']);
    assert.deepEqual([...d.vpnInterfaces.keys()], ['default:a', 'default:b']);
    assert.deepEqual(
      [...d.elanInstances.keys()],
      ['192.168.56.101:default', '192.168.56.102:default', '192.168.56.102:shop'],
    );
    assert.deepEqual([...d.vpnInstances.keys()], ['default', 'shop']);
    assert.deepEqual([...d.k8sNodes.keys()], [NODE1_UID, NODE2_UID]);
    assert.equal(d.vpnInterfaces.get('default:b')?.adjacencies[0]?.subnetGatewayIp, '10.11.2.1');
    assert.equal(d.pods.get('infra/agent')?.state, 'off-network');
    assert.equal(d.pods.get('default/job')?.state, 'off-network');
  });

  it('reports what it cannot compute and keeps those names from garbage collection', () => {
    const d = translateCluster(view, settings('sodium'));
    assert.deepEqual(
      d.deferred.map((x) => [x.object, x.deferral.code]),
      [
        ['pod default/lost', 'node-unknown'],
        ['pod ghost/g', 'namespace-unknown'],
      ],
    );
    assert.deepEqual([...d.keep.interfaces].sort(), ['default:lost', 'ghost:g']);
    assert.deepEqual([...d.keep.vpnInterfaces].sort(), ['default:lost', 'ghost:g']);
    assert.deepEqual([...d.keep.vpnInstances], ['ghost']);
    assert.deepEqual([...d.keep.elanNamespaces].sort(), ['default', 'ghost']);
  });

  it('refuses to guess a missing RD', () => {
    assert.throws(
      () =>
        translateCluster(
          { ...view, routeDistinguishers: new Map([['default', '64512:1']]) },
          settings('sodium'),
        ),
      /route distinguisher of namespace shop: not allocated/,
    );
  });

  it('refuses bad settings before building anything', () => {
    assert.throws(
      () => translateCluster(view, settings('sodium', { clusterName: 'Prod_1' })),
      /cluster name/,
    );
    assert.throws(
      () => translateCluster(view, settings('sodium', { routeTarget: 'x' })),
      /settings\.routeTarget/,
    );
    assert.throws(
      () => translateCluster(view, settings('sodium', { ipFamilies: [] })),
      /settings\.ipFamilies/,
    );
  });

  it('does not depend on input order', () => {
    const a = translateCluster(view, settings('aluminium'));
    const b = translateCluster(
      { ...view, pods: [...pods].reverse(), nodes: [node1, node2] },
      settings('aluminium'),
    );
    assert.deepEqual([...a.vpnInstances], [...b.vpnInstances]);
    assert.deepEqual([...a.interfaces], [...b.interfaces]);
    assert.deepEqual(a.deferred, b.deferred);
  });

  it('agrees with the per-key need and keep rules the watcher applies to one instance at a time', () => {
    const d = translateCluster(view, settings('sodium'));
    // What the watcher does per key: place each pod against the caches, without translating it.
    const uses = pods.map((p) => {
      const podCtx: PodContext = {};
      const n = view.nodes.find((x) => x.metadata?.name === p.spec?.nodeName);
      const namespace = view.namespaces.find((x) => x.metadata?.name === p.metadata?.namespace);
      if (n) podCtx.node = n;
      if (namespace) podCtx.namespace = namespace;
      return instanceUse(placePod(p, podCtx));
    });
    for (const name of d.elanInstances.keys())
      assert.equal(elanInstanceNeed(name, name.slice(name.lastIndexOf(':') + 1), uses), 'desired', name);
    // ELANs nobody needs: kept exactly in the namespaces translateCluster keeps.
    for (const ns of ['default', 'shop', 'ghost', 'infra'])
      assert.equal(
        elanInstanceNeed(`192.168.56.200:${ns}`, ns, uses),
        d.keep.elanNamespaces.has(ns) ? 'keep' : 'unneeded',
        ns,
      );
    for (const ns of ['default', 'shop', 'ghost', 'infra']) {
      const known = view.namespaces.some((n) => n.metadata?.name === ns);
      const need = vpnInstanceNeed(ns, known, uses);
      assert.equal(need === 'desired', d.vpnInstances.has(ns), ns);
      assert.equal(need === 'keep', d.keep.vpnInstances.has(ns), ns);
    }
  });
});

// ------------------------------------------------------------------ instance needs, per key
describe('placePod and the instance need rules', () => {
  const attached = (namespace: string, elan: string, nodeName = 'node-1'): InstanceUse => ({
    use: 'attached',
    namespace,
    nodeName,
    elanInstanceName: elan,
  });

  it('places a pod on the network by namespace and node, without its address', () => {
    const placed = placePod(pod(), { node: node1, namespace: ns('default') });
    assert.deepEqual(placed, {
      state: 'placed',
      attachment: {
        namespace: 'default',
        podName: 'nginx-1',
        podUid: POD_UID,
        nodeName: 'node-1',
        nodeIp: '192.168.56.101',
        interfaceName: 'default:nginx-1',
        elanInstanceName: '192.168.56.101:default',
      },
    });
    // The same place translatePod builds the objects for.
    assert.equal(
      onNetwork(translatePod(pod({ ips: ['10.11.1.5'] }), ctx, settings('sodium'))).elanInstanceName,
      '192.168.56.101:default',
    );
  });

  it('defers a pod whose namespace, node or node address is not known, and leaves others off', () => {
    const code = (t: ReturnType<typeof placePod>) => (t.state === 'deferred' ? t.deferral.code : t.state);
    assert.equal(code(placePod(pod(), { node: node1 })), 'namespace-unknown');
    assert.equal(code(placePod(pod(), { namespace: ns('default') })), 'node-unknown');
    const bare = node('node-1', NODE1_UID, [{ type: 'Hostname', address: 'node-1' }]);
    assert.equal(code(placePod(pod(), { node: bare, namespace: ns('default') })), 'node-without-internal-ip');
    assert.equal(code(placePod(pod({ hostNetwork: true }), ctx)), 'off-network');
    assert.equal(code(placePod(pod({ phase: 'Failed' }), ctx)), 'off-network');
  });

  it('maps placements and translations to instance uses', () => {
    assert.deepEqual(instanceUse(placePod(pod(), ctx)), attached('default', '192.168.56.101:default'));
    assert.deepEqual(
      instanceUse(translatePod(pod({ ips: ['10.11.1.5'] }), ctx, settings('sodium'))),
      attached('default', '192.168.56.101:default'),
    );
    assert.deepEqual(instanceUse(placePod(pod(), { node: node1 })), {
      use: 'unplaced',
      namespace: 'default',
    });
    assert.deepEqual(instanceUse(placePod(pod({ hostNetwork: true }), ctx)), { use: 'none' });
    // A pod without a uid names no namespace it could be kept for.
    assert.deepEqual(instanceUse(placePod(pod({ uid: '' }), ctx)), { use: 'none' });
  });

  it('needs a VPN for any pod of its namespace on the network, keeps it while the namespace is unknown', () => {
    const uses: InstanceUse[] = [
      attached('shop', '192.168.56.101:shop'),
      { use: 'unplaced', namespace: 'ghost' },
      { use: 'none' },
    ];
    assert.equal(vpnInstanceNeed('shop', true, uses), 'desired');
    assert.equal(vpnInstanceNeed('ghost', true, uses), 'desired');
    assert.equal(vpnInstanceNeed('ghost', false, uses), 'keep');
    assert.equal(vpnInstanceNeed('default', true, uses), 'unneeded');
    assert.equal(vpnInstanceNeed('default', false, []), 'unneeded');
  });

  it('needs an ELAN for the pods attached to it, keeps every ELAN of a namespace with an unplaced pod', () => {
    const uses: InstanceUse[] = [
      attached('shop', '192.168.56.101:shop'),
      attached('shop', '192.168.56.102:shop', 'node-2'),
    ];
    assert.equal(elanInstanceNeed('192.168.56.101:shop', 'shop', uses), 'desired');
    assert.equal(elanInstanceNeed('192.168.56.103:shop', 'shop', uses), 'unneeded');
    const withUnplaced = [...uses, { use: 'unplaced', namespace: 'shop' } as const];
    assert.equal(elanInstanceNeed('192.168.56.103:shop', 'shop', withUnplaced), 'keep');
    assert.equal(elanInstanceNeed('192.168.56.101:shop', 'shop', withUnplaced), 'desired');
    // An unplaced pod of another namespace keeps nothing here.
    assert.equal(
      elanInstanceNeed('192.168.56.103:shop', 'shop', [...uses, { use: 'unplaced', namespace: 'web' }]),
      'unneeded',
    );
    assert.equal(keepsElansOf('shop', withUnplaced), true);
    assert.equal(keepsElansOf('web', withUnplaced), false);
  });
});
