/**
 * Node subnet sources. `allocate`: subnets carved from the cluster CIDR, recorded in ODL (the
 * node networks, and k8s-node entries where ODL has them), stable across restarts, freed when
 * the node goes, exhaustion reported (error log, Event, metric). `odl`: an ODL user creates the
 * node network (or, on Sodium with COE, sets pod-cidr in k8s-node, carried into the network);
 * the watcher reads it, never overwrites it. (`podCIDR` is what the scenario tests use.)
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { createRegistry } from '../../src/common/metrics.js';
import {
  coeRequests,
  createNamespace,
  createNode,
  createPod,
  deletePod,
  metricValue,
  readOdl,
  RecordedEvents,
  startEnv,
  startTestWatcher,
  waitFor,
  writeCount,
  type Env,
} from './testing.js';
import type { Watcher } from '../../src/watcher/watcher.js';

const nodeCidrs = async (env: Env, uids: Record<string, string>) => {
  const entries = (await readOdl(env))['k8s-nodes'];
  return Object.fromEntries(
    Object.entries(uids).map(([name, uid]) => [name, entries.find((e) => e.uid === uid)?.['pod-cidr']]),
  );
};

/** A node change (a label) and a full resync: what must leave an ODL user's subnet alone. */
async function touchAndResync(env: Env, watcher: Watcher): Promise<void> {
  await env.core.patchNode({
    name: 'node-a',
    body: [{ op: 'add', path: '/metadata/labels', value: { x: 'y' } }],
  });
  await watcher.resync();
  await watcher.idle();
}

describe('node subnets', () => {
  let cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    cleanups = [];
  });

  /**
   * `odl`: node-a (whose spec.podCIDR must be ignored), a pod with an IP on it, and a watcher,
   * once the pod's elan-interface is written (it needs no subnet).
   */
  const odlSourceWorld = async (profile: 'sodium' | 'aluminium') => {
    const env = await startEnv({ profile, dialect: 'bierman02' });
    cleanups.push(() => env.close());
    const uid = await createNode(env, 'node-a', '192.168.60.1', '10.99.0.0/24');
    await createNamespace(env, 'apps');
    await createPod(env, 'apps', 'p', 'node-a', { ip: '10.251.7.10' });
    const watcher = await startTestWatcher(env, { subnetSource: 'odl', subnetPollMs: 200 });
    cleanups.push(() => watcher.close());
    await waitFor(async () => (await readOdl(env))['elan-interface'].length === 1, {
      what: 'the elan-interface',
    });
    return { env, uid, watcher };
  };

  it('allocate: carves stable subnets, reports exhaustion, reuses a freed subnet', async () => {
    const env = await startEnv({ profile: 'sodium', dialect: 'rfc8040' });
    cleanups.push(() => env.close());
    const settings = {
      subnetSource: 'allocate' as const,
      clusterCidr: '10.250.0.0/23',
      nodePrefixLength: 25,
    };
    const uids: Record<string, string> = {};
    for (const [name, ip] of [
      ['node-a', '192.168.50.1'],
      ['node-b', '192.168.50.2'],
      ['node-c', '192.168.50.3'],
    ] as const) {
      uids[name] = await createNode(env, name, ip);
    }
    const first = await startTestWatcher(env, settings);
    cleanups.push(() => first.close());
    await waitFor(async () => Object.values(await nodeCidrs(env, uids)).every((c) => c !== undefined), {
      what: 'three allocations',
    });
    const allocated = await nodeCidrs(env, uids);
    // Lowest free first; which node gets which depends on reconcile order, the set does not.
    assert.deepEqual(Object.values(allocated).sort(), ['10.250.0.0/25', '10.250.0.128/25', '10.250.1.0/25']);

    // Pods on an allocated node are routed with that subnet's gateway.
    await createNamespace(env, 'apps');
    const aNet = allocated['node-a'] as string;
    const podIp = aNet.replace(/0\/25$/, '10').replace(/128\/25$/, '138');
    await createPod(env, 'apps', 'p', 'node-a', { ip: podIp });
    await waitFor(async () => (await readOdl(env))['vpn-interface'].length === 1, {
      what: 'the pod vpn-interface',
    });
    const adjacency = (
      (await readOdl(env))['vpn-interface'][0]?.['odl-l3vpn:adjacency'] as Record<string, unknown>[]
    )[0];
    assert.equal(adjacency?.subnet_gateway_ip, aNet.replace(/0\/25$/, '1').replace(/128\/25$/, '129'));

    // Restart: allocations come back from ODL, nothing is rewritten.
    await first.idle();
    await first.close();
    const writes = writeCount(env);
    const events = new RecordedEvents();
    const registry = createRegistry();
    const second = await startTestWatcher(env, settings, { events, registry });
    cleanups.push(() => second.close());
    await second.idle();
    assert.equal(writeCount(env), writes);
    assert.deepEqual(await nodeCidrs(env, uids), allocated);

    // The fourth node takes the last subnet; the fifth finds the pool used up.
    uids['node-d'] = await createNode(env, 'node-d', '192.168.50.4');
    await waitFor(async () => (await nodeCidrs(env, uids))['node-d'] === '10.250.1.128/25', {
      what: 'node-d allocation',
    });
    uids['node-e'] = await createNode(env, 'node-e', '192.168.50.5');
    await waitFor(() => events.events.some((e) => e.reason === 'PodSubnetExhausted'), {
      what: 'exhaustion event',
    });
    const event = events.events.find((e) => e.reason === 'PodSubnetExhausted');
    assert.deepEqual(event?.object, { kind: 'Node', name: 'node-e', uid: uids['node-e'] });
    assert.match(event?.message ?? '', /10\.250\.0\.0\/23/);
    assert.ok((await metricValue(registry, 'odlcoe_watcher_subnet_exhausted_total')) >= 1);
    assert.equal(await metricValue(registry, 'odlcoe_watcher_nodes_without_subnet'), 1);
    const nodeE = (await readOdl(env))['k8s-nodes'].find((e) => e.uid === uids['node-e']);
    assert.ok(nodeE, 'node-e is registered without a subnet');
    assert.equal(nodeE['pod-cidr'], undefined);

    // node-b goes: its subnet is free again, and node-e gets it; nobody else moves.
    const freed = allocated['node-b'];
    await env.core.deleteNode({ name: 'node-b' });
    await waitFor(async () => (await nodeCidrs(env, uids))['node-e'] === freed, {
      what: 'node-e to get the freed subnet',
    });
    const now = await nodeCidrs(env, uids);
    assert.equal(now['node-b'], undefined);
    assert.equal(now['node-a'], allocated['node-a']);
    assert.equal(now['node-c'], allocated['node-c']);
    assert.equal(now['node-d'], '10.250.1.128/25');
    await waitFor(async () => (await metricValue(registry, 'odlcoe_watcher_nodes_without_subnet')) === 0, {
      what: 'gauge back to 0',
    });
  });

  it('allocate: a gone node keeps its subnet (and entry, across a restart) while its pods hold addresses', async () => {
    const env = await startEnv({ profile: 'sodium', dialect: 'rfc8040' });
    cleanups.push(() => env.close());
    const settings = {
      subnetSource: 'allocate' as const,
      clusterCidr: '10.250.0.0/23',
      nodePrefixLength: 24,
    };
    const uids: Record<string, string> = { 'node-a': await createNode(env, 'node-a', '192.168.70.1') };
    await createNamespace(env, 'alpha');
    const first = await startTestWatcher(env, settings);
    cleanups.push(() => first.close());
    await waitFor(async () => (await nodeCidrs(env, uids))['node-a'] === '10.250.0.0/24', {
      what: 'node-a allocation',
    });
    await createPod(env, 'alpha', 'p1', 'node-a', { ip: '10.250.0.2' });
    await waitFor(async () => (await readOdl(env))['vpn-interface'].length === 1, { what: 'vpn-if p1' });

    // The Node goes while p1 (bound to it, address from its subnet) remains, and another node
    // comes (after the deletion, in the same watch stream): the subnet and its durable record
    // stay with node-a, and node-b gets the other one.
    await env.core.deleteNode({ name: 'node-a' });
    uids['node-b'] = await createNode(env, 'node-b', '192.168.70.2');
    await waitFor(async () => (await nodeCidrs(env, uids))['node-b'] !== undefined, {
      what: 'node-b allocation',
    });
    await first.idle();
    assert.deepEqual(await nodeCidrs(env, uids), { 'node-a': '10.250.0.0/24', 'node-b': '10.250.1.0/24' });
    assert.equal((await readOdl(env))['vpn-interface'].length, 1, 'p1 keeps its vpn-interface');

    // A restart recovers node-a's allocation from the kept entry: the pool stays used up.
    await first.close();
    const events = new RecordedEvents();
    const second = await startTestWatcher(env, settings, { events });
    cleanups.push(() => second.close());
    await second.idle();
    uids['node-c'] = await createNode(env, 'node-c', '192.168.70.3');
    await waitFor(() => events.events.some((e) => e.reason === 'PodSubnetExhausted'), {
      what: 'node-c finds the pool used up',
    });
    assert.deepEqual(await nodeCidrs(env, uids), {
      'node-a': '10.250.0.0/24',
      'node-b': '10.250.1.0/24',
      'node-c': undefined,
    });

    // Once p1 and its vpn-interface are gone, node-a's entry goes and node-c gets the subnet.
    await deletePod(env, 'alpha', 'p1');
    await waitFor(async () => (await nodeCidrs(env, uids))['node-c'] === '10.250.0.0/24', {
      what: 'node-c to get the freed subnet',
    });
    assert.equal((await readOdl(env))['vpn-interface'].length, 0);
    assert.deepEqual(await nodeCidrs(env, uids), {
      'node-a': undefined,
      'node-b': '10.250.1.0/24',
      'node-c': '10.250.0.0/24',
    });
  });

  it('odl (Sodium with COE): reads the pod-cidr an ODL user sets in k8s-node, carries it into the node network, never overwrites it', async () => {
    const { env, uid, watcher } = await odlSourceWorld('sodium');
    let odl = await readOdl(env);
    assert.deepEqual(odl['k8s-nodes'], [
      {
        uid,
        'cluster-id': 'd5b7c83d-b362-3bde-86d5-f509e6ca8560',
        'host-name': 'node-a',
        'internal-ip-address': '192.168.60.1',
      },
    ]);
    assert.equal(odl['vpn-interface'].length, 0, 'no vpn-interface before the subnet is known');
    assert.deepEqual(odl['dhcp-network'], [], 'no node network before the subnet is known');

    // The ODL user assigns the subnet (a whole-entry PUT, as a RESTCONF user would).
    const entry = { ...odl['k8s-nodes'][0], 'pod-cidr': '10.251.7.0/24' };
    await env.odl.put(
      [
        { module: 'k8s-node', name: 'k8s-nodes-info' },
        { name: 'k8s-nodes', keys: [uid] },
      ],
      { 'k8s-node:k8s-nodes': [entry] },
    );
    await waitFor(async () => (await readOdl(env))['vpn-interface'].length === 1, {
      what: 'the vpn-interface',
    });
    odl = await readOdl(env);
    const adjacency = (odl['vpn-interface'][0]?.['odl-l3vpn:adjacency'] as Record<string, unknown>[])[0];
    assert.equal(adjacency?.subnet_gateway_ip, '10.251.7.1');
    // Carried over, unchanged, into the network the agents read.
    await waitFor(async () => (await readOdl(env))['dhcp-network'].length === 1, {
      what: 'the node network',
    });
    assert.deepEqual((await readOdl(env))['dhcp-network'], [
      {
        'network-id': 'odlcoe-node:node-a',
        'allocation-pool': [
          {
            subnet: '10.251.7.0/24',
            gateway: '10.251.7.1',
            'allocate-from': '10.251.7.2',
            'allocate-to': '10.251.7.254',
          },
        ],
      },
    ]);

    // A node change and a full resync leave the user's pod-cidr alone.
    await touchAndResync(env, watcher);
    assert.equal((await readOdl(env))['k8s-nodes'][0]?.['pod-cidr'], '10.251.7.0/24');
  });

  it('odl (Aluminium): reads the node network an ODL user creates over RESTCONF and never overwrites it; no COE request', async () => {
    const { env, watcher } = await odlSourceWorld('aluminium');
    let odl = await readOdl(env);
    assert.equal(odl['vpn-interface'].length, 0, 'no vpn-interface before the subnet is known');
    assert.deepEqual(odl['dhcp-network'], [], 'the watcher creates no network in odl mode');

    // The ODL user creates the node's network (its own choice of range and a DNS server).
    const network = {
      'network-id': 'odlcoe-node:node-a',
      'allocation-pool': [
        {
          subnet: '10.251.7.0/24',
          gateway: '10.251.7.1',
          'allocate-from': '10.251.7.100',
          'allocate-to': '10.251.7.200',
          'dns-servers': ['10.96.0.10'],
        },
      ],
    };
    await env.odl.put(
      [
        { module: 'dhcp_allocation_pool', name: 'dhcp_allocation_pool' },
        { name: 'network', keys: ['odlcoe-node:node-a'] },
      ],
      { 'dhcp_allocation_pool:network': [network] },
    );
    await waitFor(async () => (await readOdl(env))['vpn-interface'].length === 1, {
      what: 'the vpn-interface',
    });
    odl = await readOdl(env);
    const adjacency = (odl['vpn-interface'][0]?.adjacency as Record<string, unknown>[])[0];
    assert.equal(adjacency?.subnet_gateway_ip, '10.251.7.1');

    // A node change and a full resync leave the user's network alone.
    await touchAndResync(env, watcher);
    assert.deepEqual((await readOdl(env))['dhcp-network'], [network]);
    assert.deepEqual(coeRequests(env), {}, 'no request into a COE module');
  });

  it('allocate (Aluminium): allocations live in the node networks, stable across a restart; no COE request', async () => {
    const env = await startEnv({ profile: 'aluminium', dialect: 'rfc8040' });
    cleanups.push(() => env.close());
    const settings = {
      subnetSource: 'allocate' as const,
      clusterCidr: '10.252.0.0/23',
      nodePrefixLength: 24,
    };
    for (const [name, ip] of [
      ['node-a', '192.168.80.1'],
      ['node-b', '192.168.80.2'],
    ] as const)
      await createNode(env, name, ip);
    const first = await startTestWatcher(env, settings);
    cleanups.push(() => first.close());
    const networks = async () =>
      Object.fromEntries(
        (await readOdl(env))['dhcp-network'].map((n) => [
          n['network-id'],
          (n['allocation-pool'] as { subnet: string }[])[0]?.subnet,
        ]),
      );
    await waitFor(async () => Object.keys(await networks()).length === 2, { what: 'two node networks' });
    const allocated = await networks();
    assert.deepEqual(Object.values(allocated).sort(), ['10.252.0.0/24', '10.252.1.0/24']);
    await first.idle();
    await first.close();
    const writes = writeCount(env);
    const events = new RecordedEvents();
    const second = await startTestWatcher(env, settings, { events });
    cleanups.push(() => second.close());
    await second.idle();
    assert.equal(writeCount(env), writes, 'nothing rewritten after a restart');
    assert.deepEqual(await networks(), allocated);
    // The pool is used up: a third node gets none (the allocations were recovered).
    await createNode(env, 'node-c', '192.168.80.3');
    await waitFor(() => events.events.some((e) => e.reason === 'PodSubnetExhausted'), {
      what: 'node-c finds the pool used up',
    });
    assert.deepEqual(coeRequests(env), {}, 'no request into a COE module');
  });
});
