import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Profile } from '../netvirt/profile.js';
import type { Emulator } from './server.js';
import { call, errorTag, startQuiet } from './testing.js';

/** The example bodies of netvirt-model.md, per profile, and variants ODL refuses. */
const UUID1 = 'c0ffee00-0000-4000-8000-000000000001';
const UUID2 = 'c0ffee00-0000-4000-8000-000000000002';
const IFACE = '/restconf/config/ietf-interfaces:interfaces/interface/default:nginx-1';
const ELAN = '/restconf/config/elan:elan-instances/elan-instance/192.168.56.101:default';
const ELAN_IF = '/restconf/config/elan:elan-interfaces/elan-interface/default:nginx-1';
const VPN_S = '/restconf/config/l3vpn:vpn-instances/vpn-instance/default';
const VPNIF_S = '/restconf/config/l3vpn:vpn-interfaces/vpn-interface/default:nginx-1';
const VPN_A = '/restconf/config/l3vpn-instances-interfaces:vpn-instances/vpn-instance/default';
const VPNIF_A = '/restconf/config/l3vpn-instances-interfaces:vpn-interfaces/vpn-interface/default:nginx-1';
const DHCP = '/restconf/config/dhcp_allocation_pool:dhcp_allocation_pool/network/192.168.56.101:default';
const NAT = `/restconf/config/odl-nat:floating-ip-info/router-ports/${UUID1}`;
const POD = `/restconf/config/pod:coe/pods/${UUID1}`;
const SERVICE = `/restconf/config/service:service-information/services/${UUID1}`;
const ENDPOINTS = `/restconf/config/service:endpoints-info/endpoints/${UUID1}`;
const NODE = `/restconf/config/k8s-node:k8s-nodes-info/k8s-nodes/${UUID1}`;

const iface = (extra: Record<string, unknown> = {}) => ({
  'ietf-interfaces:interface': [
    {
      name: 'default:nginx-1',
      type: 'iana-if-type:l2vlan',
      enabled: true,
      'odl-interface:l2vlan-mode': 'trunk',
      ...extra,
    },
  ],
});
const elan = (extra: Record<string, unknown> = {}) => ({
  'elan:elan-instance': [
    {
      'elan-instance-name': '192.168.56.101:default',
      'segment-type': 'elan:segment-type-vxlan',
      'segmentation-id': 1001,
      ...extra,
    },
  ],
});
const elanIf = (extra: Record<string, unknown> = {}) => ({
  'elan:elan-interface': [
    {
      name: 'default:nginx-1',
      'elan-instance-name': '192.168.56.101:default',
      'static-mac-entries': [{ 'mac-address': '0a:58:0a:0b:01:05', 'ip-prefix': '10.11.1.5' }],
      ...extra,
    },
  ],
});
const target = (extra: Record<string, unknown> = {}) => ({
  vpnTargets: { vpnTarget: [{ vrfRTValue: '100:1', vrfRTType: 'both', ...extra }] },
});
const vpnS = (extra: Record<string, unknown> = {}, family: Record<string, unknown> = {}) => ({
  'l3vpn:vpn-instance': [
    {
      'vpn-instance-name': 'default',
      type: 'l3',
      l3vni: 0,
      'ipv4-family': { 'route-distinguisher': ['100:1'], ...target(), ...family },
      ...extra,
    },
  ],
});
const adjacency = (extra: Record<string, unknown> = {}) => ({
  ip_address: '10.11.1.5/32',
  mac_address: '0a:58:0a:0b:01:05',
  adjacency_type: 'primary-adjacency',
  subnet_id: UUID2,
  subnet_gateway_ip: '10.11.1.1',
  ...extra,
});
const vpnIfS = (extra: Record<string, unknown> = {}, adj: Record<string, unknown> = {}) => ({
  'l3vpn:vpn-interface': [
    {
      name: 'default:nginx-1',
      'vpn-instance-names': [{ 'vpn-name': 'default', 'associated-subnet-type': 'V4Subnet' }],
      'router-interface': false,
      'odl-l3vpn:adjacency': [adjacency(adj)],
      ...extra,
    },
  ],
});
const vpnA = (extra: Record<string, unknown> = {}) => ({
  'l3vpn-instances-interfaces:vpn-instance': [
    {
      'vpn-instance-name': 'default',
      'route-distinguisher': ['100:1'],
      ...target(),
      'bgpvpn-type': 'InternalVPN',
      ...extra,
    },
  ],
});
const vpnIfA = () => ({
  'l3vpn-instances-interfaces:vpn-interface': [
    {
      name: 'default:nginx-1',
      'vpn-instance-names': [{ 'vpn-name': 'default', 'associated-subnet-type': 'V4Subnet' }],
      'router-interface': false,
      adjacency: [adjacency()],
    },
  ],
});
const dhcp = (pool: Record<string, unknown> = {}) => ({
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
          ...pool,
        },
      ],
    },
  ],
});
const nat = () => ({
  'odl-nat:router-ports': [
    {
      'router-id': UUID1,
      'external-network-id': UUID2,
      ports: [
        {
          'port-name': UUID2,
          'internal-to-external-port-map': [
            { 'internal-ip': '10.11.1.5', 'external-ip': '172.24.4.10', 'external-id': UUID1 },
          ],
        },
      ],
    },
  ],
});
const pod = (extra: Record<string, unknown> = {}) => ({
  'pod:pods': [
    {
      uid: UUID1,
      name: 'nginx-1',
      'cluster-id': UUID2,
      'host-ip-address': '192.168.56.101',
      'network-NS': 'default',
      'port-mac-address': 'fa:16:3e:00:00:01',
      interface: [{ uid: UUID2, 'ip-address': '10.11.1.5', 'network-id': UUID1, 'network-type': 'VXLAN' }],
      ...extra,
    },
  ],
});
const service = (extra: Record<string, unknown> = {}) => ({
  'service:services': [
    {
      uid: UUID1,
      name: 'web',
      'cluster-id': UUID2,
      'cluster-ip-address': '10.96.0.20',
      'network-NS': 'default',
      'external-ip-address': ['172.24.4.20'],
      'service-ports': [
        { name: 'http', port: 80, 'target-port': '8080' },
        { name: 'http', port: 80, 'target-port': 'web' },
      ],
      ...extra,
    },
  ],
});
const endpoints = () => ({
  'service:endpoints': [
    {
      uid: UUID1,
      name: 'web',
      'network-NS': 'default',
      'endpoint-addresses': [{ 'ip-address': '10.11.1.5', 'host-name': 'nginx-1', 'node-name': 'node-1' }],
      'endpoint-ports': [{ name: 'http', port: 8080 }],
    },
  ],
});
const node = (extra: Record<string, unknown> = {}) => ({
  'k8s-node:k8s-nodes': [
    {
      uid: UUID1,
      'cluster-id': UUID2,
      'host-name': 'node-1',
      'external-ip-address': '172.24.4.2',
      'internal-ip-address': '192.168.56.101',
      'pod-cidr': '10.11.1.0/24',
      ...extra,
    },
  ],
});

type Case = [name: string, path: string, body: unknown];

const VALID_COMMON: Case[] = [
  ['interface', IFACE, iface()],
  [
    'interface with unprefixed augment member and string boolean',
    IFACE,
    {
      'ietf-interfaces:interface': [
        {
          name: 'default:nginx-1',
          type: 'iana-if-type:l2vlan',
          enabled: 'true',
          'l2vlan-mode': 'trunk',
          'odl-interface:vlan-id': '4095',
        },
      ],
    },
  ],
  ['elan-instance', ELAN, elan()],
  [
    'elan-instance with unprefixed identity of its own module and number as string',
    ELAN,
    elan({
      'segment-type': 'segment-type-vlan',
      'segmentation-id': '100',
      'mac-timeout': 0,
      description: 'x'.repeat(254),
    }),
  ],
  ['elan-interface', ELAN_IF, elanIf()],
  ['dhcp network', DHCP, dhcp()],
  [
    'dhcp network with IPv6 pool',
    DHCP,
    dhcp({
      subnet: 'fd00:11::/64',
      'allocate-from': 'fd00:11::2',
      'allocate-to': 'fd00:11::ff',
      gateway: 'fd00:11::1',
      'dns-servers': [],
    }),
  ],
  ['floating-ip router-ports', NAT, nat()],
];
/** The COE models: Sodium with odl-netvirt-coe only (no later release has them). */
const VALID_COE: Case[] = [
  ['coe pod', POD, pod()],
  ['coe service with keyless service-ports (duplicates allowed)', SERVICE, service()],
  ['coe endpoints', ENDPOINTS, endpoints()],
  ['k8s node', NODE, node()],
  [
    'k8s-nodes-info container with its id leaf',
    '/restconf/config/k8s-node:k8s-nodes-info',
    { 'k8s-node:k8s-nodes-info': { id: 'cluster', 'k8s-nodes': node()['k8s-node:k8s-nodes'] } },
  ],
];
const VALID: Record<Profile, Case[]> = {
  sodium: [
    ...VALID_COMMON,
    ...VALID_COE,
    ['l3vpn vpn-instance', VPN_S, vpnS()],
    [
      'l3vpn vpn-instance with ipv6-family and description',
      VPN_S,
      vpnS({ description: 'd'.repeat(242), 'ipv6-family': { 'route-distinguisher': ['100:2'] } }),
    ],
    ['l3vpn vpn-interface with odl-l3vpn:adjacency', VPNIF_S, vpnIfS({ 'dpn-id': '1234' })],
    [
      'one odl-l3vpn adjacency by its prefix key',
      `${VPNIF_S}/odl-l3vpn:adjacency/10.11.1.5%2F32`,
      { 'odl-l3vpn:adjacency': [adjacency()] },
    ],
  ],
  aluminium: [
    ...VALID_COMMON,
    ['l3vpn-instances-interfaces vpn-instance', VPN_A, vpnA()],
    ['l3vpn-instances-interfaces vpn-interface with adjacency', VPNIF_A, vpnIfA()],
  ],
};

type BadCase = [name: string, path: string, body: unknown, status: number, tag: string];

const INVALID_COMMON: BadCase[] = [
  ['unknown member', IFACE, iface({ colour: 'red' }), 400, 'unknown-element'],
  [
    'interface without its mandatory type',
    IFACE,
    { 'ietf-interfaces:interface': [{ name: 'default:nginx-1' }] },
    400,
    'invalid-value',
  ],
  ['identity of another module without prefix', IFACE, iface({ type: 'l2vlan' }), 400, 'invalid-value'],
  ['unknown identity', IFACE, iface({ type: 'iana-if-type:warp-drive' }), 400, 'invalid-value'],
  ['vlan-id above 4095', IFACE, iface({ 'odl-interface:vlan-id': 4096 }), 400, 'invalid-value'],
  ['unknown enum', IFACE, iface({ 'odl-interface:l2vlan-mode': 'bogus' }), 400, 'invalid-value'],
  ['boolean as "yes"', IFACE, iface({ enabled: 'yes' }), 400, 'invalid-value'],
  [
    'uint64 with a fraction',
    IFACE,
    iface({ 'odl-interface:datapath-node-identifier': 1.5 }),
    400,
    'invalid-value',
  ],
  [
    'tunnel-source not an ip',
    IFACE,
    iface({ 'odl-interface:tunnel-source': '10.0.0.256' }),
    400,
    'invalid-value',
  ],
  ['elan description empty', ELAN, elan({ description: '' }), 400, 'invalid-value'],
  ['elan description of 255 characters', ELAN, elan({ description: 'x'.repeat(255) }), 400, 'invalid-value'],
  ['mac-timeout above 65535', ELAN, elan({ 'mac-timeout': 70000 }), 400, 'invalid-value'],
  ['negative uint32', ELAN, elan({ 'segmentation-id': -1 }), 400, 'invalid-value'],
  ['uint32 as a word', ELAN, elan({ 'segmentation-id': 'many' }), 400, 'invalid-value'],
  [
    'elan-interface without elan-instance-name',
    ELAN_IF,
    { 'elan:elan-interface': [{ name: 'default:nginx-1' }] },
    400,
    'invalid-value',
  ],
  [
    'bad mac-address',
    ELAN_IF,
    elanIf({ 'static-mac-entries': [{ 'mac-address': 'zz:58:0a:0b:01:05' }] }),
    400,
    'invalid-value',
  ],
  [
    'static-mac-entries ip-prefix with a length',
    ELAN_IF,
    elanIf({ 'static-mac-entries': [{ 'mac-address': '0a:58:0a:0b:01:05', 'ip-prefix': '10.11.1.5/32' }] }),
    400,
    'invalid-value',
  ],
  [
    'list entry without its key',
    ELAN_IF,
    elanIf({ 'static-mac-entries': [{ 'ip-prefix': '10.11.1.5' }] }),
    400,
    'malformed-message',
  ],
  ['allocation-pool subnet without a length', DHCP, dhcp({ subnet: '10.11.1.0' }), 400, 'invalid-value'],
  ['allocation-pool IPv4 prefix length 33', DHCP, dhcp({ subnet: '10.11.1.0/33' }), 400, 'invalid-value'],
  [
    'bad uuid',
    NAT,
    { 'odl-nat:router-ports': [{ 'router-id': UUID1, 'external-network-id': 'not-a-uuid' }] },
    400,
    'invalid-value',
  ],
  [
    'config-false label in a write',
    NAT,
    {
      'odl-nat:router-ports': [
        {
          'router-id': UUID1,
          ports: [
            { 'port-name': 'p', 'internal-to-external-port-map': [{ 'internal-ip': '10.0.0.1', label: 5 }] },
          ],
        },
      ],
    },
    400,
    'unknown-element',
  ],
];
const INVALID_COE: BadCase[] = [
  [
    'pod uid key not a uuid',
    '/restconf/config/pod:coe/pods/not-a-uuid',
    { 'pod:pods': [{ uid: 'not-a-uuid' }] },
    400,
    'invalid-value',
  ],
  [
    'pod network-type in lower case',
    POD,
    pod({ interface: [{ uid: UUID2, 'network-type': 'vxlan' }] }),
    400,
    'invalid-value',
  ],
  [
    'service-ports given as an object',
    SERVICE,
    service({ 'service-ports': { name: 'http' } }),
    400,
    'malformed-message',
  ],
  ['service cluster-ip "None"', SERVICE, service({ 'cluster-ip-address': 'None' }), 400, 'invalid-value'],
  [
    'endpoint port beyond int32',
    ENDPOINTS,
    { 'service:endpoints': [{ uid: UUID1, 'endpoint-ports': [{ port: 2147483648 }] }] },
    400,
    'invalid-value',
  ],
  ['string leaf given a boolean', NODE, node({ 'host-name': true }), 400, 'invalid-value'],
];
const INVALID_MORE: BadCase[] = [
  [
    'body key differs from the URL key',
    IFACE,
    { 'ietf-interfaces:interface': [{ name: 'default:other', type: 'iana-if-type:l2vlan' }] },
    400,
    'invalid-value',
  ],
  [
    'entry not wrapped in a one-element array',
    IFACE,
    { 'ietf-interfaces:interface': { name: 'default:nginx-1', type: 'iana-if-type:l2vlan' } },
    400,
    'malformed-message',
  ],
];
const INVALID: Record<Profile, BadCase[]> = {
  sodium: [
    ...INVALID_COMMON,
    ...INVALID_MORE,
    ...INVALID_COE,
    [
      'vpnTarget without vrfRTType',
      VPN_S,
      vpnS({}, { vpnTargets: { vpnTarget: [{ vrfRTValue: '100:1' }] } }),
      400,
      'invalid-value',
    ],
    [
      'route distinguisher of 2 characters',
      VPN_S,
      vpnS({}, { 'route-distinguisher': ['1:'] }),
      400,
      'invalid-value',
    ],
    [
      'route target of 22 characters',
      VPN_S,
      vpnS({}, target({ vrfRTValue: '1234567890:12345678901' })),
      400,
      'invalid-value',
    ],
    ['vpn description with ?', VPN_S, vpnS({ description: 'why?' }), 400, 'invalid-value'],
    [
      'vpn description of 243 characters',
      VPN_S,
      vpnS({ description: 'd'.repeat(243) }),
      400,
      'invalid-value',
    ],
    [
      'RD directly in the entry (Aluminium layout)',
      VPN_S,
      { 'l3vpn:vpn-instance': [{ 'vpn-instance-name': 'default', 'route-distinguisher': ['100:1'] }] },
      400,
      'unknown-element',
    ],
    [
      'vpn-name of 41 characters',
      VPNIF_S,
      vpnIfS({ 'vpn-instance-names': [{ 'vpn-name': 'v'.repeat(41) }] }),
      400,
      'invalid-value',
    ],
    ['config-false adjacency label', VPNIF_S, vpnIfS({}, { label: 3 }), 400, 'unknown-element'],
    ['adjacency_type unknown', VPNIF_S, vpnIfS({}, { adjacency_type: 'primary' }), 400, 'invalid-value'],
    [
      'adjacency key differs from URL',
      `${VPNIF_S}/odl-l3vpn:adjacency/10.11.1.6%2F32`,
      { 'odl-l3vpn:adjacency': [adjacency()] },
      400,
      'invalid-value',
    ],
  ],
  aluminium: [
    ...INVALID_COMMON,
    ...INVALID_MORE,
    // No release after Sodium has the COE models.
    ...VALID_COE.map(([name, path, body]): BadCase => [
      `COE model: ${name}`,
      path,
      body,
      400,
      'unknown-element',
    ]),
    [
      'Sodium adjacency augment member',
      VPNIF_A,
      {
        'l3vpn-instances-interfaces:vpn-interface': [
          { name: 'default:nginx-1', 'odl-l3vpn:adjacency': [adjacency()] },
        ],
      },
      400,
      'unknown-element',
    ],
    [
      'Sodium ipv4-family',
      VPN_A,
      { 'l3vpn-instances-interfaces:vpn-instance': [{ 'vpn-instance-name': 'default', 'ipv4-family': {} }] },
      400,
      'unknown-element',
    ],
    [
      'vpnTarget without vrfRTType',
      VPN_A,
      {
        'l3vpn-instances-interfaces:vpn-instance': [
          { 'vpn-instance-name': 'default', vpnTargets: { vpnTarget: [{ vrfRTValue: '100:1' }] } },
        ],
      },
      400,
      'invalid-value',
    ],
    ['bgpvpn-type unknown', VPN_A, vpnA({ 'bgpvpn-type': 'Internal' }), 400, 'invalid-value'],
    ['Sodium module in the URL', VPN_S, vpnS(), 400, 'unknown-element'],
  ],
};

for (const profile of ['sodium', 'aluminium'] as const) {
  describe(`schema checks, ${profile} profile`, () => {
    let emu: Emulator;
    before(async () => {
      emu = await startQuiet({ profile });
    });
    after(() => emu.close());

    for (const [name, path, body] of VALID[profile]) {
      it(`accepts: ${name}`, async () => {
        const reply = await call(emu.url, 'PUT', path, body);
        assert.ok([200, 201].includes(reply.status), `${reply.status} ${reply.text}`);
        assert.equal((await call(emu.url, 'GET', path)).status, 200);
      });
    }

    for (const [name, path, body, status, tag] of INVALID[profile]) {
      it(`refuses: ${name} (${status} ${tag})`, async () => {
        const reply = await call(emu.url, 'PUT', path, body);
        assert.equal(reply.status, status, reply.text);
        assert.equal(errorTag(reply), tag, reply.text);
      });
    }
  });
}

describe('stored values are normalised to their types', () => {
  let emu: Emulator;
  before(async () => {
    emu = await startQuiet();
  });
  after(() => emu.close());

  it('reads back strings as numbers and booleans, and identities with their prefix', async () => {
    await call(
      emu.url,
      'PUT',
      ELAN,
      elan({ 'segment-type': 'segment-type-vlan', 'segmentation-id': '100', external: 'false' }),
    );
    const got = (
      await call(
        emu.url,
        'GET',
        ELAN.replace('/restconf/config/', '/rests/data/').replace('/elan-instance/', '/elan-instance='),
      )
    ).json() as Record<string, Record<string, unknown>[]>;
    const entry = got['elan:elan-instance']![0]!;
    assert.equal(entry['segment-type'], 'elan:segment-type-vlan');
    assert.equal(entry['segmentation-id'], 100);
    assert.equal(entry.external, false);
  });

  it('checks mandatory leaves on the data after a merge, and refuses deleting a mandatory leaf', async () => {
    const patch = await call(emu.url, 'PATCH', '/rests/data/elan:elan-interfaces/elan-interface=new-if', {
      'elan:elan-interface': [{ name: 'new-if', description: 'd' }],
    });
    assert.equal(patch.status, 400);
    assert.equal(
      (await call(emu.url, 'GET', '/rests/data/elan:elan-interfaces/elan-interface=new-if')).status,
      404,
    );
    await call(emu.url, 'PUT', ELAN_IF, elanIf());
    const del = await call(
      emu.url,
      'DELETE',
      '/rests/data/elan:elan-interfaces/elan-interface=default:nginx-1/elan-instance-name',
    );
    assert.equal(del.status, 400);
    assert.equal(
      (
        await call(
          emu.url,
          'GET',
          '/rests/data/elan:elan-interfaces/elan-interface=default:nginx-1/elan-instance-name',
        )
      ).status,
      200,
    );
  });

  it('replaces keyless lists whole on merge and keeps their order and duplicates', async () => {
    await call(emu.url, 'PUT', SERVICE, service());
    const path = `/rests/data/service:service-information/services=${UUID1}`;
    await call(emu.url, 'PATCH', path, {
      'service:services': [{ uid: UUID1, 'service-ports': [{ name: 'dns', port: 53 }] }],
    });
    const got = (await call(emu.url, 'GET', `${path}/service-ports`)).json() as Record<string, unknown[]>;
    assert.deepEqual(got['service:service-ports'], [{ name: 'dns', port: 53 }]);
  });
});
