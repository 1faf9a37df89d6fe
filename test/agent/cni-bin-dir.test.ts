/**
 * The CNI bin dir a container runtime reads, filled by a real agent on a real node (userspace
 * OVS, network namespaces, Debian's CNI plugins): the shim, and the `loopback` plugin containerd
 * runs beside it for every pod sandbox, taken from the plugins beside host-local. A sandbox is
 * then set up and torn down as containerd does it: `loopback` for `lo`, then `odlcoe` for
 * `eth0`, both from the bin dir. Without a loopback to install, the agent is not ready and says
 * what is missing and where it looked. The agent reaches OVS through `unix:<socket>`, OVS's
 * notation.
 */
import assert from 'node:assert/strict';
import { chmod, copyFile, mkdir, readFile, stat, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/common/exec.js';
import { createNetns, skipUnlessRoot, type TestNetns } from '../helpers/netns.js';
import { waitFor } from '../helpers/wait.js';
import { cniEnv, execPlugin, startTestNode, type TestNode } from './testing.js';

interface Readyz {
  ready: boolean;
  checks: { name: string; ok: boolean; error?: string }[];
}

const LOOPBACK_CONFIG = JSON.stringify({ cniVersion: '1.0.0', name: 'cni-loopback', type: 'loopback' });

describe('agent: the CNI bin dir (shim and loopback)', { skip: skipUnlessRoot(), timeout: 180_000 }, () => {
  let node: TestNode;
  const namespaces: TestNetns[] = [];

  before(async () => {
    node = await startTestNode();
  });
  after(async () => {
    for (const ns of namespaces) await ns.remove().catch(() => undefined);
    await node?.stop();
  });

  async function readyz(): Promise<{ status: number; body: Readyz }> {
    const res = await fetch(`http://127.0.0.1:${node.agent?.metricsPort}/readyz`);
    return { status: res.status, body: (await res.json()) as Readyz };
  }

  it('installs loopback from the plugins beside host-local; a sandbox comes up and goes down as containerd runs it', async () => {
    const bin = join(node.dir, 'cni-bin');
    node.config.cni.binDir = bin;
    node.config.ovs.dbSocket = `unix:${node.ovs.dbSocket}`;
    await node.startAgent();
    try {
      const source = join(dirname(node.config.ipam.pluginPath), 'loopback');
      assert.ok(
        (await readFile(join(bin, 'loopback'))).equals(await readFile(source)),
        `a copy of ${source}`,
      );
      assert.equal((await stat(join(bin, 'loopback'))).mode & 0o777, 0o755);
      const { status, body } = await readyz();
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(body.checks.find((c) => c.name === 'cni-loopback')?.ok, true);

      const netns = await createNetns('odlcoe-lo');
      namespaces.push(netns);
      const env = (command: string, ifName: string) => ({
        ...cniEnv(command, 'cid-sandbox', netns.path, { name: 'sandbox' }),
        CNI_IFNAME: ifName,
        CNI_PATH: bin,
      });
      // RunPodSandbox: loopback for lo, then the pod network, each exec'd from the bin dir.
      const lo = await execPlugin(join(bin, 'loopback'), [], env('ADD', 'lo'), LOOPBACK_CONFIG);
      assert.equal(lo.code, 0, lo.stdout + lo.stderr);
      const flags = JSON.parse((await run('ip', ['-n', netns.name, '-j', 'link', 'show', 'lo'])).stdout) as {
        flags: string[];
      }[];
      assert.ok(flags[0]?.flags.includes('UP'), `lo is up: ${JSON.stringify(flags)}`);
      const pod = await execPlugin(join(bin, 'odlcoe'), [], env('ADD', 'eth0'), await node.pluginConfig());
      assert.equal(pod.code, 0, pod.stdout + pod.stderr);
      assert.match(
        (pod.json as { ips: { address: string }[] }).ips[0]?.address ?? '',
        /^10\.11\.1\.\d+\/32$/,
      );
      // StopPodSandbox: the pod network, then loopback.
      const del = await execPlugin(join(bin, 'odlcoe'), [], env('DEL', 'eth0'), await node.pluginConfig());
      assert.equal(del.code, 0, del.stdout + del.stderr);
      const loDel = await execPlugin(join(bin, 'loopback'), [], env('DEL', 'lo'), LOOPBACK_CONFIG);
      assert.equal(loDel.code, 0, loDel.stdout + loDel.stderr);
    } finally {
      await node.stopAgent();
    }
  });

  it('without a loopback to install it is not ready, saying what is missing and where it looked, until one is put there', async () => {
    // host-local where the agent looks for plugins, without loopback beside it.
    const plugins = join(node.dir, 'plugins-without-loopback');
    await mkdir(plugins);
    await symlink(node.config.ipam.pluginPath, join(plugins, 'host-local'));
    const source = join(dirname(node.config.ipam.pluginPath), 'loopback');
    const bin = join(node.dir, 'cni-bin-empty');
    node.config.cni.binDir = bin;
    node.config.ipam.pluginPath = join(plugins, 'host-local');
    await node.startAgent();
    try {
      const { status, body } = await readyz();
      assert.equal(status, 503, JSON.stringify(body));
      assert.equal(body.ready, false);
      const check = body.checks.find((c) => c.name === 'cni-loopback');
      assert.equal(check?.ok, false);
      assert.equal(
        check?.error,
        `the CNI bin dir ${bin} has no loopback plugin, which the container runtime runs beside odlcoe for every ` +
          'pod sandbox (without it every RunPodSandbox and StopPodSandbox fails), and there is none to install: ' +
          `${join(plugins, 'loopback')} (in ${plugins}, the directory of ipam.pluginPath) is missing. Install the ` +
          `CNI plugins (Debian: containernetworking-plugins) so that ${join(plugins, 'loopback')} exists, or put ` +
          `loopback into ${bin}`,
      );
      // Every other check passes: only loopback is missing.
      assert.deepEqual(
        body.checks.filter((c) => !c.ok).map((c) => c.name),
        ['cni-loopback'],
      );

      await copyFile(source, join(bin, 'loopback'));
      await chmod(join(bin, 'loopback'), 0o755);
      await waitFor(
        async () => {
          const again = await readyz();
          return again.status === 200;
        },
        { timeoutMs: 10_000, what: 'the agent to be ready once loopback is in the bin dir' },
      );
    } finally {
      await node.stopAgent();
    }
  });
});
