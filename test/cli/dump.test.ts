/**
 * `odlcoectl dump`, run as a child process as an operator runs it: after ODL was programmed as
 * the watcher would program it (plus foreign objects and one orphan of ours), `-o json` equals
 * a hand-written tree in both profiles and both dialects; foreign objects are counted, never
 * shown; the human output names the same objects.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DumpTree } from '../../src/cli/dump.js';
import {
  netvirtPaths,
  ownershipMarker,
  putElanInstance,
  putInterface,
  type Profile,
} from '../../src/netvirt/index.js';
import type { Dialect } from '../../src/restconf/path.js';
import {
  apply,
  CLUSTER,
  createCluster,
  programOdl,
  startHarness,
  uidOf,
  type CliHarness,
} from './testing.js';

const SUBNET_ID_A = 'e1618560-81d4-3072-9c57-0b10e6cf83a8'; // name-based UUID of "192.168.56.101"
const SUBNET_ID_B = '033c03c6-63f7-343d-91e2-bc433509064a'; // ... of "192.168.56.102"
const ORPHAN_UID = '7d3f0c2a-1111-4e5f-8a9b-000000000001';

const CASES: [Profile, Dialect][] = [
  ['sodium', 'bierman02'],
  ['aluminium', 'rfc8040'],
];

for (const [profile, dialect] of CASES) {
  describe(`odlcoectl dump (${profile}, ${dialect})`, () => {
    let h: CliHarness;
    let uids: {
      nodeA: string;
      nodeB: string;
      def: string;
      teamA: string;
      web0: string;
      web1: string;
      api0: string;
    };

    before(async () => {
      h = await startHarness(profile, dialect);
      const cluster = await createCluster(h);
      await programOdl(h, cluster);
      uids = {
        nodeA: uidOf(cluster.nodes, 'node-a'),
        nodeB: uidOf(cluster.nodes, 'node-b'),
        def: uidOf(cluster.namespaces, 'default'),
        teamA: uidOf(cluster.namespaces, 'team-a'),
        web0: uidOf(cluster.pods, 'web-0', 'default'),
        web1: uidOf(cluster.pods, 'web-1', 'default'),
        api0: uidOf(cluster.pods, 'api-0', 'team-a'),
      };
      await apply(h, [
        // Foreign: made by hand, and by another odlcoe cluster.
        putInterface(profile, {
          name: 'default:legacy',
          type: 'iana-if-type:l2vlan',
          description: 'created by hand',
        }),
        putElanInstance(profile, {
          name: '192.168.56.101:shared',
          segmentType: 'vxlan',
          description: ownershipMarker('other', 'node-namespace', 'a/b'),
        }),
        // Ours, but with no elan-interface (a watcher that died half-way).
        putInterface(profile, {
          name: 'default:orphan-0',
          type: 'iana-if-type:l2vlan',
          enabled: true,
          l2vlanMode: 'trunk',
          external: false,
          description: ownershipMarker(CLUSTER, 'pod', ORPHAN_UID),
        }),
      ]);
    });
    after(async () => h?.close());

    const iface = (
      ns: string,
      pod: string,
      podUid: string,
      elan: string,
      ip: string,
      mac: string,
      subnetId: string,
      gw: string,
    ) => ({
      name: `${ns}:${pod}`,
      namespace: ns,
      pod,
      podUid,
      ip,
      mac,
      elanInstance: elan,
      vpn: ns,
      adjacency: { ipPrefix: `${ip}/32`, mac, subnetId, gatewayIp: gw },
    });

    it('-o json is exactly the owned tree', async () => {
      const res = await h.spawn(['dump', '-o', 'json']);
      assert.equal(res.code, 0, res.stderr);
      const tree = JSON.parse(res.stdout) as DumpTree;
      const expected: DumpTree = {
        cluster: CLUSTER,
        profile,
        vpns: [
          {
            name: 'default',
            namespace: 'default',
            routeDistinguisher: '64512:1',
            elans: [
              {
                name: '192.168.56.101:default',
                nodeIp: '192.168.56.101',
                namespace: 'default',
                nodeUid: uids.nodeA,
                namespaceUid: uids.def,
                segmentType: 'vxlan',
                interfaces: [
                  iface(
                    'default',
                    'web-0',
                    uids.web0,
                    '192.168.56.101:default',
                    '10.11.1.5',
                    '0a:58:0a:0b:01:05',
                    SUBNET_ID_A,
                    '10.11.1.1',
                  ),
                ],
              },
              {
                name: '192.168.56.102:default',
                nodeIp: '192.168.56.102',
                namespace: 'default',
                nodeUid: uids.nodeB,
                namespaceUid: uids.def,
                segmentType: 'vxlan',
                interfaces: [
                  iface(
                    'default',
                    'web-1',
                    uids.web1,
                    '192.168.56.102:default',
                    '10.11.2.5',
                    '0a:58:0a:0b:02:05',
                    SUBNET_ID_B,
                    '10.11.2.1',
                  ),
                ],
              },
            ],
          },
          {
            name: 'team-a',
            namespace: 'team-a',
            routeDistinguisher: '64512:2',
            elans: [
              {
                name: '192.168.56.101:team-a',
                nodeIp: '192.168.56.101',
                namespace: 'team-a',
                nodeUid: uids.nodeA,
                namespaceUid: uids.teamA,
                segmentType: 'vxlan',
                interfaces: [
                  iface(
                    'team-a',
                    'api-0',
                    uids.api0,
                    '192.168.56.101:team-a',
                    '10.11.1.6',
                    '0a:58:0a:0b:01:06',
                    SUBNET_ID_A,
                    '10.11.1.1',
                  ),
                ],
              },
            ],
          },
        ],
        elansWithoutVpn: [],
        networks: [],
        interfacesWithoutElan: [
          {
            name: 'default:orphan-0',
            namespace: 'default',
            pod: 'orphan-0',
            podUid: ORPHAN_UID,
            ip: null,
            mac: null,
            elanInstance: null,
            vpn: null,
            adjacency: null,
          },
        ],
        nodeNetworks: [
          { network: 'odlcoe-node:node-a', node: 'node-a', subnets: ['10.11.1.0/24'] },
          { network: 'odlcoe-node:node-b', node: 'node-b', subnets: ['10.11.2.0/24'] },
        ],
        gateways: [],
        gatewayVpn: null,
        // Only where ODL has the COE models (Sodium with COE).
        k8sNodes: (profile === 'aluminium'
          ? []
          : [
              {
                uid: uids.nodeA,
                hostName: 'node-a',
                internalIp: '192.168.56.101',
                externalIp: null,
                podCidr: '10.11.1.0/24',
              },
              {
                uid: uids.nodeB,
                hostName: 'node-b',
                internalIp: '192.168.56.102',
                externalIp: null,
                podCidr: '10.11.2.0/24',
              },
            ]
        ).sort((a, b) => a.uid.localeCompare(b.uid)),
        foreign: { 'ietf-interface': 1, 'elan-instance': 1 },
        unparsed: [],
      };
      assert.deepEqual(tree, expected);
    });

    it('the human output shows the tree and leaves foreign objects out', async () => {
      const res = await h.run(['dump']);
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, /^vpn default {2}\(namespace default, rd 64512:1\)$/m);
      assert.match(res.stdout, /^ {2}elan 192\.168\.56\.102:default /m);
      assert.match(
        res.stdout,
        /^ {4}interface default:web-1 {2}ip 10\.11\.2\.5 {2}mac 0a:58:0a:0b:02:05 {2}adjacency 10\.11\.2\.5\/32/m,
      );
      assert.match(res.stdout, /Interfaces without an ELAN of ours:\n {2}interface default:orphan-0/);
      assert.doesNotMatch(res.stdout, /legacy|:shared/);
      assert.match(res.stdout, /Not shown \(owned by someone else\): 1 ietf-interface, 1 elan-instance/);
    });

    it('an ELAN whose namespace lost its VPN is listed on its own', async () => {
      await h.odl.delete(netvirtPaths(profile).vpnInstance('team-a'));
      try {
        const res = await h.run(['dump', '-o', 'json']);
        assert.equal(res.code, 0, res.stderr);
        const tree = JSON.parse(res.stdout) as DumpTree;
        assert.deepEqual(
          tree.vpns.map((v) => v.name),
          ['default'],
        );
        assert.deepEqual(
          tree.elansWithoutVpn.map((e) => [e.name, e.interfaces.map((i) => i.name)]),
          [['192.168.56.101:team-a', ['team-a:api-0']]],
        );
      } finally {
        // Put it back for any later test (and so the failure message above stays the only one).
        const cluster = {
          nodes: (await h.core.listNode()).items,
          namespaces: (await h.core.listNamespace()).items,
          pods: (await h.core.listPodForAllNamespaces()).items,
        };
        await programOdl(h, cluster);
      }
    });
  });
}
