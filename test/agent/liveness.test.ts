/**
 * The agent is never a zombie: with its ovsdb-server gone for longer than the health limit,
 * `/healthz` answers 503 and names the OVS connection, so that the kubelet restarts it; once
 * ovsdb-server is back, the agent reconnects by itself and `/healthz` answers 200 again.
 * A real agent against a real (userspace) Open vSwitch, whose ovsdb-server is stopped by pid.
 * Likewise for the subnet task, when it cannot write the CNI config.
 */
import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { LivenessReport } from '../../src/common/liveness.js';
import { skipUnlessRoot } from '../helpers/netns.js';
import { waitFor } from '../helpers/wait.js';
import { startTestNode, type TestNode } from './testing.js';

const skip = skipUnlessRoot();
const LIMIT_SECONDS = 2;

describe('agent liveness', { skip, timeout: 180_000 }, () => {
  let node: TestNode;

  before(async () => {
    node = await startTestNode();
    node.config.health.failAfterSeconds = LIMIT_SECONDS;
    // Below the setting's minimum of 5, to see the subnet task write the config again soon.
    node.config.odl.subnetRefreshSeconds = 1;
    await node.startAgent();
  });
  after(async () => {
    await node?.ovs.startOvsdb().catch(() => undefined);
    await node?.stop();
  });

  const healthz = async (): Promise<{ status: number; report: LivenessReport }> => {
    const res = await fetch(`http://127.0.0.1:${node.agent?.metricsPort}/healthz`);
    return { status: res.status, report: (await res.json()) as LivenessReport };
  };

  it('fails /healthz while ovsdb-server is dead for longer than the limit, and recovers', async () => {
    const healthy = await healthz();
    assert.equal(healthy.status, 200, JSON.stringify(healthy.report));
    assert.equal(healthy.report.healthy, true);
    assert.ok(
      healthy.report.parts.some((p) => p.part === 'ovs' && p.up),
      'the OVS connection is watched',
    );

    const killedAt = Date.now();
    await node.ovs.stopOvsdb();
    // Within the limit the agent is still healthy: a restart of ovsdb-server is ridden out.
    const early = await healthz();
    if (Date.now() - killedAt < LIMIT_SECONDS * 1000 - 500) assert.equal(early.status, 200);

    await waitFor(async () => (await healthz()).status === 503, {
      what: '/healthz to fail',
      timeoutMs: 30_000,
    });
    assert.ok(Date.now() - killedAt >= LIMIT_SECONDS * 1000, 'not before the limit');
    const dead = await healthz();
    assert.equal(dead.report.healthy, false);
    assert.match(dead.report.reason ?? '', /^ovs down for \d+s: /);
    const ovs = dead.report.parts.find((p) => p.part === 'ovs');
    assert.equal(ovs?.up, false);
    assert.ok((ovs?.downForMs ?? 0) > LIMIT_SECONDS * 1000);
    // The other parts are not blamed for the OVS outage.
    assert.deepEqual(
      dead.report.parts.filter((p) => !p.up).map((p) => p.part),
      ['ovs'],
    );

    await node.ovs.startOvsdb();
    await waitFor(async () => (await healthz()).status === 200, {
      what: '/healthz to pass again after ovsdb-server is back',
      timeoutMs: 30_000,
    });
    const back = await healthz();
    assert.equal(back.report.healthy, true);
    assert.ok(back.report.parts.every((p) => p.up));
  });

  it('fails /healthz while the subnet task keeps failing, and recovers once it can work again', async () => {
    const confDir = node.config.cni.confDir;
    assert.equal((await healthz()).status, 200);
    // A file where the conflist's directory should be: writing the config fails, even as root.
    await rm(confDir, { recursive: true, force: true });
    await writeFile(confDir, 'not a directory\n');
    await waitFor(async () => (await healthz()).status === 503, {
      what: '/healthz to fail',
      timeoutMs: 30_000,
    });
    const dead = await healthz();
    assert.match(dead.report.reason ?? '', /^subnet down for \d+s: .*ENOTDIR/);
    assert.deepEqual(
      dead.report.parts.filter((p) => !p.up).map((p) => p.part),
      ['subnet'],
    );

    await rm(confDir, { force: true });
    await mkdir(confDir);
    await waitFor(async () => (await healthz()).status === 200, {
      what: '/healthz to pass again once the config can be written',
      timeoutMs: 60_000,
    });
  });
});
