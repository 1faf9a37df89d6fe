import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { silentLogger } from '../common/log.js';
import { Registry } from '../common/metrics.js';
import type { KubeSim } from '../kubesim/server.js';
import { Informer, objectKey, waitForAllSynced } from './informer.js';
import type { InformerEvent, InformerOptions } from './informer.js';
import type { KubeClient } from './kube-client.js';
import { startSimApi } from '../../test/helpers/kube-api.js';
import { waitFor } from '../../test/helpers/wait.js';

function pod(name: string, node: string, labels: Record<string, string> = {}): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns1', labels },
    spec: { nodeName: node, containers: [{ name: 'c', image: 'pause' }] },
  };
}

describe('informer against the Kubernetes simulator', () => {
  let sim: KubeSim;
  let kubeConfig: KubeConfig;
  let api: KubeClient;
  const informers: Informer<V1Pod>[] = [];

  const createPod = (p: V1Pod) => api.request<V1Pod>('POST', '/api/v1/namespaces/ns1/pods', { body: p });
  // Grace 0: removed at once (a plain DELETE of a pod bound to a node only marks it Terminating).
  const deletePod = (name: string) =>
    api.request('DELETE', `/api/v1/namespaces/ns1/pods/${name}`, { query: { gracePeriodSeconds: 0 } });
  const relabelPod = async (name: string, labels: Record<string, string>) => {
    const current = await api.request<V1Pod>('GET', `/api/v1/namespaces/ns1/pods/${name}`);
    return api.request<V1Pod>('PUT', `/api/v1/namespaces/ns1/pods/${name}`, {
      body: { ...current, metadata: { ...current.metadata, labels } },
    });
  };
  const newInformer = (options: Partial<InformerOptions<V1Pod>> = {}) => {
    const informer = new Informer<V1Pod>({
      name: 'pods',
      kubeConfig,
      path: '/api/v1/pods',
      backoff: { initialMs: 20, maxMs: 200 },
      logger: silentLogger(),
      ...options,
    });
    informers.push(informer);
    return informer;
  };

  before(async () => {
    ({ sim, kubeConfig, api } = await startSimApi());
    await api.request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns1' } },
    });
  });

  after(async () => {
    await Promise.all(informers.map((i) => i.stop()));
    await sim?.close();
  });

  it('is not synced until the first list was delivered; waitForSync then resolves', async () => {
    for (let i = 0; i < 5; i++) await createPod(pod(`sync-${i}`, 'node-a'));
    const informer = newInformer({ labelSelector: undefined });
    const syncedDuringAdds: boolean[] = [];
    const events: InformerEvent['type'][] = [];
    informer.on('add', () => syncedDuringAdds.push(informer.hasSynced()));
    informer.on('event', (e) => events.push(e.type));
    assert.equal(informer.hasSynced(), false);
    const aborted = new AbortController();
    aborted.abort(new Error('gave up'));
    await assert.rejects(informer.waitForSync(aborted.signal), /gave up/);

    informer.start();
    await waitForAllSynced([informer], AbortSignal.timeout(20_000));
    assert.equal(informer.hasSynced(), true);
    assert.ok(syncedDuringAdds.length >= 5);
    assert.ok(
      syncedDuringAdds.every((synced) => synced === false),
      'handlers ran before hasSynced turned true',
    );
    assert.ok(events.indexOf('synced') >= 0);
    assert.ok(informer.get('ns1/sync-3'));
    assert.equal(informer.get('ns1/sync-3')?.kind, 'Pod', 'listed items carry their kind');
    assert.notEqual(informer.resourceVersion(), '');
    await waitFor(() => events.includes('connect'), { what: 'the watch to connect' });
  });

  it('delivers add, update and delete from the watch', async () => {
    const informer = newInformer({ name: 'pods-crud', labelSelector: 'app=crud' });
    const seen: string[] = [];
    informer
      .on('add', (p) => seen.push(`add ${objectKey(p)}`))
      .on('update', (p, old) =>
        seen.push(`update ${objectKey(p)} ${old.metadata?.labels?.v}->${p.metadata?.labels?.v}`),
      )
      .on('delete', (p) => seen.push(`delete ${objectKey(p)} v=${p.metadata?.labels?.v}`));
    informer.start();
    await informer.waitForSync(AbortSignal.timeout(20_000));
    await createPod(pod('crud-1', 'node-a', { app: 'crud', v: '1' }));
    await waitFor(() => seen.includes('add ns1/crud-1'), { what: 'the add' });
    await relabelPod('crud-1', { app: 'crud', v: '2' });
    await waitFor(() => seen.includes('update ns1/crud-1 1->2'), { what: 'the update' });
    await deletePod('crud-1');
    await waitFor(() => seen.includes('delete ns1/crud-1 v=2'), { what: 'the delete' });
    // As from kube-apiserver: the DELETE writes the deletion mark (an update) before the removal.
    assert.deepEqual(seen, [
      'add ns1/crud-1',
      'update ns1/crud-1 1->2',
      'update ns1/crud-1 2->2',
      'delete ns1/crud-1 v=2',
    ]);
    assert.equal(informer.get('ns1/crud-1'), undefined);
  });

  it('sees an object leaving its label selector as a delete', async () => {
    const informer = newInformer({ name: 'pods-selected', labelSelector: 'tier=web' });
    const deleted: string[] = [];
    informer.on('delete', (p) => deleted.push(objectKey(p)));
    await createPod(pod('web-1', 'node-a', { tier: 'web' }));
    informer.start();
    await informer.waitForSync(AbortSignal.timeout(20_000));
    assert.deepEqual(informer.list().map(objectKey), ['ns1/web-1']);
    await relabelPod('web-1', { tier: 'db' });
    await waitFor(() => deleted.includes('ns1/web-1'), { what: 'the delete' });
    assert.equal(informer.list().length, 0);
  });

  it('caches and delivers what its transform returns, for listed and watched objects alike', async () => {
    const informer = newInformer({
      name: 'pods-transformed',
      labelSelector: 'app=slim',
      transform: (p) => ({ ...p, spec: { containers: [], nodeName: `seen-${p.spec?.nodeName}` } }),
    });
    const delivered: string[] = [];
    informer
      .on('add', (p) => delivered.push(`add ${p.metadata?.name} ${p.spec?.nodeName}`))
      .on('update', (p, old) =>
        delivered.push(`update ${p.metadata?.name} ${old.spec?.nodeName}->${p.spec?.nodeName}`),
      );
    await createPod(pod('slim-listed', 'node-slim-a', { app: 'slim' }));
    informer.start();
    await informer.waitForSync(AbortSignal.timeout(20_000));
    await createPod(pod('slim-watched', 'node-slim-b', { app: 'slim' }));
    await waitFor(() => delivered.length === 2, { what: 'the watched add' });
    await relabelPod('slim-watched', { app: 'slim', v: '2' });
    await waitFor(() => delivered.length === 3, { what: 'the update' });
    assert.deepEqual(delivered, [
      'add slim-listed seen-node-slim-a',
      'add slim-watched seen-node-slim-b',
      'update slim-watched seen-node-slim-b->seen-node-slim-b',
    ]);
    assert.deepEqual(informer.get('ns1/slim-listed')?.spec, { containers: [], nodeName: 'seen-node-slim-a' });
    assert.equal(informer.get('ns1/slim-watched')?.metadata?.labels?.v, '2', 'what it kept is current');
  });

  it('follows continue tokens when the list is paged with a small pageSize', async () => {
    for (let i = 0; i < 23; i++) await createPod(pod(`page-${i}`, 'node-a', { app: 'paged' }));
    // The server really pages: a first page of 4 comes with a continue token.
    const first = await api.request<{ items: unknown[]; metadata: { continue?: string } }>(
      'GET',
      '/api/v1/pods',
      {
        query: { labelSelector: 'app=paged', limit: 4 },
      },
    );
    assert.equal(first.items.length, 4);
    assert.ok(first.metadata.continue);

    const informer = newInformer({ name: 'pods-paged', labelSelector: 'app=paged', pageSize: 4 });
    let synced: number | undefined;
    informer.on('event', (e) => {
      if (e.type === 'synced') synced = e.objects;
    });
    informer.start();
    await informer.waitForSync(AbortSignal.timeout(20_000));
    assert.equal(synced, 23);
    assert.deepEqual(
      informer
        .list()
        .map((p) => p.metadata?.name)
        .sort(),
      Array.from({ length: 23 }, (_, i) => `page-${i}`).sort(),
    );
  });

  it('with a field selector sees only the pods of its node', async () => {
    const informer = newInformer({ name: 'pods-node-b', fieldSelector: 'spec.nodeName=node-b' });
    await createPod(pod('on-b-1', 'node-b'));
    await createPod(pod('on-c-1', 'node-c'));
    informer.start();
    await informer.waitForSync(AbortSignal.timeout(20_000));
    assert.deepEqual(informer.list().map(objectKey), ['ns1/on-b-1']);
    await createPod(pod('on-c-2', 'node-c'));
    await createPod(pod('on-b-2', 'node-b'));
    await waitFor(() => informer.get('ns1/on-b-2') !== undefined, { what: 'the node-b pod' });
    assert.equal(informer.get('ns1/on-c-2'), undefined);
    assert.deepEqual(informer.list().map(objectKey).sort(), ['ns1/on-b-1', 'ns1/on-b-2']);
  });

  it('keys cluster-scoped objects by name and reports its state as metrics', async () => {
    const registry = new Registry();
    await api.request('POST', '/api/v1/nodes', {
      body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-x' } },
    });
    const nodes = new Informer({
      name: 'nodes',
      kubeConfig,
      path: '/api/v1/nodes',
      registry,
      logger: silentLogger(),
    });
    try {
      nodes.start();
      await nodes.waitForSync(AbortSignal.timeout(20_000));
      assert.equal(nodes.get('node-x')?.metadata?.name, 'node-x');
      const text = await registry.metrics();
      assert.match(text, /odlcoe_informer_synced\{informer="nodes"\} 1/);
      assert.match(text, /odlcoe_informer_objects\{informer="nodes"\} [1-9]/);
    } finally {
      await nodes.stop();
    }
  });

  it('stops cleanly: no handler runs after stop() resolved', async () => {
    const informer = newInformer({ name: 'pods-stop', labelSelector: 'app=stop' });
    informer.start();
    await informer.waitForSync(AbortSignal.timeout(20_000));
    await informer.stop();
    let calls = 0;
    informer.on('add', () => (calls += 1));
    await createPod(pod('stop-1', 'node-a', { app: 'stop' }));
    // A fresh informer sees the pod, so the stopped one had every chance to.
    const witness = newInformer({ name: 'pods-stop-witness', labelSelector: 'app=stop' });
    witness.start();
    await witness.waitForSync(AbortSignal.timeout(20_000));
    assert.ok(witness.get('ns1/stop-1'));
    assert.equal(calls, 0);
  });

  it('rejects options that cannot work', () => {
    assert.throws(() => newInformer({ path: 'api/v1/pods' }), /path must start with/);
    assert.throws(() => newInformer({ pageSize: 0 }), /pageSize/);
    assert.throws(() => newInformer({ watchTimeoutSeconds: [10, 5] }), /watchTimeoutSeconds/);
  });
});
