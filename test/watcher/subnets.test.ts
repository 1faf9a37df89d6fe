/**
 * Node subnet sources. `allocate`: subnets carved from the cluster CIDR, recorded in ODL,
 * stable across restarts, freed when the node goes, exhaustion reported (error log, Event,
 * metric). `odl`: an ODL user sets pod-cidr; the watcher reads it, never overwrites it.
 * (`podCIDR` is what the scenario tests use.)
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { createRegistry } from '../../src/common/metrics.js';
import {
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

const nodeCidrs = async (env: Env, uids: Record<string, string>) => {
  const entries = (await readOdl(env))['k8s-nodes'];
  return Object.fromEntries(
    Object.entries(uids).map(([name, uid]) => [name, entries.find((e) => e.uid === uid)?.['pod-cidr']]),
  );
};

describe('node subnets', () => {
  let cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    cleanups = [];
  });

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

  it('odl: reads the pod-cidr an ODL user sets and never overwrites it', async () => {
    const env = await startEnv({ profile: 'aluminium', dialect: 'bierman02' });
    cleanups.push(() => env.close());
    // spec.podCIDR is set but must be ignored: the source is ODL.
    const uid = await createNode(env, 'node-a', '192.168.60.1', '10.99.0.0/24');
    await createNamespace(env, 'apps');
    await createPod(env, 'apps', 'p', 'node-a', { ip: '10.251.7.10' });
    const watcher = await startTestWatcher(env, { subnetSource: 'odl', subnetPollMs: 200 });
    cleanups.push(() => watcher.close());

    await waitFor(async () => (await readOdl(env))['elan-interface'].length === 1, {
      what: 'the elan-interface',
    });
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
    const adjacency = (odl['vpn-interface'][0]?.adjacency as Record<string, unknown>[])[0];
    assert.equal(adjacency?.subnet_gateway_ip, '10.251.7.1');

    // A node change and a full resync leave the user's pod-cidr alone.
    await env.core.patchNode({
      name: 'node-a',
      body: [{ op: 'add', path: '/metadata/labels', value: { x: 'y' } }],
    });
    await watcher.resync();
    await watcher.idle();
    assert.equal((await readOdl(env))['k8s-nodes'][0]?.['pod-cidr'], '10.251.7.0/24');
  });
});
