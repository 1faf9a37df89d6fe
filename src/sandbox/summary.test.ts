import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DumpTree } from '../cli/dump.js';
import { compactProgress, describeGaps, renderProgress, type Progress } from './convergence.js';
import {
  gatewayProblems,
  renderDataPath,
  renderGateways,
  renderNextSteps,
  renderOdlSummary,
  type SandboxEndpoints,
} from './summary.js';
import { LiveBlock } from './terminal.js';

const dump: DumpTree = {
  cluster: 'sandbox',
  profile: 'sodium',
  vpns: [
    {
      name: 'shop',
      namespace: 'shop',
      routeDistinguisher: '64512:1',
      elans: [
        {
          name: '192.168.77.11:shop',
          nodeIp: '192.168.77.11',
          namespace: 'shop',
          nodeUid: 'n1',
          namespaceUid: 'ns1',
          segmentType: 'odl-interface:l2vlan',
          interfaces: [
            {
              name: 'shop:cart',
              namespace: 'shop',
              pod: 'cart',
              podUid: 'p1',
              ip: '10.77.1.2',
              mac: '0a:58:0a:4d:01:02',
              elanInstance: '192.168.77.11:shop',
              vpn: 'shop',
              adjacency: {
                ipPrefix: '10.77.1.2/32',
                mac: '0a:58:0a:4d:01:02',
                subnetId: 's',
                gatewayIp: '10.77.1.1',
              },
            },
            {
              name: 'shop:new',
              namespace: 'shop',
              pod: 'new',
              podUid: 'p2',
              ip: null,
              mac: null,
              elanInstance: '192.168.77.11:shop',
              vpn: null,
              adjacency: null,
            },
          ],
        },
      ],
    },
  ],
  elansWithoutVpn: [],
  interfacesWithoutElan: [],
  networks: [],
  nodeNetworks: [
    { network: 'odlcoe-node:node-1', node: 'node-1', subnets: ['10.77.1.0/24'] },
    { network: 'odlcoe-node:node-2', node: 'node-2', subnets: ['10.77.2.0/24'] },
  ],
  gateways: [],
  gatewayVpn: null,
  k8sNodes: [
    { uid: 'n2', hostName: 'node-2', internalIp: '192.168.77.12', externalIp: null, podCidr: '10.77.2.0/24' },
    { uid: 'n1', hostName: 'node-1', internalIp: '192.168.77.11', externalIp: null, podCidr: '10.77.1.0/24' },
  ],
  foreign: {},
  unparsed: [],
};

describe('the ODL summary', () => {
  it('goes namespace → node → pod, naming nodes by name, and says what is missing', () => {
    const text = renderOdlSummary(dump).join('\n');
    assert.match(text, /namespace shop: vpn-instance shop, rd 64512:1/);
    assert.match(text, /node-1 \(192\.168\.77\.11\): elan-instance 192\.168\.77\.11:shop, 2 pods/);
    assert.match(text, /cart +10\.77\.1\.2 +0a:58:0a:4d:01:02 +vpn-interface 10\.77\.1\.2\/32 in shop/);
    assert.match(text, /new +- +- +no vpn-interface yet \(no IP\)/);
    // Nodes by name, not by UID.
    assert.ok(text.indexOf('node-1 ') < text.indexOf('node-2 '));
  });
});

describe('the node gateways (Services on)', () => {
  const gateway = (node: string, n: number, routes: { prefix: string; nextHops: string[] }[]) => ({
    name: `odlcoe-gw.${node}`,
    node,
    nodeUid: `uid-${n}`,
    interface: true,
    elanInstance: true,
    elanInterface: true,
    vpnInterface: true,
    address: `10.77.${n}.2`,
    mac: `0a:58:0a:4d:0${n}:02`,
    vpn: 'odlcoe.gateways',
    adjacency: null,
    routes,
  });
  const service = { ref: 'shop/cart', prefixes: ['10.97.0.10/32'] };
  const withGateways: DumpTree = {
    ...dump,
    gateways: [
      gateway('node-1', 1, [{ prefix: '10.97.0.10/32', nextHops: ['10.77.1.2'] }]),
      {
        ...gateway('node-2', 2, [{ prefix: '10.97.0.10/32', nextHops: ['10.77.1.2'] }]),
        elanInterface: false,
      },
    ],
    gatewayVpn: { name: 'odlcoe.gateways', routeDistinguishers: ['64512:4294967295', '64512:4294967294'] },
  };

  it('shows each gateway’s entries and one Service’s route on every gateway', () => {
    const text = renderGateways(withGateways, service).join('\n');
    assert.match(text, /vpn-instance odlcoe\.gateways, rds 64512:4294967295, 64512:4294967294/);
    assert.match(text, /node-1 +odlcoe-gw\.node-1 +10\.77\.1\.2 .*vpn-interface ok; 1 Service route$/m);
    assert.match(text, /elan-interface MISSING/);
    assert.match(text, /Service shop\/cart \(10\.97\.0\.10\/32\)/);
    assert.match(text, /10\.97\.0\.10\/32 +on odlcoe-gw\.node-2 +next hop 10\.77\.1\.2/);
  });

  it('names what is wrong: a missing entry, a wrong next hop, a node without a gateway', () => {
    assert.deepEqual(gatewayProblems(withGateways, ['node-1', 'node-2', 'node-3'], service), [
      'gateway odlcoe-gw.node-2 misses its elan-interface',
      'gateway odlcoe-gw.node-2 routes 10.97.0.10/32 via 10.77.1.2, not its own 10.77.2.2',
      'node node-3 has no gateway in ODL',
    ]);
    assert.deepEqual(
      gatewayProblems({ ...withGateways, gateways: [withGateways.gateways[0]!] }, ['node-1'], service),
      [],
    );
    assert.deepEqual(gatewayProblems({ ...dump }, [], undefined), ['the gateway VPN is missing in ODL']);
  });
});

describe('the data path section', () => {
  it('is honest when nothing ran', () => {
    const text = renderDataPath([], 'not running as root').join('\n');
    assert.match(text, /not shown/);
    assert.match(text, /not running as root/);
  });

  it('lists ports, pings, TCP and UDP exchanges, and says cross-node traffic is not shown', () => {
    const text = renderDataPath(
      [
        {
          node: 'node-1',
          ports: [
            {
              name: 'veth0123abcd',
              ofport: 1,
              externalIds: { 'iface-id': 'shop:cart', 'attached-mac': 'm', 'ip-address': '10.77.1.2' },
            },
          ],
          pings: [
            {
              node: 'node-1',
              from: { pod: 'shop/cart', ip: '10.77.1.2' },
              to: { pod: 'shop/x', ip: '10.77.1.3' },
              ok: true,
              rttMs: 0.5,
            },
            {
              node: 'node-1',
              from: { pod: 'shop/cart', ip: '10.77.1.2' },
              to: { pod: 'shop/y', ip: '10.77.1.4' },
              ok: false,
              error: '100% packet loss',
            },
          ],
          traffic: [
            {
              node: 'node-1',
              from: { pod: 'shop/cart', ip: '10.77.1.2' },
              to: { pod: 'shop/x', ip: '10.77.1.3' },
              tcp: { ok: true, ms: 1.5 },
              udp: { ok: false, error: 'no UDP echo from 10.77.1.3:8080 within 5000 ms' },
            },
          ],
          checksumOffload:
            'pod interfaces: TX checksum offload turned off (datapath netdev, userspace-tso-enable false)',
        },
      ],
      undefined,
    ).join('\n');
    assert.match(text, /veth0123abcd +iface-id shop:cart/);
    assert.match(text, /ping shop\/cart 10\.77\.1\.2 -> shop\/x 10\.77\.1\.3: ok \(0\.5 ms\)/);
    assert.match(text, /-> shop\/y 10\.77\.1\.4: FAILED: 100% packet loss/);
    assert.match(text, /tcp +shop\/cart 10\.77\.1\.2 -> shop\/x 10\.77\.1\.3 HTTP GET: ok \(1\.5 ms\)/);
    assert.match(text, /udp +shop\/cart 10\.77\.1\.2 -> shop\/x 10\.77\.1\.3 echo: FAILED: no UDP echo/);
    assert.match(
      text,
      /\(pod interfaces: TX checksum offload turned off \(datapath netdev, userspace-tso-enable false\)\)/,
    );
    assert.match(text, /Not shown: pods on different nodes/);
  });
});

describe('next steps', () => {
  const endpoints: SandboxEndpoints = {
    workDir: '/tmp/w',
    logFile: '/tmp/w/sandbox.log',
    kubeconfig: '/tmp/w/kubeconfig',
    kubeUrl: 'http://127.0.0.1:16443',
    odlUrl: 'http://127.0.0.1:18181',
    odlUser: 'admin',
    odlPassword: 'admin',
    odlListUrls: [{ label: 'ELANs', url: 'http://127.0.0.1:18181/restconf/config/elan:elan-instances' }],
    cliConfig: '/tmp/w/odlcoe.json',
    cliCommand: 'node /p/dist/src/cli/main.js',
    watcherUrl: 'http://127.0.0.1:19090',
    agents: [
      {
        node: 'node-1',
        url: 'http://127.0.0.1:19102',
        log: '/tmp/w/nodes/node-1/agent.log',
        ovsDb: '/tmp/w/nodes/node-1/ovs/db.sock',
      },
    ],
    odlWriteLog: '/tmp/w/odl-writes.jsonl',
    gracePeriodSeconds: 10,
    examplePod: { namespace: 'shop', name: 'cart' },
  };

  it('gives commands that work as printed', () => {
    const text = renderNextSteps(endpoints).join('\n');
    assert.match(text, /export KUBECONFIG=\/tmp\/w\/kubeconfig/);
    assert.match(text, /kubectl -n shop delete pod cart/);
    assert.match(
      text,
      /curl -s -u admin:admin http:\/\/127\.0\.0\.1:18181\/restconf\/config\/elan:elan-instances/,
    );
    assert.match(text, /node \/p\/dist\/src\/cli\/main\.js --config \/tmp\/w\/odlcoe\.json dump/);
    assert.match(text, /trace shop\/cart --ovs-db \/tmp\/w\/nodes\/node-1\/ovs\/db\.sock/);
    assert.match(text, /agent node-1 http:\/\/127\.0\.0\.1:19102\/metrics/);
  });

  it('traces without OVS when no node runs an agent', () => {
    assert.match(renderNextSteps({ ...endpoints, agents: [] }).join('\n'), /trace shop\/cart --no-ovs/);
  });
});

const progress: Progress = {
  kinds: [
    { kind: 'k8sNode', label: 'k8s-node', inOdl: 2, desired: 2, missing: [], extra: [] },
    { kind: 'vpnInstance', label: 'vpn-instance', inOdl: 2, desired: 1, missing: [], extra: ['old'] },
    {
      kind: 'vpnInterface',
      label: 'vpn-interface',
      inOdl: 0,
      desired: 2,
      missing: ['shop:a', 'shop:b'],
      extra: [],
    },
  ],
  podsOnNetwork: 2,
  podsWithoutIp: ['shop/b'],
  converged: false,
};

describe('progress rendering', () => {
  it('counts what is right against what is desired', () => {
    const rows = renderProgress(progress);
    assert.match(rows[0] ?? '', /pods with an IP +1 \/ 2 +\.\./);
    assert.match(rows[1] ?? '', /k8s-node +2 \/ 2 +ok/);
    assert.match(rows[2] ?? '', /vpn-instance +1 \/ 1 +\.\./);
    assert.equal(
      compactProgress(progress),
      'pods with an IP 1/2, k8s-node 2/2, vpn-instance 1/1 (+1 to delete), vpn-interface 0/2',
    );
  });

  it('names the gaps', () => {
    assert.deepEqual(describeGaps(progress, 1), [
      'pods without an IP: shop/b',
      'vpn-instance in ODL but not needed: old',
      'vpn-interface missing in ODL: shop:a, and 1 more',
    ]);
  });
});

describe('LiveBlock', () => {
  it('redraws in place on a TTY', () => {
    let out = '';
    const block = new LiveBlock({ write: (t: string) => (out += t) }, true);
    block.update(['a', 'b'], 'a b');
    block.update(['c'], 'c');
    assert.equal(out, '\x1b[2Ka\n\x1b[2Kb\n\x1b[2A\x1b[2Kc\n\x1b[2K\n');
  });

  it('prints a line only when it changes elsewhere', () => {
    let out = '';
    const block = new LiveBlock({ write: (t: string) => (out += t) }, false);
    block.update(['x'], 'one');
    block.update(['y'], 'one');
    block.update(['z'], 'two');
    assert.equal(out, 'one\ntwo\n');
  });
});
