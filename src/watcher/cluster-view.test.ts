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

describe('ClusterView optional resources', () => {
  let sim: KubeSim;
  let kc: KubeConfig;
  let view: ClusterView | undefined;

  before(async () => {
    sim = await startKubeSim({ port: 0, logger: silentLogger() });
    kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfig());
  });
  after(async () => {
    await view?.stop();
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
});
