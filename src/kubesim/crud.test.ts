import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Lease, V1Pod } from '@kubernetes/client-node';
import { DiscoveryV1Api, NetworkingV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { SimClient } from './testing.js';
import { collectWatch, pod, rejects, startSimClient, waitFor } from './testing.js';

describe('kubesim CRUD through client-node', () => {
  let c: SimClient;
  before(async () => {
    c = await startSimClient();
  });
  after(async () => {
    await c.sim.close();
  });

  it('starts with the standard namespaces, Active', async () => {
    const list = await c.core.listNamespace();
    assert.deepEqual(list.items.map((n) => n.metadata?.name).sort(), [
      'default',
      'kube-node-lease',
      'kube-public',
      'kube-system',
    ]);
    for (const ns of list.items) assert.equal(ns.status?.phase, 'Active');
  });

  it('creates, reads, replaces, patches and deletes a pod with server-owned metadata', async () => {
    const created = await c.core.createNamespacedPod({
      namespace: 'default',
      body: pod('crud-a', { labels: { app: 'a' }, nodeName: 'n1' }),
    });
    const meta = created.metadata!;
    assert.match(meta.uid ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.match(meta.resourceVersion ?? '', /^\d+$/);
    assert.ok(meta.creationTimestamp instanceof Date);
    assert.equal(meta.generation, 1);
    assert.equal(meta.namespace, 'default');
    assert.equal(created.status?.phase, 'Pending', 'pods start Pending when created without a phase');

    const read = await c.core.readNamespacedPod({ name: 'crud-a', namespace: 'default' });
    assert.equal(read.metadata?.uid, meta.uid);

    read.metadata!.labels = { app: 'a', tier: 'web' };
    const replaced = await c.core.replaceNamespacedPod({ name: 'crud-a', namespace: 'default', body: read });
    assert.deepEqual(replaced.metadata?.labels, { app: 'a', tier: 'web' });
    assert.notEqual(replaced.metadata?.resourceVersion, meta.resourceVersion);
    assert.equal(replaced.metadata?.generation, 1, 'a label change does not move generation');
    assert.equal(replaced.metadata?.uid, meta.uid);

    // client-node's default patch type is JSON patch.
    const jsonPatched = await c.core.patchNamespacedPod({
      name: 'crud-a',
      namespace: 'default',
      body: [{ op: 'add', path: '/metadata/annotations', value: { note: 'x' } }],
    });
    assert.deepEqual(jsonPatched.metadata?.annotations, { note: 'x' });

    const merged = await c.core.patchNamespacedPod(
      { name: 'crud-a', namespace: 'default', body: { metadata: { labels: { tier: null, extra: 'y' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    assert.deepEqual(merged.metadata?.labels, { app: 'a', extra: 'y' });

    const strategic = await c.core.patchNamespacedPod(
      {
        name: 'crud-a',
        namespace: 'default',
        body: { spec: { containers: [{ name: 'c', image: 'busybox:2' }] } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    assert.equal(strategic.spec?.containers[0]?.image, 'busybox:2');
    assert.equal(strategic.metadata?.generation, 2, 'a spec change moves generation');

    // Bound to a node: the delete only marks the pod; kubelet's grace-0 delete removes it.
    const deleted = await c.core.deleteNamespacedPod({ name: 'crud-a', namespace: 'default' });
    assert.equal(deleted.metadata?.name, 'crud-a');
    assert.equal(deleted.metadata?.deletionGracePeriodSeconds, 30);
    assert.ok(
      (await c.core.readNamespacedPod({ name: 'crud-a', namespace: 'default' })).metadata?.deletionTimestamp,
    );
    await c.core.deleteNamespacedPod({ name: 'crud-a', namespace: 'default', gracePeriodSeconds: 0 });
    await rejects(() => c.core.readNamespacedPod({ name: 'crud-a', namespace: 'default' }), 404, 'NotFound');
  });

  it('answers 409 AlreadyExists for a duplicate name and fills generateName', async () => {
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('dup') });
    const status = await rejects(
      () => c.core.createNamespacedPod({ namespace: 'default', body: pod('dup') }),
      409,
      'AlreadyExists',
    );
    assert.equal(status.details?.name, 'dup');
    assert.equal(status.details?.kind, 'pods');
    const generated = await c.core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { generateName: 'gen-' }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    });
    assert.match(generated.metadata?.name ?? '', /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('answers 409 Conflict to an update with a stale resourceVersion (leader election)', async () => {
    const lease: V1Lease = {
      metadata: { name: 'leader', namespace: 'kube-system' },
      spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: new Date() },
    };
    const created = await c.coordination.createNamespacedLease({ namespace: 'kube-system', body: lease });
    const renewed = await c.coordination.replaceNamespacedLease({
      name: 'leader',
      namespace: 'kube-system',
      body: { ...created, spec: { ...created.spec, renewTime: new Date(Date.now() + 1000) } },
    });
    assert.notEqual(renewed.metadata?.resourceVersion, created.metadata?.resourceVersion);
    // A second candidate still holding the first version loses.
    const status = await rejects(
      () =>
        c.coordination.replaceNamespacedLease({
          name: 'leader',
          namespace: 'kube-system',
          body: { ...created, spec: { ...created.spec, holderIdentity: 'b' } },
        }),
      409,
      'Conflict',
    );
    assert.match(status.message ?? '', /the object has been modified/);
    const current = await c.coordination.readNamespacedLease({ name: 'leader', namespace: 'kube-system' });
    assert.equal(current.spec?.holderIdentity, 'a');
    // A patch carrying a stale resourceVersion is a precondition too.
    await rejects(
      () =>
        c.coordination.patchNamespacedLease(
          {
            name: 'leader',
            namespace: 'kube-system',
            body: {
              metadata: { resourceVersion: created.metadata?.resourceVersion },
              spec: { holderIdentity: 'b' },
            },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      409,
      'Conflict',
    );
  });

  it('does not bump resourceVersion for an update that changes nothing', async () => {
    const created = await c.core.createNamespacedPod({ namespace: 'default', body: pod('noop') });
    const same = await c.core.replaceNamespacedPod({ name: 'noop', namespace: 'default', body: created });
    assert.equal(same.metadata?.resourceVersion, created.metadata?.resourceVersion);
  });

  it('creates on PUT for leases but answers 404 for pods', async () => {
    const lease = await c.coordination.replaceNamespacedLease({
      name: 'put-created',
      namespace: 'default',
      body: { metadata: { name: 'put-created' }, spec: { holderIdentity: 'x' } },
    });
    assert.equal(lease.spec?.holderIdentity, 'x');
    // Even with the resourceVersion of an earlier incarnation, as a leader re-creating its lease sends.
    await c.coordination.deleteNamespacedLease({ name: 'put-created', namespace: 'default' });
    const again = await c.coordination.replaceNamespacedLease({
      name: 'put-created',
      namespace: 'default',
      body: lease,
    });
    assert.notEqual(again.metadata?.uid, lease.metadata?.uid);
    await rejects(
      () =>
        c.core.replaceNamespacedPod({ name: 'missing', namespace: 'default', body: pod('missing') as V1Pod }),
      404,
      'NotFound',
    );
  });

  it('answers 404 for a create in a namespace that does not exist', async () => {
    const status = await rejects(
      () => c.core.createNamespacedPod({ namespace: 'nowhere', body: pod('p') }),
      404,
      'NotFound',
    );
    assert.equal(status.message, 'namespaces "nowhere" not found');
    assert.equal(status.details?.kind, 'namespaces');
  });

  it('answers 422 Invalid for a bad name or label, and 400 for a mismatched namespace', async () => {
    const status = await rejects(
      () => c.core.createNamespacedPod({ namespace: 'default', body: pod('Bad_Name') }),
      422,
      'Invalid',
    );
    assert.equal((status.details?.causes as { field: string }[])[0]?.field, 'metadata.name');
    await rejects(
      () =>
        c.core.createNamespacedPod({
          namespace: 'default',
          body: pod('ok', { labels: { 'bad key!': 'v' } }),
        }),
      422,
      'Invalid',
    );
    await rejects(
      () =>
        c.core.createNamespacedPod({ namespace: 'default', body: pod('ok', { namespace: 'kube-system' }) }),
      400,
      'BadRequest',
    );
  });

  it('keeps status out of main-resource writes and spec out of status writes', async () => {
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('st', { nodeName: 'n1' }) });
    const withIp = await c.core.patchNamespacedPodStatus(
      {
        name: 'st',
        namespace: 'default',
        body: {
          status: {
            phase: 'Running',
            podIP: '10.0.0.5',
            podIPs: [{ ip: '10.0.0.5' }],
            conditions: [{ type: 'Ready', status: 'False' }],
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    assert.equal(withIp.status?.podIP, '10.0.0.5');
    // Strategic merge: podIPs merge by ip, conditions by type.
    const dual = await c.core.patchNamespacedPodStatus(
      {
        name: 'st',
        namespace: 'default',
        body: { status: { podIPs: [{ ip: 'fd00::5' }], conditions: [{ type: 'Ready', status: 'True' }] } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    assert.deepEqual(
      dual.status?.podIPs?.map((p) => p.ip),
      ['10.0.0.5', 'fd00::5'],
    );
    assert.deepEqual(
      dual.status?.conditions?.map((x) => [x.type, x.status]),
      [['Ready', 'True']],
    );
    // Status writes ignore spec and metadata changes.
    const ignoredSpec = await c.core.replaceNamespacedPodStatus({
      name: 'st',
      namespace: 'default',
      body: {
        ...dual,
        metadata: { ...dual.metadata, labels: { sneaky: 'yes' } },
        spec: { ...dual.spec!, nodeName: 'n2' },
        status: { ...dual.status, phase: 'Succeeded' },
      },
    });
    assert.equal(ignoredSpec.status?.phase, 'Succeeded');
    assert.equal(ignoredSpec.spec?.nodeName, 'n1');
    assert.equal(ignoredSpec.metadata?.labels, undefined);
    // Main-resource writes ignore status.
    const ignoredStatus = await c.core.patchNamespacedPod(
      {
        name: 'st',
        namespace: 'default',
        body: { metadata: { labels: { a: 'b' } }, status: { podIP: '10.9.9.9' } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    assert.equal(ignoredStatus.status?.podIP, '10.0.0.5');
    assert.deepEqual(ignoredStatus.metadata?.labels, { a: 'b' });
  });

  it('checks delete preconditions and deletes collections by selector', async () => {
    const victim = await c.core.createNamespacedPod({
      namespace: 'default',
      body: pod('victim', { labels: { batch: 'x' } }),
    });
    await c.core.createNamespacedPod({
      namespace: 'default',
      body: pod('victim2', { labels: { batch: 'x' } }),
    });
    await c.core.createNamespacedPod({
      namespace: 'default',
      body: pod('survivor', { labels: { batch: 'y' } }),
    });
    await rejects(
      () =>
        c.core.deleteNamespacedPod({
          name: 'victim',
          namespace: 'default',
          body: { preconditions: { uid: 'not-the-uid' } },
        }),
      409,
      'Conflict',
    );
    await c.core.deleteNamespacedPod({
      name: 'victim',
      namespace: 'default',
      body: { preconditions: { uid: victim.metadata!.uid! } },
    });
    await c.core.deleteCollectionNamespacedPod({ namespace: 'default', labelSelector: 'batch=x' });
    const left = await c.core.listNamespacedPod({ namespace: 'default', labelSelector: 'batch' });
    assert.deepEqual(
      left.items.map((p) => p.metadata?.name),
      ['survivor'],
    );
  });

  it('serves nodes, services, endpoints, events, endpointslices, networkpolicies and leases', async () => {
    const discovery = c.kc.makeApiClient(DiscoveryV1Api);
    const networking = c.kc.makeApiClient(NetworkingV1Api);
    await c.core.createNamespace({ body: { metadata: { name: 'kinds' } } });
    const node = await c.core.createNode({
      body: {
        metadata: { name: 'node-1' },
        spec: { podCIDR: '10.1.0.0/24' },
        status: { addresses: [{ type: 'InternalIP', address: '192.0.2.1' }] },
      },
    });
    assert.equal(node.metadata?.namespace, undefined);
    assert.equal(
      node.status?.addresses?.[0]?.address,
      '192.0.2.1',
      'a node keeps the status it was created with',
    );
    await c.core.createNamespacedService({
      namespace: 'kinds',
      body: { metadata: { name: 'svc' }, spec: { clusterIP: '10.96.0.10', ports: [{ port: 80 }] } },
    });
    await c.core.createNamespacedEndpoints({
      namespace: 'kinds',
      body: {
        metadata: { name: 'svc' },
        subsets: [{ addresses: [{ ip: '10.1.0.5' }], ports: [{ port: 80 }] }],
      },
    });
    await c.core.createNamespacedEvent({
      namespace: 'kinds',
      body: { metadata: { name: 'ev1' }, involvedObject: { kind: 'Pod', name: 'p' }, reason: 'Tested' },
    });
    await discovery.createNamespacedEndpointSlice({
      namespace: 'kinds',
      body: {
        metadata: { name: 'svc-abc', labels: { 'kubernetes.io/service-name': 'svc' } },
        addressType: 'IPv4',
        endpoints: [{ addresses: ['10.1.0.5'] }],
      },
    });
    await networking.createNamespacedNetworkPolicy({
      namespace: 'kinds',
      body: { metadata: { name: 'deny' }, spec: { podSelector: {}, policyTypes: ['Ingress'] } },
    });
    await c.coordination.createNamespacedLease({
      namespace: 'kinds',
      body: { metadata: { name: 'l' }, spec: { holderIdentity: 'h' } },
    });

    assert.equal((await c.core.readNode({ name: 'node-1' })).spec?.podCIDR, '10.1.0.0/24');
    assert.equal(
      (await c.core.readNamespacedService({ name: 'svc', namespace: 'kinds' })).spec?.clusterIP,
      '10.96.0.10',
    );
    assert.equal(
      (await c.core.readNamespacedEndpoints({ name: 'svc', namespace: 'kinds' })).subsets?.[0]?.addresses?.[0]
        ?.ip,
      '10.1.0.5',
    );
    assert.equal(
      (await c.core.listNamespacedEvent({ namespace: 'kinds', fieldSelector: 'reason=Tested' })).items.length,
      1,
    );
    const slices = await discovery.listEndpointSliceForAllNamespaces({
      labelSelector: 'kubernetes.io/service-name=svc',
    });
    assert.equal(slices.items[0]?.metadata?.name, 'svc-abc');
    assert.deepEqual(
      (await networking.readNamespacedNetworkPolicy({ name: 'deny', namespace: 'kinds' })).spec?.policyTypes,
      ['Ingress'],
    );
    assert.equal(
      (await c.coordination.listLeaseForAllNamespaces()).items.some((l) => l.metadata?.name === 'l'),
      true,
    );

    // Deleting the namespace takes every object in it, with a DELETED event for each.
    const list = await c.core.listNamespacedPod({ namespace: 'kinds' });
    const serviceWatch = await collectWatch(c.kc, '/api/v1/namespaces/kinds/services', {
      resourceVersion: list.metadata!.resourceVersion!,
    });
    await c.core.createNamespacedPod({ namespace: 'kinds', body: pod('in-kinds') });
    await c.core.deleteNamespace({ name: 'kinds' });
    await waitFor('the service DELETED event', () => serviceWatch.of('DELETED').length === 1);
    serviceWatch.abort();
    await rejects(() => c.core.readNamespace({ name: 'kinds' }), 404, 'NotFound');
    await rejects(() => c.core.readNamespacedPod({ name: 'in-kinds', namespace: 'kinds' }), 404, 'NotFound');
    await rejects(
      () => networking.readNamespacedNetworkPolicy({ name: 'deny', namespace: 'kinds' }),
      404,
      'NotFound',
    );
    await rejects(
      () => c.coordination.readNamespacedLease({ name: 'l', namespace: 'kinds' }),
      404,
      'NotFound',
    );
    assert.equal((await discovery.listEndpointSliceForAllNamespaces()).items.length, 0);
    // Nodes are cluster-scoped and survive.
    await c.core.deleteNode({ name: 'node-1' });
  });

  it('refuses to delete the default namespace', async () => {
    await rejects(() => c.core.deleteNamespace({ name: 'default' }), 403, 'Forbidden');
  });
});
