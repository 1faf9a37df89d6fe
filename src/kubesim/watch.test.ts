import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { makeInformer } from '@kubernetes/client-node';
import type { SimClient } from './testing.js';
import { collectWatch, pod, startSimClient, waitFor } from './testing.js';

const PODS = '/api/v1/namespaces/default/pods';

describe('kubesim watches', () => {
  let c: SimClient;
  before(async () => {
    c = await startSimClient({ bookmarkIntervalMs: 50 });
  });
  after(async () => {
    await c.sim.close();
  });

  it('delivers ADDED, MODIFIED and DELETED after the list resourceVersion, in order', async () => {
    const list = await c.core.listNamespacedPod({ namespace: 'default' });
    const watch = await collectWatch(c.kc, PODS, { resourceVersion: list.metadata!.resourceVersion! });
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('w1') });
    await c.core.patchNamespacedPod({
      name: 'w1',
      namespace: 'default',
      body: [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }],
    });
    const deleted = await c.core.deleteNamespacedPod({ name: 'w1', namespace: 'default' });
    await waitFor('four events', () => watch.events.length >= 4);
    watch.abort();
    // A pod DELETE first writes the deletion mark (MODIFIED), then removes the pod.
    assert.deepEqual(
      watch.events.map((e) => `${e.type} ${e.object.metadata?.name}`),
      ['ADDED w1', 'MODIFIED w1', 'MODIFIED w1', 'DELETED w1'],
    );
    const rvs = watch.events.map((e) => Number(e.object.metadata?.resourceVersion));
    assert.ok(
      rvs[0]! < rvs[1]! && rvs[1]! < rvs[2]! && rvs[2]! < rvs[3]!,
      `resourceVersions increase: ${rvs.join(',')}`,
    );
    assert.equal(
      watch.events[3]?.object.metadata?.resourceVersion,
      deleted.metadata?.resourceVersion,
      'the DELETED object carries the deletion version',
    );
  });

  it('sends the current state as ADDED when no resourceVersion is given', async () => {
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('s1') });
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('s2') });
    const watch = await collectWatch(c.kc, PODS);
    await waitFor('the synthetic ADDED events', () => watch.events.length >= 2);
    await c.core.deleteNamespacedPod({ name: 's1', namespace: 'default' });
    await waitFor('the DELETED event', () => watch.of('DELETED').length === 1);
    watch.abort();
    assert.deepEqual(
      watch
        .of('ADDED')
        .map((e) => e.object.metadata?.name)
        .sort(),
      ['s1', 's2'],
    );
  });

  it('replays retained history to a watch from an older resourceVersion', async () => {
    const start = (await c.core.listNamespacedPod({ namespace: 'default' })).metadata!.resourceVersion!;
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('r1') });
    await c.core.createNamespacedService({ namespace: 'default', body: { metadata: { name: 'not-a-pod' } } });
    await c.core.deleteNamespacedPod({ name: 'r1', namespace: 'default' });
    const watch = await collectWatch(c.kc, PODS, { resourceVersion: start });
    await waitFor('the replayed events', () => watch.events.length >= 3);
    watch.abort();
    assert.deepEqual(
      watch.events.map((e) => `${e.type} ${e.object.metadata?.name}`),
      ['ADDED r1', 'MODIFIED r1', 'DELETED r1'],
    );
  });

  it('reports objects entering and leaving a field selector as ADDED and DELETED', async () => {
    const list = await c.core.listPodForAllNamespaces();
    const watch = await collectWatch(c.kc, '/api/v1/pods', {
      resourceVersion: list.metadata!.resourceVersion!,
      fieldSelector: 'spec.nodeName=node-a',
    });
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('mover', { nodeName: 'node-b' }) });
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('stayer', { nodeName: 'node-a' }) });
    await c.core.patchNamespacedPodStatus({
      name: 'stayer',
      namespace: 'default',
      body: [{ op: 'add', path: '/status/podIP', value: '10.0.0.1' }],
    });
    // Deleting and re-creating with a different node moves the pod in and out of the selection.
    await c.core.deleteNamespacedPod({ name: 'mover', namespace: 'default', gracePeriodSeconds: 0 });
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('mover', { nodeName: 'node-a' }) });
    await c.core.deleteNamespacedPod({ name: 'stayer', namespace: 'default', gracePeriodSeconds: 0 });
    await waitFor('five events', () => watch.events.length >= 5);
    watch.abort();
    assert.deepEqual(
      watch.events.map((e) => `${e.type} ${e.object.metadata?.name}`),
      ['ADDED stayer', 'MODIFIED stayer', 'ADDED mover', 'MODIFIED stayer', 'DELETED stayer'],
    );
  });

  it('turns a label change out of a label selector into DELETED', async () => {
    const list = await c.core.listNamespacedPod({ namespace: 'default' });
    const watch = await collectWatch(c.kc, PODS, {
      resourceVersion: list.metadata!.resourceVersion!,
      labelSelector: 'role=db',
    });
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('db', { labels: { role: 'db' } }) });
    await c.core.replaceNamespacedPod({
      name: 'db',
      namespace: 'default',
      body: { ...(pod('db', { labels: { role: 'cache' } }) as V1Pod) },
    });
    await waitFor('two events', () => watch.events.length >= 2);
    watch.abort();
    assert.deepEqual(
      watch.events.map((e) => e.type),
      ['ADDED', 'DELETED'],
    );
  });

  it('sends BOOKMARK events with the current resourceVersion only when allowed', async () => {
    const rv = (await c.core.listNamespacedPod({ namespace: 'default' })).metadata!.resourceVersion!;
    const plain = await collectWatch(c.kc, PODS, { resourceVersion: rv });
    const bookmarked = await collectWatch(c.kc, PODS, { resourceVersion: rv, allowWatchBookmarks: true });
    await c.core.createNamespace({ body: { metadata: { name: 'bump' } } });
    const after = (await c.core.readNamespace({ name: 'bump' })).metadata!.resourceVersion!;
    await waitFor('a bookmark at the new version', () =>
      bookmarked.of('BOOKMARK').some((e) => e.object.metadata?.resourceVersion === after),
    );
    await waitFor('several bookmarks', () => bookmarked.of('BOOKMARK').length >= 3);
    plain.abort();
    bookmarked.abort();
    assert.equal(plain.of('BOOKMARK').length, 0);
    assert.equal(bookmarked.of('BOOKMARK')[0]?.object.kind, 'Pod');
  });

  it('ends the stream after timeoutSeconds', async () => {
    const watch = await collectWatch(c.kc, PODS, { timeoutSeconds: 1 });
    await waitFor('the server to end the watch', () => watch.ended !== undefined);
    assert.equal(watch.ended?.error, null);
  });

  it('sends initial events then an end-marking bookmark for sendInitialEvents', async () => {
    const watch = await collectWatch(c.kc, PODS, {
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
      allowWatchBookmarks: true,
    });
    await waitFor('the initial-events-end bookmark', () =>
      watch
        .of('BOOKMARK')
        .some((e) => e.object.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true'),
    );
    watch.abort();
    const end = watch.events.findIndex((e) => e.type === 'BOOKMARK');
    assert.ok(end > 0 && watch.events.slice(0, end).every((e) => e.type === 'ADDED'));
  });
});

describe('kubesim 410 Gone', () => {
  let c: SimClient;
  before(async () => {
    c = await startSimClient({ historyLimit: 5 });
  });
  after(async () => {
    await c.sim.close();
  });

  it('answers a watch from before a compaction with one ERROR event carrying a 410 Status', async () => {
    const rv = (await c.core.listNamespacedPod({ namespace: 'default' })).metadata!.resourceVersion!;
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('x') });
    c.sim.fault({ action: 'compact' });
    const watch = await collectWatch(c.kc, PODS, { resourceVersion: rv });
    await waitFor('the stream to end', () => watch.ended !== undefined);
    assert.equal(watch.events.length, 1);
    assert.equal(watch.events[0]?.type, 'ERROR');
    assert.equal(watch.events[0]?.object.code, 410);
    assert.equal(watch.events[0]?.object.reason, 'Expired');
    // From the current version a watch works again.
    const fresh = (await c.core.listNamespacedPod({ namespace: 'default' })).metadata!.resourceVersion!;
    const ok = await collectWatch(c.kc, PODS, { resourceVersion: fresh });
    await c.core.deleteNamespacedPod({ name: 'x', namespace: 'default' });
    await waitFor('the DELETED event', () => ok.events.length === 2);
    ok.abort();
    assert.deepEqual(
      ok.events.map((e) => e.type),
      ['MODIFIED', 'DELETED'],
    );
  });

  it('answers 410 once more than historyLimit changes happened since the version', async () => {
    const rv = (await c.core.listNamespacedPod({ namespace: 'default' })).metadata!.resourceVersion!;
    for (let i = 0; i < 6; i++)
      await c.core.createNamespacedPod({ namespace: 'default', body: pod(`h${i}`) });
    const watch = await collectWatch(c.kc, PODS, { resourceVersion: rv });
    await waitFor('the stream to end', () => watch.ended !== undefined);
    assert.equal(watch.events[0]?.object.code, 410);
    // Five changes back is still retained.
    const pods = await c.core.listNamespacedPod({ namespace: 'default' });
    const h0 = pods.items.find((p) => p.metadata?.name === 'h0')!;
    const replay = await collectWatch(c.kc, PODS, { resourceVersion: h0.metadata!.resourceVersion! });
    await waitFor('five replayed ADDED events', () => replay.events.length >= 5);
    replay.abort();
    assert.deepEqual(
      replay.events.map((e) => e.object.metadata?.name),
      ['h1', 'h2', 'h3', 'h4', 'h5'],
    );
  });

  it('lets a client-node informer recover through a 410 by relisting', async () => {
    const informer = makeInformer(c.kc, PODS, () => c.core.listNamespacedPod({ namespace: 'default' }));
    const errors: unknown[] = [];
    informer.on('error', (err) => errors.push(err));
    await informer.start();
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('before-gap') });
    await waitFor('the informer to see before-gap', () =>
      informer.list('default').some((p) => p.metadata?.name === 'before-gap'),
    );
    const listsBefore = c.sim.stats().requests['list pods'] ?? 0;
    // In one tick, before the client can react: the watch ends, a change happens and the
    // history the informer would resume from is compacted away, so its re-watch gets 410.
    c.sim.fault({ action: 'close-watches' });
    c.sim.seed([pod('after-gap')]);
    c.sim.fault({ action: 'compact' });
    await waitFor('the informer to relist and see after-gap', () =>
      informer.list('default').some((p) => p.metadata?.name === 'after-gap'),
    );
    assert.equal(c.sim.stats().requests['list pods'], listsBefore + 1, 'the informer relisted once');
    // Stopping aborts the request, which client-node itself reports as an error: check before.
    assert.deepEqual(errors, []);
    await informer.stop();
  });

  it('answers a watch from a future resourceVersion with 504', async () => {
    const watch = await collectWatch(c.kc, PODS, { resourceVersion: '999999' });
    await waitFor('the watch to fail', () => watch.ended !== undefined);
    assert.equal((watch.ended?.error as { statusCode?: number }).statusCode, 504);
  });
});
