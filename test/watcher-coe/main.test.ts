/**
 * The real `odlcoe-watcher` entry point with `--backend coe-northbound` (flags and
 * environment only, as a Deployment runs it) against kubesim and the ODL emulator: the backend
 * is selected by name, the core watches Services and EndpointSlices for it (their informers
 * are synced and reported like the core's), and a small cluster, Services included, converges
 * into ODL's COE models. SIGTERM ends it cleanly.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stopPid } from '../helpers/processes.js';
import { baseArgs, startWatcherProcess, type WatcherProcess } from '../watcher/watcher-process.js';
import {
  createNamespace,
  createNode,
  createPod,
  createService,
  createSlice,
  readCoe,
  slice,
  startCoeWatcher,
  startEnv,
  waitFor,
  type Env,
} from './testing.js';

const CLUSTER_ID = 'd5b7c83d-b362-3bde-86d5-f509e6ca8560'; // clusterUuid('test')

describe('odlcoe-watcher --backend coe-northbound', () => {
  let env: Env;
  let dir: string;
  let watcher: WatcherProcess | undefined;

  before(async () => {
    env = await startEnv({ profile: 'sodium', dialect: 'bierman02' });
    dir = mkdtempSync(join(tmpdir(), 'odlcoe-watcher-coe-'));
    env.sim.writeKubeconfig(join(dir, 'kubeconfig'));
    writeFileSync(join(dir, 'odl-password'), 'admin\n', { mode: 0o600 });
  });
  after(async () => {
    if (watcher?.child.pid) await stopPid(watcher.child.pid);
    await env?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('selects the backend by name and converges pods, nodes, Services and their endpoints', async () => {
    const nodeUid = await createNode(env, 'node-a', '192.168.30.1', { podCIDR: '10.246.1.0/24' });
    await createNamespace(env, 'shop');
    const podUid = await createPod(env, 'shop', 'web-0', 'node-a', { ip: '10.246.1.10' });
    const serviceUid = await createService(env, 'shop', {
      metadata: { name: 'web' },
      spec: { clusterIP: '10.96.3.10', ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
    });
    await createSlice(
      env,
      slice(
        'shop',
        'web-abc',
        'web',
        [{ ip: '10.246.1.10', node: 'node-a' }],
        [{ name: 'http', port: 8080 }],
      ),
    );

    watcher = startWatcherProcess(
      ['--backend', 'coe-northbound', ...baseArgs(env, dir), '--no-leader-elect'],
      { ODLCOE_CLUSTER_NAME: 'test' },
    );
    const w = watcher;

    await w.started();
    await waitFor(async () => (await w.scrape('/readyz')).status === 200, {
      what: 'the watcher to be ready',
      timeoutMs: 30_000,
    });
    await waitFor(
      async () => {
        const odl = await readCoe(env);
        return odl.pods.length === 1 && odl.endpoints.length === 1 && odl['k8s-nodes'].length === 1;
      },
      { what: 'the cluster in ODL', timeoutMs: 30_000 },
    );
    const odl = await readCoe(env);
    assert.deepEqual(
      odl.pods.map((p) => [p.uid, p.name, p['network-NS'], p['host-ip-address']]),
      [[podUid, 'web-0', 'shop', '192.168.30.1']],
    );
    assert.deepEqual(odl.services, [
      {
        uid: serviceUid,
        name: 'web',
        'cluster-id': CLUSTER_ID,
        'network-NS': 'shop',
        'cluster-ip-address': '10.96.3.10',
        'service-ports': [{ name: 'http', port: 80, 'target-port': '8080' }],
      },
    ]);
    assert.deepEqual(odl.endpoints, [
      {
        uid: serviceUid,
        name: 'web',
        'network-NS': 'shop',
        'endpoint-addresses': [{ 'ip-address': '10.246.1.10', 'node-name': 'node-a' }],
        'endpoint-ports': [{ name: 'http', port: 8080 }],
      },
    ]);
    assert.deepEqual(
      odl['k8s-nodes'].map((n) => [n.uid, n['pod-cidr']]),
      [[nodeUid, '10.246.1.0/24']],
    );
    // Nothing of the netvirt backend was written.
    const interfaces = await env.odl.getEntries([
      { module: 'ietf-interfaces', name: 'interfaces' },
      { name: 'interface' },
    ]);
    assert.deepEqual(interfaces, []);

    // The view watches Services and EndpointSlices for this backend, reported like the rest.
    const { text } = await w.scrape('/metrics');
    for (const informer of ['pods', 'namespaces', 'nodes', 'services', 'endpointslices'])
      assert.match(text, new RegExp(`odlcoe_informer_synced\\{informer="${informer}"\\} 1`), informer);
    assert.match(text, /odlcoe_workqueue_depth\{name="watcher-coe-northbound"\}/);

    // A Service added while it runs is written too (its change came through the core's view).
    const apiUid = await createService(env, 'shop', {
      metadata: { name: 'api' },
      spec: { clusterIP: '10.96.3.11', ports: [{ port: 443 }] },
    });
    await waitFor(async () => (await readCoe(env)).services.some((s) => s.uid === apiUid), {
      what: 'Service api in ODL',
      timeoutMs: 30_000,
    });

    w.child.kill('SIGTERM');
    assert.equal(await w.exited, 0, w.log.slice(-5).join('\n'));
  });
});

describe('coe-northbound on a release without the COE models', () => {
  for (const target of [
    { profile: 'aluminium', dialect: 'rfc8040' },
    { profile: 'sodium', dialect: 'bierman02', features: [] },
  ] as const) {
    it(`refuses to start on ${target.profile}${'features' in target ? ' without the COE feature' : ''}, naming the missing models`, async () => {
      const env = await startEnv(target);
      try {
        await assert.rejects(
          startCoeWatcher(env),
          /the coe-northbound backend writes ODL's COE models, which this ODL \((aluminium|sodium)\) does not have \(no module pod, service, k8s-node\)/,
        );
        assert.deepEqual(
          Object.keys(env.emu.counters().modules).filter((m) => ['pod', 'service', 'k8s-node'].includes(m)),
          [],
          'no request into a COE module',
        );
      } finally {
        await env.close();
      }
    });
  }
});
