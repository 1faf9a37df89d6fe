/**
 * Shared pieces of the contract tests: a realistic object of every NetVirt kind odlcoe writes,
 * an emulator + client pair per (profile, dialect), and the one function that turns a planned
 * `WriteOp` into a RESTCONF request. The objects are what a real cluster produces (names,
 * markers, MACs and subnet ids come from the naming rules, not invented strings), so a
 * contract that holds for them holds for what the watcher writes.
 */
import { after, before } from 'node:test';
import { silentLogger } from '../../src/common/log.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import {
  clusterUuid,
  elanInstanceName,
  elanMarkerUid,
  IF_TYPE_L2VLAN,
  interfaceName,
  ownershipMarker,
  podMac,
  subnetId,
  type AllocationPool,
  type CoeEndpoints,
  type CoePod,
  type CoeService,
  type DhcpNetwork,
  type ElanInstance,
  type ElanInterface,
  type Interface,
  type K8sNode,
  type OwnerContext,
  type Profile,
  type RouterPorts,
  type VpnInstance,
  type VpnInterface,
  type WriteOp,
} from '../../src/netvirt/index.js';
import { RestconfClient } from '../../src/restconf/client.js';
import type { Dialect } from '../../src/restconf/path.js';

export const PROFILES: readonly Profile[] = ['sodium', 'aluminium'];
export const DIALECTS: readonly Dialect[] = ['bierman02', 'rfc8040'];

export const CLUSTER = 'contract';
export const RD_ADMINISTRATOR = '64512';
export const ROUTE_TARGET = '64512:1';

export function ownerContext(profile: Profile): OwnerContext {
  return { clusterName: CLUSTER, profile, routeTarget: ROUTE_TARGET, rdAdministrator: RD_ADMINISTRATOR };
}

// One pod `default/nginx-7c5ddbdf54-x8m2q` on node 192.168.56.101 with pod subnet 10.11.1.0/24.
export const NODE_IP = '192.168.56.101';
export const NODE_UID = '5a0e6c1e-2b7d-4b8e-9d4a-1f2e3d4c5b6a';
export const NAMESPACE = 'default';
export const NAMESPACE_UID = '0f6d1c2b-3a4e-4f5a-8b6c-7d8e9f0a1b2c';
export const POD_NAME = 'nginx-7c5ddbdf54-x8m2q';
export const POD_UID = '3c9a2f1e-8d7b-4c6a-9e5f-0a1b2c3d4e5f';
export const POD_IP = '10.11.1.5';
export const NODE_SUBNET = '10.11.1.0/24';
export const GATEWAY = '10.11.1.1';

export const IF_NAME = interfaceName(NAMESPACE, POD_NAME);
export const ELAN_NAME = elanInstanceName(NODE_IP, NAMESPACE);
export const POD_MARKER = ownershipMarker(CLUSTER, 'pod', POD_UID);

export function sampleInterface(): Interface {
  return {
    name: IF_NAME,
    type: IF_TYPE_L2VLAN,
    enabled: true,
    l2vlanMode: 'trunk',
    external: false,
    description: POD_MARKER,
  };
}

export function sampleElanInstance(): ElanInstance {
  return {
    name: ELAN_NAME,
    segmentType: 'vxlan',
    external: false,
    description: ownershipMarker(CLUSTER, 'node-namespace', elanMarkerUid(NODE_UID, NAMESPACE_UID)),
  };
}

export function sampleElanInterface(): ElanInterface {
  return {
    name: IF_NAME,
    elanInstanceName: ELAN_NAME,
    staticMacEntries: [{ macAddress: podMac(POD_IP), ipPrefix: POD_IP }],
    description: POD_MARKER,
  };
}

export function sampleVpnInstance(profile: Profile): VpnInstance {
  const rd = `${RD_ADMINISTRATOR}:7`;
  if (profile === 'sodium') {
    return {
      profile,
      name: NAMESPACE,
      type: 'l3',
      l3vni: 0,
      description: ownershipMarker(CLUSTER, 'namespace', NAMESPACE_UID),
      ipv4Family: { routeDistinguishers: [rd], vpnTargets: [{ value: ROUTE_TARGET, type: 'both' }] },
    };
  }
  return {
    profile,
    name: NAMESPACE,
    routeDistinguishers: [rd],
    vpnTargets: [{ value: ROUTE_TARGET, type: 'both' }],
    l2vpn: false,
    bgpvpnType: 'InternalVPN',
    ipAddressFamilyConfigured: 'ipv4',
  };
}

export function samplePrimaryAdjacency(): VpnInterface['adjacencies'][number] {
  return {
    ipAddress: `${POD_IP}/32`,
    macAddress: podMac(POD_IP),
    adjacencyType: 'primary-adjacency',
    subnetId: subnetId(NODE_IP),
    subnetGatewayIp: GATEWAY,
  };
}

export function sampleVpnInterface(): VpnInterface {
  return {
    name: IF_NAME,
    vpnInstanceNames: [{ vpnName: NAMESPACE, associatedSubnetType: 'V4Subnet' }],
    routerInterface: false,
    adjacencies: [samplePrimaryAdjacency()],
  };
}

export function sampleDhcpNetwork(): DhcpNetwork {
  return {
    networkId: ELAN_NAME,
    allocationPools: [
      {
        subnet: NODE_SUBNET,
        allocateFrom: '10.11.1.2',
        allocateTo: '10.11.1.254',
        gateway: GATEWAY,
        dnsServers: ['10.96.0.10'],
      },
    ],
  };
}

/** A second pool, written on its own (the key is a prefix: `/` travels as `%2F`). */
export function sampleIpv6Pool(): AllocationPool {
  return {
    subnet: 'fd00:10:11:1::/64',
    allocateFrom: 'fd00:10:11:1::2',
    allocateTo: 'fd00:10:11:1::ffff',
    gateway: 'fd00:10:11:1::1',
    dnsServers: ['fd00:10:96::a'],
  };
}

export function sampleRouterPorts(): RouterPorts {
  return {
    routerId: '8f14e45f-ceea-4e7a-9f6b-2b1c3d4e5f60',
    externalNetworkId: 'c9f0f895-fb98-4b9a-8c1d-2e3f4a5b6c7d',
    ports: [
      {
        portName: 'd3d94468-02a4-4c9b-8e7f-6a5b4c3d2e1f',
        internalToExternalPortMap: [
          {
            internalIp: POD_IP,
            externalIp: '172.24.4.10',
            externalId: 'e4da3b7f-bbce-4d8a-9c2b-1a0f9e8d7c6b',
          },
        ],
      },
    ],
  };
}

export function sampleCoePod(): CoePod {
  return {
    uid: POD_UID,
    name: POD_NAME,
    hostIpAddress: NODE_IP,
    clusterId: clusterUuid(CLUSTER),
    networkNs: NAMESPACE,
    portMacAddress: podMac(POD_IP),
    interfaces: [
      {
        uid: '6512bd43-d9ca-4a6e-8f1b-2c3d4e5f6a7b',
        ipAddress: POD_IP,
        networkId: 'c20ad4d7-6fe9-4759-8a3b-4c5d6e7f8a9b',
        networkType: 'VXLAN',
      },
    ],
  };
}

export function sampleCoeService(): CoeService {
  return {
    uid: 'c51ce410-c124-4a10-9e2f-3a4b5c6d7e8f',
    name: 'nginx',
    clusterId: clusterUuid(CLUSTER),
    clusterIpAddress: '10.96.12.34',
    networkNs: NAMESPACE,
    externalIpAddresses: ['172.24.4.20'],
    loadBalancerIp: '172.24.4.21',
    ingressIpAddresses: ['172.24.4.22', '172.24.4.23'],
    // Unkeyed list: order and a repeated name must survive as written.
    servicePorts: [
      { name: 'http', port: 80, targetPort: '8080', nodePort: 30080 },
      { name: 'https', port: 443, targetPort: 'https', nodePort: 30443 },
    ],
  };
}

export function sampleCoeEndpoints(): CoeEndpoints {
  return {
    uid: 'c51ce410-c124-4a10-9e2f-3a4b5c6d7e8f',
    name: 'nginx',
    networkNs: NAMESPACE,
    endpointAddresses: [
      { ipAddress: POD_IP, hostName: POD_NAME, nodeName: 'worker-1' },
      { ipAddress: '10.11.2.7', hostName: 'nginx-7c5ddbdf54-k2j9w', nodeName: 'worker-2' },
    ],
    endpointPorts: [
      { name: 'http', port: 8080 },
      { name: 'https', port: 8443 },
    ],
  };
}

export function sampleK8sNode(): K8sNode {
  return {
    uid: NODE_UID,
    clusterId: clusterUuid(CLUSTER),
    hostName: 'worker-1',
    internalIpAddress: NODE_IP,
    externalIpAddress: '203.0.113.11',
    podCidr: NODE_SUBNET,
  };
}

/** An emulator and a client speaking `dialect` to it; `close` stops both. */
export interface Controller {
  emulator: Emulator;
  client: RestconfClient;
  close(): Promise<void>;
}

export async function startController(profile: Profile, dialect: Dialect): Promise<Controller> {
  const emulator = await startEmulator({
    port: 0,
    profile,
    // Genius' write-back of parent-interface, so its preservation is part of the contract.
    fillParentInterface: true,
    logger: silentLogger(),
  });
  const client = new RestconfClient({
    baseUrl: emulator.url,
    dialect,
    auth: { kind: 'basic', user: 'admin', password: 'admin' },
    // A contract failure must show up as the status ODL would give, not be retried away.
    retry: { maxAttempts: 1 },
    timeoutMs: 30_000,
  });
  return {
    emulator,
    client,
    async close() {
      client.close();
      await emulator.close();
    },
  };
}

/**
 * For the describe it is called in: an emulator and client started before its tests and closed
 * after them. The returned object reaches the running pair (and throws if the before hook failed).
 */
export function controllerForSuite(profile: Profile, dialect: Dialect): Controller {
  let ctl: Controller | undefined;
  before(async () => {
    ctl = await startController(profile, dialect);
  });
  after(async () => {
    await ctl?.close();
  });
  const running = (): Controller => {
    if (!ctl) throw new Error(`no emulator for ${profile}/${dialect}: it did not start`);
    return ctl;
  };
  return {
    get emulator() {
      return running().emulator;
    },
    get client() {
      return running().client;
    },
    close: async () => ctl?.close(),
  };
}

/** Sends a planned write the way the watcher does: PUT with the built body, or DELETE. */
export async function apply(
  client: RestconfClient,
  op: WriteOp,
): Promise<'created' | 'replaced' | 'deleted' | 'absent'> {
  return op.op === 'put' ? client.put(op.path, op.body) : client.delete(op.path);
}

/**
 * Requests the emulator refused (4xx/5xx) since `baseline` (a `counters().requests` snapshot),
 * as `"PUT 400"` → count. A 404 to a GET or DELETE is an answer ("nothing there"), not a
 * refusal: the tests read and delete missing data on purpose.
 */
export function failedRequests(
  emulator: Emulator,
  baseline: Record<string, number> = {},
): Record<string, number> {
  return Object.fromEntries(
    Object.entries(emulator.counters().requests)
      .map(([k, n]): [string, number] => [k, n - (baseline[k] ?? 0)])
      .filter(([k, n]) => n > 0 && /\s[45]\d\d$/.test(k) && k !== 'GET 404' && k !== 'DELETE 404'),
  );
}
