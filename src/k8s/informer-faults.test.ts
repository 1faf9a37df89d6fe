import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { silentLogger } from '../common/log.js';
import { Registry } from '../common/metrics.js';
import type { KubeSim } from '../kubesim/server.js';
import { Informer, objectKey } from './informer.js';
import type { InformerEvent } from './informer.js';
import type { KubeClient } from './kube-client.js';
import { startSimApi } from '../../test/helpers/kube-api.js';
import { waitFor } from '../../test/helpers/wait.js';

function pod(name: string, labels: Record<string, string> = {}): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns1', labels },
    spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'pause' }] },
  };
}

/** key → resourceVersion, the identity of a cache's content. */
function versions(objects: V1Pod[]): Map<string, string> {
  return new Map(objects.map((o) => [objectKey(o), o.metadata?.resourceVersion ?? '']));
}

describe('informer recovers from injected API server faults', () => {
  let sim: KubeSim;
  let api: KubeClient;
  let informer: Informer<V1Pod>;
  let registry: Registry;
  let events: InformerEvent[];
  const handled: string[] = [];

  const createPod = (p: V1Pod) => api.request<V1Pod>('POST', '/api/v1/namespaces/ns1/pods', { body: p });
  // Grace 0: removed at once (a plain DELETE of a pod bound to a node only marks it Terminating).
  const deletePod = (name: string) =>
    api.request('DELETE', `/api/v1/namespaces/ns1/pods/${name}`, { query: { gracePeriodSeconds: 0 } });
  const relabelPod = async (name: string, labels: Record<string, string>) => {
    const current = await api.request<V1Pod>('GET', `/api/v1/namespaces/ns1/pods/${name}`);
    await api.request('PUT', `/api/v1/namespaces/ns1/pods/${name}`, {
      body: { ...current, metadata: { ...current.metadata, labels } },
    });
  };
  const count = (type: InformerEvent['type']) => events.filter((e) => e.type === type).length;

  /** The informer's cache holds exactly what a fresh list returns, version for version. */
  const cacheMatchesServer = async (): Promise<boolean> => {
    const fresh = await api.request<{ items: V1Pod[] }>('GET', '/api/v1/pods');
    const want = versions(fresh.items);
    const have = versions(informer.list());
    return want.size === have.size && [...want].every(([key, rv]) => have.get(key) === rv);
  };

  beforeEach(async () => {
    let kubeConfig: KubeConfig;
    ({ sim, kubeConfig, api } = await startSimApi());
    await api.request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns1' } },
    });
    for (let i = 0; i < 10; i++) await createPod(pod(`p${i}`, { v: '1' }));
    registry = new Registry();
    events = [];
    handled.length = 0;
    informer = new Informer<V1Pod>({
      name: 'pods',
      kubeConfig,
      path: '/api/v1/pods',
      pageSize: 4,
      watchTimeoutSeconds: [60, 120],
      silenceMs: 1500,
      backoff: { initialMs: 50, maxMs: 400 },
      registry,
      logger: silentLogger(),
    });
    informer
      .on('add', (p) => handled.push(`add ${p.metadata?.name}`))
      .on('update', (p) => handled.push(`update ${p.metadata?.name}`))
      .on('delete', (p) => handled.push(`delete ${p.metadata?.name} v=${p.metadata?.labels?.v}`))
      .on('event', (e) => events.push(e));
    informer.start();
    await informer.waitForSync(AbortSignal.timeout(30_000));
    await waitFor(() => count('connect') >= 1, { what: 'the first watch' });
  });

  afterEach(async () => {
    await informer?.stop();
    await sim?.close();
  });

  it('re-watches from the last resourceVersion after the server closes watches: no relist, no backoff', async () => {
    await createPod(pod('before-close'));
    await waitFor(() => informer.get('ns1/before-close') !== undefined, {
      what: 'the watch to deliver',
    });
    const connects = count('connect');
    sim.fault({ action: 'close-watches' });
    await waitFor(() => count('connect') > connects, { what: 'a new watch' });
    await createPod(pod('after-close'));
    await deletePod('p0');
    await relabelPod('p1', { v: '2' });
    await waitFor(cacheMatchesServer, { what: 'the cache to match the server' });
    assert.equal(count('relist'), 0);
    assert.equal(count('reconnect'), 0, 'a clean close is not an error');
    assert.ok(
      handled.includes('add after-close') &&
        handled.includes('delete p0 v=1') &&
        handled.includes('update p1'),
    );
  });

  it('relists after 410 and delivers deletes, updates and adds for what changed during the gap', async () => {
    // Open a gap: the next watch is silent, so the informer misses what happens meanwhile.
    sim.fault({ action: 'silent-watches', seconds: 2 });
    const connects = count('connect');
    sim.fault({ action: 'close-watches' });
    await waitFor(() => count('connect') > connects, { what: 'the silent watch' });
    handled.length = 0;
    await deletePod('p0');
    await deletePod('p1');
    await relabelPod('p2', { v: '2' });
    await createPod(pod('new-1'));
    await relabelPod('new-1', { v: '3' });
    await deletePod('p3');
    // History is gone: the informer's resourceVersion is now too old to watch from.
    sim.fault({ action: 'compact' });
    await waitFor(() => count('relist') >= 1, { what: 'a relist' });
    await waitFor(cacheMatchesServer, { what: 'the cache to match the server' });
    assert.ok(count('watchdog') >= 1, 'the silent watch was detected');
    assert.deepEqual(
      handled.filter((h) => h.startsWith('delete')).sort(),
      ['delete p0 v=1', 'delete p1 v=1', 'delete p3 v=1'],
      'vanished objects are delivered with their last known state',
    );
    assert.ok(handled.includes('update p2'));
    assert.ok(handled.includes('add new-1'));
    assert.equal(informer.get('ns1/new-1')?.metadata?.labels?.v, '3');
    assert.match(await registry.metrics(), /odlcoe_informer_relists_total\{informer="pods"\} [1-9]/);
    // Still live after the relist.
    await createPod(pod('after-relist'));
    await waitFor(() => informer.get('ns1/after-relist') !== undefined, {
      what: 'the watch after the relist',
    });
  });

  for (const status of [500, 429] as const) {
    it(`rides out a burst of ${status} answers with backoff and catches up`, async () => {
      const errorsBefore = count('error');
      sim.fault({ action: 'errors', status, seconds: 1.5 });
      sim.fault({ action: 'close-watches' });
      await waitFor(() => count('error') >= errorsBefore + 2, {
        what: 'failed reconnects',
      });
      const reconnects = events.filter((e) => e.type === 'reconnect');
      assert.ok(reconnects.length >= 2);
      assert.ok(reconnects.every((e) => e.type === 'reconnect' && e.delayMs > 0 && e.delayMs <= 400));
      // Writes fail during the burst as well; retry them until the server answers again.
      await waitFor(
        () =>
          createPod(pod(`after-${status}`)).then(
            () => true,
            () => false,
          ),
        { what: 'the burst to end' },
      );
      await deletePod('p4');
      await waitFor(cacheMatchesServer, { what: 'the cache to match the server' });
      assert.ok(informer.stalledMs() === 0);
      assert.match(await registry.metrics(), /odlcoe_informer_reconnects_total\{informer="pods"\} [1-9]/);
    });
  }

  it('detects a silent watch with the watchdog and resumes without losing events', async () => {
    sim.fault({ action: 'silent-watches', seconds: 1 });
    const connects = count('connect');
    sim.fault({ action: 'close-watches' });
    await waitFor(() => count('connect') > connects, { what: 'the silent watch' });
    await createPod(pod('during-silence'));
    await deletePod('p5');
    await waitFor(() => count('watchdog') >= 1, { what: 'the watchdog' });
    await waitFor(cacheMatchesServer, { what: 'the cache to match the server' });
    assert.ok(informer.get('ns1/during-silence'));
    assert.ok(handled.includes('delete p5 v=1'));
    assert.equal(count('relist'), 0, 'history still covers the gap: no relist needed');
    assert.match(
      await registry.metrics(),
      /odlcoe_informer_watch_errors_total\{informer="pods",kind="watchdog"\} [1-9]/,
    );
  });
});
