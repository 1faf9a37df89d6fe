/**
 * The CNI ADD/DEL engine by itself, on a real dataplane: a private userspace OVS, network
 * namespaces as pods and Debian's host-local (src/agent/testing.ts). No agent, shim or API
 * server around it: test/agent/cni.test.ts covers the whole path.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gatewayIp, podMac } from '../netvirt/names.js';
import { EXTERNAL_ID } from '../ovs/external-ids.js';
import { skipUnlessRoot } from '../../test/helpers/netns.js';
import { CNI_ERROR, CniError } from './cni/error.js';
import { formatResult } from './cni/result.js';
import { hostVethName } from './names.js';
import { inspectPodInterface, linkExists } from './netns.js';
import { podAddressing } from './pod-attach.js';
import { parsePodSubnet } from './pod-subnet.js';
import { SUBNET, testPod, useAttachFixture } from './testing.js';

/** Rejects with a CniError of `code`. */
async function refused(promise: Promise<unknown>, code: number, message?: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof CniError, `a CniError, not ${String(err)}`);
    assert.equal(err.code, code, err.message);
    if (message) assert.match(err.message, message);
    return true;
  });
}

/**
 * A deadline that passes after the ADD looked at it `checks` times. The ADD looks once before
 * it starts and once after each of its three stages (address and veth, pod interface, OVS
 * port), so 1..3 abandon it after the first, second or third stage.
 */
function deadlineAfter(checks: number): AbortSignal {
  const controller = new AbortController();
  let seen = 0;
  return new Proxy(controller.signal, {
    get(target, prop) {
      if (prop === 'aborted') {
        seen += 1;
        if (seen > checks && !target.aborted) controller.abort(new Error('the request deadline passed'));
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
}

describe('podAddressing', () => {
  const subnet = parsePodSubnet(SUBNET);

  it('gives the pod the MAC and gateway the watcher writes into ODL, and a default route via it', () => {
    const out = podAddressing({ ips: [{ address: '10.11.1.7' }], routes: [] }, subnet);
    assert.equal(out.mac, podMac('10.11.1.7'));
    assert.deepEqual(out.ips, [{ address: '10.11.1.7/32', gateway: gatewayIp(SUBNET) }]);
    assert.deepEqual(out.routes, [
      { dst: `${gatewayIp(SUBNET)}/32` },
      { dst: '0.0.0.0/0', gw: gatewayIp(SUBNET) },
    ]);
  });

  it('holds the address alone, so no other pod of the node subnet is on-link (NetVirt answers ARP for the gateway only)', () => {
    const out = podAddressing({ ips: [{ address: '10.11.1.7/24' }], routes: [] }, subnet);
    assert.deepEqual(
      out.ips.map((ip) => ip.address),
      ['10.11.1.7/32'],
    );
    assert.ok(
      !out.routes.some((r) => r.dst === SUBNET),
      `the node subnet must not be on-link: ${JSON.stringify(out.routes)}`,
    );
  });

  it('keeps what host-local says: gateway and routes, each IPv4 next hop on-link first (IPv6 stays on-link: no NA responder); the MAC follows the first address', () => {
    const out = podAddressing(
      {
        ips: [
          { address: '10.11.1.9/24', gateway: '10.11.1.254' },
          { address: 'fd00:11:1::9/64', gateway: 'fd00:11:1::1' },
        ],
        routes: [{ dst: '10.0.0.0/8' }, { dst: '0.0.0.0/0', gw: '10.11.1.254' }],
      },
      subnet,
    );
    assert.equal(out.mac, podMac('10.11.1.9'));
    assert.deepEqual(
      out.ips.map((ip) => [ip.address, ip.gateway]),
      [
        ['10.11.1.9/32', '10.11.1.254'],
        ['fd00:11:1::9/64', 'fd00:11:1::1'],
      ],
    );
    assert.deepEqual(out.routes, [
      { dst: `${gatewayIp(SUBNET)}/32` },
      { dst: '10.11.1.254/32' },
      { dst: '10.0.0.0/8', gw: gatewayIp(SUBNET) },
      { dst: '0.0.0.0/0', gw: '10.11.1.254' },
    ]);
  });

  it('refuses an allocation without an address as an IPAM error', () => {
    assert.throws(
      () => podAddressing({ ips: [], routes: [] }, subnet),
      (err: unknown) => err instanceof CniError && err.code === CNI_ERROR.ipam,
    );
  });
});

describe('PodAttacher on a real dataplane', { skip: skipUnlessRoot(), timeout: 180_000 }, () => {
  const node = useAttachFixture();

  /** Nothing of the attachment is left: no port, no host veth, no lease. */
  async function assertNothingOf(containerId: string): Promise<void> {
    const port = hostVethName(containerId, 'eth0');
    assert.equal(await node.ovs.getPort(port), undefined, 'no OVS port');
    assert.equal(await linkExists(port), false, 'no host veth');
    assert.deepEqual(
      (await node.leases()).filter((l) => l.containerId === containerId),
      [],
      'no lease',
    );
  }

  it('ADD wires the pod end with the MAC, address and gateway the watcher writes, and binds the port to the pod', async () => {
    const attacher = node.attacher();
    const ns = await node.netns();
    const cid = node.containerId();
    const pod = testPod('team-a');
    const result = await attacher.add(node.request('ADD', cid, ns.path, pod), new AbortController().signal);

    const address = result.ips[0]?.address ?? '';
    const ip = address.split('/')[0] ?? '';
    assert.match(address, /^10\.11\.1\.\d+\/32$/);
    const iface = await inspectPodInterface(ns.path, 'eth0');
    assert.ok(iface, 'the pod has eth0');
    assert.equal(iface.mac, podMac(ip));
    assert.equal(iface.mtu, 1400);
    assert.deepEqual(iface.addresses, [address]);
    assert.ok(iface.routes.some((r) => r.dst === '0.0.0.0/0' && r.gw === gatewayIp(SUBNET)));

    const port = await node.ovs.getPort(hostVethName(cid, 'eth0'));
    assert.ok(port && port.ofport > 0, 'ovs-vswitchd attached the port');
    assert.deepEqual(port.externalIds, {
      [EXTERNAL_ID.ifaceId]: `team-a:${pod.name}`,
      [EXTERNAL_ID.pod]: `team-a/${pod.name}`,
      [EXTERNAL_ID.attachedMac]: podMac(ip),
      [EXTERNAL_ID.ipAddress]: ip,
      [EXTERNAL_ID.containerId]: cid,
      [EXTERNAL_ID.podUid]: pod.uid,
    });
    assert.deepEqual(
      (await node.leases()).filter((l) => l.containerId === cid).map((l) => l.ip),
      [ip],
    );
    assert.deepEqual(
      result.interfaces.map((i) => [i.name, i.sandbox]),
      [
        [hostVethName(cid, 'eth0'), undefined],
        ['eth0', ns.path],
      ],
    );
    assert.equal(result.interfaces[1]?.mac, podMac(ip));
  });

  it('refuses before touching anything: no pod in CNI_ARGS, a bad pod name, an unknown subnet, a stale config', async () => {
    const ns = await node.netns();
    const cid = node.containerId();
    const signal = new AbortController().signal;
    const attacher = node.attacher();
    await refused(attacher.add(node.request('ADD', cid, ns.path), signal), CNI_ERROR.invalidEnvironment);
    await refused(
      attacher.add(node.request('ADD', cid, ns.path, { ...testPod(), namespace: 'Not_A_Label' }), signal),
      CNI_ERROR.invalidEnvironment,
      /podNamespace/,
    );
    await refused(
      node.attacher({ ipamState: () => undefined }).add(node.request('ADD', cid, ns.path, testPod()), signal),
      CNI_ERROR.tryAgainLater,
      /not known yet/,
    );
    const stale = { ipam: { type: 'host-local', ranges: [[{ subnet: '10.99.0.0/24' }]] } };
    await refused(
      attacher.add(node.request('ADD', cid, ns.path, testPod(), stale), signal),
      CNI_ERROR.invalidNetworkConfig,
      /not this node's pod subnet/,
    );
    await assertNothingOf(cid);
  });

  it('refuses a request for an older pod once the informer shows a newer one under the name', async () => {
    const ns = await node.netns();
    const cid = node.containerId();
    const pod = testPod();
    const attacher = node.attacher({ pods: { hasSynced: () => true, uidOf: () => 'uid-of-the-newer-pod' } });
    await refused(
      attacher.add(node.request('ADD', cid, ns.path, pod), new AbortController().signal),
      CNI_ERROR.tryAgainLater,
      /now has UID uid-of-the-newer-pod/,
    );
    await assertNothingOf(cid);
  });

  it('an ADD abandoned at its deadline undoes every step it took, whichever stage it reached', async () => {
    const attacher = node.attacher();
    for (const checks of [1, 2, 3]) {
      const ns = await node.netns();
      const cid = node.containerId();
      await refused(
        attacher.add(node.request('ADD', cid, ns.path, testPod()), deadlineAfter(checks)),
        CNI_ERROR.tryAgainLater,
        /ADD abandoned: the request deadline passed/,
      );
      await assertNothingOf(cid);
      assert.equal(
        await inspectPodInterface(ns.path, 'eth0'),
        undefined,
        `no pod interface (stage ${checks})`,
      );
    }
  });

  it("a pod re-created under its name takes the name's port: the older pod's attachment goes", async () => {
    const pod = testPod();
    const older = { ...pod, uid: 'uid-older' };
    const current = { ...pod, uid: 'uid-current' };
    let informerUid = older.uid;
    const attacher = node.attacher({ pods: { hasSynced: () => true, uidOf: () => informerUid } });
    const signal = new AbortController().signal;
    const oldCid = node.containerId();
    await attacher.add(node.request('ADD', oldCid, (await node.netns()).path, older), signal);

    informerUid = current.uid;
    const newCid = node.containerId();
    await attacher.add(node.request('ADD', newCid, (await node.netns()).path, current), signal);

    await assertNothingOf(oldCid);
    const bound = await node.ovs.listPorts(node.bridge, {
      withExternalIds: { [EXTERNAL_ID.ifaceId]: `${pod.namespace}:${pod.name}` },
    });
    assert.deepEqual(
      bound.map((p) => p.externalIds[EXTERNAL_ID.podUid]),
      [current.uid],
    );
  });

  it('CHECK passes for a wired pod and names what is missing once its lease is gone', async () => {
    const attacher = node.attacher();
    const ns = await node.netns();
    const cid = node.containerId();
    const pod = testPod();
    const result = await attacher.add(node.request('ADD', cid, ns.path, pod), new AbortController().signal);
    // What the runtime got from the ADD and hands back with CHECK.
    const prevResult = formatResult(result, '1.1.0');
    await attacher.check(node.request('CHECK', cid, ns.path, pod, { prevResult }));

    await node.ipamState.ipam.del({ containerId: cid, ifName: 'eth0' });
    await refused(
      attacher.check(node.request('CHECK', cid, ns.path, pod, { prevResult })),
      CNI_ERROR.ipam,
      /is not leased to container/,
    );
  });

  it('DEL removes port, veth and lease, and a second DEL (netns gone) still succeeds', async () => {
    const attacher = node.attacher();
    const ns = await node.netns();
    const cid = node.containerId();
    await attacher.add(node.request('ADD', cid, ns.path, testPod()), new AbortController().signal);
    await attacher.del(node.request('DEL', cid, ns.path));
    await assertNothingOf(cid);
    await ns.remove();
    await attacher.del(node.request('DEL', cid, ''));
    await assertNothingOf(cid);
  });

  it('GC removes what the runtime no longer lists, but not what it lists nor a sandbox in the middle of a request', async () => {
    const attacher = node.attacher();
    const signal = new AbortController().signal;
    const [listed, busy, gone] = [node.containerId(), node.containerId(), node.containerId()];
    for (const cid of [listed, busy, gone])
      await attacher.add(node.request('ADD', cid, (await node.netns()).path, testPod()), signal);
    const gc = node.request('GC', '', '', undefined, {
      'cni.dev/valid-attachments': [{ containerID: listed, ifname: 'eth0' }],
    });

    await attacher.gc(gc, (id) => id === busy);

    await assertNothingOf(gone);
    for (const kept of [listed, busy]) {
      assert.ok(await node.ovs.getPort(hostVethName(kept, 'eth0')), 'port kept');
      assert.ok(
        (await node.leases()).some((l) => l.containerId === kept),
        'lease kept',
      );
    }
  });
});
