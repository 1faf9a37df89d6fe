import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SimClient } from './testing.js';
import { pod, rejects, startSimClient } from './testing.js';

describe('kubesim lists: selectors and paging', () => {
  let c: SimClient;
  before(async () => {
    c = await startSimClient();
    await c.core.createNamespace({ body: { metadata: { name: 'other' } } });
    const specs: [string, string, Record<string, string>, string, string][] = [
      ['a', 'default', { app: 'web', tier: 'front' }, 'n1', 'Running'],
      ['b', 'default', { app: 'web', tier: 'back' }, 'n2', 'Running'],
      ['c', 'default', { app: 'db' }, 'n1', 'Pending'],
      ['d', 'other', { app: 'web' }, 'n1', 'Succeeded'],
      ['e', 'other', {}, '', 'Pending'],
    ];
    for (const [name, namespace, labels, nodeName, phase] of specs) {
      await c.sim.seed([{ ...pod(name, { namespace, labels, ...(nodeName ? { nodeName } : {}), phase }) }]);
    }
  });
  after(async () => {
    await c.sim.close();
  });

  const names = async (labelSelector?: string, fieldSelector?: string) =>
    (
      await c.core.listPodForAllNamespaces({
        ...(labelSelector ? { labelSelector } : {}),
        ...(fieldSelector ? { fieldSelector } : {}),
      })
    ).items
      .map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`)
      .join(' ');

  it('lists every namespace in key order, and one namespace alone', async () => {
    assert.equal(await names(), 'default/a default/b default/c other/d other/e');
    const other = await c.core.listNamespacedPod({ namespace: 'other' });
    assert.deepEqual(
      other.items.map((p) => p.metadata?.name),
      ['d', 'e'],
    );
    assert.match(other.metadata?.resourceVersion ?? '', /^\d+$/);
  });

  it('filters by label selectors with every operator', async () => {
    assert.equal(await names('app=web'), 'default/a default/b other/d');
    assert.equal(await names('app==web,tier=front'), 'default/a');
    assert.equal(await names('app!=web'), 'default/c other/e');
    assert.equal(await names('tier in (front,back)'), 'default/a default/b');
    assert.equal(await names('app notin (web)'), 'default/c other/e');
    assert.equal(await names('tier'), 'default/a default/b');
    assert.equal(await names('!app'), 'other/e');
    await rejects(() => c.core.listPodForAllNamespaces({ labelSelector: 'app in web' }), 400, 'BadRequest');
  });

  it('filters by field selectors and rejects unknown fields with 400', async () => {
    assert.equal(await names(undefined, 'spec.nodeName=n1'), 'default/a default/c other/d');
    assert.equal(await names(undefined, 'spec.nodeName='), 'other/e');
    assert.equal(await names(undefined, 'metadata.name=b'), 'default/b');
    assert.equal(await names(undefined, 'metadata.namespace!=default'), 'other/d other/e');
    assert.equal(await names(undefined, 'status.phase=Running,spec.nodeName==n1'), 'default/a');
    assert.equal(await names('app=web', 'spec.nodeName=n1'), 'default/a other/d');
    const status = await rejects(
      () => c.core.listPodForAllNamespaces({ fieldSelector: 'spec.bogus=1' }),
      400,
      'BadRequest',
    );
    assert.match(status.message ?? '', /field label not supported: spec.bogus/);
  });

  it('pages with limit and continue, consistent at the first page version', async () => {
    await c.core.createNamespace({ body: { metadata: { name: 'paging' } } });
    await c.sim.seed(
      Array.from({ length: 25 }, (_, i) => pod(`p${String(i).padStart(2, '0')}`, { namespace: 'paging' })),
    );
    const first = await c.core.listNamespacedPod({ namespace: 'paging', limit: 10 });
    assert.equal(first.items.length, 10);
    assert.equal(first.metadata?.remainingItemCount, 15);
    const token = first.metadata?._continue;
    assert.ok(token);

    // Changes after the first page must not show in the rest of this list.
    await c.core.deleteNamespacedPod({ name: 'p15', namespace: 'paging' });
    await c.core.createNamespacedPod({ namespace: 'paging', body: pod('p99') });
    await c.core.patchNamespacedPod({
      name: 'p20',
      namespace: 'paging',
      body: [{ op: 'add', path: '/metadata/labels', value: { changed: 'yes' } }],
    });

    const second = await c.core.listNamespacedPod({ namespace: 'paging', limit: 10, _continue: token });
    const third = await c.core.listNamespacedPod({
      namespace: 'paging',
      limit: 10,
      _continue: second.metadata!._continue!,
    });
    assert.equal(second.metadata?.resourceVersion, first.metadata?.resourceVersion);
    assert.equal(third.metadata?._continue, undefined);
    const all = [...first.items, ...second.items, ...third.items];
    assert.deepEqual(
      all.map((p) => p.metadata?.name),
      Array.from({ length: 25 }, (_, i) => `p${String(i).padStart(2, '0')}`),
    );
    assert.equal(
      all.find((p) => p.metadata?.name === 'p20')?.metadata?.labels,
      undefined,
      'p20 as of the first page',
    );

    // A fresh list sees the changes.
    const now = await c.core.listNamespacedPod({ namespace: 'paging' });
    assert.equal(now.items.length, 25);
    assert.ok(now.items.some((p) => p.metadata?.name === 'p99'));
    assert.ok(!now.items.some((p) => p.metadata?.name === 'p15'));
  });

  it('pages a selected list without remainingItemCount', async () => {
    const first = await c.core.listPodForAllNamespaces({ labelSelector: 'app=web', limit: 2 });
    assert.equal(first.items.length, 2);
    assert.equal(first.metadata?.remainingItemCount, undefined);
    const rest = await c.core.listPodForAllNamespaces({
      labelSelector: 'app=web',
      limit: 2,
      _continue: first.metadata!._continue!,
    });
    assert.deepEqual(
      rest.items.map((p) => p.metadata?.name),
      ['d'],
    );
  });

  it('answers 410 Expired to a continue token older than retained history, offering a fresh token', async () => {
    const first = await c.core.listNamespacedPod({ namespace: 'paging', limit: 5 });
    await c.core.createNamespacedPod({ namespace: 'paging', body: pod('after-first-page') });
    c.sim.fault({ action: 'compact' });
    const status = await rejects(
      () =>
        c.core.listNamespacedPod({ namespace: 'paging', limit: 5, _continue: first.metadata!._continue! }),
      410,
      'Expired',
    );
    assert.match(status.message ?? '', /too old to display a consistent list/);
    const inconsistent = status.metadata?.continue;
    assert.ok(inconsistent, 'the Status carries a continue token for the inconsistent remainder');
    const rest = await c.core.listNamespacedPod({ namespace: 'paging', limit: 5, _continue: inconsistent });
    assert.equal(rest.items[0]?.metadata?.name, 'p05');
  });

  it('serves resourceVersionMatch=Exact from history and rejects versions from the future', async () => {
    const before = await c.core.listNamespacedPod({ namespace: 'other' });
    await c.core.createNamespacedPod({ namespace: 'other', body: pod('late') });
    const exact = await c.core.listNamespacedPod({
      namespace: 'other',
      resourceVersion: before.metadata!.resourceVersion!,
      resourceVersionMatch: 'Exact',
    });
    assert.deepEqual(
      exact.items.map((p) => p.metadata?.name),
      ['d', 'e'],
    );
    const future = String(Number(before.metadata!.resourceVersion) + 1000);
    await rejects(
      () => c.core.listNamespacedPod({ namespace: 'other', resourceVersion: future }),
      504,
      'Timeout',
    );
    await rejects(
      () => c.core.listNamespacedPod({ namespace: 'other', _continue: 'garbage' }),
      400,
      'BadRequest',
    );
  });
});
