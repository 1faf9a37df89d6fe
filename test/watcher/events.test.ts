/** The Kubernetes Event recorder against the API simulator: one Event per object and reason, counted up. */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { KubeConfig, CoreV1Api } from '@kubernetes/client-node';
import { startKubeSim } from '../../src/kubesim/server.js';
import { KubeEventRecorder } from '../../src/watcher/events.js';
import { logger, waitFor } from './testing.js';

describe('KubeEventRecorder', () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('creates a Warning event, then counts repeats instead of flooding', async () => {
    const sim = await startKubeSim({ port: 0, logger: logger('kubesim') });
    cleanups.push(() => sim.close());
    const kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfig());
    const core = kc.makeApiClient(CoreV1Api);
    let now = 1_000_000;
    const recorder = new KubeEventRecorder(kc, logger('events'), 'watcher-0', 60_000, () => now);
    const pod = { kind: 'Pod' as const, name: 'web', namespace: 'default', uid: 'u-1' };

    recorder.warning(pod, 'ForeignOdlObject', 'interface default:web is not ours');
    await recorder.flush();
    recorder.warning(pod, 'ForeignOdlObject', 'interface default:web is not ours'); // within the interval: counted only
    await recorder.flush();
    let list = await core.listNamespacedEvent({ namespace: 'default' });
    assert.equal(list.items.length, 1);
    const event = list.items[0];
    assert.equal(event?.type, 'Warning');
    assert.equal(event?.reason, 'ForeignOdlObject');
    assert.deepEqual(
      { ...event?.involvedObject },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        name: 'web',
        namespace: 'default',
        uid: 'u-1',
      },
    );
    assert.equal(event?.count, 1);
    assert.equal(event?.source?.component, 'odlcoe-watcher');

    now += 61_000;
    recorder.warning(pod, 'ForeignOdlObject', 'interface default:web is not ours');
    await recorder.flush();
    await waitFor(
      async () => {
        list = await core.listNamespacedEvent({ namespace: 'default' });
        return list.items.length === 1 && list.items[0]?.count === 3;
      },
      { what: 'the event counted up to 3' },
    );

    // Cluster-scoped objects' events go to `default`.
    recorder.warning({ kind: 'Node', name: 'node-e', uid: 'u-2' }, 'PodSubnetExhausted', 'no subnet left');
    await recorder.flush();
    list = await core.listNamespacedEvent({ namespace: 'default' });
    assert.ok(list.items.some((e) => e.involvedObject.kind === 'Node' && e.reason === 'PodSubnetExhausted'));
  });
});
