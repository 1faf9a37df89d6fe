import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { planDelete } from './deletion.js';
import { NAMESPACE_TYPE, RESOURCE_TYPES } from './resources.js';
import { ObjectStore } from './store.js';
import type { CollectingWatch, SimClient } from './testing.js';
import { collectWatch, pod, rejects, startSimClient, waitFor } from './testing.js';

const PODS = RESOURCE_TYPES.find((r) => r.plural === 'pods')!;
const SERVICES = RESOURCE_TYPES.find((r) => r.plural === 'services')!;

interface RawMeta {
  name?: string;
  resourceVersion?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  generation?: number;
  finalizers?: string[];
}

/** `TYPE name rv grace` per event, grace `-` when the object is not marked for deletion. */
function lines(watch: CollectingWatch): string[] {
  return watch.events.map((e) => {
    const m = e.object.metadata as RawMeta;
    return `${e.type} ${m.name} ${m.resourceVersion} ${m.deletionGracePeriodSeconds ?? '-'}`;
  });
}

function meta(event: { object: unknown } | undefined): RawMeta {
  return ((event?.object as { metadata?: RawMeta } | undefined)?.metadata ?? {}) as RawMeta;
}

/** DELETE over plain HTTP: client-node types a namespace DELETE's answer as a Status, not the Namespace. */
async function deleteRaw(
  c: SimClient,
  path: string,
): Promise<{ metadata: RawMeta; status?: { phase?: string } }> {
  const response = await fetch(`${c.sim.url}${path}`, { method: 'DELETE' });
  assert.equal(response.status, 200);
  return (await response.json()) as { metadata: RawMeta; status?: { phase?: string } };
}

async function currentVersion(c: SimClient): Promise<string> {
  return (await c.core.listNamespace()).metadata!.resourceVersion!;
}

describe('kubesim graceful deletion (kube-apiserver semantics)', () => {
  let c: SimClient;
  before(async () => {
    c = await startSimClient();
  });
  after(async () => {
    await c.sim.close();
  });

  it('pins the client-node sequence: create, status patch, watch, delete with grace 0, delete with grace 30 of a bound pod', async () => {
    const created = await c.core.createNamespacedPod({
      namespace: 'default',
      body: pod('seq', { nodeName: 'node-1' }),
    });
    const patched = await c.core.patchNamespacedPodStatus(
      {
        name: 'seq',
        namespace: 'default',
        body: { status: { phase: 'Running', podIP: '10.1.0.5', podIPs: [{ ip: '10.1.0.5' }] } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const rv0 = Number(patched.metadata!.resourceVersion);
    assert.equal(rv0, Number(created.metadata!.resourceVersion) + 1);
    const watch = await collectWatch(c.kc, '/api/v1/namespaces/default/pods', {
      resourceVersion: String(rv0),
    });

    // Grace 0: the server writes the mark, then removes the pod, in one request.
    const gone = await c.core.deleteNamespacedPod({
      name: 'seq',
      namespace: 'default',
      gracePeriodSeconds: 0,
    });
    assert.equal(gone.metadata?.resourceVersion, String(rv0 + 2));
    assert.equal(gone.metadata?.deletionGracePeriodSeconds, 0);
    await rejects(() => c.core.readNamespacedPod({ name: 'seq', namespace: 'default' }), 404, 'NotFound');

    // Grace 30 on a bound pod: marked, and it stays (Terminating) until a grace-0 delete.
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('seq', { nodeName: 'node-1' }) });
    const before30 = Date.now();
    const terminating = await c.core.deleteNamespacedPod({
      name: 'seq',
      namespace: 'default',
      body: { gracePeriodSeconds: 30 },
    });
    assert.equal(terminating.metadata?.deletionGracePeriodSeconds, 30);
    const at = terminating.metadata!.deletionTimestamp!.getTime();
    assert.ok(at >= Math.floor(before30 / 1000) * 1000 + 29_000 && at <= Date.now() + 31_000, String(at));
    assert.equal(terminating.metadata?.generation, 2, 'the first graceful delete bumps the generation');
    const still = await c.core.readNamespacedPod({ name: 'seq', namespace: 'default' });
    assert.equal(still.metadata?.resourceVersion, terminating.metadata?.resourceVersion);
    assert.ok(still.metadata?.deletionTimestamp, 'the pod is Terminating');

    // What kubelet does once the containers have stopped.
    const removed = await c.core.deleteNamespacedPod({
      name: 'seq',
      namespace: 'default',
      body: { gracePeriodSeconds: 0, preconditions: { uid: still.metadata!.uid! } },
    });
    await waitFor('six events', () => watch.events.length >= 6);
    watch.abort();
    const v = (n: number) => String(rv0 + n);
    assert.deepEqual(lines(watch), [
      `MODIFIED seq ${v(1)} 0`,
      `DELETED seq ${v(2)} 0`,
      `ADDED seq ${v(3)} -`,
      `MODIFIED seq ${v(4)} 30`,
      `MODIFIED seq ${v(5)} 0`,
      `DELETED seq ${v(6)} 0`,
    ]);
    assert.equal(removed.metadata?.resourceVersion, v(6), 'the answer carries the removal version');
    // The final mark moves the timestamp back by the grace given up (30 s), to the request time.
    const finalMark = Date.parse(meta(watch.events[4]).deletionTimestamp!);
    assert.ok(Math.abs(finalMark - (at - 30_000)) <= 1_000, `${finalMark} vs ${at}`);
    assert.equal(meta(watch.events[5]).deletionTimestamp, meta(watch.events[4]).deletionTimestamp);
  });

  it('removes a pod not bound to a node at once (marked with grace 0, then DELETED)', async () => {
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('unbound') });
    const watch = await collectWatch(c.kc, '/api/v1/namespaces/default/pods', {
      resourceVersion: await currentVersion(c),
    });
    const gone = await c.core.deleteNamespacedPod({ name: 'unbound', namespace: 'default' });
    assert.equal(gone.metadata?.deletionGracePeriodSeconds, 0);
    await waitFor('two events', () => watch.events.length >= 2);
    watch.abort();
    assert.deepEqual(
      watch.events.map((e) => e.type),
      ['MODIFIED', 'DELETED'],
    );
    await rejects(() => c.core.readNamespacedPod({ name: 'unbound', namespace: 'default' }), 404);
  });

  it("uses the pod's terminationGracePeriodSeconds, 30 without one, 0 once finished", async () => {
    await c.core.createNamespacedPod({
      namespace: 'default',
      body: {
        ...pod('own-grace', { nodeName: 'node-1' }),
        spec: {
          nodeName: 'node-1',
          terminationGracePeriodSeconds: 5,
          containers: [{ name: 'c', image: 'i' }],
        },
      },
    });
    await c.core.createNamespacedPod({
      namespace: 'default',
      body: pod('default-grace', { nodeName: 'node-1' }),
    });
    await c.core.createNamespacedPod({
      namespace: 'default',
      body: pod('finished', { nodeName: 'node-1', phase: 'Succeeded' }),
    });
    const own = await c.core.deleteNamespacedPod({ name: 'own-grace', namespace: 'default' });
    assert.equal(own.metadata?.deletionGracePeriodSeconds, 5);
    const dflt = await c.core.deleteNamespacedPod({ name: 'default-grace', namespace: 'default' });
    assert.equal(dflt.metadata?.deletionGracePeriodSeconds, 30);
    await c.core.deleteNamespacedPod({ name: 'finished', namespace: 'default' });
    await rejects(() => c.core.readNamespacedPod({ name: 'finished', namespace: 'default' }), 404);
    // A negative grace period counts as 1 s (shortening the 30 s one).
    const negative = await c.core.deleteNamespacedPod({
      name: 'default-grace',
      namespace: 'default',
      gracePeriodSeconds: -5,
    });
    assert.equal(negative.metadata?.deletionGracePeriodSeconds, 1);
  });

  it('lets a second delete shorten the grace period but never extend it', async () => {
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('again', { nodeName: 'node-1' }) });
    const first = await c.core.deleteNamespacedPod({ name: 'again', namespace: 'default' });
    const firstAt = first.metadata!.deletionTimestamp!.getTime();
    // Longer, equal or unspecified: nothing changes (same version, no event).
    for (const body of [{ gracePeriodSeconds: 60 }, { gracePeriodSeconds: 30 }, {}]) {
      const same = await c.core.deleteNamespacedPod({ name: 'again', namespace: 'default', body });
      assert.equal(same.metadata?.resourceVersion, first.metadata?.resourceVersion);
      assert.equal(same.metadata?.deletionGracePeriodSeconds, 30);
    }
    const shorter = await c.core.deleteNamespacedPod({
      name: 'again',
      namespace: 'default',
      gracePeriodSeconds: 10,
    });
    assert.equal(shorter.metadata?.deletionGracePeriodSeconds, 10);
    assert.equal(shorter.metadata!.deletionTimestamp!.getTime(), firstAt - 20_000);
    assert.equal(shorter.metadata?.generation, first.metadata?.generation, 'only the first mark bumps it');
    assert.notEqual(shorter.metadata?.resourceVersion, first.metadata?.resourceVersion);
  });

  it('keeps the mark through updates, patches and status writes', async () => {
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('kept', { nodeName: 'node-1' }) });
    const marked = await c.core.deleteNamespacedPod({ name: 'kept', namespace: 'default' });
    const replaced = await c.core.replaceNamespacedPod({
      name: 'kept',
      namespace: 'default',
      body: { ...pod('kept', { nodeName: 'node-1', labels: { a: 'b' } }) },
    });
    assert.deepEqual(replaced.metadata?.deletionTimestamp, marked.metadata?.deletionTimestamp);
    assert.equal(replaced.metadata?.deletionGracePeriodSeconds, 30);
    const status = await c.core.patchNamespacedPodStatus(
      { name: 'kept', namespace: 'default', body: { status: { phase: 'Running' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    assert.deepEqual(status.metadata?.deletionTimestamp, marked.metadata?.deletionTimestamp);
    // A client cannot clear the mark either.
    const cleared = await c.core.patchNamespacedPod(
      {
        name: 'kept',
        namespace: 'default',
        body: { metadata: { deletionTimestamp: null, deletionGracePeriodSeconds: null } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    assert.deepEqual(cleared.metadata?.deletionTimestamp, marked.metadata?.deletionTimestamp);
  });

  it('answers dryRun deletes with the marked pod and stores nothing', async () => {
    const created = await c.core.createNamespacedPod({
      namespace: 'default',
      body: pod('dry', { nodeName: 'node-1' }),
    });
    const dry = await c.core.deleteNamespacedPod({ name: 'dry', namespace: 'default', dryRun: 'All' });
    assert.equal(dry.metadata?.deletionGracePeriodSeconds, 30);
    const read = await c.core.readNamespacedPod({ name: 'dry', namespace: 'default' });
    assert.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion);
    assert.equal(read.metadata?.deletionTimestamp, undefined);
  });

  it('deletes a collection of pods gracefully: bound ones stay Terminating', async () => {
    await c.core.createNamespace({ body: { metadata: { name: 'coll' } } });
    await c.core.createNamespacedPod({ namespace: 'coll', body: pod('bound', { nodeName: 'node-1' }) });
    await c.core.createNamespacedPod({ namespace: 'coll', body: pod('free') });
    await c.core.deleteCollectionNamespacedPod({ namespace: 'coll' });
    const left = await c.core.listNamespacedPod({ namespace: 'coll' });
    assert.deepEqual(
      left.items.map((p) => `${p.metadata?.name} ${p.metadata?.deletionGracePeriodSeconds}`),
      ['bound 30'],
    );
    await c.core.deleteCollectionNamespacedPod({ namespace: 'coll', gracePeriodSeconds: 0 });
    assert.equal((await c.core.listNamespacedPod({ namespace: 'coll' })).items.length, 0);
  });
});

describe('kubesim finalizers', () => {
  let c: SimClient;
  before(async () => {
    c = await startSimClient();
  });
  after(async () => {
    await c.sim.close();
  });

  it('marks an object with finalizers and removes it with the last one', async () => {
    await c.core.createNamespacedService({
      namespace: 'default',
      body: { metadata: { name: 'held', finalizers: ['example.com/a', 'example.com/b'] } },
    });
    const watch = await collectWatch(c.kc, '/api/v1/namespaces/default/services', {
      resourceVersion: await currentVersion(c),
    });
    const marked = await c.core.deleteNamespacedService({ name: 'held', namespace: 'default' });
    assert.equal(marked.metadata?.deletionGracePeriodSeconds, 0);
    assert.ok(marked.metadata?.deletionTimestamp);
    const again = await c.core.deleteNamespacedService({ name: 'held', namespace: 'default' });
    assert.equal(again.metadata?.resourceVersion, marked.metadata?.resourceVersion, 'no second mark');

    const status = await rejects(
      () =>
        c.core.patchNamespacedService(
          {
            name: 'held',
            namespace: 'default',
            body: { metadata: { finalizers: ['example.com/a', 'example.com/c'] } },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      422,
      'Invalid',
    );
    assert.match(status.message ?? '', /no new finalizers can be added if the object is being deleted/);

    await c.core.patchNamespacedService(
      { name: 'held', namespace: 'default', body: { metadata: { finalizers: ['example.com/b'] } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const last = await c.core.patchNamespacedService(
      { name: 'held', namespace: 'default', body: { metadata: { finalizers: null } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await rejects(() => c.core.readNamespacedService({ name: 'held', namespace: 'default' }), 404);
    await waitFor('three events', () => watch.events.length >= 3);
    watch.abort();
    assert.deepEqual(
      watch.events.map((e) => `${e.type} ${(meta(e).finalizers ?? []).join('+')}`),
      ['MODIFIED example.com/a+example.com/b', 'MODIFIED example.com/b', 'DELETED example.com/b'],
    );
    assert.equal(last.metadata?.resourceVersion, meta(watch.events[2]).resourceVersion);
  });

  it('keeps a pod with a finalizer after its grace-0 delete until the finalizer goes', async () => {
    await c.core.createNamespacedPod({
      namespace: 'default',
      body: {
        ...pod('fin', { nodeName: 'node-1' }),
        metadata: { name: 'fin', finalizers: ['example.com/x'] },
      },
    });
    await c.core.deleteNamespacedPod({ name: 'fin', namespace: 'default' });
    const zero = await c.core.deleteNamespacedPod({
      name: 'fin',
      namespace: 'default',
      gracePeriodSeconds: 0,
    });
    assert.equal(zero.metadata?.deletionGracePeriodSeconds, 0);
    assert.ok(await c.core.readNamespacedPod({ name: 'fin', namespace: 'default' }));
    await c.core.patchNamespacedPod({
      name: 'fin',
      namespace: 'default',
      body: [{ op: 'remove', path: '/metadata/finalizers' }],
    });
    await rejects(() => c.core.readNamespacedPod({ name: 'fin', namespace: 'default' }), 404);
  });
});

describe('kubesim namespace lifecycle', () => {
  let c: SimClient;
  before(async () => {
    c = await startSimClient();
  });
  after(async () => {
    await c.sim.close();
  });

  it('terminates a namespace: Terminating, no new content, gone once its bound pod is deleted with grace 0', async () => {
    await c.core.createNamespace({ body: { metadata: { name: 'shop' } } });
    await c.core.createNamespacedPod({ namespace: 'shop', body: pod('web', { nodeName: 'node-1' }) });
    await c.core.createNamespacedPod({ namespace: 'shop', body: pod('pending') });
    await c.core.createNamespacedService({ namespace: 'shop', body: { metadata: { name: 'svc' } } });
    const watch = await collectWatch(c.kc, '/api/v1/namespaces', {
      resourceVersion: await currentVersion(c),
    });
    const pods = await collectWatch(c.kc, '/api/v1/namespaces/shop/pods', {
      resourceVersion: await currentVersion(c),
    });

    const ns = await deleteRaw(c, '/api/v1/namespaces/shop');
    assert.equal(ns.status?.phase, 'Terminating');
    assert.ok(ns.metadata?.deletionTimestamp);
    const read = await c.core.readNamespace({ name: 'shop' });
    assert.equal(read.status?.phase, 'Terminating');
    assert.deepEqual(read.spec?.finalizers, ['kubernetes']);

    const refused = await rejects(
      () => c.core.createNamespacedPod({ namespace: 'shop', body: pod('late') }),
      403,
      'Forbidden',
    );
    assert.equal(
      refused.message,
      'pods "late" is forbidden: unable to create new content in namespace shop because it is being terminated',
    );
    assert.deepEqual(refused.details?.causes, [
      {
        reason: 'NamespaceTerminating',
        message: 'namespace shop is being terminated',
        field: 'metadata.namespace',
      },
    ]);
    // A second delete changes nothing while content remains.
    const second = await deleteRaw(c, '/api/v1/namespaces/shop');
    assert.equal(second.metadata.resourceVersion, read.metadata?.resourceVersion);

    // The namespace controller deleted its objects: the bound pod is Terminating, the rest gone.
    const left = await c.core.listNamespacedPod({ namespace: 'shop' });
    assert.deepEqual(
      left.items.map((p) => `${p.metadata?.name} ${p.metadata?.deletionGracePeriodSeconds}`),
      ['web 30'],
    );
    assert.equal((await c.core.listNamespacedService({ namespace: 'shop' })).items.length, 0);

    await c.core.deleteNamespacedPod({ name: 'web', namespace: 'shop', gracePeriodSeconds: 0 });
    await rejects(() => c.core.readNamespace({ name: 'shop' }), 404, 'NotFound');
    await waitFor('the namespace DELETED event', () => watch.of('DELETED').length === 1);
    await waitFor('the pod DELETED events', () => pods.of('DELETED').length === 2);
    watch.abort();
    pods.abort();
    assert.deepEqual(
      watch.events.map((e) => `${e.type} ${meta(e).name}`),
      ['MODIFIED shop', 'DELETED shop'],
    );
    assert.deepEqual(
      pods.events.map((e) => `${e.type} ${meta(e).name} ${meta(e).deletionGracePeriodSeconds ?? '-'}`),
      ['MODIFIED pending 0', 'DELETED pending 0', 'MODIFIED web 30', 'MODIFIED web 0', 'DELETED web 0'],
    );
    // The name is free again.
    await c.core.createNamespace({ body: { metadata: { name: 'shop' } } });
  });

  it('removes an empty namespace in the same request, and holds one with a finalizer', async () => {
    await c.core.createNamespace({ body: { metadata: { name: 'empty' } } });
    const marked = await deleteRaw(c, '/api/v1/namespaces/empty');
    assert.equal(marked.status?.phase, 'Terminating');
    await rejects(() => c.core.readNamespace({ name: 'empty' }), 404);

    await c.core.createNamespace({ body: { metadata: { name: 'held', finalizers: ['example.com/keep'] } } });
    await c.core.deleteNamespace({ name: 'held' });
    const held = await c.core.readNamespace({ name: 'held' });
    assert.equal(held.status?.phase, 'Terminating');
    assert.equal(held.spec?.finalizers, undefined, 'the namespace controller has finalized it');
    await c.core.patchNamespace(
      { name: 'held', body: { metadata: { finalizers: null } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await rejects(() => c.core.readNamespace({ name: 'held' }), 404);
  });

  it('refuses seeding into a terminating namespace', async () => {
    await c.core.createNamespace({ body: { metadata: { name: 'seedless' } } });
    await c.core.createNamespacedPod({ namespace: 'seedless', body: pod('stay', { nodeName: 'node-1' }) });
    await c.core.deleteNamespace({ name: 'seedless' });
    assert.throws(
      () => c.sim.seed([{ ...pod('late'), metadata: { name: 'late', namespace: 'seedless' } }]),
      /items\[0\]: pods "late" is forbidden: unable to create new content in namespace seedless/,
    );
  });
});

describe('kubesim media types', () => {
  let c: SimClient;
  before(async () => {
    c = await startSimClient();
  });
  after(async () => {
    await c.sim.close();
  });

  it('refuses a protobuf body with 415 UnsupportedMediaType naming what it accepts', async () => {
    const response = await fetch(`${c.sim.url}/api/v1/namespaces`, {
      method: 'POST',
      headers: {
        'content-type': 'application/vnd.kubernetes.protobuf',
        accept: 'application/vnd.kubernetes.protobuf,application/json',
      },
      body: Buffer.from('k8s\0'),
    });
    assert.equal(response.status, 415);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(await response.json(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'the body of the request was in an unknown format - accepted media types include: application/json',
      reason: 'UnsupportedMediaType',
      code: 415,
    });
  });

  it('answers JSON to an Accept list with a JSON fallback, 406 to protobuf alone', async () => {
    const fallback = await fetch(`${c.sim.url}/api/v1/namespaces/default`, {
      headers: { accept: 'application/vnd.kubernetes.protobuf, application/json' },
    });
    assert.equal(fallback.status, 200);
    assert.equal(((await fallback.json()) as { kind: string }).kind, 'Namespace');
    const table = await fetch(`${c.sim.url}/api/v1/namespaces`, {
      headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
    });
    assert.equal(((await table.json()) as { kind: string }).kind, 'NamespaceList');
    const only = await fetch(`${c.sim.url}/api/v1/namespaces/default`, {
      headers: { accept: 'application/vnd.kubernetes.protobuf' },
    });
    assert.equal(only.status, 406);
    const status = (await only.json()) as { reason: string; message: string };
    assert.equal(status.reason, 'NotAcceptable');
    assert.equal(status.message, 'only the following media types are accepted: application/json');
  });
});

describe('planDelete timing (a fixed clock)', () => {
  const t0 = new Date('2025-01-01T00:00:00Z');
  const bound = (extra: Record<string, unknown> = {}) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', uid: 'u', resourceVersion: '5', generation: 1, creationTimestamp: 'x', ...extra },
    spec: { nodeName: 'n', containers: [] },
  });

  it('marks now + grace, and shortens from the first request time, never into the past', () => {
    const first = planDelete(PODS, bound(), {}, t0);
    assert.equal(first.action, 'mark');
    const marked = (first as { marked: { metadata: RawMeta } }).marked;
    assert.equal(marked.metadata.deletionTimestamp, '2025-01-01T00:00:30Z');
    assert.equal(marked.metadata.deletionGracePeriodSeconds, 30);
    assert.equal(marked.metadata.generation, 2);

    const markedPod = bound({
      deletionTimestamp: '2025-01-01T00:00:30Z',
      deletionGracePeriodSeconds: 30,
      generation: 2,
    });
    const soon = planDelete(PODS, markedPod, { gracePeriodSeconds: 10 }, new Date('2025-01-01T00:00:05Z'));
    assert.deepEqual(
      soon.action === 'mark' && [
        soon.marked.metadata.deletionTimestamp,
        soon.marked.metadata.deletionGracePeriodSeconds,
        soon.thenRemove,
      ],
      ['2025-01-01T00:00:10Z', 10, false],
    );
    // 20 s later the 10 s grace is already up: now, and grace 1 (still graceful).
    const late = planDelete(PODS, markedPod, { gracePeriodSeconds: 10 }, new Date('2025-01-01T00:00:20Z'));
    assert.deepEqual(
      late.action === 'mark' && [
        late.marked.metadata.deletionTimestamp,
        late.marked.metadata.deletionGracePeriodSeconds,
      ],
      ['2025-01-01T00:00:20Z', 1],
    );
    const zero = planDelete(PODS, markedPod, { gracePeriodSeconds: 0 }, new Date('2025-01-01T00:00:20Z'));
    assert.deepEqual(
      zero.action === 'mark' && [
        zero.marked.metadata.deletionTimestamp,
        zero.marked.metadata.deletionGracePeriodSeconds,
        zero.thenRemove,
      ],
      ['2025-01-01T00:00:20Z', 0, true],
    );
    assert.equal(
      planDelete(PODS, bound({ deletionTimestamp: 'x', deletionGracePeriodSeconds: 0 }), {}, t0).action,
      'remove',
    );
  });

  it('a store with a fixed clock stamps the namespace and service marks with it', () => {
    const store = new ObjectStore(100, () => t0);
    store.create(NAMESPACE_TYPE, '', { metadata: { name: 'n' } });
    store.create(SERVICES, 'n', { metadata: { name: 's', finalizers: ['f'] } });
    const ns = store.delete(NAMESPACE_TYPE, '', 'n', undefined);
    assert.equal(ns.metadata.deletionTimestamp, '2025-01-01T00:00:00Z');
    const svc = store.get(SERVICES, 'n', 's')!;
    assert.equal(svc.metadata.deletionTimestamp, '2025-01-01T00:00:00Z');
    assert.equal(svc.metadata.generation, 2);
    assert.ok(store.get(NAMESPACE_TYPE, '', 'n'), 'the service finalizer holds the namespace');
    store.patch(
      SERVICES,
      'n',
      's',
      'application/merge-patch+json',
      { metadata: { finalizers: null } },
      undefined,
    );
    assert.equal(store.get(NAMESPACE_TYPE, '', 'n'), undefined);
  });
});
