/**
 * Node subnets across the upgrade to node networks, and on a Sodium without the COE models.
 *
 * Upgrade: a cluster converged by a release that kept each node's subnet in its k8s-node entry
 * only (Sodium with COE) is taken over by this one: every node keeps its subnet, now also in
 * its network `odlcoe-node:<node>` (what the agents read), and nothing else is written: no pod
 * interface, ELAN, VPN or k8s-node write. For each subnet source.
 *
 * Sodium without the COE feature: the watcher converges without ever asking for a COE model.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { SubnetSource } from '../../src/config/watcher-settings.js';
import {
  coeRequests,
  createNamespace,
  createNode,
  createPod,
  readOdl,
  setPodIp,
  startEnv,
  startTestWatcher,
  waitFor,
  type Env,
} from './testing.js';

const NODES = [
  { name: 'node-a', ip: '192.168.90.1', cidr: '10.253.1.0/24' },
  { name: 'node-b', ip: '192.168.90.2', cidr: '10.253.2.0/24' },
] as const;

const K8S_NODE = (uid: string) => [
  { module: 'k8s-node', name: 'k8s-nodes-info' },
  { name: 'k8s-nodes', keys: [uid] },
];
const NETWORK = (name: string) => [
  { module: 'dhcp_allocation_pool', name: 'dhcp_allocation_pool' },
  { name: 'network', keys: [`odlcoe-node:${name}`] },
];

/** node name → the subnet of its network (first pool), for the nodes that have one. */
async function networkSubnets(env: Env): Promise<Record<string, string | undefined>> {
  return Object.fromEntries(
    (await readOdl(env))['dhcp-network'].map((n) => [
      String(n['network-id']).replace(/^odlcoe-node:/, ''),
      (n['allocation-pool'] as { subnet?: string }[] | undefined)?.[0]?.subnet,
    ]),
  );
}

describe('node subnets: upgrade from k8s-node only, and Sodium without COE', () => {
  let cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    cleanups = [];
  });

  for (const source of ['podCIDR', 'allocate', 'odl'] as const satisfies readonly SubnetSource[]) {
    it(`${source}: every node keeps its subnet, carried into its network, with zero other writes`, async () => {
      const env = await startEnv({ profile: 'sodium', dialect: 'rfc8040' });
      cleanups.push(() => env.close());
      const settings = {
        subnetSource: source,
        subnetPollMs: 200,
        ...(source === 'allocate' ? { clusterCidr: '10.253.0.0/16', nodePrefixLength: 24 } : {}),
      };
      const uids: Record<string, string> = {};
      for (const n of NODES)
        uids[n.name] = await createNode(env, n.name, n.ip, source === 'podCIDR' ? n.cidr : undefined);
      await createNamespace(env, 'apps');
      await createPod(env, 'apps', 'a0', 'node-a');
      await createPod(env, 'apps', 'b0', 'node-b');

      // The release before: converged, each subnet in k8s-node only. (`odl`: the ODL user's
      // pod-cidr; `allocate`: as the allocator recorded it, here in node order.)
      const first = await startTestWatcher(env, settings);
      cleanups.push(() => first.close());
      if (source === 'odl') {
        await waitFor(async () => (await readOdl(env))['k8s-nodes'].length === NODES.length, {
          what: 'nodes registered',
        });
        for (const n of NODES) {
          const entry = (await readOdl(env))['k8s-nodes'].find((e) => e.uid === uids[n.name]);
          await env.odl.put(K8S_NODE(uids[n.name] ?? ''), {
            'k8s-node:k8s-nodes': [{ ...entry, 'pod-cidr': n.cidr }],
          });
        }
      }
      const cidrOf = async (name: string) =>
        (await readOdl(env))['k8s-nodes'].find((e) => e.uid === uids[name])?.['pod-cidr'] as
          string | undefined;
      await waitFor(
        async () => (await cidrOf('node-a')) !== undefined && (await cidrOf('node-b')) !== undefined,
        {
          what: 'both subnets known',
        },
      );
      // Pods addressed from their node's subnet, as host-local does.
      for (const [pod, node] of [
        ['a0', 'node-a'],
        ['b0', 'node-b'],
      ] as const)
        await setPodIp(env, 'apps', pod, ((await cidrOf(node)) ?? '').replace(/0\/24$/, '10'));
      await waitFor(async () => (await readOdl(env))['vpn-interface'].length === 2, {
        what: 'both pods routed',
      });
      await first.idle();
      await first.close();
      const before = await readOdl(env);
      const subnets = Object.fromEntries(
        before['k8s-nodes'].map((e) => [NODES.find((n) => uids[n.name] === e.uid)?.name, e['pod-cidr']]),
      );
      assert.deepEqual(Object.keys(subnets).sort(), ['node-a', 'node-b']);
      for (const n of NODES) await env.odl.delete(NETWORK(n.name));

      // This release takes over.
      const writesBefore = { ...env.emu.counters().writes };
      const second = await startTestWatcher(env, settings);
      cleanups.push(() => second.close());
      await waitFor(async () => Object.keys(await networkSubnets(env)).length === NODES.length, {
        what: 'node networks',
      });
      await second.idle();
      assert.deepEqual(await networkSubnets(env), subnets, 'each node keeps its subnet');
      const writes = Object.fromEntries(
        Object.entries(env.emu.counters().writes)
          .map(([m, n]) => [m, n - (writesBefore[m] ?? 0)])
          .filter(([, n]) => n !== 0),
      );
      assert.deepEqual(writes, { dhcp_allocation_pool: NODES.length }, 'only the networks are written');
      const after = await readOdl(env);
      for (const list of ['interface', 'elan-interface', 'vpn-interface', 'k8s-nodes'] as const)
        assert.deepEqual(after[list], before[list], `${list} unchanged`);
    });
  }

  it('Sodium without the COE feature: converges with node networks only, never asking for a COE model', async () => {
    const env = await startEnv({ profile: 'sodium', dialect: 'bierman02', emulator: { features: [] } });
    cleanups.push(() => env.close());
    for (const n of NODES) await createNode(env, n.name, n.ip, n.cidr);
    await createNamespace(env, 'apps');
    await createPod(env, 'apps', 'a0', 'node-a', { ip: '10.253.1.10' });
    const watcher = await startTestWatcher(env, { subnetSource: 'podCIDR' });
    cleanups.push(() => watcher.close());
    await waitFor(async () => (await readOdl(env))['vpn-interface'].length === 1, { what: 'the pod routed' });
    await watcher.idle();
    assert.deepEqual(await networkSubnets(env), { 'node-a': NODES[0].cidr, 'node-b': NODES[1].cidr });
    assert.equal(watcher.models.coe, false);
    assert.equal(watcher.models.profile, 'sodium');
    assert.deepEqual(coeRequests(env), {}, 'no request into a COE module');
  });
});
