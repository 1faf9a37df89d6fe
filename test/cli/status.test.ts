/**
 * `odlcoectl status`: programmed vs pending pods are counted from what ODL really holds (and
 * change when ODL or the cluster does), the leader comes from the Lease the watcher's election
 * writes, only the watcher's Warning Events are listed, collisions with foreign objects are
 * named, and an unreachable ODL is reported with exit 3.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { StatusReport } from '../../src/cli/status.js';
import { silentLogger } from '../../src/common/log.js';
import { createRegistry } from '../../src/common/metrics.js';
import { LeaseLock, microTime } from '../../src/k8s/lease-lock.js';
import { netvirtPaths, putInterface } from '../../src/netvirt/index.js';
import { ConvergenceProgress } from '../../src/watcher/progress.js';
import { deletePodNow } from '../helpers/pod-deletion.js';
import { apply, createCluster, createPod, programOdl, startHarness, type CliHarness } from './testing.js';

describe('odlcoectl status', () => {
  let h: CliHarness;

  const status = async (...extra: string[]): Promise<{ code: number; report: StatusReport }> => {
    const res = await h.run(['status', '-o', 'json', ...extra]);
    return { code: res.code, report: JSON.parse(res.stdout) as StatusReport };
  };

  before(async () => {
    h = await startHarness('sodium', 'rfc8040');
    await programOdl(h, await createCluster(h));
  });
  after(async () => h?.close());

  it('shows the release ODL serves: profile, dialect and optional models, read from its module list', async () => {
    for (const told of ['sodium', null]) {
      const res = await h.run(['status', '-o', 'json'], told);
      const report = JSON.parse(res.stdout) as StatusReport;
      assert.deepEqual(report.release, {
        profile: 'sodium',
        detected: 'odl',
        dialect: 'rfc8040',
        models: { coe: true, acl: true, nat: true },
      });
    }
    const human = await h.run(['status'], null);
    assert.match(
      human.stdout,
      /^ODL release: sodium profile \(read from its module list\), rfc8040 dialect, optional models: coe, acl, nat$/m,
    );
  });

  it('a told profile that ODL contradicts: named both, nothing planned (status exit 3, other commands exit 2)', async () => {
    const { code, report } = await (async () => {
      const res = await h.run(['status', '-o', 'json'], 'aluminium');
      return { code: res.code, report: JSON.parse(res.stdout) as StatusReport };
    })();
    assert.equal(code, 3);
    assert.equal(report.release, null);
    assert.equal(report.pods, null);
    assert.match(
      report.errors.join('\n'),
      /profile is set to aluminium, but ODL at .* serves the sodium models/,
    );
    const dump = await h.run(['dump'], 'aluminium');
    assert.equal(dump.code, 2);
    assert.match(dump.stderr, /profile is set to aluminium, but ODL at .* serves the sodium models/);
  });

  it('a fully programmed cluster: every pod programmed, exit 0; no Lease yet means no leader', async () => {
    const { code, report } = await status();
    assert.equal(code, 0, JSON.stringify(report.errors));
    assert.deepEqual(report.pods, { programmed: 3, pending: 0, offNetwork: 1, pendingPods: [] });
    assert.equal(report.odl.reachable, true);
    assert.equal(typeof report.odl.latencyMs, 'number');
    assert.equal(report.kubernetes.reachable, true);
    assert.match(report.kubernetes.version ?? '', /^v1\./);
    assert.deepEqual(report.leader, { lease: 'kube-system/odlcoe-watcher', exists: false });
    assert.deepEqual(report.collisions, []);
    assert.deepEqual(report.events, []);
  });

  it('shows the leader from the Lease the watcher election writes (flags name another Lease)', async () => {
    const now = Date.now();
    await new LeaseLock(h.kube, 'kube-system', 'odlcoe-watcher').create(
      {
        holderIdentity: 'watcher-7f9c_1',
        leaseDurationSeconds: 15,
        acquireTime: microTime(now),
        renewTime: microTime(now),
        leaseTransitions: 2,
      },
      AbortSignal.timeout(10_000),
    );
    await new LeaseLock(h.kube, 'kube-system', 'stale-lease').create(
      {
        holderIdentity: 'old-watcher',
        leaseDurationSeconds: 15,
        acquireTime: microTime(now - 3_600_000),
        renewTime: microTime(now - 3_600_000),
        leaseTransitions: 0,
      },
      AbortSignal.timeout(10_000),
    );
    const current = (await status()).report.leader;
    assert.ok(!('error' in current));
    assert.equal(current.holder, 'watcher-7f9c_1');
    assert.equal(current.expired, false);
    const stale = (await status('--lease-namespace', 'kube-system', '--lease-name', 'stale-lease')).report
      .leader;
    assert.ok(!('error' in stale));
    assert.equal(stale.holder, 'old-watcher');
    assert.equal(stale.expired, true);
    const human = await h.run(['status']);
    assert.match(human.stdout, /^Leader: watcher-7f9c_1 {2}Lease kube-system\/odlcoe-watcher, renewed /m);
  });

  it('counts a pod as pending while ODL lacks one of its interfaces, and names it (exit 1)', async () => {
    const path = netvirtPaths('sodium').elanInterface('default:web-1');
    const saved = await h.odl.get(path);
    await h.odl.delete(path);
    await createPod(h, { namespace: 'team-a', name: 'api-1', node: 'node-b', phase: 'Pending' });
    try {
      const { code, report } = await status();
      assert.equal(code, 1);
      assert.equal(report.pods?.programmed, 2);
      assert.equal(report.pods?.pending, 2);
      assert.deepEqual(report.pods?.pendingPods, [
        { pod: 'default/web-1', node: 'node-b', reasons: ['elan-interface default:web-1 missing'] },
        {
          pod: 'team-a/api-1',
          node: 'node-b',
          reasons: [
            'ietf-interface team-a:api-1 missing',
            'elan-interface team-a:api-1 missing',
            'pod has no IP address yet (no vpn-interface until it has one)',
          ],
        },
      ]);
    } finally {
      await h.odl.put(path, saved);
      await deletePodNow(h.kube, 'team-a', 'api-1');
    }
    assert.equal((await status()).report.pods?.pending, 0);
  });

  it("names a foreign object holding a pod's name, and lists only the watcher's Warning Events", async () => {
    await apply(h, [
      putInterface('sodium', {
        name: 'team-a:api-2',
        type: 'iana-if-type:l2vlan',
        description: 'made by hand',
      }),
    ]);
    await h.core.createNamespacedPod({
      namespace: 'team-a',
      body: {
        metadata: { name: 'api-2', namespace: 'team-a' },
        spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'busybox' }] },
        status: { phase: 'Running', podIP: '10.11.1.7' },
      },
    });
    const involvedObject = { apiVersion: 'v1', kind: 'Pod', namespace: 'team-a', name: 'api-2' };
    await h.core.createNamespacedEvent({
      namespace: 'team-a',
      body: {
        metadata: { name: 'api-2.collision' },
        involvedObject,
        reason: 'ForeignOdlObject',
        message: 'ODL interface team-a:api-2 exists but is not owned by odlcoe cluster prod',
        type: 'Warning',
        count: 3,
        source: { component: 'odlcoe-watcher', host: 'watcher-7f9c_1' },
      },
    });
    await h.core.createNamespacedEvent({
      namespace: 'team-a',
      body: {
        metadata: { name: 'api-2.pulled' },
        involvedObject,
        reason: 'Pulled',
        message: 'image pulled',
        type: 'Normal',
        source: { component: 'kubelet' },
      },
    });
    const { code, report } = await status();
    assert.equal(code, 1);
    assert.deepEqual(report.collisions, [
      {
        kind: 'ietf-interface',
        name: 'team-a:api-2',
        reason: 'description "made by hand" is not an odlcoe marker',
      },
    ]);
    assert.deepEqual(
      report.events?.map((e) => [e.object, e.reason, e.count]),
      [['Pod team-a/api-2', 'ForeignOdlObject', 3]],
    );
    assert.match(
      report.pods?.pendingPods.find((p) => p.pod === 'team-a/api-2')?.reasons[0] ?? '',
      /ietf-interface team-a:api-2 is held by a foreign object/,
    );
  });

  it("shows the leading watcher's convergence progress from its metrics endpoint", async () => {
    const registry = createRegistry();
    const keys = { settled: 0, pending: 40 };
    const progress = new ConvergenceProgress({
      registry,
      logger: silentLogger(),
      intervalMs: 0,
      objects: () => ({ desired: 90, applied: 30 }),
    });
    const source = { settled: () => keys.settled, pending: () => keys.pending };
    progress.begin('start-up', source);
    keys.settled = 10;
    keys.pending = 30;
    progress.tick();
    const server = http.createServer((_req, res) => {
      void registry.metrics().then((text) => res.end(text));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
    try {
      const { report } = await status('--watcher-metrics', url);
      assert.equal(report.watcher?.endpoint, url);
      assert.equal(report.watcher?.progress?.pass, 'start-up');
      assert.equal(report.watcher?.progress?.total, 40);
      assert.equal(report.watcher?.progress?.settled, 10);
      assert.equal(report.watcher?.progress?.pending, 30);
      const human = await h.run(['status', '--watcher-metrics', url]);
      assert.match(
        human.stdout,
        /^Watcher progress: converging \(start-up, [0-9.]+ s in\): 10 of 40 keys settled, 30 pending, [0-9.]+ keys\/s, ETA /m,
      );
      keys.settled = 40;
      keys.pending = 0;
      progress.converged(source);
      const done = await h.run(['status', '--watcher-metrics', url]);
      assert.match(done.stdout, /^Watcher progress: converged \(last pass: 40 keys in [0-9.]+ s/m);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    // Gone: reported as what could not be read (exit 3), the rest still shown.
    const gone = await status('--watcher-metrics', url);
    assert.equal(gone.code, 3);
    assert.match(gone.report.watcher?.error ?? '', /./);
    assert.ok(gone.report.errors.some((e) => e.startsWith(`watcher metrics ${url}`)));
    assert.equal(gone.report.odl.reachable, true);
    // Not asked for: not in the report.
    assert.equal((await status()).report.watcher, null);
  });

  it('ODL unreachable: reported with the URL, exit 3; Kubernetes facts still shown', async () => {
    const res = await h.run(['--odl-url', 'http://127.0.0.1:1', 'status', '-o', 'json']);
    assert.equal(res.code, 3);
    const report = JSON.parse(res.stdout) as StatusReport;
    assert.equal(report.odl.reachable, false);
    // The probe is ODL's module list (every release has one; k8s-node only Sodium with COE).
    assert.match(
      report.odl.endpoint,
      /^http:\/\/127\.0\.0\.1:1\/rests\/data\/ietf-yang-library:modules-state\?content=nonconfig$/,
    );
    assert.equal(report.release, null);
    assert.match(report.odl.error ?? '', /ECONNREFUSED/);
    assert.equal(report.pods, null);
    assert.equal(report.kubernetes.reachable, true);
    assert.ok(report.events && report.events.length > 0);
  });
});
