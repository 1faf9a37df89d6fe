import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from './kube-client.js';
import { LeaseLock, microTime } from './lease-lock.js';

describe('lease lock', () => {
  it('writes MicroTime with exactly six fractional digits', () => {
    assert.equal(microTime(Date.UTC(2024, 0, 2, 3, 4, 5, 67)), '2024-01-02T03:04:05.067000Z');
  });

  it('refuses names that are not Kubernetes object names before building a URL', () => {
    const kc = new KubeConfig();
    kc.loadFromClusterAndUser(
      { name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: false },
      { name: 'u' },
    );
    const client = new KubeClient(kc);
    assert.throws(() => new LeaseLock(client, 'kube-system', '../pods'), /not a valid object name/);
    assert.throws(() => new LeaseLock(client, 'Kube_System', 'odlcoe'), /not a valid namespace name/);
    assert.equal(
      new LeaseLock(client, 'kube-system', 'odlcoe.watcher').describe(),
      'kube-system/odlcoe.watcher',
    );
  });
});
