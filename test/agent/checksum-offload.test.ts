/**
 * The agent binary on a userspace (netdev) bridge, for what it decides about TX checksum
 * offload: on a node where it cannot turn offload off (no ethtool) it refuses readiness and
 * ADD with the reason; with `other_config:userspace-tso-enable=true` it leaves offload on and
 * pods still exchange TCP and UDP. The agent runs as a child process with a PATH holding only
 * the programs it needs, so "no ethtool" is real for it and nothing else.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hostVethName } from '../../src/agent/names.js';
import { run } from '../../src/common/exec.js';
import { Ovs } from '../../src/ovs/ovs.js';
import { txChecksumOffload } from '../../src/ovs/pod-interface.js';
import { exchangeTraffic } from '../../src/sandbox/pod-traffic.js';
import { createNetns, skipUnlessRoot, type TestNetns } from '../helpers/netns.js';
import { silentLogger } from '../../src/common/log.js';
import { startNetvirtL3 } from '../../src/sandbox/netvirt-l3.js';
import { startOvsSandbox, type OvsSandbox } from '../helpers/ovs-sandbox.js';
import { stopPid } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import {
  cniEnv,
  compileShim,
  execShim,
  putNodeSubnet,
  ROOT,
  startAgentSurroundings,
  SUBNET,
  type AgentSurroundings,
} from './testing.js';

interface Readyz {
  ready: boolean;
  checks: { name: string; ok: boolean; error?: string }[];
}

describe(
  'agent on a netdev bridge: TX checksum offload and readiness',
  { skip: skipUnlessRoot(), timeout: 240_000 },
  () => {
    let world: AgentSurroundings;
    let sandbox: OvsSandbox;
    let ovs: Ovs;
    let shim: string;
    /** A PATH with ip, nsenter and ovs-vsctl, and no ethtool. */
    let pathWithoutEthtool: string;
    let agent: ChildProcess | undefined;
    let port = 0;
    const namespaces: TestNetns[] = [];
    const bridge = `brck${randomBytes(3).toString('hex')}`;
    let stopL3: (() => Promise<void>) | undefined;

    before(async () => {
      world = await startAgentSurroundings();
      await putNodeSubnet(world.odl.url, SUBNET);
      shim = await compileShim(world.dir);
      sandbox = await startOvsSandbox();
      ovs = new Ovs({ dbSocket: sandbox.dbSocket });
      // The pods reach each other through the subnet gateway (src/sandbox/netvirt-l3.ts).
      stopL3 = startNetvirtL3(
        sandbox,
        bridge,
        join(world.dir, 'net.d', '10-odlcoe.conflist'),
        silentLogger(),
      );
      pathWithoutEthtool = join(world.dir, 'bin');
      await mkdir(pathWithoutEthtool);
      for (const program of ['ip', 'nsenter', 'ovs-vsctl']) {
        const { stdout } = await run('sh', ['-c', 'command -v "$1"', 'sh', program]);
        await symlink(stdout.trim(), join(pathWithoutEthtool, program));
      }
    });
    after(async () => {
      if (agent?.pid) await stopPid(agent.pid);
      for (const ns of namespaces) await ns.remove().catch(() => undefined);
      await stopL3?.();
      ovs?.close();
      await sandbox?.stop();
      await world?.close();
    });

    async function startAgent(): Promise<void> {
      let stderr = '';
      agent = spawn(
        process.execPath,
        world.agentArgs(['--ovs-db', sandbox.dbSocket, '--bridge', bridge, '--datapath-type', 'netdev']),
        {
          cwd: ROOT,
          env: { ...process.env, PATH: pathWithoutEthtool, ODLCOE_LOG_LEVEL: 'info' },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      agent.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
      await waitFor(() => /"port":\s*(\d+)/.test(stderr), { timeoutMs: 60_000, what: 'the agent to serve' });
      port = Number(/"port":\s*(\d+)/.exec(stderr)?.[1]);
    }

    async function stopAgent(): Promise<void> {
      if (agent?.pid) await stopPid(agent.pid);
      agent = undefined;
    }

    async function readyz(): Promise<{ status: number; body: Readyz }> {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      return { status: res.status, body: (await res.json()) as Readyz };
    }

    async function pluginConfig(): Promise<string> {
      const conflist = JSON.parse(await readFile(join(world.dir, 'net.d', '10-odlcoe.conflist'), 'utf8')) as {
        name: string;
        plugins: Record<string, unknown>[];
      };
      return JSON.stringify({ cniVersion: '1.0.0', name: conflist.name, ...conflist.plugins[0] });
    }

    async function add(containerId: string, pod: string): Promise<{ netns: TestNetns; ip: string }> {
      const netns = await createNetns('odlcoe-cko');
      namespaces.push(netns);
      const out = await execShim(
        shim,
        cniEnv('ADD', containerId, netns.path, { name: pod }),
        await pluginConfig(),
      );
      assert.equal(out.code, 0, out.stdout + out.stderr);
      const ip = (out.json as { ips: { address: string }[] }).ips[0]?.address.split('/')[0] ?? '';
      return { netns, ip };
    }

    it('without ethtool it refuses readiness and ADD, saying why and what to do', async () => {
      await startAgent();
      try {
        await waitFor(
          async () => {
            const { body } = await readyz();
            return body.checks.find((c) => c.name === 'ovs')?.ok === true && body.checks.some((c) => c.error);
          },
          { timeoutMs: 60_000, what: 'the agent to set up OVS and judge the datapath' },
        );
        const { status, body } = await readyz();
        assert.equal(status, 503);
        assert.equal(body.ready, false);
        const check = body.checks.find((c) => c.name === 'checksum-offload');
        assert.equal(check?.ok, false);
        const reason = new RegExp(
          `TX checksum offload cannot be turned off on pod interfaces \\(ethtool --version could not be started \\(ENOENT\\)\\), ` +
            `and bridge ${bridge} uses the userspace datapath \\(datapath_type netdev\\) without ` +
            'other_config:userspace-tso-enable=true.*TCP and UDP between pods would fail\\. Install ethtool',
        );
        assert.match(check?.error ?? '', reason);

        await waitFor(
          async () => (await readFile(join(world.dir, 'net.d', '10-odlcoe.conflist')).catch(() => '')) !== '',
          {
            timeoutMs: 60_000,
            what: 'the conflist',
          },
        );
        const netns = await createNetns('odlcoe-cko');
        namespaces.push(netns);
        const refused = await execShim(
          shim,
          cniEnv('ADD', 'cid-refused', netns.path, { name: 'refused' }),
          await pluginConfig(),
        );
        assert.equal(refused.code, 1);
        assert.equal((refused.json as { code: number }).code, 11, refused.stdout);
        assert.match((refused.json as { msg: string }).msg, reason);
        assert.equal(await ovs.getPort(hostVethName('cid-refused', 'eth0')), undefined);
      } finally {
        await stopAgent();
      }
    });

    it('with userspace-tso-enable=true it leaves offload on, is ready, and pods exchange TCP and UDP', async () => {
      // Read by ovs-vswitchd when it starts (vswitchd.xml: "Changing this value requires
      // restarting the daemon").
      await sandbox.vsctl(['set', 'Open_vSwitch', '.', 'other_config:userspace-tso-enable=true']);
      await sandbox.stopVswitchd();
      await sandbox.startVswitchd();
      await startAgent();
      try {
        await waitFor(async () => (await readyz()).status === 200, {
          timeoutMs: 60_000,
          what: 'the agent to be ready',
        });
        assert.equal((await readyz()).body.checks.find((c) => c.name === 'checksum-offload')?.ok, true);
        const a = await add('cid-tso-a', 'tso-a');
        const b = await add('cid-tso-b', 'tso-b');
        assert.equal(await txChecksumOffload(a.netns.path, 'eth0'), 'on');
        assert.equal(await txChecksumOffload(b.netns.path, 'eth0'), 'on');
        const traffic = await exchangeTraffic(a.netns.path, b.netns.path, b.ip);
        assert.ok(traffic.tcp.ok, `TCP: ${traffic.tcp.error}`);
        assert.ok(traffic.udp.ok, `UDP: ${traffic.udp.error}`);
      } finally {
        await stopAgent();
      }
    });
  },
);
