import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { silentLogger } from '../common/log.js';
import { KubeApiError, KubeClient } from '../k8s/kube-client.js';
import { startKubeSim, type KubeSim } from '../kubesim/server.js';
import { Kubelet } from './kubelet.js';
import { AddressPodRuntime, type PodRef, type PodRuntime, type PodSandbox } from './pod-runtime.js';

async function until(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}${last instanceof Error ? ` (${last.message})` : ''}`);
}

/** Records what the kubelet asks for; fails the first `failures` ADDs (like an agent not ready yet). */
class RecordingRuntime implements PodRuntime {
  readonly added: PodRef[] = [];
  readonly removed: PodSandbox[] = [];
  constructor(
    private readonly inner: PodRuntime,
    private failures = 0,
  ) {}
  async add(pod: PodRef): Promise<PodSandbox> {
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('CNI ADD failed (code 11): try again later');
    }
    this.added.push(pod);
    return this.inner.add(pod);
  }
  async remove(sandbox: PodSandbox): Promise<void> {
    this.removed.push(sandbox);
    if (this.onRemove) await this.onRemove(sandbox);
    await this.inner.remove(sandbox);
  }
  /** Runs as a sandbox stops (to look at the API then). */
  onRemove: ((sandbox: PodSandbox) => Promise<void>) | undefined;
}

describe('kubelet stand-in', () => {
  let sim: KubeSim;
  let kube: KubeClient;
  let kc: KubeConfig;

  before(async () => {
    sim = await startKubeSim({ port: 0, bookmarkIntervalMs: 200 });
    kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfig());
    kube = new KubeClient(kc);
    sim.seed([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, spec: { podCIDR: '10.5.1.0/24' } },
    ]);
  });

  after(async () => {
    await sim.close();
  });

  const createPod = (name: string, node: string, extra: Record<string, unknown> = {}) =>
    kube.request<V1Pod>('POST', '/api/v1/namespaces/shop/pods', {
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name },
        spec: { nodeName: node, containers: [{ name: 'c', image: 'i' }], ...extra },
      },
    });
  const getPod = (name: string) => kube.request<V1Pod>('GET', `/api/v1/namespaces/shop/pods/${name}`);
  const isGone = (name: string) =>
    getPod(name).then(
      () => false,
      (err: unknown) => err instanceof KubeApiError && err.status === 404,
    );

  it('gives its pods an IP through the status, retries a failing sandbox, and stops sandboxes of deleted pods', async () => {
    const runtime = new RecordingRuntime(new AddressPodRuntime('10.5.1.0/24'), 2);
    const kubelet = new Kubelet({
      nodeName: 'n1',
      nodeIp: '192.168.9.1',
      kubeConfig: kc,
      runtime,
      logger: silentLogger(),
    });
    kubelet.start();
    try {
      await kubelet.waitForSync();
      await createPod('a', 'n1');
      await createPod('other-node', 'n2');
      await createPod('host', 'n1', { hostNetwork: true });
      await until('pod a to get an IP', async () => (await getPod('a')).status?.podIP === '10.5.1.2');
      const a = await getPod('a');
      assert.equal(a.status?.phase, 'Running');
      assert.deepEqual(a.status?.podIPs, [{ ip: '10.5.1.2' }]);
      assert.equal(a.status?.hostIP, '192.168.9.1');
      // hostNetwork pods share the node's address and get no sandbox.
      await until(
        'the hostNetwork pod to get the node IP',
        async () => (await getPod('host')).status?.podIP === '192.168.9.1',
      );
      assert.deepEqual(
        runtime.added.map((p) => p.name),
        ['a'],
      );
      // Pods of other nodes are not this kubelet's business.
      assert.equal((await getPod('other-node')).status?.podIP, undefined);

      // Force-deleted (grace 0: gone from the API at once) and replaced by a pod of the same name
      // (another UID): the old sandbox goes, a new one comes.
      const oldUid = a.metadata?.uid;
      await kube.request('DELETE', '/api/v1/namespaces/shop/pods/a', { query: { gracePeriodSeconds: 0 } });
      await createPod('a', 'n1');
      await until('the new pod a to get its IP', async () => {
        const p = await getPod('a');
        return p.metadata?.uid !== oldUid && p.status?.podIP !== undefined;
      });
      assert.equal(runtime.removed[0]?.pod.uid, oldUid);
      assert.equal(kubelet.list().length, 1);
      assert.notEqual(kubelet.get('shop', 'a')?.pod.uid, oldUid);

      // Stopped on purpose (what kubelet does before a deletion completes): never restarted.
      await kubelet.stopPod('shop', 'a');
      assert.equal(kubelet.list().length, 0);
      await kube.request('PATCH', '/api/v1/namespaces/shop/pods/a', {
        contentType: 'application/merge-patch+json',
        body: { metadata: { labels: { touched: 'yes' } } },
      });
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(kubelet.list().length, 0);
    } finally {
      await kubelet.close({ teardown: true });
    }
  });

  it('finishes the deletion of a Terminating pod as kubelet does: sandbox stopped, then DELETE with grace 0', async () => {
    const runtime = new RecordingRuntime(new AddressPodRuntime('10.5.4.0/24'));
    const kubelet = new Kubelet({
      nodeName: 'n4',
      nodeIp: '192.168.9.4',
      kubeConfig: kc,
      runtime,
      logger: silentLogger(),
    });
    const seenAtStop: string[] = [];
    runtime.onRemove = async (sandbox) => {
      const pod = await getPod(sandbox.pod.name);
      seenAtStop.push(`${pod.metadata?.name} ${pod.metadata?.deletionGracePeriodSeconds}`);
    };
    kubelet.start();
    try {
      await kubelet.waitForSync();
      await createPod('t', 'n4');
      await until('pod t to get an IP', async () => (await getPod('t')).status?.podIP !== undefined);
      const marked = await kube.request<V1Pod>('DELETE', '/api/v1/namespaces/shop/pods/t');
      assert.equal(marked.metadata?.deletionGracePeriodSeconds, 30, 'the API server only marks it');
      await until('pod t to be gone', () => isGone('t'));
      // The sandbox stopped while the pod was still there, Terminating.
      assert.deepEqual(seenAtStop, ['t 30']);
      assert.equal(kubelet.list().length, 0);
      // A pod that never got a sandbox (hostNetwork) is deleted just the same.
      await createPod('h', 'n4', { hostNetwork: true });
      await until(
        'pod h to get the node IP',
        async () => (await getPod('h')).status?.podIP === '192.168.9.4',
      );
      await kube.request('DELETE', '/api/v1/namespaces/shop/pods/h');
      await until('pod h to be gone', () => isGone('h'));
    } finally {
      await kubelet.close({ teardown: true });
    }
  });

  it('tears every sandbox down on close', async () => {
    const runtime = new RecordingRuntime(new AddressPodRuntime('10.5.2.0/24'));
    await kube.request('POST', '/api/v1/nodes', {
      body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n3' } },
    });
    const kubelet = new Kubelet({
      nodeName: 'n3',
      nodeIp: '192.168.9.3',
      kubeConfig: kc,
      runtime,
      logger: silentLogger(),
    });
    kubelet.start();
    await createPod('c1', 'n3');
    await createPod('c2', 'n3');
    await until('two sandboxes', () => kubelet.list().length === 2);
    await kubelet.close({ teardown: true });
    assert.deepEqual(runtime.removed.map((s) => s.pod.name).sort(), ['c1', 'c2']);
  });
});
