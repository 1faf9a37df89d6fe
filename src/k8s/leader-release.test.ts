import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { silentLogger } from '../common/log.js';
import { Registry } from '../common/metrics.js';
import type { KubeSim } from '../kubesim/server.js';
import type { KubeClient } from './kube-client.js';
import { LeaderElector } from './leader-election.js';
import { startSimApi } from '../../test/helpers/kube-api.js';
import { waitFor } from '../../test/helpers/wait.js';

interface LeaseObject {
  metadata: { resourceVersion: string };
  spec: { holderIdentity?: string; leaseDurationSeconds?: number };
}

describe('releasing the Lease on stop', () => {
  let sim: KubeSim;
  let kubeConfig: KubeConfig;
  let api: KubeClient;
  const path = '/apis/coordination.k8s.io/v1/namespaces/default/leases/release-test';

  before(async () => {
    ({ sim, kubeConfig, api } = await startSimApi());
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
    await waitFor(() => elector.isLeader(), { what: 'a to lead' });

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
