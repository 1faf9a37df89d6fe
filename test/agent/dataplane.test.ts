import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/common/exec.js';
import { HostLocalIpam } from '../../src/agent/ipam.js';
import { hostVethName } from '../../src/agent/names.js';
import {
  createPodInterface,
  deleteHostVeth,
  deletePodInterface,
  inspectPodInterface,
  LinkExistsError,
  linkExists,
} from '../../src/agent/netns.js';
import { Ovs, OvsPortConflictError } from '../../src/ovs/ovs.js';
import type { TestNetns } from '../helpers/netns.js';
import { createNetns, execIn, skipUnlessRoot, waitForPing } from '../helpers/netns.js';
import type { OvsSandbox } from '../helpers/ovs-sandbox.js';
import { startOvsSandbox } from '../helpers/ovs-sandbox.js';
import { createBareVeth, newContainerId } from '../helpers/pod-veth.js';

/**
 * The node dataplane for real: a private userspace OVS, network namespaces as pods, veth
 * pairs, Debian's host-local. Everything the CNI server does to wire a pod, step by step.
 */

const BRIDGE = 'br-int';
const SUBNET = '10.11.1.0/24';
const GATEWAY = '10.11.1.1';
const MTU = 1400;

interface Pod {
  netns: TestNetns;
  containerId: string;
  ifName: string;
  hostVeth: string;
  ip: string;
  mac: string;
  externalIds: Record<string, string>;
}

/** As the agent derives it: 0a:58 + the IPv4 bytes. */
function macFor(ip: string): string {
  return ['0a', '58', ...ip.split('.').map((b) => Number(b).toString(16).padStart(2, '0'))].join(':');
}

describe('node dataplane on userspace Open vSwitch', { skip: skipUnlessRoot() }, () => {
  let sandbox: OvsSandbox;
  let ovs: Ovs;
  let ipam: HostLocalIpam;
  let dataDir: string;
  const namespaces: TestNetns[] = [];
  const hostVeths: string[] = [];
  const pods: Pod[] = [];

  async function newNetns(): Promise<TestNetns> {
    const ns = await createNetns('odlcoe-pod');
    namespaces.push(ns);
    return ns;
  }

  /** A pod end without addresses in a fresh namespace, and its host end. */
  async function bareVeth(mac: string): Promise<{ hostVeth: string; containerId: string }> {
    const ns = await newNetns();
    return createBareVeth(ns.path, { mac, mtu: MTU, track: (veth) => hostVeths.push(veth) });
  }

  /** What the CNI ADD does: lease, veth, OVS port. */
  async function wirePod(name: string): Promise<Pod> {
    const netns = await newNetns();
    const containerId = newContainerId();
    const ifName = 'eth0';
    const hostVeth = hostVethName(containerId, ifName);
    hostVeths.push(hostVeth);
    const lease = await ipam.add({ containerId, ifName, netns: netns.path });
    const address = lease.ips[0]?.address;
    assert.ok(address, 'host-local returned an address');
    const ip = address.split('/')[0] ?? '';
    const mac = macFor(ip);
    const link = await createPodInterface({
      netns: netns.path,
      ifName,
      hostVeth,
      mac,
      mtu: MTU,
      addresses: [{ cidr: address, gateway: GATEWAY }],
      routes: lease.routes,
    });
    assert.equal(link.podMac, mac);
    assert.match(link.hostMac, /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/);
    const externalIds = {
      'iface-id': `default:${name}`,
      'attached-mac': mac,
      'ip-address': ip,
      'container-id': containerId,
    };
    const port = await ovs.addPort(BRIDGE, hostVeth, externalIds);
    assert.ok(port.ofport > 0, `ofport ${port.ofport}`);
    assert.equal(port.error, undefined);
    const pod = { netns, containerId, ifName, hostVeth, ip, mac, externalIds };
    pods.push(pod);
    return pod;
  }

  before(async () => {
    sandbox = await startOvsSandbox();
    ovs = new Ovs({ dbSocket: sandbox.dbSocket, timeoutSeconds: 5 });
    dataDir = await mkdtemp(join(tmpdir(), 'odlcoe-dataplane-'));
    ipam = new HostLocalIpam({
      dataDir,
      networkName: 'odlcoe-test',
      range: { subnet: SUBNET, gateway: GATEWAY },
      routes: [{ dst: '0.0.0.0/0', gw: GATEWAY }],
    });
  });

  after(async () => {
    // Everything, even when a test failed half-way; each step on its own.
    for (const veth of hostVeths) await deleteHostVeth(veth).catch(() => undefined);
    for (const ns of namespaces) await ns.remove().catch(() => undefined);
    await sandbox?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('reaches ovsdb-server', async () => {
    await ovs.ping();
  });

  it('creates br-int idempotently with OpenFlow13 on the netdev datapath', async () => {
    const opts = { datapathType: 'netdev', failMode: 'standalone' } as const;
    await ovs.ensureBridge(BRIDGE, opts);
    await ovs.ensureBridge(BRIDGE, opts);
    assert.deepEqual((await sandbox.vsctl(['list-br'])).split('\n').filter(Boolean), [BRIDGE]);
    const props = await sandbox.vsctl(['get', 'Bridge', BRIDGE, 'protocols', 'datapath_type', 'fail_mode']);
    assert.deepEqual(props.trim().split('\n'), ['[OpenFlow13]', 'netdev', 'standalone']);
    assert.deepEqual(await ovs.listPorts(BRIDGE), []);
  });

  it('wires two pods that ping each other over br-int', async () => {
    const a = await wirePod('pod-a');
    const b = await wirePod('pod-b');
    assert.notEqual(a.ip, b.ip);
    await waitForPing(a.netns.path, b.ip);
    await waitForPing(b.netns.path, a.ip);
  });

  it('shows each pod its address, MAC, MTU and default route', async () => {
    for (const pod of pods) {
      const state = await inspectPodInterface(pod.netns.path, pod.ifName);
      assert.deepEqual(state, {
        mac: pod.mac,
        mtu: MTU,
        addresses: [`${pod.ip}/24`],
        routes: [{ dst: '0.0.0.0/0', gw: GATEWAY }],
      });
      assert.equal(await inspectPodInterface(pod.netns.path, 'eth9'), undefined);
    }
  });

  it('lists exactly the ports and their external_ids, iface-id with its ":" intact', async () => {
    const ports = await ovs.listPorts(BRIDGE);
    const expected = pods
      .map((p) => ({ name: p.hostVeth, externalIds: p.externalIds }))
      .sort((x, y) => x.name.localeCompare(y.name));
    assert.deepEqual(
      ports.map((p) => ({ name: p.name, externalIds: p.externalIds })),
      expected,
    );
    for (const p of ports) assert.ok(p.ofport > 0);
    const raw = await sandbox.vsctl(['get', 'Interface', pods[0]?.hostVeth ?? '', 'external_ids:iface-id']);
    assert.equal(raw.trim(), '"default:pod-a"');
    const one = await ovs.getPort(pods[1]?.hostVeth ?? '');
    assert.deepEqual(one?.externalIds, pods[1]?.externalIds);
    assert.equal(await ovs.getPort('veth00000000'), undefined);
  });

  it('keeps odd external_ids values exact', async () => {
    const { hostVeth } = await bareVeth('0a:58:0a:0b:01:fe');
    const ids = { 'iface-id': 'ns:pod:x', note: 'a "quoted", {braced} = [value]\\ é' };
    const port = await ovs.addPort(BRIDGE, hostVeth, ids);
    assert.deepEqual(port.externalIds, ids);
    await ovs.delPort(BRIDGE, hostVeth);
    await deleteHostVeth(hostVeth);
  });

  it('returns the existing port for a repeated addPort and refuses one owned by another attachment', async () => {
    const pod = pods[0];
    assert.ok(pod);
    const again = await ovs.addPort(BRIDGE, pod.hostVeth, pod.externalIds);
    assert.equal(again.externalIds['container-id'], pod.containerId);
    await assert.rejects(
      ovs.addPort(BRIDGE, pod.hostVeth, { ...pod.externalIds, 'container-id': 'someone-else' }),
      (err: unknown) =>
        err instanceof OvsPortConflictError && err.existing.externalIds['container-id'] === pod.containerId,
    );
    // Conflict or not, the original port is untouched.
    assert.deepEqual((await ovs.getPort(pod.hostVeth))?.externalIds, pod.externalIds);
    // A guarded delete by another owner leaves it too.
    await ovs.delPort(BRIDGE, pod.hostVeth, { ifExternalIds: { 'container-id': 'someone-else' } });
    assert.ok(await ovs.getPort(pod.hostVeth));
    // The same port asked for on another bridge is a conflict too, and deleting it from that
    // bridge is a no-op.
    await ovs.ensureBridge('br-other', { datapathType: 'netdev' });
    await assert.rejects(
      ovs.addPort('br-other', pod.hostVeth, pod.externalIds),
      /already exists on bridge br-int/,
    );
    await ovs.delPort('br-other', pod.hostVeth);
    assert.deepEqual(
      (await ovs.listPorts(BRIDGE)).map((p) => p.name),
      pods.map((p) => p.hostVeth).sort(),
    );
    await sandbox.vsctl(['del-br', 'br-other']);
  });

  it('refuses a host veth name that already exists, without touching it', async () => {
    const pod = pods[0];
    assert.ok(pod);
    const other = await newNetns();
    await assert.rejects(
      createPodInterface({
        netns: other.path,
        ifName: 'eth0',
        hostVeth: pod.hostVeth,
        mac: '0a:58:0a:0b:01:fd',
        mtu: MTU,
        addresses: [],
        routes: [],
      }),
      (err: unknown) => err instanceof LinkExistsError && err.where === 'host' && err.link === pod.hostVeth,
    );
    assert.equal(await inspectPodInterface(other.path, 'eth0'), undefined);
    assert.ok(await linkExists(pod.hostVeth));
    await waitForPing(pod.netns.path, pods[1]?.ip ?? '');
  });

  it('refuses an interface name that already exists in the pod', async () => {
    const pod = pods[0];
    assert.ok(pod);
    const hostVeth = hostVethName(newContainerId(), 'eth0');
    await assert.rejects(
      createPodInterface({
        netns: pod.netns.path,
        ifName: 'eth0',
        hostVeth,
        mac: '0a:58:0a:0b:01:fc',
        mtu: MTU,
        addresses: [],
        routes: [],
      }),
      (err: unknown) => err instanceof LinkExistsError && err.where === 'pod',
    );
    assert.equal(await linkExists(hostVeth), false);
  });

  it('removes the pair when configuring the pod end fails', async () => {
    const ns = await newNetns();
    const hostVeth = hostVethName(newContainerId(), 'eth0');
    hostVeths.push(hostVeth);
    await assert.rejects(
      createPodInterface({
        netns: ns.path,
        ifName: 'eth0',
        hostVeth,
        mac: '0a:58:0a:0b:01:fb',
        mtu: MTU,
        addresses: [{ cidr: '10.11.1.251/24' }],
        // Not on the interface's subnet: the kernel refuses the route after the veth exists.
        routes: [{ dst: '0.0.0.0/0', gw: '192.0.2.1' }],
      }),
      /Nexthop has invalid gateway|Network is unreachable/,
    );
    assert.equal(await linkExists(hostVeth), false);
    assert.equal(await inspectPodInterface(ns.path, 'eth0'), undefined);
  });

  it('configures interface names that ip -batch could not parse', async () => {
    const ns = await newNetns();
    const hostVeth = hostVethName(newContainerId(), 'net#1');
    hostVeths.push(hostVeth);
    await createPodInterface({
      netns: ns.path,
      ifName: 'net#1',
      hostVeth,
      mac: '0a:58:0a:0b:01:fa',
      mtu: MTU,
      addresses: [{ cidr: '10.11.1.250/24' }],
      routes: [{ dst: '0.0.0.0/0', gw: GATEWAY }],
    });
    const state = await inspectPodInterface(ns.path, 'net#1');
    assert.deepEqual(state?.addresses, ['10.11.1.250/24']);
    assert.deepEqual(state?.routes, [{ dst: '0.0.0.0/0', gw: GATEWAY }]);
    await deleteHostVeth(hostVeth);
  });

  it('configures IPv6 without waiting for DAD and reports IPv6 routes', async () => {
    const ns = await newNetns();
    const hostVeth = hostVethName(newContainerId(), 'eth0');
    hostVeths.push(hostVeth);
    await createPodInterface({
      netns: ns.path,
      ifName: 'eth0',
      hostVeth,
      mac: '0a:58:00:00:00:05',
      mtu: MTU,
      addresses: [{ cidr: '10.11.1.249/24' }, { cidr: 'fd00:11::5/64' }],
      routes: [
        { dst: '0.0.0.0/0', gw: GATEWAY },
        { dst: '::/0', gw: 'fd00:11::1' },
      ],
    });
    const state = await inspectPodInterface(ns.path, 'eth0');
    assert.deepEqual(state?.addresses, ['10.11.1.249/24', 'fd00:11::5/64']);
    assert.deepEqual(state?.routes, [
      { dst: '0.0.0.0/0', gw: GATEWAY },
      { dst: '::/0', gw: 'fd00:11::1' },
    ]);
    const addrs = JSON.parse(
      await execIn(ns.path, 'ip', ['-j', '-6', 'addr', 'show', 'dev', 'eth0', 'scope', 'global']),
    ) as {
      addr_info: { tentative?: boolean }[];
    }[];
    assert.equal(addrs[0]?.addr_info[0]?.tentative, undefined, 'usable at once, not tentative');
    await deleteHostVeth(hostVeth);
  });

  it('leaves no port row when ovs-vswitchd cannot open the device', async () => {
    await assert.rejects(
      ovs.addPort(BRIDGE, 'vethdeadbeef', { 'iface-id': 'default:ghost' }),
      /could not attach vethdeadbeef.*could not open network device vethdeadbeef/,
    );
    assert.equal(await ovs.getPort('vethdeadbeef'), undefined);
    assert.doesNotMatch(await sandbox.vsctl(['list-ports', BRIDGE]), /vethdeadbeef/);
  });

  it('reflects host-local lease files in leases()', async () => {
    const leases = await ipam.leases();
    assert.deepEqual(
      leases,
      pods.map((p) => ({ ip: p.ip, containerId: p.containerId, ifName: p.ifName })),
    );
    const files = (await readdir(join(dataDir, 'odlcoe-test'))).filter((f) => /^\d/.test(f)).sort();
    assert.deepEqual(files, pods.map((p) => p.ip).sort());
    const content = await readFile(join(dataDir, 'odlcoe-test', pods[0]?.ip ?? ''), 'utf8');
    assert.equal(content, `${pods[0]?.containerId}\r\neth0`);
  });

  it('deletes idempotently: twice, and with the namespace already gone', async () => {
    const pod = pods.pop();
    assert.ok(pod);
    for (let i = 0; i < 2; i++) {
      await ovs.delPort(BRIDGE, pod.hostVeth, { ifExternalIds: { 'container-id': pod.containerId } });
      await deletePodInterface(pod.netns.path, pod.ifName);
      await deleteHostVeth(pod.hostVeth);
      await ipam.del({ containerId: pod.containerId, ifName: pod.ifName, netns: pod.netns.path });
    }
    assert.equal(await ovs.getPort(pod.hostVeth), undefined);
    assert.equal(await linkExists(pod.hostVeth), false);
    assert.equal(await inspectPodInterface(pod.netns.path, pod.ifName), undefined);
    await pod.netns.remove();
    // containerd's second DEL: no netns any more, only the container id.
    await deletePodInterface(pod.netns.path, pod.ifName);
    await deleteHostVeth(pod.hostVeth);
    await ipam.del({ containerId: pod.containerId, ifName: pod.ifName });
    assert.deepEqual(
      (await ipam.leases()).map((l) => l.containerId),
      pods.map((p) => p.containerId),
    );
  });

  it('removes the pod end with the host end (one deletion removes the pair)', async () => {
    const pod = pods[0];
    assert.ok(pod);
    await deleteHostVeth(pod.hostVeth);
    assert.equal(await inspectPodInterface(pod.netns.path, pod.ifName), undefined);
    assert.deepEqual(
      JSON.parse(await execIn(pod.netns.path, 'ip', ['-j', 'link', 'show', 'type', 'veth'])),
      [],
    );
    // The port row stays until deleted, as OVS does for any vanished device.
    await ovs.delPort(BRIDGE, pod.hostVeth);
    await ipam.del({ containerId: pod.containerId, ifName: pod.ifName });
  });

  it('fails addPort without leaving the row when ovs-vswitchd is down, and works once it is back', async () => {
    const { hostVeth, containerId } = await bareVeth('0a:58:0a:0b:01:f9');
    const ids = { 'iface-id': 'default:late', 'container-id': containerId };
    await sandbox.stopVswitchd();
    const quick = new Ovs({ dbSocket: sandbox.dbSocket, timeoutSeconds: 2 });
    await quick.ping();
    await assert.rejects(quick.addPort(BRIDGE, hostVeth, ids), /adding OVS port .* failed/);
    assert.equal(await ovs.getPort(hostVeth), undefined);
    assert.doesNotMatch(await sandbox.vsctl(['list-ports', BRIDGE]), new RegExp(hostVeth));

    await sandbox.startVswitchd();
    const port = await ovs.addPort(BRIDGE, hostVeth, ids);
    assert.ok(port.ofport > 0);
    await ovs.delPort(BRIDGE, hostVeth);
    await deleteHostVeth(hostVeth);
  });

  it('reports an unreachable ovsdb-server', async () => {
    const nowhere = new Ovs({ dbSocket: join(sandbox.dir, 'no-such.sock'), timeoutSeconds: 2 });
    await assert.rejects(nowhere.ping());
  });

  it('sets manager, controller and local_ip, and clears them', async () => {
    await ovs.setManager(['tcp:127.0.0.1:6640']);
    await ovs.setController(BRIDGE, ['tcp:127.0.0.1:6653']);
    await ovs.setLocalIp('192.0.2.10');
    assert.equal((await sandbox.vsctl(['get-manager'])).trim(), 'tcp:127.0.0.1:6640');
    assert.equal((await sandbox.vsctl(['get-controller', BRIDGE])).trim(), 'tcp:127.0.0.1:6653');
    assert.equal(
      (await sandbox.vsctl(['get', 'Open_vSwitch', '.', 'other_config:local_ip'])).trim(),
      '"192.0.2.10"',
    );
    await ovs.setManager([]);
    await ovs.setController(BRIDGE, []);
    assert.equal((await sandbox.vsctl(['get-manager'])).trim(), '');
    assert.equal((await sandbox.vsctl(['get-controller', BRIDGE])).trim(), '');
  });

  it('left no veth of its own behind', async () => {
    for (const veth of hostVeths) assert.equal(await linkExists(veth), false, veth);
    const { stdout } = await run('ip', ['-j', 'link', 'show', 'type', 'veth']);
    const names = (JSON.parse(stdout) as { ifname: string }[]).map((l) => l.ifname);
    for (const veth of hostVeths) assert.ok(!names.includes(veth));
  });
});
