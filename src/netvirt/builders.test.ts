import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodePath } from '../restconf/path.js';
import { putCoeEndpoints, putCoePod, putCoeService } from './coe/model.js';
import { putK8sNode } from './k8s-node.js';
import { putAllocationPool, putDhcpNetwork } from './dhcp.js';
import { putElanInstance, putElanInterface } from './elan.js';
import { ModelValidationError } from './errors.js';
import { putInterface } from './interfaces.js';
import { putRouterPorts } from './nat.js';
import { putAdjacency, putVpnInstance, putVpnInterface, type VpnInstance } from './vpn.js';
import type { WriteOp } from './write.js';

const UID = 'c0ffee00-0000-4000-8000-000000000001';
const UID2 = 'c0ffee00-0000-4000-8000-000000000002';

function put(op: WriteOp): { url: string; body: unknown } {
  assert.equal(op.op, 'put');
  return { url: encodePath(op.path, 'bierman02'), body: op.op === 'put' ? op.body : undefined };
}

function rejects(fn: () => unknown, where: RegExp, reason: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ModelValidationError, `expected ModelValidationError, got ${String(err)}`);
    assert.match(err.where, where);
    assert.match(err.reason, reason);
    return true;
  });
}

describe('ietf-interface bodies', () => {
  it('qualifies the odl-interface augments and writes external explicitly', () => {
    assert.deepEqual(
      put(
        putInterface('sodium', {
          name: 'default:nginx-1',
          type: 'iana-if-type:l2vlan',
          enabled: true,
          l2vlanMode: 'trunk',
          external: false,
          description: 'odlcoe:c1:pod:u1',
        }),
      ),
      {
        url: 'ietf-interfaces:interfaces/interface/default:nginx-1',
        body: {
          'ietf-interfaces:interface': [
            {
              name: 'default:nginx-1',
              type: 'iana-if-type:l2vlan',
              enabled: true,
              description: 'odlcoe:c1:pod:u1',
              'odl-interface:l2vlan-mode': 'trunk',
              'odl-interface:external': false,
            },
          ],
        },
      },
    );
  });

  it('writes a 64-bit datapath id as a JSON string and carries preserved members', () => {
    const { body } = put(
      putInterface('aluminium', {
        name: 'x',
        type: 'iana-if-type:l2vlan',
        datapathNodeIdentifier: '18446744073709551615',
        parentInterface: 'tap1',
        preserved: { 'odl-interface:node-identifier': [{ 'topology-id': 't', 'node-id': 'n' }] },
      }),
    );
    assert.deepEqual(body, {
      'ietf-interfaces:interface': [
        {
          name: 'x',
          type: 'iana-if-type:l2vlan',
          'odl-interface:parent-interface': 'tap1',
          'odl-interface:datapath-node-identifier': '18446744073709551615',
          'odl-interface:node-identifier': [{ 'topology-id': 't', 'node-id': 'n' }],
        },
      ],
    });
  });

  it('refuses what ODL would refuse', () => {
    rejects(
      () => putInterface('sodium', { name: 'x', type: 'l2vlan' }),
      /interface\[x\]\/type/,
      /identityref/,
    );
    rejects(
      () => putInterface('sodium', { name: 'x', type: 'iana-if-type:l2vlan', vlanId: 4096 }),
      /vlan-id/,
      /0\.\.4095/,
    );
    rejects(() => putInterface('sodium', { name: '', type: 'iana-if-type:l2vlan' }), /name/, /empty/);
    rejects(
      () =>
        putInterface('sodium', {
          name: 'x',
          type: 'iana-if-type:l2vlan',
          datapathNodeIdentifier: '18446744073709551616',
        }),
      /datapath-node-identifier/,
      /uint64/,
    );
  });
});

describe('elan bodies', () => {
  it('builds the elan-instance of the document with an identityref segment type', () => {
    assert.deepEqual(
      put(
        putElanInstance('sodium', {
          name: '192.168.56.101:default',
          segmentType: 'vxlan',
          segmentationId: 1001,
        }),
      ),
      {
        url: 'elan:elan-instances/elan-instance/192.168.56.101:default',
        body: {
          'elan:elan-instance': [
            {
              'elan-instance-name': '192.168.56.101:default',
              'segment-type': 'elan:segment-type-vxlan',
              'segmentation-id': 1001,
            },
          ],
        },
      },
    );
  });

  it('builds an elan-interface with static MAC entries (address, no prefix length)', () => {
    assert.deepEqual(
      put(
        putElanInterface('aluminium', {
          name: 'default:nginx-1',
          elanInstanceName: '192.168.56.101:default',
          staticMacEntries: [{ macAddress: '0a:58:0a:0b:01:05', ipPrefix: '10.11.1.5' }],
          description: 'm',
        }),
      ),
      {
        url: 'elan:elan-interfaces/elan-interface/default:nginx-1',
        body: {
          'elan:elan-interface': [
            {
              name: 'default:nginx-1',
              'elan-instance-name': '192.168.56.101:default',
              'static-mac-entries': [{ 'mac-address': '0a:58:0a:0b:01:05', 'ip-prefix': '10.11.1.5' }],
              description: 'm',
            },
          ],
        },
      },
    );
  });

  it('refuses empty or overlong descriptions, a missing ELAN name, bad MACs and prefixes', () => {
    rejects(
      () => putElanInstance('sodium', { name: 'e', description: '' }),
      /elan-instance\[e\]\/description/,
      /length 0 outside 1\.\.254/,
    );
    rejects(
      () => putElanInstance('sodium', { name: 'e', description: 'x'.repeat(255) }),
      /description/,
      /length 255 outside 1\.\.254/,
    );
    rejects(
      () => putElanInterface('sodium', { name: 'i', elanInstanceName: '' }),
      /elan-instance-name/,
      /empty/,
    );
    rejects(
      () => putElanInterface('sodium', { name: 'i', elanInstanceName: 'e', description: 'x'.repeat(255) }),
      /description/,
      /1\.\.254/,
    );
    rejects(
      () =>
        putElanInterface('sodium', {
          name: 'i',
          elanInstanceName: 'e',
          staticMacEntries: [{ macAddress: '' }],
        }),
      /mac-address/,
      /not a MAC/,
    );
    rejects(
      () =>
        putElanInterface('sodium', {
          name: 'i',
          elanInstanceName: 'e',
          staticMacEntries: [{ macAddress: '0a:58:0a:0b:01:05', ipPrefix: '10.11.1.5/32' }],
        }),
      /ip-prefix/,
      /not an IPv4 or IPv6 address/,
    );
    rejects(
      () =>
        putElanInterface('sodium', {
          name: 'i',
          elanInstanceName: 'e',
          staticMacEntries: [{ macAddress: '0a:58:0a:0b:01:05' }, { macAddress: '0A:58:0A:0B:01:05' }],
        }),
      /static-mac-entries\[1\]/,
      /duplicate/,
    );
    rejects(() => putElanInstance('sodium', { name: 'e', macTimeout: 65536 }), /mac-timeout/, /0\.\.65535/);
  });
});

describe('vpn-instance bodies', () => {
  const sodium: VpnInstance = {
    profile: 'sodium',
    name: 'default',
    type: 'l3',
    l3vni: 0,
    description: 'odlcoe:c1:namespace:u1',
    ipv4Family: { routeDistinguishers: ['100:1'], vpnTargets: [{ value: '100:1', type: 'both' }] },
  };

  it('Sodium: RD and route targets inside ipv4-family', () => {
    assert.deepEqual(put(putVpnInstance('sodium', sodium)), {
      url: 'l3vpn:vpn-instances/vpn-instance/default',
      body: {
        'l3vpn:vpn-instance': [
          {
            'vpn-instance-name': 'default',
            type: 'l3',
            l3vni: 0,
            description: 'odlcoe:c1:namespace:u1',
            'ipv4-family': {
              'route-distinguisher': ['100:1'],
              vpnTargets: { vpnTarget: [{ vrfRTValue: '100:1', vrfRTType: 'both' }] },
            },
          },
        ],
      },
    });
  });

  it('Aluminium: RD and route targets in the entry, bgpvpn-type', () => {
    assert.deepEqual(
      put(
        putVpnInstance('aluminium', {
          profile: 'aluminium',
          name: 'default',
          routeDistinguishers: ['100:1'],
          vpnTargets: [{ value: '100:1', type: 'both' }],
          bgpvpnType: 'InternalVPN',
          l2vpn: false,
          ipAddressFamilyConfigured: 'ipv4',
        }),
      ),
      {
        url: 'l3vpn-instances-interfaces:vpn-instances/vpn-instance/default',
        body: {
          'l3vpn-instances-interfaces:vpn-instance': [
            {
              'vpn-instance-name': 'default',
              'route-distinguisher': ['100:1'],
              vpnTargets: { vpnTarget: [{ vrfRTValue: '100:1', vrfRTType: 'both' }] },
              l2vpn: false,
              'bgpvpn-type': 'InternalVPN',
              'ip-address-family-configured': 'ipv4',
            },
          ],
        },
      },
    );
  });

  it('refuses names, descriptions, RDs and RTs ODL would refuse or could not use', () => {
    rejects(
      () => putVpnInstance('sodium', { ...sodium, name: 'n'.repeat(41) }),
      /vpn-instance-name/,
      /length 41 outside 1\.\.40/,
    );
    rejects(() => putVpnInstance('sodium', { ...sodium, description: 'why?' }), /description/, /'\?'/);
    rejects(
      () => putVpnInstance('sodium', { ...sodium, description: '' }),
      /description/,
      /length 0 outside 1\.\.242/,
    );
    rejects(
      () => putVpnInstance('sodium', { ...sodium, description: 'd'.repeat(243) }),
      /description/,
      /length 243 outside 1\.\.242/,
    );
    rejects(
      () =>
        putVpnInstance('sodium', { ...sodium, ipv4Family: { routeDistinguishers: ['1'], vpnTargets: [] } }),
      /ipv4-family\/route-distinguisher\[0\]/,
      /length 1 outside 3\.\.21/,
    );
    rejects(
      () =>
        putVpnInstance('sodium', {
          ...sodium,
          ipv4Family: {
            routeDistinguishers: ['100:1'],
            vpnTargets: [{ value: '4294967296:1', type: 'both' }],
          },
        }),
      /vrfRTValue/,
      /neither an AS number nor an IPv4/,
    );
    rejects(
      () =>
        putVpnInstance('sodium', {
          ...sodium,
          ipv4Family: { routeDistinguishers: ['70000:65536'], vpnTargets: [] },
        }),
      /route-distinguisher/,
      /above 65535/,
    );
    rejects(
      () => putVpnInstance('aluminium', sodium),
      /vpn-instance\[default\]/,
      /built for sodium, written to a aluminium/,
    );
  });
});

describe('vpn-interface bodies', () => {
  const vif = {
    name: 'default:nginx-1',
    vpnInstanceNames: [{ vpnName: 'default', associatedSubnetType: 'V4Subnet' as const }],
    routerInterface: false,
    adjacencies: [
      {
        ipAddress: '10.11.1.5/32',
        macAddress: 'fa:16:3e:4b:2c:01',
        adjacencyType: 'primary-adjacency' as const,
      },
    ],
  };

  it('Sodium: adjacency is the odl-l3vpn augment', () => {
    assert.deepEqual(put(putVpnInterface('sodium', vif)), {
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
                mac_address: 'fa:16:3e:4b:2c:01',
                adjacency_type: 'primary-adjacency',
              },
            ],
          },
        ],
      },
    });
  });

  it('Aluminium: adjacency unprefixed, external allowed, dpn-id as a string', () => {
    assert.deepEqual(put(putVpnInterface('aluminium', { ...vif, external: false, dpnId: '1' })).body, {
      'l3vpn-instances-interfaces:vpn-interface': [
        {
          name: 'default:nginx-1',
          'vpn-instance-names': [{ 'vpn-name': 'default', 'associated-subnet-type': 'V4Subnet' }],
          'dpn-id': '1',
          'router-interface': false,
          external: false,
          adjacency: [
            {
              ip_address: '10.11.1.5/32',
              mac_address: 'fa:16:3e:4b:2c:01',
              adjacency_type: 'primary-adjacency',
            },
          ],
        },
      ],
    });
  });

  it('one adjacency on its own, under the augment member', () => {
    assert.deepEqual(
      put(
        putAdjacency('sodium', 'default:nginx-1', {
          ipAddress: '10.11.1.5/32',
          adjacencyType: 'primary-adjacency',
          subnetId: UID,
          subnetGatewayIp: '10.11.1.1',
        }),
      ),
      {
        url: 'l3vpn:vpn-interfaces/vpn-interface/default:nginx-1/odl-l3vpn:adjacency/10.11.1.5%2F32',
        body: {
          'odl-l3vpn:adjacency': [
            {
              ip_address: '10.11.1.5/32',
              adjacency_type: 'primary-adjacency',
              subnet_id: UID,
              subnet_gateway_ip: '10.11.1.1',
            },
          ],
        },
      },
    );
  });

  it('refuses a vpn-name over 40, external in Sodium, a bad subnet_id', () => {
    rejects(
      () => putVpnInterface('sodium', { ...vif, vpnInstanceNames: [{ vpnName: 'v'.repeat(41) }] }),
      /vpn-instance-names\[0\]\/vpn-name/,
      /length 41 outside 1\.\.40/,
    );
    rejects(() => putVpnInterface('sodium', { ...vif, external: false }), /external/, /Sodium/);
    rejects(
      () =>
        putVpnInterface('sodium', { ...vif, adjacencies: [{ ipAddress: '10.11.1.5/32', subnetId: 'nope' }] }),
      /subnet_id/,
      /not a UUID/,
    );
    rejects(
      () =>
        putVpnInterface('sodium', {
          ...vif,
          adjacencies: [{ ipAddress: '10.11.1.5/32' }, { ipAddress: '10.11.1.5/32' }],
        }),
      /adjacency\[1\]/,
      /duplicate/,
    );
  });
});

describe('DHCP, NAT and COE bodies', () => {
  it('DHCP network and one pool', () => {
    const pool = {
      subnet: '10.11.1.0/24',
      allocateFrom: '10.11.1.2',
      allocateTo: '10.11.1.254',
      gateway: '10.11.1.1',
      dnsServers: ['10.96.0.10'],
    };
    assert.deepEqual(
      put(putDhcpNetwork('sodium', { networkId: '192.168.56.101:default', allocationPools: [pool] })),
      {
        url: 'dhcp_allocation_pool:dhcp_allocation_pool/network/192.168.56.101:default',
        body: {
          'dhcp_allocation_pool:network': [
            {
              'network-id': '192.168.56.101:default',
              'allocation-pool': [
                {
                  subnet: '10.11.1.0/24',
                  'allocate-from': '10.11.1.2',
                  'allocate-to': '10.11.1.254',
                  gateway: '10.11.1.1',
                  'dns-servers': ['10.96.0.10'],
                },
              ],
            },
          ],
        },
      },
    );
    assert.deepEqual(
      put(putAllocationPool('sodium', 'n1', pool)).url,
      'dhcp_allocation_pool:dhcp_allocation_pool/network/n1/allocation-pool/10.11.1.0%2F24',
    );
    rejects(() => putAllocationPool('sodium', 'n1', { subnet: '10.11.1.0' }), /subnet/, /not an IP prefix/);
    rejects(
      () => putAllocationPool('sodium', 'n1', { subnet: '10.11.1.0/33' }),
      /subnet/,
      /not an IP prefix/,
    );
  });

  it('NAT router ports', () => {
    assert.deepEqual(
      put(
        putRouterPorts('sodium', {
          routerId: UID,
          externalNetworkId: UID2,
          ports: [
            {
              portName: UID,
              internalToExternalPortMap: [
                { internalIp: '10.11.1.5', externalIp: '172.24.4.10', externalId: UID2 },
              ],
            },
          ],
        }),
      ),
      {
        url: `odl-nat:floating-ip-info/router-ports/${UID}`,
        body: {
          'odl-nat:router-ports': [
            {
              'router-id': UID,
              'external-network-id': UID2,
              ports: [
                {
                  'port-name': UID,
                  'internal-to-external-port-map': [
                    { 'internal-ip': '10.11.1.5', 'external-ip': '172.24.4.10', 'external-id': UID2 },
                  ],
                },
              ],
            },
          ],
        },
      },
    );
    rejects(
      () =>
        putRouterPorts('sodium', {
          routerId: 'r',
          ports: [{ portName: 'p', internalToExternalPortMap: [{ internalIp: '10.11.1.5/32' }] }],
        }),
      /internal-ip/,
      /not an IPv4/,
    );
  });

  it('COE pod, with the leaves NetVirt needs although the model does not', () => {
    const pod = {
      uid: UID,
      name: 'nginx-1',
      clusterId: UID2,
      hostIpAddress: '192.168.56.101',
      networkNs: 'default',
      portMacAddress: 'fa:16:3e:00:00:01',
      interfaces: [{ uid: UID2, ipAddress: '10.11.1.5', networkId: UID2, networkType: 'VXLAN' as const }],
    };
    assert.deepEqual(put(putCoePod('sodium', pod)), {
      url: `pod:coe/pods/${UID}`,
      body: {
        'pod:pods': [
          {
            uid: UID,
            name: 'nginx-1',
            'cluster-id': UID2,
            'host-ip-address': '192.168.56.101',
            'network-NS': 'default',
            'port-mac-address': 'fa:16:3e:00:00:01',
            interface: [
              { uid: UID2, 'ip-address': '10.11.1.5', 'network-id': UID2, 'network-type': 'VXLAN' },
            ],
          },
        ],
      },
    });
    const { networkNs: _ns, ...withoutNs } = pod;
    rejects(() => putCoePod('sodium', withoutNs), /network-NS/, /PodListener/);
    const { hostIpAddress: _h, ...withoutHost } = pod;
    rejects(() => putCoePod('sodium', withoutHost), /host-ip-address/, /PodListener/);
    rejects(() => putCoePod('sodium', { ...pod, interfaces: [] }), /interface/, /interface\[0\]/);
  });

  it('COE service (headless has no cluster IP), endpoints with unkeyed lists, k8s node', () => {
    assert.deepEqual(
      put(
        putCoeService('sodium', {
          uid: UID,
          name: 'web',
          clusterIpAddress: '10.96.0.20',
          networkNs: 'default',
          servicePorts: [
            { name: 'http', port: 80, targetPort: 'http' },
            { port: 443, targetPort: '8443', nodePort: 30443 },
          ],
        }),
      ).body,
      {
        'service:services': [
          {
            uid: UID,
            name: 'web',
            'cluster-ip-address': '10.96.0.20',
            'network-NS': 'default',
            'service-ports': [
              { name: 'http', port: 80, 'target-port': 'http' },
              { port: 443, 'target-port': '8443', 'node-port': 30443 },
            ],
          },
        ],
      },
    );
    rejects(
      () => putCoeService('sodium', { uid: UID, clusterIpAddress: 'None' }),
      /cluster-ip-address/,
      /headless/,
    );
    assert.deepEqual(
      put(
        putCoeEndpoints('sodium', {
          uid: UID,
          name: 'web',
          endpointAddresses: [
            { ipAddress: '10.11.1.5', nodeName: 'n1' },
            { ipAddress: '10.11.1.5', nodeName: 'n1' },
          ],
          endpointPorts: [{ name: 'http', port: 8080 }],
        }),
      ),
      {
        url: `service:endpoints-info/endpoints/${UID}`,
        body: {
          'service:endpoints': [
            {
              uid: UID,
              name: 'web',
              'endpoint-addresses': [
                { 'ip-address': '10.11.1.5', 'node-name': 'n1' },
                { 'ip-address': '10.11.1.5', 'node-name': 'n1' },
              ],
              'endpoint-ports': [{ name: 'http', port: 8080 }],
            },
          ],
        },
      },
    );
    assert.deepEqual(
      put(
        putK8sNode('sodium', {
          uid: UID,
          clusterId: UID2,
          hostName: 'n1',
          internalIpAddress: '192.168.56.101',
          podCidr: '10.11.1.0/24',
        }),
      ),
      {
        url: `k8s-node:k8s-nodes-info/k8s-nodes/${UID}`,
        body: {
          'k8s-node:k8s-nodes': [
            {
              uid: UID,
              'cluster-id': UID2,
              'host-name': 'n1',
              'internal-ip-address': '192.168.56.101',
              'pod-cidr': '10.11.1.0/24',
            },
          ],
        },
      },
    );
    rejects(() => putK8sNode('sodium', { uid: 'node-1' }), /uid/, /not a UUID/);
  });
});
