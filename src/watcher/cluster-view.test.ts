import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { silentLogger } from '../common/log.js';
import { startKubeSim, type KubeSim } from '../kubesim/server.js';
import { ClusterView, type ClusterChange } from './cluster-view.js';

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('ClusterView', () => {
  let sim: KubeSim;
  let kc: KubeConfig;
  let view: ClusterView | undefined;
  const others: ClusterView[] = [];

  before(async () => {
    sim = await startKubeSim({ port: 0, logger: silentLogger() });
    kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfig());
  });
  after(async () => {
    await view?.stop();
    for (const v of others) await v.stop();
    await sim?.close();
  });

  it('watches only what is included, in the sync gate, and emits its changes', async () => {
    view = new ClusterView({ kubeConfig: kc, logger: silentLogger() });
    assert.deepEqual(
      view.informers().map((i) => i.name),
      ['pods', 'namespaces', 'nodes'],
    );
    assert.equal(view.includes('services'), false);
    view.include(['services']);
    view.include(['services']); // twice is once
    assert.deepEqual(
      view.informers().map((i) => i.name),
      ['pods', 'namespaces', 'nodes', 'services'],
    );
    const changes: ClusterChange[] = [];
    view.onChange((c) => changes.push(c));
    view.start();
    assert.throws(() => view?.include(['endpointslices']), /before the cluster view starts/);
    view.include(['services']); // already watched: nothing changes
    await view.waitForSync(AbortSignal.timeout(20_000));
    assert.equal(view.hasSynced(), true);
    assert.equal(
      view
        .informers()
        .find((i) => i.name === 'services')
        ?.hasSynced(),
      true,
    );

    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'shop' } } });
    await core.createNamespacedService({
      namespace: 'shop',
      body: { metadata: { name: 'web' }, spec: { ports: [{ port: 80 }] } },
    });
    await until(() => view?.service('shop', 'web') !== undefined, 'the Service in the view');
    await until(() => changes.some((c) => c.kind === 'service'), 'a service change');
    const change = changes.find((c) => c.kind === 'service');
    assert.equal(change?.kind === 'service' && change.obj.metadata?.name, 'web');
    assert.equal(view.endpointSlice('shop', 'web'), undefined);
  });

  it('finds the pods one ELAN can serve, following pod and node changes', async () => {
    const v = new ClusterView({ kubeConfig: kc, logger: silentLogger() });
    others.push(v);
    v.start();
    await v.waitForSync(AbortSignal.timeout(20_000));
    const core = kc.makeApiClient(CoreV1Api);
    const node = (name: string, ip: string) => ({
      metadata: { name },
      status: { addresses: [{ type: 'InternalIP', address: ip }] },
    });
    await core.createNode({ body: node('n1', '10.0.0.1') });
    await core.createNode({ body: node('n2', '10.0.0.2') });
    for (const ns of ['store', 'bank']) await core.createNamespace({ body: { metadata: { name: ns } } });
    const pod = (ns: string, name: string, nodeName: string) =>
      core.createNamespacedPod({
        namespace: ns,
        body: { metadata: { name }, spec: { nodeName, containers: [{ name: 'c', image: 'pause' }] } },
      });
    await pod('store', 'b', 'n1');
    await pod('store', 'a', 'n1');
    await pod('store', 'c', 'n2');
    await pod('bank', 'd', 'n1');
    const names = (ns: string, ip: string) => v.podsInNamespaceOnIp(ns, ip).map((p) => p.metadata?.name);
    await until(
      () => v.pods.list().length === 4 && v.nodes.list().length === 2,
      'the four pods and two nodes in the view',
    );
    // Sorted as podsInNamespace is; other namespaces and nodes are not in it.
    assert.deepEqual(names('store', '10.0.0.1'), ['a', 'b']);
    assert.deepEqual(names('store', '10.0.0.2'), ['c']);
    assert.deepEqual(names('bank', '10.0.0.1'), ['d']);
    assert.deepEqual(names('bank', '10.0.0.2'), []);
    assert.deepEqual(names('store', '10.0.0.9'), []);

    // A node whose InternalIP changes takes its pods to the new IP.
    await core.replaceNodeStatus({ name: 'n2', body: node('n2', '10.0.0.1') });
    await until(() => names('store', '10.0.0.2').length === 0, 'n2 to leave 10.0.0.2');
    assert.deepEqual(names('store', '10.0.0.1'), ['a', 'b', 'c']);
    // A deleted pod leaves it.
    await core.deleteNamespacedPod({ namespace: 'store', name: 'a', gracePeriodSeconds: 0 });
    await until(() => v.pod('store', 'a') === undefined, 'pod a to go');
    assert.deepEqual(names('store', '10.0.0.1'), ['b', 'c']);
  });
});
