/**
 * `odlcoectl gc`: with ODL programmed for the cluster plus hand-placed stale objects of ours
 * and foreign objects (some with names and shapes that invite a mistake), `--dry-run` lists
 * exactly the stale owned objects, in dependency order, never a foreign one, never one whose
 * desired state is unknown, never an instance something still refers to; without a flag it
 * refuses; with `--yes` it deletes exactly the candidates; with Kubernetes failing it decides
 * nothing. Both profiles, both dialects.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { GcReport } from '../../src/cli/gc.js';
import type { DumpTree } from '../../src/cli/dump.js';
import {
  clusterUuid,
  ownershipMarker,
  putElanInstance,
  putElanInterface,
  putInterface,
  putDhcpNetwork,
  putK8sNode,
  putVpnInstance,
  putVpnInterface,
  translateVpnInstance,
  type Profile,
  type WriteOp,
} from '../../src/netvirt/index.js';
import { translateNodeNetwork } from '../../src/netvirt/node-network.js';
import type { Dialect } from '../../src/restconf/path.js';
import { apply, CLUSTER, createCluster, programOdl, startHarness, type CliHarness } from './testing.js';

const GONE_POD_UID = '5f1c9a7e-0000-4000-8000-00000000aa01';
const GONE_NODE_UID = '5f1c9a7e-0000-4000-8000-00000000bb01';
const OTHER_NODE_UID = '5f1c9a7e-0000-4000-8000-00000000cc01';
const LOST_POD_NODE = 'node-z';

const CASES: [Profile, Dialect][] = [
  ['sodium', 'bierman02'],
  ['aluminium', 'rfc8040'],
];

function l2vlan(name: string, description?: string) {
  return {
    name,
    type: 'iana-if-type:l2vlan',
    enabled: true,
    l2vlanMode: 'trunk' as const,
    external: false,
    ...(description !== undefined ? { description } : {}),
  };
}

/** Stale objects of ours, and foreign objects, placed by hand. */
function handPlaced(h: CliHarness): WriteOp[] {
  const p = h.profile;
  const pod = ownershipMarker(CLUSTER, 'pod', GONE_POD_UID);
  const oldNs = translateVpnInstance(
    { metadata: { name: 'old-ns', uid: '5f1c9a7e-0000-4000-8000-00000000dd01' } },
    '64512:7',
    h.settings,
  );
  // Foreign VPN: another RD administrator (Aluminium ownership) and no marker (Sodium).
  const foreignVpn =
    p === 'sodium'
      ? {
          profile: 'sodium' as const,
          name: 'tenant-x',
          type: 'l3' as const,
          ipv4Family: {
            routeDistinguishers: ['65000:1'],
            vpnTargets: [{ value: '65000:1', type: 'both' as const }],
          },
        }
      : {
          profile: 'aluminium' as const,
          name: 'tenant-x',
          routeDistinguishers: ['65000:1'],
          vpnTargets: [{ value: '65000:1', type: 'both' as const }],
          bgpvpnType: 'InternalVPN' as const,
        };
  return [
    // A pod that is gone: all three interfaces are ours and stale.
    putInterface(p, l2vlan('default:gone-0', pod)),
    putElanInterface(p, {
      name: 'default:gone-0',
      elanInstanceName: '192.168.56.101:default',
      description: pod,
    }),
    putVpnInterface(p, {
      name: 'default:gone-0',
      vpnInstanceNames: [{ vpnName: 'default', associatedSubnetType: 'V4Subnet' }],
      routerInterface: false,
      adjacencies: [
        { ipAddress: '10.11.1.99/32', macAddress: '0a:58:0a:0b:01:63', adjacencyType: 'primary-adjacency' },
      ],
    }),
    // An ELAN of a node that is gone: ours, stale, nothing refers to it.
    putElanInstance(p, {
      name: '192.168.56.103:default',
      segmentType: 'vxlan',
      external: false,
      description: ownershipMarker(CLUSTER, 'node-namespace', `${GONE_NODE_UID}/x`),
    }),
    // Ours and unneeded, but a foreign elan-interface refers to it: kept.
    putElanInstance(p, {
      name: '192.168.56.104:default',
      segmentType: 'vxlan',
      external: false,
      description: ownershipMarker(CLUSTER, 'node-namespace', `${OTHER_NODE_UID}/x`),
    }),
    putElanInterface(p, { name: 'default:manual', elanInstanceName: '192.168.56.104:default' }),
    // The VPN of a namespace without pods: ours, stale.
    putVpnInstance(p, oldNs),
    // The network of a node that is gone: ours (odlcoe-node: name space), stale.
    putDhcpNetwork(p, translateNodeNetwork('node-gone', ['10.11.9.0/24'])),
    // A pool named after an ELAN (ODL's own DHCP use of the tree): foreign.
    putDhcpNetwork(p, { networkId: '192.168.56.101:default', allocationPools: [{ subnet: '10.50.0.0/24' }] }),
    // Foreign, named like ours or looking stale: never candidates.
    putInterface(p, l2vlan('default:legacy', 'created by hand')),
    putInterface(p, l2vlan('default:other-cluster-0', ownershipMarker('staging', 'pod', GONE_POD_UID))),
    putVpnInstance(p, foreignVpn),
    // The COE models exist on Sodium (with COE) only.
    ...(p === 'sodium'
      ? [
          // A k8s-node entry of a node that is gone: ours (cluster-id), stale.
          putK8sNode(p, {
            uid: GONE_NODE_UID,
            clusterId: clusterUuid(CLUSTER),
            hostName: 'node-gone',
            podCidr: '10.11.9.0/24',
          }),
          putK8sNode(p, { uid: OTHER_NODE_UID, clusterId: clusterUuid('staging'), hostName: 'elsewhere' }),
        ]
      : []),
    putElanInstance(p, {
      name: '192.168.56.105:default',
      segmentType: 'vxlan',
      description: ownershipMarker('staging', 'node-namespace', 'a/b'),
    }),
    // Ours, for a pod whose node the cluster does not know: its desired state is unknown, kept
    // (and so is every ELAN of ours in its namespace, since its node, hence its ELAN, is unknown).
    putInterface(
      p,
      l2vlan('team-a:lost-0', ownershipMarker(CLUSTER, 'pod', '5f1c9a7e-0000-4000-8000-00000000ee01')),
    ),
  ];
}

for (const [profile, dialect] of CASES) {
  describe(`odlcoectl gc (${profile}, ${dialect})`, () => {
    let h: CliHarness;

    before(async () => {
      h = await startHarness(profile, dialect);
      const cluster = await createCluster(h);
      await h.core.createNamespacedPod({
        namespace: 'team-a',
        body: {
          metadata: { name: 'lost-0', namespace: 'team-a' },
          spec: { nodeName: LOST_POD_NODE, containers: [{ name: 'c', image: 'busybox' }] },
          status: { phase: 'Running', podIP: '10.11.7.5' },
        },
      });
      await programOdl(h, cluster);
      await apply(h, handPlaced(h));
    });
    after(async () => h?.close());

    const expectedCandidates = () => [
      ['vpn-interface', 'default:gone-0'],
      ['elan-interface', 'default:gone-0'],
      ['ietf-interface', 'default:gone-0'],
      ['elan-instance', '192.168.56.103:default'],
      ['vpn-instance', 'old-ns'],
      ...(profile === 'sodium' ? [['k8s-node', GONE_NODE_UID]] : []),
      ['dhcp-network', 'odlcoe-node:node-gone'],
    ];

    it('without --dry-run or --yes it refuses (exit 4) and deletes nothing', async () => {
      const res = await h.run(['gc']);
      assert.equal(res.code, 4);
      assert.match(res.stderr, /refusing to delete: the watcher is the only writer/);
      const dry = await h.run(['gc', '--dry-run', '-o', 'json']);
      assert.equal((JSON.parse(dry.stdout) as GcReport).candidates.length, expectedCandidates().length);
    });

    it('--dry-run lists exactly the stale owned objects, in dependency order, and why others are kept', async () => {
      const res = await h.run(['gc', '--dry-run', '-o', 'json']);
      assert.equal(res.code, 0, res.stderr);
      const r = JSON.parse(res.stdout) as GcReport;
      assert.equal(r.dryRun, true);
      assert.equal(r.deletions, null);
      assert.deepEqual(
        r.candidates.map((c) => [c.kind, c.name]),
        expectedCandidates(),
      );
      for (const c of r.candidates)
        assert.match(c.url, /^http:\/\/127\.0\.0\.1:\d+\/(restconf\/config|rests\/data)\//);
      assert.deepEqual(r.kept.map((k) => [k.kind, k.name]).sort(), [
        ['elan-instance', '192.168.56.104:default'],
        ['ietf-interface', 'team-a:lost-0'],
      ]);
      assert.match(
        r.kept.find((k) => k.name === '192.168.56.104:default')?.reason ?? '',
        /still referred to by default:manual/,
      );
      const names = JSON.stringify(r.candidates);
      for (const foreign of [
        'legacy',
        'other-cluster',
        'tenant-x',
        OTHER_NODE_UID,
        '192.168.56.105',
        '192.168.56.101:default',
        'default:manual',
      ])
        assert.ok(!names.includes(foreign), `foreign object ${foreign} must never be a candidate`);
    });

    it('decides nothing when Kubernetes cannot be listed completely (exit 3)', async () => {
      h.sim.fault({ action: 'errors', status: 500, seconds: 30 });
      try {
        const res = await h.run(['gc', '--yes', '-o', 'json']);
        assert.equal(res.code, 3);
        assert.match(res.stderr, /500/);
        assert.equal((JSON.parse(res.stdout) as { error: string }).error.length > 0, true);
      } finally {
        h.sim.fault({ action: 'clear' });
      }
      // Nothing was deleted.
      const dry = JSON.parse((await h.run(['gc', '--dry-run', '-o', 'json'])).stdout) as GcReport;
      assert.equal(dry.candidates.length, expectedCandidates().length);
    });

    it('--yes deletes exactly the candidates; the cluster and foreign objects stay; a second run finds nothing', async () => {
      const before = JSON.parse((await h.run(['dump', '-o', 'json'])).stdout) as DumpTree;
      const res = await h.run(['gc', '--yes', '-o', 'json']);
      assert.equal(res.code, 0, res.stderr);
      const r = JSON.parse(res.stdout) as GcReport;
      assert.deepEqual(
        r.deletions?.map((d) => [d.kind, d.name, d.result]),
        expectedCandidates().map(([k, n]) => [k, n, 'deleted']),
      );
      for (const [kind, name] of expectedCandidates()) {
        const url = r.candidates.find((c) => c.kind === kind && c.name === name)?.url ?? '';
        const got = await fetch(url, {
          headers: { authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` },
        });
        assert.equal(got.status, 404, `${kind} ${name} should be gone`);
      }
      const afterDump = JSON.parse((await h.run(['dump', '-o', 'json'])).stdout) as DumpTree;
      // The dump before, minus exactly what was collected.
      const expectedVpns = before.vpns
        .filter((v) => v.name !== 'old-ns')
        .map((v) => ({
          ...v,
          elans: v.elans
            .filter((e) => e.name !== '192.168.56.103:default')
            .map((e) => ({ ...e, interfaces: e.interfaces.filter((i) => i.name !== 'default:gone-0') })),
        }));
      assert.deepEqual(afterDump.vpns, expectedVpns);
      assert.deepEqual(
        afterDump.k8sNodes,
        before.k8sNodes.filter((n) => n.uid !== GONE_NODE_UID),
      );
      assert.deepEqual(
        afterDump.nodeNetworks,
        before.nodeNetworks.filter((n) => n.node !== 'node-gone'),
      );
      assert.deepEqual(afterDump.foreign, before.foreign);
      const again = JSON.parse((await h.run(['gc', '--dry-run', '-o', 'json'])).stdout) as GcReport;
      assert.deepEqual(again.candidates, []);
      // Every pod still traces OK in ODL.
      for (const pod of ['default/web-0', 'default/web-1', 'team-a/api-0'])
        assert.equal((await h.run(['trace', pod, '--no-ovs'])).code, 0, pod);
    });
  });
}
