/**
 * Objects odlcoe does not own: an ODL object without odlcoe's marker whose name a pod or a
 * namespace needs is reported (warning log, metric, Kubernetes Event on the pod/namespace),
 * retried slowly, and never modified or deleted, not even after the pod and namespace are gone.
 * An entry of odlcoe's that a foreign entry refers to is kept while that one is there.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { createRegistry } from '../../src/common/metrics.js';
import { NETVIRT_KINDS } from '../../src/netvirt/kinds.js';
import { netvirtPaths } from '../../src/netvirt/paths.js';
import { OdlReader } from '../../src/odl/reader.js';
import {
  createNamespace,
  createNode,
  createPod,
  deleteNamespace,
  deletePod,
  metricValue,
  readOdl,
  RecordedEvents,
  startEnv,
  startTestWatcher,
  waitFor,
  type OdlLists,
} from './testing.js';

const FOREIGN_INTERFACE = {
  'ietf-interfaces:interface': [
    { name: 'alpha:web', type: 'iana-if-type:l2vlan', description: 'made by hand', enabled: false },
  ],
};
const FOREIGN_VPN = {
  'l3vpn:vpn-instance': [
    {
      'vpn-instance-name': 'beta',
      description: 'tenant VPN of another system',
      'ipv4-family': {
        'route-distinguisher': ['65000:7'],
        vpnTargets: { vpnTarget: [{ vrfRTValue: '65000:7', vrfRTType: 'both' }] },
      },
    },
  ],
};

describe('foreign ODL objects', () => {
  let cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    cleanups = [];
  });

  it('reports a colliding object without the marker and never touches it', async () => {
    const env = await startEnv({ profile: 'sodium', dialect: 'bierman02' });
    cleanups.push(() => env.close());
    await env.odl.put(
      [
        { module: 'ietf-interfaces', name: 'interfaces' },
        { name: 'interface', keys: ['alpha:web'] },
      ],
      FOREIGN_INTERFACE,
    );
    await env.odl.put(
      [
        { module: 'l3vpn', name: 'vpn-instances' },
        { name: 'vpn-instance', keys: ['beta'] },
      ],
      FOREIGN_VPN,
    );
    const foreign = (lists: OdlLists) => ({
      iface: lists.interface.find((e) => e.name === 'alpha:web'),
      vpn: lists['vpn-instance'].find((e) => e['vpn-instance-name'] === 'beta'),
    });
    const original = foreign(await readOdl(env));
    assert.ok(original.iface && original.vpn);

    await createNode(env, 'node-a', '192.168.40.1', '10.247.1.0/24');
    const alphaUid = await createNamespace(env, 'alpha');
    const betaUid = await createNamespace(env, 'beta');
    const webUid = await createPod(env, 'alpha', 'web', 'node-a', { ip: '10.247.1.10' });
    await createPod(env, 'alpha', 'db', 'node-a', { ip: '10.247.1.11' });
    await createPod(env, 'beta', 'api', 'node-a', { ip: '10.247.1.20' });

    const events = new RecordedEvents();
    const registry = createRegistry();
    const watcher = await startTestWatcher(
      env,
      { slowRetryMs: 300, gracePeriodMs: 200 },
      { events, registry },
    );
    cleanups.push(() => watcher.close());
    await watcher.ready();

    // The unaffected pod converges; the colliding names are reported on their Kubernetes objects.
    await waitFor(async () => (await readOdl(env))['vpn-interface'].some((e) => e.name === 'alpha:db'), {
      what: 'alpha:db',
    });
    await waitFor(() => events.events.some((e) => e.object.kind === 'Pod' && e.object.name === 'web'), {
      what: 'an event on pod web',
    });
    await waitFor(
      () => events.events.some((e) => e.object.kind === 'Namespace' && e.object.name === 'beta'),
      { what: 'an event on namespace beta' },
    );
    const podEvent = events.events.find((e) => e.object.name === 'web');
    assert.equal(podEvent?.reason, 'ForeignOdlObject');
    assert.equal(podEvent?.object.uid, webUid);
    assert.match(podEvent?.message ?? '', /interface alpha:web/);
    assert.equal(events.events.find((e) => e.object.name === 'beta')?.object.uid, betaUid);
    assert.ok(
      (await metricValue(registry, 'odlcoe_watcher_foreign_collisions_total', { kind: 'interface' })) >= 1,
    );
    assert.ok(
      (await metricValue(registry, 'odlcoe_watcher_foreign_collisions_total', { kind: 'vpnInstance' })) >= 1,
    );
    assert.equal(await metricValue(registry, 'odlcoe_watcher_objects_foreign', { kind: 'interface' }), 1);
    // Retried slowly: a few collisions per second at most, not a hot loop.
    await waitFor(
      async () =>
        (await metricValue(registry, 'odlcoe_watcher_foreign_collisions_total', { kind: 'interface' })) >= 3,
      {
        what: 'the collision to be seen again on retry',
      },
    );
    assert.deepEqual(foreign(await readOdl(env)), original);

    // The pods and namespaces that wanted the names go: the foreign objects stay as they were.
    await deletePod(env, 'alpha', 'web');
    await deleteNamespace(env, 'beta');
    await waitFor(async () => !(await readOdl(env))['vpn-interface'].some((e) => e.name === 'beta:api'), {
      what: 'beta:api to go',
    });
    await watcher.resync();
    await watcher.idle();
    const after = await readOdl(env);
    assert.deepEqual(foreign(after), original);
    assert.deepEqual(after['vpn-instance'].map((v) => v['vpn-instance-name']).sort(), ['alpha', 'beta']);
    assert.ok(alphaUid);
  });

  it('keeps what a foreign object refers to while it is there, and leaves no dangling reference', async () => {
    const env = await startEnv({ profile: 'sodium', dialect: 'rfc8040' });
    cleanups.push(() => env.close());
    const registry = createRegistry();
    await createNode(env, 'node-a', '192.168.40.1', '10.247.1.0/24');
    await createNamespace(env, 'alpha');
    await createPod(env, 'alpha', 'web', 'node-a', { ip: '10.247.1.10' });
    const watcher = await startTestWatcher(env, { slowRetryMs: 300, gracePeriodMs: 200 }, { registry });
    cleanups.push(() => watcher.close());
    await waitFor(async () => (await readOdl(env))['vpn-interface'].some((e) => e.name === 'alpha:web'), {
      what: 'alpha:web to converge',
    });

    // Another system takes the pod's elan-interface over (its own description, no marker).
    const elanIfPath = netvirtPaths(env.profile).elanInterface('alpha:web');
    const [taken] = await env.odl.getEntries(elanIfPath);
    assert.ok(taken, 'the elan-interface exists');
    const theirs = { ...taken, description: 'bridged by another system' };
    await env.odl.put(elanIfPath, { 'elan:elan-interface': [theirs] });
    const snapshot = () => new OdlReader(env.odl, env.profile, NETVIRT_KINDS).snapshot();

    await deletePod(env, 'alpha', 'web');
    await waitFor(async () => !(await readOdl(env))['vpn-interface'].some((e) => e.name === 'alpha:web'), {
      what: "the pod's own vpn-interface to go",
    });
    await waitFor(
      async () =>
        (await metricValue(registry, 'odlcoe_watcher_reconciles_total', {
          kind: 'pod',
          result: 'foreign',
        })) >= 2,
      { what: 'the kept interface to be reported (and looked at again)' },
    );
    await watcher.resync();
    await watcher.idle();
    const held = await snapshot();
    const kept = held.state.get('elanInterface', 'alpha:web');
    assert.equal(kept?.description, 'bridged by another system', 'the foreign entry is untouched');
    assert.ok(held.state.get('interface', 'alpha:web'), 'the ietf-interface it refers to is kept');
    assert.ok(held.state.get('elanInstance', '192.168.40.1:alpha'), 'so is the ELAN it is in');
    assert.deepEqual(held.state.danglingReferences(), [], 'no entry in ODL names a missing one');

    // Once the other system lets go, what it referred to is collected (no resync needed).
    await env.odl.delete(elanIfPath);
    await waitFor(
      async () => {
        const now = await snapshot();
        return (
          now.state.get('interface', 'alpha:web') === undefined &&
          now.state.get('elanInstance', '192.168.40.1:alpha') === undefined
        );
      },
      { what: 'the ietf-interface and the ELAN to be collected' },
    );
    assert.deepEqual((await snapshot()).state.danglingReferences(), []);
  });
});
