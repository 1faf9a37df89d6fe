/**
 * The agent on every NetVirt release. On Aluminium (no COE models) it reads its subnet from its
 * node network `odlcoe-node:<node>` and never asks for a COE model; a pod is wired from that
 * subnet through the shim on real OVS. On Sodium the network wins over a k8s-node entry that
 * says otherwise. A told profile that ODL contradicts stops the agent binary with an error
 * naming both.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createNetns, skipUnlessRoot, type TestNetns } from '../helpers/netns.js';
import { waitFor } from '../helpers/wait.js';
import {
  cniEnv,
  execShim,
  putNodeNetwork,
  putNodeSubnet,
  ROOT,
  startAgentSurroundings,
  startTestNode,
  type TestNode,
} from './testing.js';

const COE_MODULES = ['k8s-node', 'pod', 'service', 'k8s-cluster'];
const coeRequests = (emu: { counters(): { modules: Record<string, number> } }) =>
  Object.entries(emu.counters().modules).filter(([m]) => COE_MODULES.includes(m));

describe(
  'odlcoe-agent on Aluminium (no COE models), real OVS and netns',
  { skip: skipUnlessRoot(), timeout: 180_000 },
  () => {
    let node: TestNode | undefined;
    let ns: TestNetns | undefined;
    after(async () => {
      await ns?.remove().catch(() => undefined);
      await node?.stop();
    });

    it('gets its subnet from its node network and wires a pod from it; no request into a COE module', async () => {
      node = await startTestNode({ profile: 'aluminium' });
      await node.startAgent();
      const conflist = JSON.parse(
        await readFile(join(node.config.cni.confDir, node.config.cni.confFile), 'utf8'),
      ) as { plugins: { ipam: { ranges: { subnet: string; gateway: string }[][] } }[] };
      assert.deepEqual(conflist.plugins[0]?.ipam.ranges, [
        [{ subnet: '10.11.1.0/24', gateway: '10.11.1.1' }],
      ]);

      ns = await createNetns('odlcoe-al');
      const uid = await node.createPod('pod-al');
      const out = await execShim(
        node.shim,
        cniEnv('ADD', 'cid-al', ns.path, { name: 'pod-al', uid }),
        await node.pluginConfig(),
      );
      assert.equal(out.code, 0, out.stdout + out.stderr);
      const result = out.json as { ips: { address: string; gateway: string }[] };
      assert.match(result.ips[0]?.address ?? '', /^10\.11\.1\.\d+\/32$/);
      assert.equal(result.ips[0]?.gateway, '10.11.1.1');
      const del = await execShim(
        node.shim,
        cniEnv('DEL', 'cid-al', ns.path, { name: 'pod-al', uid }),
        await node.pluginConfig(),
      );
      assert.equal(del.code, 0, del.stdout + del.stderr);
      assert.deepEqual(coeRequests(node.odl), []);
    });
  },
);

describe('odlcoe-agent binary: which subnet, which release', { timeout: 120_000 }, () => {
  const children: ReturnType<typeof spawn>[] = [];
  after(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  });

  it('on Sodium the node network wins over a k8s-node entry that says otherwise', async () => {
    const world = await startAgentSurroundings({ profile: 'sodium' });
    try {
      await putNodeSubnet(world.odl.url, '10.11.1.0/24');
      await putNodeNetwork(world.odl.url, '10.11.9.0/24');
      const child = spawn(process.execPath, world.agentArgs(), {
        cwd: ROOT,
        env: { ...process.env, ODLCOE_LOG_LEVEL: 'info' },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      children.push(child);
      const conflist = join(world.dir, 'net.d', '10-odlcoe.conflist');
      const subnet = async () => {
        const text = await readFile(conflist, 'utf8').catch(() => undefined);
        return text
          ? (JSON.parse(text) as { plugins: { ipam: { ranges: { subnet: string }[][] } }[] }).plugins[0]?.ipam
              .ranges[0]?.[0]?.subnet
          : undefined;
      };
      await waitFor(async () => (await subnet()) !== undefined, { timeoutMs: 60_000, what: 'the conflist' });
      assert.equal(await subnet(), '10.11.9.0/24');
      child.kill('SIGTERM');
    } finally {
      await world.close();
    }
  });

  it('a told profile that ODL contradicts stops it (exit 1), naming both', async () => {
    const world = await startAgentSurroundings({ profile: 'aluminium' });
    try {
      const child = spawn(process.execPath, world.agentArgs(['--profile', 'sodium']), {
        cwd: ROOT,
        env: { ...process.env, ODLCOE_LOG_LEVEL: 'info' },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      children.push(child);
      let stderr = '';
      child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      assert.equal(code, 1, stderr);
      assert.match(stderr, /the profile is set to sodium, but ODL at \S+ serves the aluminium models/);
      assert.deepEqual(coeRequests(world.odl), []);
    } finally {
      await world.close();
    }
  });
});
