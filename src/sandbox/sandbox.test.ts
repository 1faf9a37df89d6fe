/**
 * The sandbox without simulated nodes (no root needed): the simulator, the emulator and the
 * watcher converge on the sample cluster, the summary is odlcoectl's dump, and close() leaves
 * nothing behind. The data path is covered by test/e2e (root).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SAMPLE_CLUSTER } from './sample-cluster.js';
import { startSandbox, type Sandbox } from './sandbox.js';

const FREE = { port: 0, explicit: false };

describe('sandbox without simulated nodes', () => {
  let sandbox: Sandbox;

  before(async () => {
    sandbox = await startSandbox({
      simulatedNodes: 0,
      logLevel: 'silent',
      ports: { kube: FREE, odl: FREE, watcherMetrics: FREE, agentMetrics: FREE },
    });
  });

  after(async () => {
    await sandbox?.close();
  });

  it('converges on the sample cluster, pod IPs coming from each node’s pod CIDR', async () => {
    const result = await sandbox.waitForConvergence({ timeoutMs: 60_000 });
    assert.ok(result.converged, JSON.stringify(result.progress));
    const pods = SAMPLE_CLUSTER.pods.filter((p) => !p.hostNetwork);
    assert.equal(result.progress?.podsOnNetwork, pods.length);
    const dump = await sandbox.dump();
    for (const vpn of dump.vpns) {
      for (const elan of vpn.elans) {
        const node = SAMPLE_CLUSTER.nodes.find((n) => n.internalIp === elan.nodeIp);
        assert.ok(node, `ELAN ${elan.name} is on a sample node`);
        const prefix = node.podCidr.split('.').slice(0, 3).join('.');
        for (const i of elan.interfaces)
          assert.ok(i.ip?.startsWith(`${prefix}.`), `${i.name} ${i.ip} is in ${node.podCidr}`);
      }
    }
    assert.equal(sandbox.nodes.length, 0);
    assert.equal(sandbox.dataPathSkipped, 'no simulated node was asked for.');
  });

  it('serves kubectl, curl and odlcoectl from the files it announces', async () => {
    const e = sandbox.endpoints;
    assert.ok(existsSync(e.kubeconfig));
    assert.ok(existsSync(e.cliConfig));
    const auth = `Basic ${Buffer.from(`${e.odlUser}:${e.odlPassword}`).toString('base64')}`;
    for (const { url } of e.odlListUrls)
      assert.equal((await fetch(url, { headers: { authorization: auth } })).status, 200, url);
    assert.equal((await fetch(`${e.watcherUrl}/readyz`)).status, 200);
    assert.match(await (await fetch(`${e.watcherUrl}/metrics`)).text(), /odlcoe_/);
    assert.equal(sandbox.cliSettings.clusterName, 'sandbox');
    assert.equal(sandbox.cliSettings.odl.url, e.odlUrl);
  });

  it('removes its work dir on close', async () => {
    const dir = sandbox.workDir;
    await sandbox.close();
    assert.equal(existsSync(dir), false);
  });
});

describe('sandbox start-up checks', () => {
  let parent: string;
  before(async () => {
    parent = await mkdtemp(join(tmpdir(), 'odlcoe-sandbox-checks-'));
  });
  after(async () => {
    await rm(parent, { recursive: true, force: true });
  });

  it('refuses a non-empty or relative work dir, and impossible node counts', async () => {
    const used = join(parent, 'used');
    await mkdir(used);
    await writeFile(join(used, 'x'), 'x');
    await assert.rejects(startSandbox({ workDir: used, simulatedNodes: 0 }), /is not empty/);
    await assert.rejects(
      startSandbox({ workDir: 'relative/dir', simulatedNodes: 0 }),
      /must be an absolute path/,
    );
    await assert.rejects(startSandbox({ simulatedNodes: 7 }), /simulatedNodes must be 0\.\.3/);
  });
});
