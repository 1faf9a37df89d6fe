/**
 * Contract: the node's pod subnet travels from the watcher to the agent through ODL. The
 * watcher registers each node (`translateNode` → `putK8sNode`, keyed by node UID, with the
 * node IP its translation picks in `internal-ip-address`); the agent, which does not know the
 * UID, picks its own node IP from the same Node object (`nodeInternalIp` in src/agent/agent.ts)
 * and looks for the entry with that `internal-ip-address` (`fetchNodeSubnet`, through the
 * RESTCONF client's list read). Both sides must pick the same address for every Node shape
 * Kubernetes produces, or the agent never finds its subnet and the node never gets a pod
 * network. netvirt-model.md §10; architecture.md "Node subnets" (the agent reads its node's
 * entry, "matching its own node IP").
 */
import type { V1Node } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { nodeInternalIp as agentNodeIp } from '../../src/agent/agent.js';
import { fetchNodeSubnet, K8S_NODES_LIST } from '../../src/agent/node-subnet.js';
import { putK8sNode, translateNode, type Profile } from '../../src/netvirt/index.js';
import { putDhcpNetwork } from '../../src/netvirt/dhcp.js';
import { translateNodeNetwork } from '../../src/netvirt/node-network.js';
import { apply, CLUSTER, DIALECTS, ROUTE_TARGET, startController, type Controller } from './fixtures.js';

interface NodeCase {
  what: string;
  addresses: { type: string; address: string }[];
  podCidr: string;
  /** Set when the case fails for a reason outside this suite's files (reported, not hidden). */
  /** The node has no InternalIP: neither side may invent one. */
  noNodeIp?: boolean;
}

const CASES: NodeCase[] = [
  {
    what: 'an IPv4 node (InternalIP, ExternalIP, Hostname)',
    addresses: [
      { type: 'InternalIP', address: '192.168.56.101' },
      { type: 'ExternalIP', address: '203.0.113.11' },
      { type: 'Hostname', address: 'worker-1' },
    ],
    podCidr: '10.11.1.0/24',
  },
  {
    what: 'an IPv6 node written in a non-canonical spelling',
    addresses: [{ type: 'InternalIP', address: 'FD00:56:0:0::101' }],
    podCidr: 'fd00:10:11:1::/64',
  },
  {
    what: 'a dual-stack node whose primary (first) InternalIP is IPv6',
    addresses: [
      { type: 'InternalIP', address: 'fd00:56::102' },
      { type: 'InternalIP', address: '192.168.56.102' },
      { type: 'Hostname', address: 'worker-2' },
    ],
    podCidr: '10.11.2.0/24',
  },
  {
    what: 'a node that reports only an ExternalIP',
    addresses: [
      { type: 'ExternalIP', address: '203.0.113.13' },
      { type: 'Hostname', address: 'worker-3' },
    ],
    podCidr: '10.11.3.0/24',
    // No InternalIP: the watcher registers no internal-ip-address and defers the node's pods;
    // the agent must agree that the node has no IP to match (it stays not ready, saying why).
    noNodeIp: true,
  },
];

const node = (c: NodeCase, i: number): V1Node => ({
  metadata: { name: `worker-${i}`, uid: `00000000-0000-4000-8000-00000000000${i}` },
  spec: { podCIDR: c.podCidr },
  status: { addresses: c.addresses },
});

const PROFILE: Profile = 'sodium'; // k8s-node is the same in both profiles

for (const dialect of DIALECTS) {
  describe(`node subnet: watcher's k8s-node entry → agent's lookup (${dialect})`, () => {
    let ctl: Controller;
    before(async () => {
      ctl = await startController(PROFILE, dialect);
      // Every node registered, as the watcher does (with `subnets.source: podCIDR`).
      const settings = {
        clusterName: CLUSTER,
        profile: PROFILE,
        routeTarget: ROUTE_TARGET,
        segmentType: 'vxlan' as const,
      };
      for (const [i, c] of CASES.entries())
        assert.equal(
          await apply(ctl.client, putK8sNode(PROFILE, translateNode(node(c, i), c.podCidr, settings))),
          'created',
        );
    });
    after(async () => {
      await ctl?.close();
    });

    for (const [i, c] of CASES.entries()) {
      it(`the agent finds its subnet: ${c.what}`, async () => {
        const ip = agentNodeIp(node(c, i));
        if (c.noNodeIp) {
          assert.equal(ip, undefined, 'the agent picks no node IP when the watcher registers none');
          const entries = await ctl.client.getEntries(K8S_NODES_LIST);
          const registered = entries.find((e) => e['uid'] === node(c, i).metadata?.uid);
          assert.ok(registered, 'the watcher still registers the node');
          assert.equal(registered['internal-ip-address'], undefined);
          return;
        }
        assert.ok(ip, 'the agent picks a node IP');
        // No node network (a cluster converged before networks existed): the k8s-node fallback.
        const entry = await fetchNodeSubnet(ctl.client, { name: `worker-${i}`, ip }, { k8sNodes: true });
        assert.ok(entry, `no k8s-nodes entry with internal-ip-address ${ip}`);
        assert.equal(entry.from, `k8s-node ${node(c, i).metadata?.uid}`);
        assert.equal(entry.podCidr, c.podCidr);
      });
    }
  });
}

/**
 * On every release: the watcher's node network (`odlcoe-node:<node name>`) → the agent's read
 * by its node name, without any k8s-node entry.
 */
for (const profile of ['sodium', 'aluminium'] as const)
  for (const dialect of DIALECTS) {
    describe(`node subnet: watcher's node network → agent's read (${profile}, ${dialect})`, () => {
      let ctl: Controller;
      before(async () => {
        ctl = await startController(profile, dialect);
        for (const [i, c] of CASES.entries())
          assert.equal(
            await apply(
              ctl.client,
              putDhcpNetwork(profile, translateNodeNetwork(`worker-${i}`, [c.podCidr])),
            ),
            'created',
          );
      });
      after(async () => {
        await ctl?.close();
      });

      for (const [i, c] of CASES.entries()) {
        it(`the agent finds its subnet: ${c.what}`, async () => {
          const found = await fetchNodeSubnet(
            ctl.client,
            { name: `worker-${i}`, ip: agentNodeIp(node(c, i)) ?? '' },
            { k8sNodes: false },
          );
          assert.deepEqual(found && { from: found.from, podCidr: found.podCidr }, {
            from: `dhcp-network odlcoe-node:worker-${i}`,
            podCidr: c.podCidr,
          });
        });
      }

      it('a node without a network has no subnet, and no COE model is asked for', async () => {
        assert.equal(
          await fetchNodeSubnet(ctl.client, { name: 'worker-9', ip: '192.168.56.109' }, { k8sNodes: false }),
          undefined,
        );
      });
    });
  }
