import type { Profile } from '../netvirt/profile.js';
import { boolean, empty, enumeration, formatted, identityref, integer, string } from './leaf-types.js';
import { container, leaf, leafList, link, list, type Definition, type SchemaRoot } from './schema.js';

/**
 * The NetVirt/Genius/COE subtrees odlcoe touches, transcribed from netvirt-model.md (Sodium and
 * Aluminium). `M` marks a mandatory leaf, `ro` a config-false node. YANG defaults are not
 * listed: ODL does not store them, and neither does the emulator.
 */

const ip = formatted('ip-address');
const prefix = formatted('ip-prefix');
const mac = formatted('phys-address');
const uuid = formatted('uuid');
const uint16 = integer('uint16');
const uint32 = integer('uint32');
const uint64 = integer('uint64');
const int32 = integer('int32');
const str = string();

/** iana-if-type identities (a common subset) plus the interface types odl-interface defines. */
const INTERFACE_TYPES = [
  'other',
  'ethernetCsmacd',
  'softwareLoopback',
  'propVirtual',
  'propMultiplexor',
  'l2vlan',
  'l3ipvlan',
  'tunnel',
  'ieee8023adLag',
  'bridge',
  'mpls',
  'ipForward',
  'ieee80211',
  'fastEther',
  'gigabitEthernet',
]
  .map((id) => `iana-if-type:${id}`)
  .concat(['odl-interface:stacked-vlan', 'odl-interface:mpls']);

const TUNNEL_TYPES = ['vxlan', 'vxlan-gpe', 'gre', 'mpls-over-gre', 'logical-group'].map(
  (t) => `odl-interface:tunnel-type-${t}`,
);
const SEGMENT_TYPES = ['flat', 'vlan', 'vxlan', 'gre'].map((t) => `elan:segment-type-${t}`);
const NETWORK_TYPE = enumeration('FLAT', 'VLAN', 'VXLAN', 'GRE');

/**
 * aclservice's `interface-acl` augment of ietf-interfaces. `interface-type` came with
 * Magnesium (netvirt 3e7aaee2f3); Sodium refuses it as an unknown element.
 */
function interfaceAcl(profile: Profile): Definition[] {
  return [
    leaf('aclservice:port-security-enabled', boolean),
    leafList('aclservice:security-groups', uuid),
    list(
      'aclservice:allowed-address-pairs',
      ['mac-address', 'ip-address'],
      [leaf('mac-address', mac), leaf('ip-address', formatted('ip-prefix-or-address'))],
    ),
    ...(profile === 'sodium'
      ? []
      : [leaf('aclservice:interface-type', enumeration('access-port', 'dhcp-service'))]),
    list(
      'aclservice:subnet-info',
      ['subnet-id'],
      [
        leaf('subnet-id', uuid),
        leaf('ip-version', identityref('aclservice:ip-version-v4', 'aclservice:ip-version-v6')),
        leaf('ip-prefix', prefix),
        leaf(
          'ipv6-ra-mode',
          identityref(
            'aclservice:ipv6-ra-mode-slaac',
            'aclservice:ipv6-ra-mode-dhcpv6-stateful',
            'aclservice:ipv6-ra-mode-dhcpv6-stateless',
          ),
        ),
        leaf('gateway-ip', ip),
      ],
    ),
  ];
}

const interfaces = (profile: Profile) =>
  container('ietf-interfaces:interfaces', [
    list(
      'interface',
      ['name'],
      [
        ...interfaceAcl(profile),
        leaf('name', str),
        leaf('type', identityref(...INTERFACE_TYPES), 'M'),
        leaf('description', str),
        leaf('enabled', boolean),
        leaf('link-up-down-trap-enable', enumeration('enabled', 'disabled')),
        leaf('odl-interface:override-split-horizon-protection', boolean),
        leaf('odl-interface:datapath-node-identifier', uint64),
        leaf('odl-interface:parent-interface', str),
        list(
          'odl-interface:node-identifier',
          ['topology-id'],
          [leaf('topology-id', str), leaf('node-id', str)],
        ),
        leaf('odl-interface:vlan-id', integer('uint16', [0, 4095])),
        leaf(
          'odl-interface:l2vlan-mode',
          enumeration('access', 'native-tagged', 'native-untagged', 'trunk', 'trunk-member', 'transparent'),
        ),
        leaf('odl-interface:external', boolean),
        leaf('odl-interface:internal', boolean),
        leaf('odl-interface:tunnel-interface-type', identityref(...TUNNEL_TYPES)),
        leaf('odl-interface:tunnel-source', ip),
        leaf('odl-interface:tunnel-destination', ip),
        leaf('odl-interface:tunnel-gateway', ip),
        leaf('odl-interface:tunnel-source-ip-flow', boolean),
        leaf('odl-interface:tunnel-remote-ip-flow', boolean),
        leaf('odl-interface:weight', uint16),
        list(
          'odl-interface:tunnel-options',
          ['tunnel-option'],
          [leaf('tunnel-option', str), leaf('value', str)],
        ),
        leaf('odl-interface:monitor-enabled', boolean),
        leaf('odl-interface:monitor-interval', uint32),
        leaf(
          'odl-interface:monitor-protocol',
          identityref(
            'odl-interface:tunnel-monitoring-type-bfd',
            'odl-interface:tunnel-monitoring-type-lldp',
          ),
        ),
        list(
          'odl-interface:monitor-config',
          ['monitor-config-key'],
          [leaf('monitor-config-key', str), leaf('monitor-config-value', str)],
        ),
        leaf('odl-interface:stacked_vlan-id', integer('uint16', [1, 4094])),
        leafList('odl-interface:labelStack', integer('uint32', [15, 1048575])),
        leaf('odl-interface:numLabels', integer('uint8', [1, 7])),
      ],
    ),
  ]);

const portRange = (name: string) =>
  container(name, [leaf('lower-port', uint16, 'M'), leaf('upper-port', uint16)]);

/**
 * `ietf-access-control-list` (the 2016 draft NetVirt ships, with ietf-packet-fields' matches
 * inlined: JSON has no choice or case nodes) and aclservice's augments of it. `acl-tag` came
 * with Magnesium; Sodium's aclservice allocated tags itself and its model refuses the leaf.
 */
function accessLists(profile: Profile): Definition {
  const acl = 'ietf-access-control-list';
  return container(`${acl}:access-lists`, [
    list(
      'acl',
      ['acl-type', 'acl-name'],
      [
        leaf('acl-name', str),
        leaf('acl-type', identityref(...['ipv4-acl', 'ipv6-acl', 'eth-acl'].map((t) => `${acl}:${t}`))),
        ...(profile === 'sodium' ? [] : [leaf('aclservice:acl-tag', uint16)]),
        container('access-list-entries', [
          list(
            'ace',
            ['rule-name'],
            [
              leaf('rule-name', str),
              container('matches', [
                leaf('source-ipv4-network', prefix),
                leaf('destination-ipv4-network', prefix),
                leaf('source-ipv6-network', prefix),
                leaf('destination-ipv6-network', prefix),
                leaf('flow-label', integer('uint32', [0, 1048575])),
                leaf('dscp', integer('uint8', [0, 63])),
                leaf('protocol', integer('uint8')),
                portRange('source-port-range'),
                portRange('destination-port-range'),
                leaf('destination-mac-address', mac),
                leaf('destination-mac-address-mask', mac),
                leaf('source-mac-address', mac),
                leaf('source-mac-address-mask', mac),
                leaf('input-interface', str),
              ]),
              container('actions', [leaf('deny', empty), leaf('permit', empty)]),
              leaf('aclservice:remote-group-id', uuid),
              leaf(
                'aclservice:direction',
                identityref('aclservice:direction-ingress', 'aclservice:direction-egress'),
              ),
              leaf('aclservice:deleted', boolean),
            ],
          ),
        ]),
      ],
    ),
  ]);
}

/** Operational only; the emulator fills it from configured interfaces (see odl-writebacks.ts). */
const interfacesState = container(
  'ietf-interfaces:interfaces-state',
  [
    list(
      'interface',
      ['name'],
      [
        leaf('name', str),
        leaf('type', identityref(...INTERFACE_TYPES), 'M'),
        leaf('admin-status', enumeration('up', 'down', 'testing')),
        leaf(
          'oper-status',
          enumeration('up', 'down', 'testing', 'unknown', 'dormant', 'not-present', 'lower-layer-down'),
        ),
        leaf('last-change', str),
        leaf('if-index', integer('int32', [1, 2147483647])),
        leaf('phys-address', mac),
        leafList('higher-layer-if', str),
        leafList('lower-layer-if', str),
        leaf('speed', uint64),
      ],
    ),
  ],
  'ro',
);

const elanInstances = container('elan:elan-instances', [
  list(
    'elan-instance',
    ['elan-instance-name'],
    [
      leaf('elan-instance-name', str),
      leaf('elan-tag', uint32),
      leaf('segment-type', identityref(...SEGMENT_TYPES)),
      leaf('segmentation-id', uint32),
      leaf('physical-network-name', str),
      leaf('external', boolean),
      leaf('mac-timeout', integer('uint32', [0, 65535])),
      leaf('description', string({ length: [1, 254] })),
      list(
        'elan-segments',
        ['segmentation-index'],
        [
          leaf('segmentation-index', uint32),
          leaf('physical-network-name', str),
          leaf('segment-type', identityref(...SEGMENT_TYPES)),
          leaf('segmentation-id', uint32),
        ],
      ),
      list('external-teps', ['tep-ip'], [leaf('tep-ip', ip), leaf('nodeid', str)]),
      leaf('evpn-name', str),
      leaf('l3vpn-name', str),
    ],
  ),
]);

const elanInterfaces = container('elan:elan-interfaces', [
  list(
    'elan-interface',
    ['name'],
    [
      leaf('name', str),
      leaf('elan-instance-name', str, 'M'),
      list('static-mac-entries', ['mac-address'], [leaf('mac-address', mac), leaf('ip-prefix', ip)]),
      leaf('description', string({ length: [1, 254] })),
    ],
  ),
]);

const rdOrRt = string({ length: [3, 21] });
const vpnTargets = container('vpnTargets', [
  list(
    'vpnTarget',
    ['vrfRTValue'],
    [
      leaf('vrfRTValue', rdOrRt, 'M'),
      leaf('vrfRTType', enumeration('export_extcommunity', 'import_extcommunity', 'both'), 'M'),
    ],
  ),
]);

/** Sodium `l3vpn` address family (ipv4-family and ipv6-family are identical). */
function addressFamily(name: string): Definition {
  const percent = integer('uint8', [1, 100]);
  const limit = integer('uint32', [1, 4294967295]);
  return container(name, [
    leafList('route-distinguisher', rdOrRt),
    vpnTargets,
    container('apply-label', [
      leaf('apply-label-per-route', boolean),
      leaf('apply-label-per-instance', boolean),
    ]),
    leaf('import-route-policy', string({ length: [1, 40] })),
    leaf('export-route-policy', string({ length: [1, 40] })),
    container('prefix-limit', [
      leaf('prefix-limit-number', limit),
      leaf('alert-percent-value', percent),
      leaf('route-unchanged', boolean),
      leaf('simple-alert', boolean),
    ]),
    container('routing-table-limit', [
      leaf('routing-table-limit-number', limit),
      leaf('alert-percent-value', percent),
      leaf('simple-alert', boolean),
    ]),
    leaf('vpn-frr', boolean),
    container('l3vpnVrfPipe', [
      leaf('pipeMode', enumeration('pipe', 'shortPipe', 'uniform')),
      leaf('serviceClass', enumeration('be', 'af1', 'af2', 'af3', 'af4', 'ef', 'cs6', 'cs7')),
      leaf('color', enumeration('green', 'yellow', 'red')),
      leaf('dsName', str),
    ]),
    container('l3vpnTtlMode', [leaf('ttlMode', enumeration('pipe', 'uniform'))]),
    leaf('tunnel-policy', string({ length: [1, 39] })),
    container('importRibs', [
      leaf(
        'protocol',
        enumeration('ALL', 'Direct', 'OSPF', 'ISIS', 'Static', 'RIP', 'BGP', 'OSPFV3', 'RIPNG', 'INVALID'),
      ),
      leaf('processId', uint32),
      leaf('bgp-valid-route', boolean),
      leaf('policyName', str),
    ]),
    leaf('traffic-statistics', boolean),
  ]);
}

const sodiumVpnInstances = container('l3vpn:vpn-instances', [
  list(
    'vpn-instance',
    ['vpn-instance-name'],
    [
      leaf('vpn-instance-name', str),
      leaf('type', enumeration('l3', 'l2')),
      leaf('l3vni', uint32),
      leaf('description', string({ length: [1, 242], forbidden: '?' })),
      addressFamily('ipv4-family'),
      addressFamily('ipv6-family'),
    ],
  ),
]);

const aluminiumVpnInstances = container('l3vpn-instances-interfaces:vpn-instances', [
  list(
    'vpn-instance',
    ['vpn-instance-name'],
    [
      leaf('vpn-instance-name', str),
      leafList('route-distinguisher', rdOrRt),
      vpnTargets,
      leaf('l2vpn', boolean),
      leaf('bgpvpn-type', enumeration('InternetBGPVPN', 'BGPVPN', 'InternalVPN')),
      leaf('ip-address-family-configured', enumeration('undefined', 'ipv4', 'ipv6', 'ipv4-and-ipv6')),
      leaf('l3vni', uint32),
    ],
  ),
]);

/** vpn-interface; `adjacencyName` is `odl-l3vpn:adjacency` (S augment) or `adjacency` (A). */
function vpnInterfaces(top: string, adjacencyName: string, aluminium: boolean): Definition {
  const adjacency = list(
    adjacencyName,
    ['ip_address'],
    [
      leaf('ip_address', str),
      leafList('next-hop-ip-list', str),
      leaf('adjacency_type', enumeration('primary-adjacency', 'learnt-ip', 'extra-route')),
      leaf('mac_address', str),
      leaf('subnet_id', uuid),
      leaf('subnet_gateway_ip', str),
      leaf('phys-network-func', boolean),
      leaf('label', uint32, 'ro'),
      leaf('subnet_gateway_mac_address', str, 'ro'),
      leaf('vrf-id', str, 'ro'),
      leaf('marked_for_deletion', boolean, 'ro'),
    ],
  );
  return container(top, [
    list(
      'vpn-interface',
      ['name'],
      [
        leaf('name', str),
        list(
          'vpn-instance-names',
          ['vpn-name'],
          [
            leaf('vpn-name', string({ length: [1, 40] })),
            leaf(
              'associated-subnet-type',
              enumeration('V4Subnet', 'V6Subnet', 'V6InternetVPN', 'V4AndV6Subnets'),
            ),
          ],
        ),
        leaf('dpn-id', uint64),
        leaf('router-interface', boolean),
        leaf('network-id', uuid),
        leaf('network-type', NETWORK_TYPE),
        leaf('segmentation-id', uint32),
        ...(aluminium ? [leaf('external', boolean)] : []),
        adjacency,
      ],
    ),
  ]);
}

const dhcpAllocationPool = container('dhcp_allocation_pool:dhcp_allocation_pool', [
  list(
    'network',
    ['network-id'],
    [
      leaf('network-id', str),
      list(
        'allocation-pool',
        ['subnet'],
        [
          leaf('subnet', prefix),
          leaf('allocate-from', ip),
          leaf('allocate-to', ip),
          leaf('gateway', ip),
          leafList('dns-servers', ip),
        ],
      ),
      list(
        'allocations',
        ['subnet'],
        [
          leaf('subnet', prefix),
          list('allocation-instance', ['mac'], [leaf('mac', mac), leaf('allocated-ip', ip)]),
        ],
      ),
    ],
  ),
]);

const floatingIpInfo = container('odl-nat:floating-ip-info', [
  list(
    'router-ports',
    ['router-id'],
    [
      leaf('router-id', str),
      leaf('external-network-id', uuid),
      list(
        'ports',
        ['port-name'],
        [
          leaf('port-name', str),
          list(
            'internal-to-external-port-map',
            ['internal-ip'],
            [
              leaf('internal-ip', str),
              leaf('external-ip', str),
              leaf('external-id', uuid),
              leaf('label', uint32, 'ro'),
            ],
          ),
        ],
      ),
    ],
  ),
]);

const coe = container('pod:coe', [
  list(
    'pods',
    ['uid'],
    [
      leaf('uid', uuid),
      leaf('name', str),
      leaf('host-ip-address', ip),
      leaf('cluster-id', uuid),
      leaf('network-NS', str),
      leaf('port-mac-address', str),
      list(
        'interface',
        ['uid'],
        [
          leaf('uid', uuid),
          leaf('ip-address', ip),
          leaf('network-id', uuid),
          leaf('network-type', NETWORK_TYPE),
        ],
      ),
    ],
  ),
]);

const serviceInformation = container('service:service-information', [
  list(
    'services',
    ['uid'],
    [
      leaf('uid', uuid),
      leaf('name', str),
      leaf('cluster-id', uuid),
      leaf('cluster-ip-address', ip),
      leaf('network-NS', str),
      leafList('external-ip-address', ip),
      leaf('load-balancer-IP', ip),
      leafList('ingress-ip-address', ip),
      list(
        'service-ports',
        [],
        [leaf('name', str), leaf('port', int32), leaf('target-port', str), leaf('node-port', int32)],
      ),
    ],
  ),
]);

const endpointsInfo = container('service:endpoints-info', [
  list(
    'endpoints',
    ['uid'],
    [
      leaf('uid', uuid),
      leaf('name', str),
      leaf('network-NS', str),
      list(
        'endpoint-addresses',
        [],
        [leaf('ip-address', ip), leaf('host-name', str), leaf('node-name', str)],
      ),
      list('endpoint-ports', [], [leaf('name', str), leaf('port', int32)]),
    ],
  ),
]);

const k8sNodesInfo = container('k8s-node:k8s-nodes-info', [
  leaf('id', str),
  list(
    'k8s-nodes',
    ['uid'],
    [
      leaf('uid', uuid),
      leaf('cluster-id', uuid),
      leaf('host-name', str),
      leaf('external-ip-address', ip),
      leaf('internal-ip-address', ip),
      leaf('pod-cidr', str),
    ],
  ),
]);

/**
 * ietf-yang-library (RFC 7895) `modules-state`, operational only: ODL's RFC 8040 northbound
 * writes it whenever the schema context changes (netconf `SchemaContextHandler`,
 * `RestconfMappingNodeUtil.mapModulesByIetfYangLibraryYang`); the emulator fills it at start.
 */
const modulesState = container(
  'ietf-yang-library:modules-state',
  [
    leaf('module-set-id', str),
    list(
      'module',
      ['name', 'revision'],
      [
        leaf('name', str),
        leaf('revision', str),
        leaf('schema', str),
        leaf('namespace', str),
        leafList('feature', str),
        leaf('conformance-type', enumeration('implement', 'import')),
      ],
    ),
  ],
  'ro',
);

/** Optional features an emulator can be started with (what a Karaf feature adds to ODL). */
export type EmulatorFeature = 'coe';
export const EMULATOR_FEATURES: readonly EmulatorFeature[] = ['coe'];

/**
 * What a release has installed unless told otherwise: Sodium with `odl-netvirt-coe` (the COE
 * models), Aluminium without (no release after Sodium shipped them).
 */
export function defaultFeatures(profile: Profile): EmulatorFeature[] {
  return profile === 'sodium' ? ['coe'] : [];
}

/** Why a feature cannot be installed on a release (undefined: it can). */
export function featureProblem(profile: Profile, feature: EmulatorFeature): string | undefined {
  if (feature === 'coe' && profile !== 'sodium')
    return `no ${profile} release ships the COE models (k8s-node, pod, service, k8s-cluster): COE left the distribution before Magnesium`;
  return undefined;
}

/** Name, revision and namespace of each module the emulator serves, as ODL lists them. */
export interface ModuleInfo {
  name: string;
  revision: string;
  namespace: string;
}

const MODULE_INFO: Record<string, Omit<ModuleInfo, 'name'>> = {
  'ietf-yang-library': { revision: '2016-06-21', namespace: 'urn:ietf:params:xml:ns:yang:ietf-yang-library' },
  'ietf-interfaces': { revision: '2014-05-08', namespace: 'urn:ietf:params:xml:ns:yang:ietf-interfaces' },
  'iana-if-type': { revision: '2017-01-19', namespace: 'urn:ietf:params:xml:ns:yang:iana-if-type' },
  'odl-interface': { revision: '2016-04-06', namespace: 'urn:opendaylight:genius:interfacemanager' },
  elan: { revision: '2015-06-02', namespace: 'urn:opendaylight:netvirt:elan' },
  dhcp_allocation_pool: {
    revision: '2016-12-14',
    namespace: 'urn:opendaylight:netvirt:dhcp_allocation_pool',
  },
  'odl-nat': { revision: '2016-01-11', namespace: 'urn:opendaylight:netvirt:natservice' },
  l3vpn: { revision: '2014-08-15', namespace: 'urn:huawei:params:xml:ns:yang:l3vpn' },
  'odl-l3vpn': { revision: '2013-09-11', namespace: 'urn:opendaylight:netvirt:l3vpn' },
  'l3vpn-instances-interfaces': {
    revision: '2020-02-04',
    namespace: 'urn:opendaylight:netvirt:neutronvpn:l3vpn',
  },
  pod: { revision: '2017-06-11', namespace: 'urn:opendaylight:coe:northbound:pod' },
  service: { revision: '2017-06-11', namespace: 'urn:opendaylight:coe:northbound:service' },
  'k8s-node': { revision: '2017-08-29', namespace: 'urn:opendaylight:coe:northbound:k8s-node' },
  'k8s-cluster': { revision: '2018-11-27', namespace: 'urn:opendaylight:coe:northbound:k8s-cluster' },
  'ietf-access-control-list': {
    revision: '2016-02-18',
    namespace: 'urn:ietf:params:xml:ns:yang:ietf-access-control-list',
  },
  aclservice: { revision: '2016-06-08', namespace: 'urn:opendaylight:netvirt:aclservice' },
};

/** The modules of a schema, as ODL's module listings name them (sorted by name). */
export function moduleList(schema: SchemaRoot): ModuleInfo[] {
  return [...schema.modules].sort().map((name) => {
    const info = MODULE_INFO[name];
    if (!info) throw new Error(`no revision and namespace known for module ${name}`);
    return { name, ...info };
  });
}

const k8sClustersInfo = container('k8s-cluster:k8s-clusters-info', [
  list('k8s-clusters', ['cluster-id'], [leaf('cluster-id', uuid)]),
]);

const COMMON_MODULES = [
  'ietf-yang-library',
  'ietf-interfaces',
  'iana-if-type',
  'odl-interface',
  'elan',
  'dhcp_allocation_pool',
  'odl-nat',
  'ietf-access-control-list',
  'aclservice',
];

/** Common to both releases; the ACL modules and the interface augments differ in detail. */
const commonTopLevel = (profile: Profile) => [
  modulesState,
  interfaces(profile),
  accessLists(profile),
  interfacesState,
  elanInstances,
  elanInterfaces,
  dhcpAllocationPool,
  floatingIpInfo,
];

/** The COE northbound models (Sodium's odl-netvirt-coe pulls in coe's odl-coe-api). */
const COE_MODULES = ['pod', 'service', 'k8s-node', 'k8s-cluster'];
const COE_TOP_LEVEL = [coe, serviceInformation, endpointsInfo, k8sNodesInfo, k8sClustersInfo];

/**
 * The schema a given NetVirt release loads with the given features: the other release's VPN
 * modules do not exist, and neither do the COE modules without the `coe` feature (an URL into
 * a module that does not exist answers 400 unknown-element, as ODL does).
 */
export function netvirtSchema(
  profile: Profile,
  features: readonly EmulatorFeature[] = defaultFeatures(profile),
): SchemaRoot {
  for (const feature of features) {
    const problem = featureProblem(profile, feature);
    if (problem) throw new Error(problem);
  }
  const coeModules = features.includes('coe') ? COE_MODULES : [];
  const coeTop = features.includes('coe') ? COE_TOP_LEVEL : [];
  if (profile === 'sodium') {
    return link(
      [...COMMON_MODULES, ...coeModules, 'l3vpn', 'odl-l3vpn'],
      [
        ...commonTopLevel(profile),
        ...coeTop,
        sodiumVpnInstances,
        vpnInterfaces('l3vpn:vpn-interfaces', 'odl-l3vpn:adjacency', false),
      ],
    );
  }
  return link(
    [...COMMON_MODULES, ...coeModules, 'l3vpn-instances-interfaces'],
    [
      ...commonTopLevel(profile),
      ...coeTop,
      aluminiumVpnInstances,
      vpnInterfaces('l3vpn-instances-interfaces:vpn-interfaces', 'adjacency', true),
    ],
  );
}
