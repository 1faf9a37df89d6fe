import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { HostLocalIpam } from '../../src/agent/ipam.js';
import { hostVethName } from '../../src/agent/names.js';
import { inspectPodInterface, linkExists } from '../../src/agent/netns.js';
import { Ovs } from '../../src/ovs/ovs.js';
import { createNetns, skipUnlessRoot, type TestNetns } from '../helpers/netns.js';
import { stopPid } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { cniEnv, execShim, leaseIps, startTestNode, SUBNET, type TestNode } from './testing.js';

const skip = skipUnlessRoot();

describe('agent restart: reconcile after the pod informer synced', { skip, timeout: 240_000 }, () => {
  let node: TestNode;
  let ovs: Ovs;
  const namespaces: Record<string, TestNetns> = {};
  const ips: Record<string, string> = {};

  before(async () => {
    node = await startTestNode();
    ovs = new Ovs({ dbSocket: node.ovs.dbSocket });
    await node.startAgent();
    for (const pod of ['stays', 'deleted', 'del-while-down', 'del-while-hung', 'terminating']) {
      const ns = await createNetns('odlcoe-rst');
      namespaces[pod] = ns;
      const uid = await node.createPod(pod);
      const out = await execShim(
        node.shim,
        cniEnv('ADD', `cid-${pod}`, ns.path, { name: pod, uid }),
        await node.pluginConfig(),
      );
      assert.equal(out.code, 0, out.stdout);
      ips[pod] = String((out.json as { ips: { address: string }[] }).ips[0]?.address.split('/')[0]);
    }
  });
  after(async () => {
    for (const ns of Object.values(namespaces)) await ns.remove().catch(() => undefined);
    await node?.stop();
  });

  it('keeps live pods, removes what deleted pods left, replays DELs queued while it was down', async () => {
    await node.stopAgent();
    // While the agent is away: one pod is deleted (its runtime DEL is lost), the runtime's DEL
    // of another reaches only the shim, and an ADD interrupted long ago left a bare lease.
    await node.deletePod('deleted');
    // Another is being deleted: Terminating (its containers still run) until kubelet's last DELETE.
    await node.terminatePod('terminating');
    const conf = await node.pluginConfig();
    const queued = await execShim(
      node.shim,
      cniEnv('DEL', 'cid-del-while-down', namespaces['del-while-down']?.path ?? '', {
        name: 'del-while-down',
      }),
      conf,
    );
    assert.equal(queued.code, 0, queued.stdout);
    assert.equal(queued.stdout, '');
    assert.deepEqual(await readdir(node.config.cni.pendingDelDir), ['cid-del-while-down:eth0.json']);
    const addWhileDown = await execShim(
      node.shim,
      cniEnv('ADD', 'cid-late', '/run/netns/none', { name: 'late' }),
      conf,
    );
    assert.equal((addWhileDown.json as { code: number }).code, 11);
    const ipam = new HostLocalIpam({
      dataDir: node.config.ipam.dataDir,
      networkName: node.config.cni.networkName,
      range: { subnet: SUBNET, gateway: '10.11.1.1' },
    });
    const orphan = await ipam.add({
      containerId: 'cid-orphan',
      ifName: 'eth0',
      netns: namespaces.stays?.path ?? '',
    });
    const orphanIp = orphan.ips[0]?.address.split('/')[0] ?? '';
    assert.ok((await leaseIps(node)).includes(orphanIp));

    await node.startAgent();

    // The live pod: port, veth, address and lease untouched.
    const stays = await ovs.getPort(hostVethName('cid-stays', 'eth0'));
    assert.ok(stays && stays.ofport > 0);
    assert.equal(stays.externalIds['ip-address'], ips.stays);
    assert.ok(await linkExists(hostVethName('cid-stays', 'eth0')));
    const iface = await inspectPodInterface(namespaces.stays?.path ?? '', 'eth0');
    assert.deepEqual(iface?.addresses, [`${ips.stays}/32`]);
    // The deleted pod: port, veth and lease gone; the orphan lease gone.
    assert.equal(await ovs.getPort(hostVethName('cid-deleted', 'eth0')), undefined);
    assert.equal(await linkExists(hostVethName('cid-deleted', 'eth0')), false);
    const leases = await leaseIps(node);
    assert.ok(leases.includes(ips.stays ?? ''));
    assert.ok(!leases.includes(ips.deleted ?? ''));
    assert.ok(!leases.includes(orphanIp));
    // The queued DEL was replayed (the pod still exists, so only the replay could remove it).
    assert.equal(await ovs.getPort(hostVethName('cid-del-while-down', 'eth0')), undefined);
    assert.ok(!leases.includes(ips['del-while-down'] ?? ''));
    assert.deepEqual(await readdir(node.config.cni.pendingDelDir), []);
    // The Terminating pod keeps its network: port, veth, address and lease.
    const terminating = await ovs.getPort(hostVethName('cid-terminating', 'eth0'));
    assert.ok(terminating && terminating.ofport > 0);
    assert.ok(await linkExists(hostVethName('cid-terminating', 'eth0')));
    assert.deepEqual((await inspectPodInterface(namespaces.terminating?.path ?? '', 'eth0'))?.addresses, [
      `${ips.terminating}/32`,
    ]);
    assert.ok(leases.includes(ips.terminating ?? ''));
  });

  it('removes what a Terminating pod left once kubelet has deleted it (its DEL lost)', async () => {
    await node.stopAgent();
    await node.finishPodDeletion('terminating');
    await node.startAgent();
    assert.equal(await ovs.getPort(hostVethName('cid-terminating', 'eth0')), undefined);
    assert.equal(await linkExists(hostVethName('cid-terminating', 'eth0')), false);
    assert.ok(!(await leaseIps(node)).includes(ips.terminating ?? ''));
    // The live pod is still untouched.
    assert.ok(await ovs.getPort(hostVethName('cid-stays', 'eth0')));
  });

  it('does not hold a DEL on a hung agent: the shim queues it at its short deadline, and the agent applies it once back', async () => {
    // A hung agent: a process that holds the socket and is stopped (SIGSTOP). The kernel still
    // accepts connections into its backlog, so only a deadline tells the shim nobody answers.
    await node.stopAgent();
    const socket = node.config.cni.socket;
    await rm(socket, { force: true });
    const holder = spawn(
      process.execPath,
      [
        '-e',
        "require('node:net').createServer(() => {}).listen(process.argv[1], () => console.log('listening'))",
        socket,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    holder.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const pid = holder.pid ?? 0;
    try {
      await waitFor(() => out.includes('listening'), { what: 'the stand-in to hold the socket' });
      process.kill(pid, 'SIGSTOP');
      const del = await execShim(
        node.shim,
        cniEnv('DEL', 'cid-del-while-hung', namespaces['del-while-hung']?.path ?? '', {
          name: 'del-while-hung',
        }),
        await node.pluginConfig(),
      );
      assert.equal(del.code, 0, del.stdout);
      assert.equal(del.stdout, '');
      assert.match(
        await readFile(node.config.cni.logFile ?? '', 'utf8'),
        /no answer within 8 s; DEL queued for the agent to replay/,
      );
      assert.deepEqual(await readdir(node.config.cni.pendingDelDir), ['cid-del-while-hung:eth0.json']);
    } finally {
      process.kill(pid, 'SIGCONT');
      await stopPid(pid);
    }
    await rm(socket, { force: true });
    await node.startAgent();
    await waitFor(async () => (await readdir(node.config.cni.pendingDelDir)).length === 0, {
      what: 'the queued DEL to be replayed',
    });
    assert.equal(await ovs.getPort(hostVethName('cid-del-while-hung', 'eth0')), undefined);
    assert.equal(await linkExists(hostVethName('cid-del-while-hung', 'eth0')), false);
    assert.ok(!(await leaseIps(node)).includes(ips['del-while-hung'] ?? ''));
    // The live pod is untouched.
    assert.ok((await ovs.getPort(hostVethName('cid-stays', 'eth0')))?.ofport);
  });
});
