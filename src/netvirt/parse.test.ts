import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCoePods, parseCoeServices, parseCoeEndpoints } from './coe/model.js';
import { parseK8sNodes } from './k8s-node.js';
import { parseDhcpNetworks } from './dhcp.js';
import { parseElanInstances, parseElanInterfaces, putElanInstance } from './elan.js';
import { OdlParseError } from './errors.js';
import { parseInterfaces, putInterface } from './interfaces.js';
import { parseRouterPorts } from './nat.js';
import { parseVpnInstances, parseVpnInterfaces, putVpnInterface } from './vpn.js';

function parseError(fn: () => unknown, where: RegExp, reason: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof OdlParseError, `expected OdlParseError, got ${String(err)}`);
    assert.match(err.where, where);
    assert.match(err.reason, reason);
    return true;
  });
}

describe('parsing ODL GET answers', () => {
  it('reads interfaces from a bierman02 container answer, keeping what Genius added', () => {
    const body = {
      interfaces: {
        interface: [
          {
            name: 'default:nginx-1',
            type: 'iana-if-type:l2vlan',
            enabled: true,
            description: 'odlcoe:c1:pod:u1',
            'odl-interface:l2vlan-mode': 'trunk',
            'odl-interface:external': false,
            'odl-interface:parent-interface': 'veth0a0b0c0d',
            'odl-interface:datapath-node-identifier': 95075993027660,
          },
        ],
      },
    };
    assert.deepEqual(parseInterfaces(body), [
      {
        name: 'default:nginx-1',
        type: 'iana-if-type:l2vlan',
        enabled: true,
        description: 'odlcoe:c1:pod:u1',
        l2vlanMode: 'trunk',
        external: false,
        parentInterface: 'veth0a0b0c0d',
        datapathNodeIdentifier: '95075993027660',
      },
    ]);
  });

  it('reads the RFC 8040 one-entry form, with numbers and booleans as strings', () => {
    const body = {
      'ietf-interfaces:interface': [
        {
          name: 'x',
          type: 'iana-if-type:l2vlan',
          enabled: 'false',
          'odl-interface:vlan-id': '7',
          'odl-interface:datapath-node-identifier': '18446744073709551615',
        },
      ],
    };
    assert.deepEqual(parseInterfaces(body), [
      {
        name: 'x',
        type: 'iana-if-type:l2vlan',
        enabled: false,
        vlanId: 7,
        datapathNodeIdentifier: '18446744073709551615',
      },
    ]);
  });

  it('refuses a bare uint64 that JSON.parse has already rounded', () => {
    const body = JSON.parse(
      '{"interface":[{"name":"x","type":"iana-if-type:l2vlan","odl-interface:datapath-node-identifier":18446744073709551615}]}',
    );
    parseError(() => parseInterfaces(body), /interface\[0\]\/datapath-node-identifier/, /lost precision/);
  });

  it('keeps unknown members verbatim and writes them back in a later PUT', () => {
    const [parsed] = parseInterfaces({
      'ietf-interfaces:interfaces': {
        interface: [
          {
            name: 't',
            type: 'iana-if-type:tunnel',
            'odl-interface:tunnel-interface-type': 'odl-interface:tunnel-type-vxlan',
            'odl-interface:weight': 1,
          },
        ],
      },
    });
    assert.ok(parsed);
    assert.deepEqual(parsed.preserved, {
      'odl-interface:tunnel-interface-type': 'odl-interface:tunnel-type-vxlan',
      'odl-interface:weight': 1,
    });
    const op = putInterface('sodium', parsed);
    assert.deepEqual(op.op === 'put' && op.body, {
      'ietf-interfaces:interface': [
        {
          name: 't',
          type: 'iana-if-type:tunnel',
          'odl-interface:tunnel-interface-type': 'odl-interface:tunnel-type-vxlan',
          'odl-interface:weight': 1,
        },
      ],
    });
  });

  it('reads elan-instances with ELAN manager additions and an unprefixed identity', () => {
    const body = {
      'elan:elan-instances': {
        'elan-instance': [
          {
            'elan-instance-name': '192.168.56.101:default',
            'segment-type': 'segment-type-vxlan',
            external: false,
            description: 'm',
            'elan-tag': 5001,
            'mac-timeout': '300',
            'elan-segments': [],
          },
        ],
      },
    };
    const [e] = parseElanInstances(body);
    assert.deepEqual(e, {
      name: '192.168.56.101:default',
      segmentType: 'vxlan',
      external: false,
      description: 'm',
      elanTag: 5001,
      macTimeout: 300,
      preserved: { 'elan-segments': [] },
    });
    assert.ok(e);
    const op = putElanInstance('sodium', e);
    assert.deepEqual(op.op === 'put' && op.body, {
      'elan:elan-instance': [
        {
          'elan-instance-name': '192.168.56.101:default',
          'elan-tag': 5001,
          'segment-type': 'elan:segment-type-vxlan',
          external: false,
          'mac-timeout': 300,
          description: 'm',
          'elan-segments': [],
        },
      ],
    });
    parseError(
      () =>
        parseElanInstances({
          'elan-instance': [{ 'elan-instance-name': 'e', 'segment-type': 'elan:segment-type-mpls' }],
        }),
      /segment-type/,
      /unknown identity/,
    );
  });

  it('reads elan-interfaces; an empty container is an empty list', () => {
    assert.deepEqual(parseElanInterfaces({ 'elan-interfaces': {} }), []);
    assert.deepEqual(
      parseElanInterfaces({
        'elan:elan-interface': [
          {
            name: 'a:b',
            'elan-instance-name': 'e',
            'static-mac-entries': [{ 'mac-address': '0a:58:0a:0b:01:05', 'ip-prefix': '10.11.1.5' }],
          },
        ],
      }),
      [
        {
          name: 'a:b',
          elanInstanceName: 'e',
          staticMacEntries: [{ macAddress: '0a:58:0a:0b:01:05', ipPrefix: '10.11.1.5' }],
        },
      ],
    );
    parseError(
      () => parseElanInterfaces({ 'elan-interface': [{ name: 'a:b' }] }),
      /elan-interface\[0\]\/elan-instance-name/,
      /missing/,
    );
  });

  it('reads Sodium vpn-instances and refuses Aluminium-shaped ones', () => {
    const body = {
      'vpn-instances': {
        'vpn-instance': [
          {
            'vpn-instance-name': 'default',
            type: 'l3',
            l3vni: '0',
            description: 'm',
            'ipv4-family': {
              'route-distinguisher': ['100:1'],
              vpnTargets: { vpnTarget: [{ vrfRTValue: '100:9', vrfRTType: 'both' }] },
              'apply-label': { 'apply-label-per-route': true },
            },
          },
        ],
      },
    };
    assert.deepEqual(parseVpnInstances('sodium', body), [
      {
        profile: 'sodium',
        name: 'default',
        type: 'l3',
        l3vni: 0,
        description: 'm',
        ipv4Family: {
          routeDistinguishers: ['100:1'],
          vpnTargets: [{ value: '100:9', type: 'both' }],
          preserved: { 'apply-label': { 'apply-label-per-route': true } },
        },
      },
    ]);
    parseError(() => parseVpnInstances('aluminium', body), /ipv4-family/, /wrong profile/);
    parseError(
      () =>
        parseVpnInstances('sodium', {
          'vpn-instance': [{ 'vpn-instance-name': 'v', 'route-distinguisher': ['1:1'] }],
        }),
      /route-distinguisher/,
      /wrong profile/,
    );
  });

  it('reads Aluminium vpn-instances', () => {
    const body = {
      'l3vpn-instances-interfaces:vpn-instances': {
        'vpn-instance': [
          {
            'vpn-instance-name': 'default',
            'route-distinguisher': ['100:1'],
            vpnTargets: { vpnTarget: [{ vrfRTValue: '100:9', vrfRTType: 'both' }] },
            'bgpvpn-type': 'InternalVPN',
            l2vpn: false,
          },
        ],
      },
    };
    assert.deepEqual(parseVpnInstances('aluminium', body), [
      {
        profile: 'aluminium',
        name: 'default',
        routeDistinguishers: ['100:1'],
        vpnTargets: [{ value: '100:9', type: 'both' }],
        bgpvpnType: 'InternalVPN',
        l2vpn: false,
      },
    ]);
  });

  it('reads vpn-interfaces with learnt-ip adjacencies, dropping config-false leaves', () => {
    const sodium = {
      'vpn-interfaces': {
        'vpn-interface': [
          {
            name: 'default:nginx-1',
            'vpn-instance-names': [{ 'vpn-name': 'default', 'associated-subnet-type': 'V4Subnet' }],
            'router-interface': false,
            'dpn-id': 1,
            'odl-l3vpn:adjacency': [
              {
                ip_address: '10.11.1.5/32',
                mac_address: '0a:58:0a:0b:01:05',
                adjacency_type: 'primary-adjacency',
                subnet_id: 'e1618560-81d4-3072-9c57-0b10e6cf83a8',
                subnet_gateway_ip: '10.11.1.1',
                label: 100001,
                'vrf-id': '100:1',
              },
              { ip_address: '10.11.1.77/32', mac_address: '0a:58:0a:0b:01:4d', adjacency_type: 'learnt-ip' },
            ],
          },
        ],
      },
    };
    const expected = [
      {
        name: 'default:nginx-1',
        vpnInstanceNames: [{ vpnName: 'default', associatedSubnetType: 'V4Subnet' }],
        routerInterface: false,
        dpnId: '1',
        adjacencies: [
          {
            ipAddress: '10.11.1.5/32',
            macAddress: '0a:58:0a:0b:01:05',
            adjacencyType: 'primary-adjacency',
            subnetId: 'e1618560-81d4-3072-9c57-0b10e6cf83a8',
            subnetGatewayIp: '10.11.1.1',
          },
          { ipAddress: '10.11.1.77/32', macAddress: '0a:58:0a:0b:01:4d', adjacencyType: 'learnt-ip' },
        ],
      },
    ];
    assert.deepEqual(parseVpnInterfaces('sodium', sodium), expected);
    // Aluminium spells the adjacency unprefixed and may add external.
    const alu = {
      'l3vpn-instances-interfaces:vpn-interface': [
        { ...sodium['vpn-interfaces']['vpn-interface'][0], external: 'false' },
      ],
    };
    const [v] = parseVpnInterfaces('aluminium', alu);
    assert.equal(v?.external, false);
    assert.equal(v?.adjacencies.length, 2);
    // Written back, the dropped label/vrf-id stay dropped.
    assert.ok(v);
    const op = putVpnInterface('aluminium', v);
    assert.equal(JSON.stringify(op.op === 'put' && op.body).includes('label'), false);
    parseError(() => parseVpnInterfaces('sodium', alu), /external/, /wrong profile/);
  });

  it('reads DHCP pools, router ports and COE entries', () => {
    assert.deepEqual(
      parseDhcpNetworks({
        'dhcp_allocation_pool:dhcp_allocation_pool': {
          network: [
            {
              'network-id': 'e',
              'allocation-pool': [{ subnet: '10.11.1.0/24', gateway: '10.11.1.1' }],
              allocations: [],
            },
          ],
        },
      }),
      [
        {
          networkId: 'e',
          allocationPools: [{ subnet: '10.11.1.0/24', gateway: '10.11.1.1' }],
          preserved: { allocations: [] },
        },
      ],
    );
    assert.deepEqual(
      parseRouterPorts({
        'floating-ip-info': {
          'router-ports': [
            {
              'router-id': 'r',
              ports: [
                {
                  'port-name': 'p',
                  'internal-to-external-port-map': [
                    { 'internal-ip': '10.0.0.5', 'external-ip': '172.24.4.10', label: 7 },
                  ],
                },
              ],
            },
          ],
        },
      }),
      [
        {
          routerId: 'r',
          ports: [
            {
              portName: 'p',
              internalToExternalPortMap: [{ internalIp: '10.0.0.5', externalIp: '172.24.4.10' }],
            },
          ],
        },
      ],
    );
    assert.deepEqual(
      parseCoePods({
        'pod:coe': {
          pods: [{ uid: 'u', 'network-NS': 'default', interface: [{ uid: 'i', 'network-type': 'VXLAN' }] }],
        },
      }),
      [{ uid: 'u', networkNs: 'default', interfaces: [{ uid: 'i', networkType: 'VXLAN' }] }],
    );
    assert.deepEqual(
      parseCoeServices({ services: [{ uid: 'u', 'service-ports': [{ port: '80', 'target-port': 8080 }] }] }),
      [{ uid: 'u', servicePorts: [{ port: 80, targetPort: '8080' }] }],
    );
    assert.deepEqual(
      parseCoeEndpoints({
        'service:endpoints-info': { endpoints: [{ uid: 'u', 'endpoint-ports': [{ port: 80 }] }] },
      }),
      [{ uid: 'u', endpointPorts: [{ port: 80 }] }],
    );
    assert.deepEqual(
      parseK8sNodes({
        'k8s-nodes-info': { id: 'cluster', 'k8s-nodes': [{ uid: 'u', 'pod-cidr': '10.11.1.0/24' }] },
      }),
      [{ uid: 'u', podCidr: '10.11.1.0/24' }],
    );
  });

  it('names the place of malformed data', () => {
    parseError(() => parseInterfaces({ something: {} }), /interfaces/, /neither interfaces nor interface/);
    parseError(() => parseInterfaces('nope'), /interfaces/, /expected a JSON object/);
    parseError(
      () => parseInterfaces({ interfaces: { interface: [{ name: 'x' }] } }),
      /interfaces\/interface\[0\]\/type/,
      /missing/,
    );
    parseError(
      () => parseInterfaces({ interface: [{ name: 'x', type: 'iana-if-type:l2vlan', enabled: 'yes' }] }),
      /enabled/,
      /boolean/,
    );
    parseError(
      () => parseElanInstances({ 'elan-instance': [{ 'elan-instance-name': 'e', 'mac-timeout': 70000 }] }),
      /mac-timeout/,
      /0\.\.65535/,
    );
    parseError(
      () => parseVpnInterfaces('sodium', { 'vpn-interface': [{ name: 'x', 'odl-l3vpn:adjacency': {} }] }),
      /adjacency/,
      /expected a list/,
    );
  });
});
