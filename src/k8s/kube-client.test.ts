import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { startKubeSim } from '../kubesim/server.js';
import { KubeApiError, KubeClient, isGone } from './kube-client.js';

type KubeSim = Awaited<ReturnType<typeof startKubeSim>>;

describe('KubeClient against the Kubernetes simulator', () => {
  let sim: KubeSim;
  let api: KubeClient;
  const kubeConfigFor = (yaml: string) => {
    const kc = new KubeConfig();
    kc.loadFromString(yaml);
    return kc;
  };

  before(async () => {
    sim = await startKubeSim({ port: 0, token: 's3cret-token' });
    api = new KubeClient(kubeConfigFor(sim.kubeconfig()));
  });

  after(async () => {
    await sim?.close();
  });

  it("authenticates with the kubeconfig's bearer token", async () => {
    const ns = await api.request<{ metadata: { name: string } }>('GET', '/api/v1/namespaces/default');
    assert.equal(ns.metadata.name, 'default');
    const wrong = new KubeClient(kubeConfigFor(sim.kubeconfig().replace('s3cret-token', 'wrong-token')));
    const err = await wrong.request('GET', '/api/v1/namespaces/default').catch((e: unknown) => e);
    assert.ok(err instanceof KubeApiError);
    assert.equal(err.status, 401);
    assert.doesNotMatch(err.message, /s3cret|wrong-token/, 'errors never carry credentials');
  });

  it('turns an error answer into KubeApiError with the Status reason', async () => {
    const err = await api.request('GET', '/api/v1/namespaces/default/pods/missing').catch((e: unknown) => e);
    assert.ok(err instanceof KubeApiError);
    assert.equal(err.status, 404);
    assert.equal(err.reason, 'NotFound');
    assert.match(err.message, /^GET \/api\/v1\/namespaces\/default\/pods\/missing: 404 NotFound: /);
    assert.equal(isGone(err), false);
  });

  it('reports Retry-After of a 429', async () => {
    sim.fault({ action: 'errors', status: 429, seconds: 5 });
    try {
      const err = await api.request('GET', '/api/v1/pods').catch((e: unknown) => e);
      assert.ok(err instanceof KubeApiError);
      assert.equal(err.status, 429);
      assert.ok(err.retryAfterMs !== undefined && err.retryAfterMs >= 1000);
    } finally {
      sim.fault({ action: 'clear' });
    }
  });

  it('gives up on a request that outlives its deadline, and on abort', async () => {
    sim.fault({ action: 'latency', ms: 2000 });
    try {
      await assert.rejects(
        api.request('GET', '/api/v1/pods', { timeoutMs: 100 }),
        /no complete answer within 100 ms/,
      );
      const abort = new AbortController();
      const pending = api.request('GET', '/api/v1/pods', { signal: abort.signal });
      abort.abort(new Error('caller gave up'));
      await assert.rejects(pending, /caller gave up/);
    } finally {
      sim.fault({ action: 'clear' });
    }
  });

  it('refuses a relative path and a kubeconfig without a cluster', async () => {
    await assert.rejects(api.request('GET', 'api/v1/pods'), /must start with "\/"/);
    assert.throws(() => new KubeClient(new KubeConfig()), /no current cluster/);
  });
});
