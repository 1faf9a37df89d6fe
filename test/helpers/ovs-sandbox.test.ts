import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/common/exec.js';
import { Ovs } from '../../src/ovs/ovs.js';
import type { TestNetns } from './netns.js';
import { createNetns, skipUnlessRoot } from './netns.js';
import type { OvsSandbox } from './ovs-sandbox.js';
import { startOvsSandbox } from './ovs-sandbox.js';
import { isAlive } from './processes.js';

/** The harness other OVS tests rely on: two simulated nodes side by side, cleaned up by pid. */
describe('OVS sandboxes in two namespaces', { skip: skipUnlessRoot() }, () => {
  const nodes: { netns: TestNetns; sandbox?: OvsSandbox }[] = [];

  before(async () => {
    for (let i = 0; i < 2; i++) nodes.push({ netns: await createNetns('odlcoe-node') });
    for (const node of nodes) node.sandbox = await startOvsSandbox({ netns: node.netns.name });
  });

  after(async () => {
    for (const node of nodes) {
      await node.sandbox?.stop().catch(() => undefined);
      await node.netns.remove().catch(() => undefined);
    }
  });

  it('run side by side, each with its own br-int in its own namespace', async () => {
    for (const node of nodes) {
      assert.ok(node.sandbox);
      const ovs = new Ovs({ dbSocket: node.sandbox.dbSocket });
      await ovs.ensureBridge('br-int', { datapathType: 'netdev' });
      const links = JSON.parse(
        (await run('ip', ['-n', node.netns.name, '-j', 'link', 'show', 'dev', 'br-int'])).stdout,
      ) as unknown[];
      assert.equal(links.length, 1);
    }
    assert.notEqual(nodes[0]?.sandbox?.dbSocket, nodes[1]?.sandbox?.dbSocket);
    const flows = await nodes[0]?.sandbox?.ofctl(['-O', 'OpenFlow13', 'dump-flows', 'br-int']);
    assert.match(flows ?? '', /OFPST_FLOW reply/);
  });

  it('run their daemons inside the namespace', async () => {
    const sandbox = nodes[0]?.sandbox;
    assert.ok(sandbox);
    const pid = Number((await readFile(join(sandbox.dir, 'ovs-vswitchd.pid'), 'utf8')).trim());
    const [daemonNs, nodeNs] = await Promise.all([
      run('readlink', [`/proc/${pid}/ns/net`]),
      run('ip', ['netns', 'exec', sandbox.netns ?? '', 'readlink', '/proc/self/ns/net']),
    ]);
    assert.equal(daemonNs.stdout, nodeNs.stdout);
  });

  it('stop by pid, remove their temp dir, and may be stopped twice', async () => {
    const sandbox = nodes[1]?.sandbox;
    assert.ok(sandbox);
    const pids = await Promise.all(
      ['ovsdb-server', 'ovs-vswitchd'].map(async (d) =>
        Number((await readFile(join(sandbox.dir, `${d}.pid`), 'utf8')).trim()),
      ),
    );
    await sandbox.stop();
    await sandbox.stop();
    for (const pid of pids) assert.equal(await isAlive(pid), false, `pid ${pid}`);
    assert.equal(existsSync(sandbox.dir), false);
    // Its bridge's tap went with it; the namespace is ready for another sandbox.
    await assert.rejects(
      run('ip', ['-n', nodes[1]?.netns.name ?? '', 'link', 'show', 'dev', 'br-int']),
      /does not exist/,
    );
    const again = await startOvsSandbox({ netns: nodes[1]?.netns.name ?? '' });
    if (nodes[1]) nodes[1].sandbox = again;
    await new Ovs({ dbSocket: again.dbSocket }).ensureBridge('br-int', { datapathType: 'netdev' });
  });
});
