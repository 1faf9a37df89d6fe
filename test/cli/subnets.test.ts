/**
 * `odlcoectl subnets`: per node the subnet from its network in ODL (`odlcoe-node:<node>`), its
 * gateway and the pods addressed from it; a node without a subnet and a pod outside its node's
 * subnet are problems (exit 1); networks of nodes that are gone are listed. Also: complete
 * paged lists. Aluminium: no k8s-node model at all.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { listAll } from '../../src/cli/kube-reader.js';
import type { SubnetsReport } from '../../src/cli/subnets.js';
import { putDhcpNetwork } from '../../src/netvirt/index.js';
import { translateNodeNetwork } from '../../src/netvirt/node-network.js';
import { apply, createCluster, programOdl, startHarness, uidOf, type CliHarness } from './testing.js';

describe('odlcoectl subnets', () => {
  let h: CliHarness;
  let uids: { a: string; b: string };

  before(async () => {
    h = await startHarness('aluminium', 'bierman02');
    const cluster = await createCluster(h);
    await programOdl(h, cluster);
    uids = { a: uidOf(cluster.nodes, 'node-a'), b: uidOf(cluster.nodes, 'node-b') };
    await apply(h, [putDhcpNetwork('aluminium', translateNodeNetwork('node-old', ['10.11.3.0/24']))]);
  });
  after(async () => h?.close());

  it('lists each node subnet from ODL with its gateway and pods, and stale networks', async () => {
    const res = await h.run(['subnets', '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const r = JSON.parse(res.stdout) as SubnetsReport;
    const entry = (node: string) =>
      `${h.emulator.url}/restconf/config/dhcp_allocation_pool:dhcp_allocation_pool/network/odlcoe-node:${node}`;
    assert.deepEqual(r, {
      subnetSource: 'odl',
      nodes: [
        {
          node: 'node-a',
          uid: uids.a,
          internalIp: '192.168.56.101',
          subnet: '10.11.1.0/24',
          source: 'odl',
          record: 'dhcp-network odlcoe-node:node-a',
          entry: entry('node-a'),
          gateway: '10.11.1.1',
          pods: [
            { pod: 'default/web-0', ip: '10.11.1.5', inSubnet: true },
            { pod: 'team-a/api-0', ip: '10.11.1.6', inSubnet: true },
          ],
          problem: null,
        },
        {
          node: 'node-b',
          uid: uids.b,
          internalIp: '192.168.56.102',
          subnet: '10.11.2.0/24',
          source: 'odl',
          record: 'dhcp-network odlcoe-node:node-b',
          entry: entry('node-b'),
          gateway: '10.11.2.1',
          pods: [{ pod: 'default/web-1', ip: '10.11.2.5', inSubnet: true }],
          problem: null,
        },
      ],
      staleEntries: [],
      staleNetworks: [{ network: 'odlcoe-node:node-old', node: 'node-old', subnets: ['10.11.3.0/24'] }],
    });
    const human = await h.run(['subnets']);
    assert.match(
      human.stdout,
      new RegExp(
        `^node-a +192\\.168\\.56\\.101 +10\\.11\\.1\\.0/24 +odl dhcp-network odlcoe-node:node-a +10\\.11\\.1\\.1 +2 +-$`,
        'm',
      ),
    );
  });

  it('a pod outside its node subnet and a node without a subnet are problems (exit 1)', async () => {
    await h.core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'misfit', namespace: 'default' },
        spec: { nodeName: 'node-b', containers: [{ name: 'c', image: 'busybox' }] },
        status: { phase: 'Running', podIP: '10.99.0.5' },
      },
    });
    await h.core.createNode({
      body: {
        metadata: { name: 'node-c' },
        status: { addresses: [{ type: 'InternalIP', address: '192.168.56.109' }] },
      },
    });
    const res = await h.run(['subnets', '-o', 'json']);
    assert.equal(res.code, 1);
    const r = JSON.parse(res.stdout) as SubnetsReport;
    assert.equal(
      r.nodes.find((n) => n.node === 'node-b')?.problem,
      '1 pod(s) addressed outside the subnet: default/misfit',
    );
    assert.deepEqual(
      r.nodes.find((n) => n.node === 'node-b')?.pods.find((p) => p.pod === 'default/misfit'),
      {
        pod: 'default/misfit',
        ip: '10.99.0.5',
        inSubnet: false,
      },
    );
    assert.equal(
      r.nodes.find((n) => n.node === 'node-c')?.problem,
      'no node network odlcoe-node:node-c in ODL',
    );
  });

  it('lists are read to the end, page by page', async () => {
    const all = (await h.core.listPodForAllNamespaces()).items;
    const before = h.sim.stats().requests['list pods'] ?? 0;
    const pods = await listAll<V1Pod>(h.kube, '/api/v1/pods', { timeoutMs: 10_000, pageSize: 2 });
    assert.deepEqual(pods.map((p) => p.metadata?.uid).sort(), all.map((p) => p.metadata?.uid).sort());
    assert.ok(all.length >= 5);
    assert.equal((h.sim.stats().requests['list pods'] ?? 0) - before, Math.ceil(all.length / 2));
  });
});
