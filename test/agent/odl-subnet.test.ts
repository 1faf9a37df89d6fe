import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stopPid } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { putNodeSubnet, ROOT, startAgentSurroundings, type AgentSurroundings } from './testing.js';

/**
 * The agent binary (src/agent/main.ts, flags only) against the ODL emulator and the
 * Kubernetes simulator. No OVS is needed: the subnet is learnt independently of it.
 */
describe('odlcoe-agent learns its pod subnet from ODL', { timeout: 120_000 }, () => {
  let world: AgentSurroundings;
  let agent: ChildProcess | undefined;
  let stderr = '';

  before(async () => {
    world = await startAgentSurroundings();
  });
  after(async () => {
    if (agent?.pid) await stopPid(agent.pid);
    await world?.close();
  });

  it('waits while ODL has no subnet for the node, then writes the conflist with the one an ODL user PUT', async () => {
    const { dir, odl } = world;
    // Registered by the watcher, but no pod-cidr yet.
    await putNodeSubnet(odl.url, undefined);
    agent = spawn(process.execPath, world.agentArgs(['--mtu', '1400']), {
      cwd: ROOT,
      env: { ...process.env, ODLCOE_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    agent.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const conflist = join(dir, 'net.d', '10-odlcoe.conflist');
    await waitFor(
      () => /"port":\s*(\d+)/.test(stderr) && /reading the node pod subnet from ODL failed/.test(stderr),
      {
        timeoutMs: 60_000,
        what: 'the agent to start and report the missing subnet',
      },
    );
    const port = Number(/"port":\s*(\d+)/.exec(stderr)?.[1]);
    const readyz = await fetch(`http://127.0.0.1:${port}/readyz`);
    assert.equal(readyz.status, 503);
    const body = (await readyz.json()) as { checks: { name: string; ok: boolean }[] };
    assert.equal(body.checks.find((c) => c.name === 'subnet')?.ok, false);
    await assert.rejects(stat(conflist), /ENOENT/);
    // The socket serves at once (DEL must work while the node is not ready).
    assert.equal((await stat(join(dir, 'cni.sock'))).mode & 0o777, 0o600);

    await putNodeSubnet(odl.url, '10.11.1.0/24');
    await waitFor(async () => (await stat(conflist).catch(() => undefined)) !== undefined, {
      timeoutMs: 60_000,
      what: 'the conflist',
    });
    const doc = JSON.parse(await readFile(conflist, 'utf8')) as {
      plugins: {
        type: string;
        mtu: number;
        socket: string;
        ipam: { ranges: { subnet: string; gateway: string }[][] };
      }[];
    };
    const plugin = doc.plugins[0];
    assert.equal(plugin?.type, 'odlcoe');
    assert.equal(plugin?.mtu, 1400);
    assert.equal(plugin?.socket, join(dir, 'cni.sock'));
    assert.deepEqual(plugin?.ipam.ranges, [[{ subnet: '10.11.1.0/24', gateway: '10.11.1.1' }]]);
    const after = (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as {
      checks: { name: string; ok: boolean }[];
    };
    assert.equal(after.checks.find((c) => c.name === 'subnet')?.ok, true);
    assert.equal(after.checks.find((c) => c.name === 'cni-config')?.ok, true);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.match(metrics, /odlcoe_agent_ovs_errors_total\{operation="node_setup"\}/);
    assert.doesNotMatch(stderr, /"password"|admin\\n/);
  });
});
