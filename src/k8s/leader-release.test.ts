import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { silentLogger } from '../common/log.js';
import { Registry } from '../common/metrics.js';
import { startKubeSim, type KubeSim } from '../kubesim/server.js';
import { KubeClient } from './kube-client.js';
import { LeaderElector } from './leader-election.js';

interface LeaseObject {
  metadata: { resourceVersion: string };
  spec: { holderIdentity?: string; leaseDurationSeconds?: number };
}

async function until(
  cond: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('releasing the Lease on stop', () => {
  let sim: KubeSim;
  let kubeConfig: KubeConfig;
  let api: KubeClient;
  const path = '/apis/coordination.k8s.io/v1/namespaces/default/leases/release-test';

  before(async () => {
    sim = await startKubeSim({ port: 0 });
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sim.kubeconfig());
    api = new KubeClient(kubeConfig);
  });
  after(async () => {
    await sim?.close();
  });

  it('still releases when the Lease changed since our last write (an aborted renewal the server applied)', async () => {
    const elector = new LeaderElector({
      kubeConfig,
      namespace: 'default',
      name: 'release-test',
      identity: 'a',
      // A long renew interval: the Lease is not renewed again between the bump and stop().
      leaseDurationMs: 60_000,
      renewDeadlineMs: 40_000,
      retryPeriodMs: 20_000,
      onStartedLeading: () => undefined,
      onStoppedLeading: () => undefined,
      registry: new Registry(),
      logger: silentLogger(),
    });
    const running = elector.run();
    await until(() => elector.isLeader(), 'a to lead');

    // Same holder, new resourceVersion: what a renewal looks like when the API server applied
    // it but the client gave up on the answer.
    const before = await api.request<LeaseObject>('GET', path);
    await api.request('PATCH', path, {
      body: { metadata: { annotations: { 'test/bump': '1' } } },
      contentType: 'application/merge-patch+json',
    });
    const bumped = await api.request<LeaseObject>('GET', path);
    assert.notEqual(bumped.metadata.resourceVersion, before.metadata.resourceVersion);
    assert.equal(bumped.spec.holderIdentity, 'a');

    await elector.stop();
    await running;
    const released = await api.request<LeaseObject>('GET', path);
    assert.equal(released.spec.holderIdentity, '', 'the Lease is released, so a standby takes over at once');
    assert.equal(released.spec.leaseDurationSeconds, 1);
  });
});
