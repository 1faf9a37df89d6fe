import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { SimClient } from './testing.js';
import { collectWatch, pod, rejects, startSimClient, waitFor } from './testing.js';

const PODS = '/api/v1/namespaces/default/pods';

describe('kubesim faults', () => {
  let c: SimClient;
  before(async () => {
    c = await startSimClient({ bookmarkIntervalMs: 50 });
  });
  after(async () => {
    await c.sim.close();
  });

  it('close-watches ends every open watch cleanly', async () => {
    const a = await collectWatch(c.kc, PODS);
    const b = await collectWatch(c.kc, '/api/v1/nodes', { allowWatchBookmarks: true });
    await waitFor('two open watches', () => c.sim.stats().watches === 2);
    c.sim.fault({ action: 'close-watches' });
    await waitFor('both watches to end', () => a.ended !== undefined && b.ended !== undefined);
    assert.equal(a.ended?.error, null);
    assert.equal(c.sim.stats().watches, 0);
  });

  it('errors answers 500 to every API request for its duration, until cleared', async () => {
    c.sim.fault({ action: 'errors', status: 500, seconds: 60 });
    const status = await rejects(() => c.core.listNamespace(), 500, 'InternalError');
    assert.match(status.message ?? '', /injected/);
    await rejects(
      () => c.core.createNamespacedPod({ namespace: 'default', body: pod('during-errors') }),
      500,
    );
    const watch = await collectWatch(c.kc, PODS);
    await waitFor('the watch to fail', () => watch.ended !== undefined);
    assert.equal((watch.ended?.error as { statusCode?: number }).statusCode, 500);
    c.sim.fault({ action: 'clear' });
    await c.core.listNamespace();
    await rejects(() => c.core.readNamespacedPod({ name: 'during-errors', namespace: 'default' }), 404);
  });

  it('errors with 429 sets Retry-After and a TooManyRequests Status', async () => {
    c.sim.fault({ action: 'errors', status: 429, seconds: 30 });
    const response = await fetch(`${c.sim.url}/api/v1/namespaces`);
    const body = (await response.json()) as { reason?: string; details?: { retryAfterSeconds?: number } };
    assert.equal(response.status, 429);
    assert.equal(body.reason, 'TooManyRequests');
    const retryAfter = Number(response.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 30, `Retry-After ${retryAfter}`);
    assert.equal(body.details?.retryAfterSeconds, retryAfter);
    c.sim.fault({ action: 'clear' });
    assert.equal((await fetch(`${c.sim.url}/api/v1/namespaces`)).status, 200);
  });

  it('errors ends by itself after its duration', async () => {
    c.sim.fault({ action: 'errors', status: 500, seconds: 0.3 });
    assert.equal((await fetch(`${c.sim.url}/api/v1/nodes`)).status, 500);
    await waitFor(
      'the error window to pass',
      async () => (await fetch(`${c.sim.url}/api/v1/nodes`)).status === 200,
    );
  });

  it('latency delays every response by at least its duration', async () => {
    c.sim.fault({ action: 'latency', ms: 300 });
    const started = Date.now();
    await c.core.listNode();
    assert.ok(Date.now() - started >= 290, 'the response waited for the injected latency');
    c.sim.fault({ action: 'latency', ms: 0 });
    assert.equal(
      ((await (await fetch(`${c.sim.url}/_sim/faults`)).json()) as { latencyMs: number }).latencyMs,
      0,
    );
  });

  it('silent-watches opens watches that send nothing at all until the client leaves', async () => {
    const rv = (await c.core.listNamespacedPod({ namespace: 'default' })).metadata!.resourceVersion!;
    const control = await collectWatch(c.kc, PODS, {
      resourceVersion: rv,
      allowWatchBookmarks: true,
      timeoutSeconds: 1,
    });
    c.sim.fault({ action: 'silent-watches', seconds: 60 });
    const silent = await collectWatch(c.kc, PODS, { allowWatchBookmarks: true, timeoutSeconds: 1 });
    await waitFor('both watches open', () => c.sim.stats().watches === 2);
    await c.core.createNamespacedPod({ namespace: 'default', body: pod('unseen') });
    // The control watch sees the change, its bookmarks and its timeout; the silent one nothing.
    await waitFor('the control watch to end', () => control.ended !== undefined);
    assert.equal(control.of('ADDED').length, 1);
    assert.ok(control.of('BOOKMARK').length >= 1);
    assert.deepEqual(silent.events, []);
    assert.equal(silent.ended, undefined, 'a silent watch ignores timeoutSeconds');
    assert.equal(c.sim.stats().watches, 1);
    silent.abort();
    await waitFor('the silent watch to be gone', () => c.sim.stats().watches === 0);
    c.sim.fault({ action: 'clear' });
    const normal = await collectWatch(c.kc, PODS);
    await waitFor('the current state after clear', () => normal.events.length >= 1);
    normal.abort();
  });

  it('compact is covered by the 410 tests; an invalid fault is rejected precisely', async () => {
    assert.throws(
      () => c.sim.fault({ action: 'errors', status: 503, seconds: 1 } as never),
      /invalid fault: status/,
    );
    const response = await fetch(`${c.sim.url}/_sim/faults`, {
      method: 'POST',
      body: JSON.stringify({ action: 'explode' }),
    });
    assert.equal(response.status, 400);
    const ok = await fetch(`${c.sim.url}/_sim/faults`, {
      method: 'POST',
      body: JSON.stringify({ action: 'latency', ms: 0 }),
    });
    assert.equal(ok.status, 200);
  });

  it('counts requests by verb and resource', async () => {
    const before = c.sim.stats().requests;
    await c.core.listNamespacedPod({ namespace: 'default' });
    await c.core.readNamespace({ name: 'default' });
    const stats = (await (await fetch(`${c.sim.url}/_sim/stats`)).json()) as {
      requests: Record<string, number>;
    };
    assert.equal(stats.requests['list pods'], (before['list pods'] ?? 0) + 1);
    assert.equal(stats.requests['get namespaces'], (before['get namespaces'] ?? 0) + 1);
  });

  it('seeds many objects at once over HTTP, all or nothing', async () => {
    const items = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bulk' } },
      ...Array.from({ length: 2000 }, (_, i) =>
        pod(`bulk-${i}`, { namespace: 'bulk', nodeName: `n${i % 10}` }),
      ),
    ];
    const response = await fetch(`${c.sim.url}/_sim/seed`, {
      method: 'POST',
      body: JSON.stringify({ items }),
    });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { created: number };
    assert.equal(body.created, 2001);
    const onNode = await c.core.listNamespacedPod({ namespace: 'bulk', fieldSelector: 'spec.nodeName=n3' });
    assert.equal(onNode.items.length, 200);

    const bad = await fetch(`${c.sim.url}/_sim/seed`, {
      method: 'POST',
      body: JSON.stringify({
        items: [pod('fine', { namespace: 'bulk' }), pod('bulk-1', { namespace: 'bulk' })],
      }),
    });
    assert.equal(bad.status, 409);
    assert.match(
      ((await bad.json()) as { message: string }).message,
      /^items\[1\]: pods "bulk-1" already exists/,
    );
    await rejects(() => c.core.readNamespacedPod({ name: 'fine', namespace: 'bulk' }), 404);
  });
});

describe('kubesim token authentication', () => {
  let c: SimClient;
  before(async () => {
    c = await startSimClient({ token: 's3cret-token' });
  });
  after(async () => {
    await c.sim.close();
  });

  it('accepts the token from its kubeconfig', async () => {
    assert.match(c.sim.kubeconfig(), /token: s3cret-token/);
    const list = await c.core.listNamespace();
    assert.ok(list.items.length >= 4);
  });

  it('answers 401 Unauthorized without the token or with a wrong one', async () => {
    const kc = new KubeConfig();
    kc.loadFromString(c.sim.kubeconfig().replace('token: s3cret-token', 'token: wrong'));
    // client-node drops the body of a 401, so only the code is visible here.
    await rejects(() => kc.makeApiClient(CoreV1Api).listNamespace(), 401);
    const anonymous = await fetch(`${c.sim.url}/api/v1/pods`);
    assert.equal(((await anonymous.json()) as { reason: string }).reason, 'Unauthorized');
    assert.equal((await fetch(`${c.sim.url}/api/v1/pods`)).status, 401);
    assert.equal((await fetch(`${c.sim.url}/_sim/stats`)).status, 401);
    assert.equal(
      (await fetch(`${c.sim.url}/_sim/stats`, { headers: { authorization: 'Bearer s3cret-token' } })).status,
      200,
    );
  });

  it('serves /version and /healthz without the token', async () => {
    assert.equal((await fetch(`${c.sim.url}/version`)).status, 200);
    assert.equal((await fetch(`${c.sim.url}/healthz`)).status, 200);
  });
});
