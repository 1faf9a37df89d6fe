import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/common/exec.js';
import { hostVethName } from '../../src/agent/names.js';
import { createVethPair, deleteHostVeth, hostVethOwner, linkExists } from '../../src/agent/netns.js';
import { Ovs } from '../../src/ovs/ovs.js';
import { txChecksumOffload } from '../../src/ovs/pod-interface.js';
import { exchangeTraffic } from '../../src/sandbox/pod-traffic.js';
import { createNetns, execIn, skipUnlessRoot, waitForPing, type TestNetns } from '../helpers/netns.js';
import { createBareVeth } from '../helpers/pod-veth.js';
import { cniEnv, execShim, leaseIps, startTestNode, type TestNode } from './testing.js';

const skip = skipUnlessRoot();

interface AddResult {
  cniVersion: string;
  interfaces: { name: string; mac: string; sandbox?: string; mtu?: number }[];
  ips: { address: string; gateway: string; interface: number; version?: string }[];
  routes: { dst: string; gw?: string }[];
}

describe('odlcoe CNI through the shim on a real OVS and netns', { skip, timeout: 240_000 }, () => {
  let node: TestNode;
  let ovs: Ovs;
  const namespaces: TestNetns[] = [];
  const netns = async () => {
    const ns = await createNetns('odlcoe-pod');
    namespaces.push(ns);
    return ns;
  };

  before(async () => {
    node = await startTestNode();
    ovs = new Ovs({ dbSocket: node.ovs.dbSocket });
    await node.startAgent();
    // Created early so that the agent's informer has long seen it when the UID test runs.
    await node.createPod('pod-reused');
  });
  after(async () => {
    for (const ns of namespaces) await ns.remove().catch(() => undefined);
    ovs?.close();
    await node?.stop();
  });

  const add = async (cid: string, ns: TestNetns, pod: string, version = '1.0.0') => {
    const uid = await node.createPod(pod);
    const out = await execShim(
      node.shim,
      cniEnv('ADD', cid, ns.path, { name: pod, uid }),
      await node.pluginConfig(version),
    );
    assert.equal(out.code, 0, out.stdout + out.stderr);
    return { uid, result: out.json as unknown as AddResult };
  };

  it('ADD wires the pod: address, derived MAC, default route, OVS port with its external_ids', async () => {
    const ns = await netns();
    const { uid, result } = await add('cid-a', ns, 'pod-a');
    const port = hostVethName('cid-a', 'eth0');
    assert.match(port, /^veth[0-9a-f]{8}$/);
    const ip = result.ips[0]?.address ?? '';
    assert.match(
      ip,
      /^10\.11\.1\.\d+\/32$/,
      'the pod holds its address alone: no pod of the node subnet is on-link',
    );
    const bare = ip.split('/')[0] ?? '';
    const mac = `0a:58:${bare
      .split('.')
      .map((b) => Number(b).toString(16).padStart(2, '0'))
      .join(':')}`;
    assert.equal(result.cniVersion, '1.0.0');
    assert.deepEqual(
      result.interfaces.map((i) => i.name),
      [port, 'eth0'],
    );
    assert.equal(result.interfaces[1]?.mac, mac);
    assert.equal(result.interfaces[1]?.sandbox, ns.path);
    assert.equal(result.ips[0]?.gateway, '10.11.1.1');
    assert.equal(result.ips[0]?.interface, 1);
    assert.deepEqual(result.routes, [
      { dst: '10.11.1.1/32' },
      { dst: '10.11.1.0/24', gw: '10.11.1.1' },
      { dst: '0.0.0.0/0', gw: '10.11.1.1' },
    ]);

    const link = JSON.parse(await execIn(ns.path, 'ip', ['-j', 'addr', 'show', 'dev', 'eth0'])) as {
      address: string;
      mtu: number;
      addr_info: { family: string; local: string; prefixlen: number }[];
    }[];
    assert.equal(link[0]?.address, mac);
    assert.equal(link[0]?.mtu, 1450);
    assert.ok(link[0]?.addr_info.some((a) => a.family === 'inet' && `${a.local}/${a.prefixlen}` === ip));
    const routes = JSON.parse(await execIn(ns.path, 'ip', ['-j', 'route', 'show', 'default'])) as {
      gateway: string;
      dev: string;
    }[];
    assert.deepEqual(
      routes.map((r) => [r.gateway, r.dev]),
      [['10.11.1.1', 'eth0']],
    );

    const ovsPort = await ovs.getPort(port);
    assert.ok(ovsPort && ovsPort.ofport > 0);
    assert.deepEqual(ovsPort.externalIds, {
      'iface-id': 'default:pod-a',
      'odlcoe-pod': 'default/pod-a',
      'attached-mac': mac,
      'ip-address': bare,
      'pod-uid': uid,
      'container-id': 'cid-a',
    });
    assert.ok((await ovs.listPorts(node.bridge)).some((p) => p.name === port));
    assert.ok(await linkExists(port));
    assert.deepEqual(await leaseIps(node), [bare]);
  });

  it('a repeated ADD fails and leaves the first attachment intact', async () => {
    const nsA = namespaces[0];
    assert.ok(nsA);
    const port = hostVethName('cid-a', 'eth0');
    const leases = await leaseIps(node);
    const again = await execShim(
      node.shim,
      cniEnv('ADD', 'cid-a', nsA.path, { name: 'pod-a' }),
      await node.pluginConfig(),
    );
    assert.equal(again.code, 1);
    assert.equal((again.json as { code: number }).code, 102);
    assert.ok((await ovs.getPort(port))?.ofport);
    assert.ok(await linkExists(port));
    assert.deepEqual(await leaseIps(node), leases);
  });

  it('answers older versions with ips[].version', async () => {
    const ns = await netns();
    const { result } = await add('cid-v', ns, 'pod-v', '0.3.1');
    assert.equal(result.cniVersion, '0.3.1');
    assert.equal(result.ips[0]?.version, '4');
  });

  /** Two pods wired by the agent, for the traffic tests. */
  let pair: { a: TestNetns; b: TestNetns; ipB: string } | undefined;

  it('two pods on the bridge reach each other', async () => {
    const nsA = namespaces[0];
    assert.ok(nsA);
    const nsB = await netns();
    const { result } = await add('cid-b', nsB, 'pod-b');
    const ipB = result.ips[0]?.address.split('/')[0] ?? '';
    await waitForPing(nsA.path, ipB);
    const ipA = (await leaseIps(node)).find((ip) => ip !== ipB);
    assert.ok(ipA);
    await waitForPing(nsB.path, ipA);
    pair = { a: nsA, b: nsB, ipB };
    // Through the gateway, never on-link: NetVirt answers ARP for the subnet gateway alone, so
    // a pod that resolved a peer itself would not reach one of another namespace's ELAN.
    for (const ns of [nsA, nsB]) {
      const neighbours = JSON.parse(await execIn(ns.path, 'ip', ['-j', 'neigh', 'show', 'dev', 'eth0'])) as {
        dst: string;
      }[];
      assert.deepEqual(
        neighbours.map((n) => n.dst),
        ['10.11.1.1'],
        `the pod resolved only its gateway: ${JSON.stringify(neighbours)}`,
      );
    }
  });

  it('two pods exchange TCP (HTTP GET) and UDP (echo): the agent turned TX checksum offload off (netdev bridge)', async () => {
    assert.ok(pair);
    assert.equal(await txChecksumOffload(pair.a.path, 'eth0'), 'off');
    assert.equal(await txChecksumOffload(pair.b.path, 'eth0'), 'off');
    const traffic = await exchangeTraffic(pair.a.path, pair.b.path, pair.ipB);
    assert.ok(traffic.tcp.ok, `TCP: ${traffic.tcp.error}`);
    assert.ok(traffic.udp.ok, `UDP: ${traffic.udp.error}`);
    const steps = await (await fetch(`http://127.0.0.1:${node.agent?.metricsPort}/metrics`)).text();
    assert.match(
      steps,
      /odlcoe_agent_cni_step_duration_seconds_count\{command="ADD",step="checksum_offload"\} [1-9]/,
    );
    const readyz = (await (await fetch(`http://127.0.0.1:${node.agent?.metricsPort}/readyz`)).json()) as {
      checks: { name: string; ok: boolean }[];
    };
    assert.equal(readyz.checks.find((c) => c.name === 'checksum-offload')?.ok, true);
  });

  it('with TX checksum offload turned back on by hand, TCP and UDP fail while ping still passes', async () => {
    assert.ok(pair);
    const ethtool = (ns: TestNetns, onOff: 'on' | 'off') =>
      execIn(ns.path, 'ethtool', ['-K', 'eth0', 'tx', onOff]);
    await ethtool(pair.a, 'on');
    await ethtool(pair.b, 'on');
    try {
      const broken = await exchangeTraffic(pair.a.path, pair.b.path, pair.ipB, { timeoutMs: 3_000 });
      assert.equal(broken.tcp.ok, false, 'TCP must fail with partial checksums on the userspace datapath');
      assert.match(broken.tcp.error ?? '', /no HTTP answer/);
      assert.equal(broken.udp.ok, false, 'UDP must fail with partial checksums on the userspace datapath');
      await waitForPing(pair.a.path, pair.ipB);
    } finally {
      await ethtool(pair.a, 'off');
      await ethtool(pair.b, 'off');
    }
    const fixed = await exchangeTraffic(pair.a.path, pair.b.path, pair.ipB);
    assert.ok(fixed.tcp.ok && fixed.udp.ok, JSON.stringify(fixed));
  });

  it('refuses an ADD for an older pod that reuses a name (UID mismatch)', async () => {
    const ns = await netns();
    const out = await execShim(
      node.shim,
      cniEnv('ADD', 'cid-old', ns.path, { name: 'pod-reused', uid: '00000000-0000-0000-0000-000000000000' }),
      await node.pluginConfig(),
    );
    assert.equal(out.code, 1);
    assert.equal((out.json as { code: number }).code, 11);
    assert.match(String((out.json as { msg: string }).msg), /now has UID/);
    assert.equal(await ovs.getPort(hostVethName('cid-old', 'eth0')), undefined);
  });

  it('CHECK passes for a wired pod and fails once its port was removed by hand', async () => {
    const nsA = namespaces[0];
    assert.ok(nsA);
    const env = cniEnv('CHECK', 'cid-a', nsA.path, { name: 'pod-a' });
    const conf = await node.pluginConfig('1.0.0');
    const ok = await execShim(node.shim, env, conf);
    assert.equal(ok.code, 0, ok.stdout);
    assert.equal(ok.stdout, '');
    await node.ovs.vsctl(['del-port', node.bridge, hostVethName('cid-a', 'eth0')]);
    const bad = await execShim(node.shim, env, conf);
    assert.equal(bad.code, 1);
    assert.equal((bad.json as { code: number }).code, 101);
    assert.match(String((bad.json as { msg: string }).msg), /missing/);
  });

  it('DEL removes port, veth and lease; repeated, netns-less and ADD-less DELs succeed', async () => {
    const nsB = namespaces[2];
    assert.ok(nsB);
    const port = hostVethName('cid-b', 'eth0');
    const before = await leaseIps(node);
    const conf = await node.pluginConfig();
    const del = await execShim(node.shim, cniEnv('DEL', 'cid-b', nsB.path, { name: 'pod-b' }), conf);
    assert.equal(del.code, 0, del.stdout);
    assert.equal(del.stdout, '');
    assert.equal(await ovs.getPort(port), undefined);
    assert.equal(await linkExists(port), false);
    assert.equal((await leaseIps(node)).length, before.length - 1);
    for (const env of [
      cniEnv('DEL', 'cid-b', nsB.path, { name: 'pod-b' }),
      cniEnv('DEL', 'cid-b', '', { name: 'pod-b' }),
      { ...cniEnv('DEL', 'cid-never', ''), CNI_ARGS: '' },
    ]) {
      const again = await execShim(node.shim, env, conf);
      assert.equal(again.code, 0, `${JSON.stringify(env)}: ${again.stdout}`);
    }
  });

  it('GC removes attachments missing from the valid list', async () => {
    const keep = await netns();
    const drop = await netns();
    await add('cid-keep', keep, 'pod-keep');
    const { result } = await add('cid-drop', drop, 'pod-drop');
    const dropIp = result.ips[0]?.address.split('/')[0];
    const valid = ['cid-a', 'cid-v', 'cid-keep'].map((containerID) => ({ containerID, ifname: 'eth0' }));
    const gc = await execShim(
      node.shim,
      { CNI_COMMAND: 'GC', CNI_PATH: '/usr/lib/cni' },
      await node.pluginConfig('1.1.0', { 'cni.dev/valid-attachments': valid }),
    );
    assert.equal(gc.code, 0, gc.stdout);
    assert.equal(await ovs.getPort(hostVethName('cid-drop', 'eth0')), undefined);
    assert.equal(await linkExists(hostVethName('cid-drop', 'eth0')), false);
    assert.ok(!(await leaseIps(node)).includes(dropIp ?? ''));
    assert.ok(await ovs.getPort(hostVethName('cid-keep', 'eth0')));
    assert.ok(await ovs.getPort(hostVethName('cid-v', 'eth0')));
  });

  it('an ADD failing at the pod interface leaves no port, veth or lease', async () => {
    const ns = await netns();
    // The pod already has an eth0: the veth's pod end cannot take the name.
    await run('ip', ['-n', ns.name, 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'eth0peer']);
    const leases = await leaseIps(node);
    const uid = await node.createPod('pod-fail1');
    const out = await execShim(
      node.shim,
      cniEnv('ADD', 'cid-fail1', ns.path, { name: 'pod-fail1', uid }),
      await node.pluginConfig(),
    );
    assert.equal(out.code, 1);
    assert.equal((out.json as { code: number }).code, 103);
    assert.deepEqual(await leaseIps(node), leases);
    assert.equal(await linkExists(hostVethName('cid-fail1', 'eth0')), false);
    assert.equal(await ovs.getPort(hostVethName('cid-fail1', 'eth0')), undefined);
  });

  it('an ADD failing at the OVS port (ovs-vswitchd down) leaves no port, veth or lease', async () => {
    const ns = await netns();
    const leases = await leaseIps(node);
    const uid = await node.createPod('pod-fail2');
    await node.ovs.stopVswitchd();
    try {
      const out = await execShim(
        node.shim,
        cniEnv('ADD', 'cid-fail2', ns.path, { name: 'pod-fail2', uid }),
        await node.pluginConfig(),
      );
      assert.equal(out.code, 1, out.stdout);
      assert.equal((out.json as { code: number }).code, 101);
    } finally {
      await node.ovs.startVswitchd();
    }
    assert.deepEqual(await leaseIps(node), leases);
    assert.equal(await linkExists(hostVethName('cid-fail2', 'eth0')), false);
    assert.equal(await ovs.getPort(hostVethName('cid-fail2', 'eth0')), undefined);
  });

  it('an ADD whose IPAM fails removes the veth it created meanwhile, and nothing else', async () => {
    const ns = await netns();
    // A lease this attachment already holds: host-local refuses the ADD (duplicate), while
    // the veth pair, created at the same time, succeeds and must be undone.
    const leaseFile = join(node.config.ipam.dataDir, node.config.cni.networkName, '10.11.1.250');
    await writeFile(leaseFile, 'cid-fail3\r\neth0');
    try {
      const uid = await node.createPod('pod-fail3');
      const out = await execShim(
        node.shim,
        cniEnv('ADD', 'cid-fail3', ns.path, { name: 'pod-fail3', uid }),
        await node.pluginConfig(),
      );
      assert.equal(out.code, 1);
      assert.equal((out.json as { code: number }).code, 102);
      assert.equal(await linkExists(hostVethName('cid-fail3', 'eth0')), false);
      assert.equal(await ovs.getPort(hostVethName('cid-fail3', 'eth0')), undefined);
      assert.ok(
        (await leaseIps(node)).includes('10.11.1.250'),
        "the earlier lease is not this ADD's to release",
      );
    } finally {
      await rm(leaseFile, { force: true });
    }
  });

  it("DEL leaves a port (and its veth) whose container-id is another container's", async () => {
    const ns = await netns();
    // What a 32-bit name collision looks like: the port named after this attachment belongs
    // to another container.
    const { hostVeth: port } = await createBareVeth(ns.path, {
      containerId: 'cid-victim',
      mac: '0a:58:0a:0b:01:f0',
      track: () => undefined,
    });
    try {
      await ovs.addPort(node.bridge, port, { 'iface-id': 'default:other', 'container-id': 'cid-owner' });
      const out = await execShim(
        node.shim,
        cniEnv('DEL', 'cid-victim', ns.path, { name: 'pod-victim' }),
        await node.pluginConfig(),
      );
      assert.equal(out.code, 0, out.stdout);
      assert.equal((await ovs.getPort(port))?.externalIds['container-id'], 'cid-owner');
      assert.ok(await linkExists(port));
    } finally {
      await ovs.delPort(node.bridge, port);
      await deleteHostVeth(port);
    }
  });

  it("DEL without a port leaves a same-named veth that is another container's, or untagged", async () => {
    // A collision where the owner has no port (yet): its ADD between veth_create and
    // ovs_add_port, or its row lost. The name is this attachment's; the veth is not.
    const port = hostVethName('cid-bystander', 'eth0');
    const conf = await node.pluginConfig();
    for (const owner of ['cid-owner', undefined]) {
      const ns = await netns();
      await createVethPair({ netns: ns.path, ifName: 'eth0', hostVeth: port, mtu: 1400, owner });
      try {
        assert.equal(await hostVethOwner(port), owner ?? '');
        assert.equal(await ovs.getPort(port), undefined);
        const out = await execShim(
          node.shim,
          cniEnv('DEL', 'cid-bystander', ns.path, { name: 'pod-by' }),
          conf,
        );
        assert.equal(out.code, 0, out.stdout);
        assert.ok(await linkExists(port), `veth owned by ${owner ?? '(untagged)'} deleted`);
        assert.ok(await execIn(ns.path, 'ip', ['link', 'show', 'dev', 'eth0']));
      } finally {
        await deleteHostVeth(port);
      }
    }
  });

  it('DEL without a port removes the veth tagged as its own (an ADD cut short before OVS)', async () => {
    const ns = await netns();
    const port = hostVethName('cid-orphan', 'eth0');
    await createVethPair({ netns: ns.path, ifName: 'eth0', hostVeth: port, mtu: 1400, owner: 'cid-orphan' });
    try {
      assert.equal(await hostVethOwner(port), 'cid-orphan');
      const out = await execShim(
        node.shim,
        cniEnv('DEL', 'cid-orphan', ns.path, { name: 'pod-orphan' }),
        await node.pluginConfig(),
      );
      assert.equal(out.code, 0, out.stdout);
      assert.equal(await linkExists(port), false);
    } finally {
      await deleteHostVeth(port);
    }
  });

  it('ADD tags the host veth with its container id', async () => {
    assert.equal(await hostVethOwner(hostVethName('cid-keep', 'eth0')), 'cid-keep');
  });

  it('invalid stdin, unsupported version and missing environment give CNI errors on stdout', async () => {
    const conf = await node.pluginConfig();
    const cases: [Record<string, string>, string, number, RegExp][] = [
      [cniEnv('ADD', 'c1', '/run/netns/x', { name: 'p' }), '{"cniVersion": "1.0.0", ', 6, /not valid JSON/],
      [
        cniEnv('ADD', 'c1', '/run/netns/x', { name: 'p' }),
        conf.replace('"1.0.0"', '"0.2.0"'),
        1,
        /incompatible CNI version 0\.2\.0/,
      ],
      [{ ...cniEnv('ADD', 'c1', '', { name: 'p' }) }, conf, 4, /CNI_NETNS/],
      [{ CNI_NETNS: '/run/netns/x', CNI_IFNAME: 'eth0' }, conf, 4, /CNI_COMMAND/],
      [
        { ...cniEnv('ADD', 'c1', '/run/netns/x', { name: 'p' }), CNI_CONTAINERID: '' },
        conf,
        4,
        /CNI_CONTAINERID/,
      ],
      [
        { ...cniEnv('ADD', 'c1', '/run/netns/x'), CNI_ARGS: 'IgnoreUnknown=1;K8S_POD_NAME=podman-ctr' },
        conf,
        4,
        /K8S_POD_NAMESPACE/,
      ],
    ];
    for (const [env, stdin, code, msg] of cases) {
      const out = await execShim(node.shim, env, stdin);
      assert.notEqual(out.code, 0, JSON.stringify(env));
      assert.equal((out.json as { code: number } | undefined)?.code, code, out.stdout);
      assert.match(String((out.json as { msg: string }).msg), msg);
    }
  });

  it('VERSION and STATUS', async () => {
    const version = await execShim(node.shim, { CNI_COMMAND: 'VERSION' }, '{"cniVersion":"1.1.0"}');
    assert.deepEqual(version.json, {
      cniVersion: '1.1.0',
      supportedVersions: ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'],
    });
    const status = await execShim(node.shim, { CNI_COMMAND: 'STATUS' }, await node.pluginConfig('1.1.0'));
    assert.equal(status.code, 0, status.stdout);
  });
});
