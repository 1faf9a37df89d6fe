/**
 * Extra interfaces on a simulated node (real userspace OVS, netns, the agent, the shim), the
 * shim called exactly as Multus delegates to it: the NetworkAttachmentDefinition's config on
 * stdin (no `ipam`, no `socket` unless the NAD names one; `runtimeConfig` `ips`/`mac` only for
 * the capabilities the config declares), `CNI_IFNAME` `net1`..., Multus' CNI_ARGS, and Multus'
 * own handling of `default-route` (it deletes the default route of every other interface and
 * re-adds the requested one on the chosen interface). The records are written into the pod
 * the way the watcher writes them (src/netvirt/attachments.ts).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hostVethName } from '../../src/agent/names.js';
import { linkExists } from '../../src/agent/netns.js';
import {
  ATTACHMENTS_ANNOTATION,
  formatAttachments,
  type AttachmentErrorReason,
  type AttachmentRecord,
  type AttachmentRoute,
} from '../../src/netvirt/attachments.js';
import { Ovs } from '../../src/ovs/ovs.js';
import { startSimulatedNode, type SimulatedNode } from '../../src/sandbox/simulated-node.js';
import { silentLogger } from '../../src/common/log.js';
import { createNetns, execIn, skipUnlessRoot, waitForPing, type TestNetns } from '../helpers/netns.js';
import {
  cniEnv,
  execShim,
  leaseIps,
  putNodeNetwork,
  startTestNode,
  type ShimRun,
  type TestNode,
} from './testing.js';

const skip = skipUnlessRoot();

interface AddResult {
  interfaces: { name: string; mac: string; sandbox?: string }[];
  ips: { address: string; gateway?: string; interface: number }[];
  routes: { dst: string; gw?: string }[];
}

interface PodLink {
  ifname: string;
  address: string;
  addr_info: { family: string; local: string; prefixlen: number }[];
}

/** Two odlcoe networks as a user writes their NADs: blue dynamic, red with static ips/mac. */
const nadConfig = (name: string, socket: string, capabilities?: Record<string, boolean>) => ({
  cniVersion: '1.0.0',
  name,
  type: 'odlcoe',
  // Only because the test agent's socket is not the default one (the shim's default is the
  // agent's default socket, what a NAD written by a user relies on).
  socket,
  ...(capabilities ? { capabilities } : {}),
});

const allocation = (
  network: string,
  pod: string,
  ifName: string,
  ip: string,
  mac: string,
  routes: AttachmentRoute[],
): AttachmentRecord => ({
  network,
  interfaceName: `odlcoe-att:default:${pod}:${ifName}`,
  ips: [ip],
  mac,
  routes,
});

const refusal = (network: string, reason: AttachmentErrorReason, message: string): AttachmentRecord => ({
  network,
  error: { reason, message },
});

describe('extra interfaces through the shim as Multus delegates', { skip, timeout: 300_000 }, () => {
  let node: TestNode;
  let ovs: Ovs;
  let blue: Record<string, unknown>;
  let red: Record<string, unknown>;
  const namespaces: TestNetns[] = [];
  const pods = new Map<string, { uid: string; cid: string; ns: TestNetns }>();
  /** The second node, when its test runs: its own namespace, OVS and agent process. */
  let node2: SimulatedNode | undefined;
  let node2Dir = '';

  before(async () => {
    node = await startTestNode();
    node.config.cni.attachmentWaitSeconds = 2;
    ovs = new Ovs({ dbSocket: node.ovs.dbSocket });
    await node.startAgent();
    blue = nadConfig('blue', node.config.cni.socket);
    red = nadConfig('red', node.config.cni.socket, { ips: true, mac: true });
  });
  after(async () => {
    for (const ns of namespaces) await ns.remove().catch(() => undefined);
    await node2?.close();
    if (node2Dir) await rm(node2Dir, { recursive: true, force: true });
    ovs?.close();
    await node?.stop();
  });

  /** A pod in the simulator and its sandbox netns. */
  async function newPod(name: string): Promise<{ uid: string; cid: string; ns: TestNetns }> {
    const uid = await node.createPod(name);
    const ns = await createNetns('odlcoe-mpod');
    namespaces.push(ns);
    const pod = { uid, cid: `cid-${name}`, ns };
    pods.set(name, pod);
    return pod;
  }

  /** What the watcher does: the pod's odlcoe.io/attachments annotation. */
  async function writeRecords(pod: string, records: Record<string, AttachmentRecord>): Promise<void> {
    await node.kube.request('PATCH', `/api/v1/namespaces/default/pods/${pod}`, {
      body: {
        metadata: {
          annotations: { [ATTACHMENTS_ANNOTATION]: formatAttachments(new Map(Object.entries(records))) },
        },
      },
      contentType: 'application/merge-patch+json',
    });
  }

  /** The Events on a pod: recorded in the background, so polled until `count` are there (or 5 s). */
  async function eventsOf(
    pod: string,
    uid: string,
    count: number,
  ): Promise<{ reason: string; message: string; type: string }[]> {
    let ofPod: { reason: string; message: string; type: string }[] = [];
    for (let i = 0; i < 50 && ofPod.length < count; i += 1) {
      const list = await node.kube.request<{
        items: {
          reason: string;
          message: string;
          type: string;
          involvedObject: { name: string; uid?: string };
        }[];
      }>('GET', '/api/v1/namespaces/default/events');
      ofPod = list.items.filter((e) => e.involvedObject.name === pod && e.involvedObject.uid === uid);
      if (ofPod.length < count) await new Promise((r) => setTimeout(r, 100));
    }
    return ofPod;
  }

  /** The shim called as Multus calls a delegate for one selection element. */
  function delegate(
    command: 'ADD' | 'DEL' | 'CHECK',
    pod: string,
    ifName: string,
    nad: Record<string, unknown>,
    extra: { ips?: string[]; mac?: string; prevResult?: unknown } = {},
  ): Promise<ShimRun> {
    const p = pods.get(pod);
    assert.ok(p, pod);
    // libcni puts into runtimeConfig only what the config declares as a capability.
    const caps = (nad.capabilities ?? {}) as Record<string, boolean>;
    const runtimeConfig = {
      ...(caps.ips && extra.ips ? { ips: extra.ips } : {}),
      ...(caps.mac && extra.mac ? { mac: extra.mac } : {}),
    };
    const stdin = JSON.stringify({
      ...nad,
      ...(Object.keys(runtimeConfig).length > 0 ? { runtimeConfig } : {}),
      ...(extra.prevResult ? { prevResult: extra.prevResult } : {}),
    });
    return execShim(
      node.shim,
      {
        CNI_COMMAND: command,
        CNI_CONTAINERID: p.cid,
        CNI_NETNS: p.ns.path,
        CNI_IFNAME: ifName,
        CNI_ARGS: `IgnoreUnknown=true;K8S_POD_NAMESPACE=default;K8S_POD_NAME=${pod};K8S_POD_INFRA_CONTAINER_ID=${p.cid};K8S_POD_UID=${p.uid}`,
        CNI_PATH: '/usr/lib/cni',
      },
      stdin,
    );
  }

  /** The cluster network (eth0) through the agent's own conflist, as Multus' first delegate. */
  async function addEth0(pod: string): Promise<AddResult> {
    const p = pods.get(pod);
    assert.ok(p, pod);
    const out = await execShim(
      node.shim,
      cniEnv('ADD', p.cid, p.ns.path, { name: pod, uid: p.uid }),
      await node.pluginConfig('1.0.0'),
    );
    assert.equal(out.code, 0, out.stdout + out.stderr);
    return out.json as unknown as AddResult;
  }

  const ok = (out: ShimRun): AddResult => {
    assert.equal(out.code, 0, out.stdout + out.stderr);
    return out.json as unknown as AddResult;
  };

  const links = async (pod: string): Promise<Map<string, PodLink>> => {
    const p = pods.get(pod);
    assert.ok(p);
    const list = JSON.parse(await execIn(p.ns.path, 'ip', ['-j', 'addr', 'show'])) as PodLink[];
    return new Map(list.map((l) => [l.ifname, l]));
  };
  const v4 = (link: PodLink | undefined) =>
    (link?.addr_info ?? []).filter((a) => a.family === 'inet').map((a) => `${a.local}/${a.prefixlen}`);
  const routes = async (pod: string, args: string[]) =>
    JSON.parse(await execIn(pods.get(pod)?.ns.path ?? '', 'ip', ['-j', 'route', 'show', ...args])) as {
      dst: string;
      gateway?: string;
      dev: string;
    }[];
  const portOf = (pod: string, ifName: string) => hostVethName(pods.get(pod)?.cid ?? '', ifName);

  let eth0B = '';

  it('a pod gets eth0, a dynamic net1 and a static net2 with their addresses, MACs, routes and one default route', async () => {
    const a = await newPod('pod-a');
    await writeRecords('pod-a', {});
    await addEth0('pod-a');
    // Multus, because a selection of the pod has default-route: every other interface's
    // default route goes (netutils.DeleteDefaultGW on eth0).
    await execIn(a.ns.path, 'ip', ['route', 'del', 'default', 'dev', 'eth0']);

    // The watcher is slower than Multus here: the ADD waits for the record.
    const adding = delegate('ADD', 'pod-a', 'net1', blue);
    await new Promise((r) => setTimeout(r, 300));
    const net1 = allocation('default/blue', 'pod-a', 'net1', '10.50.0.5/24', '0a:58:0a:32:00:05', [
      { dst: '10.60.0.0/16', gw: '10.50.0.1' },
    ]);
    const net2 = allocation('default/red', 'pod-a', 'net2', '10.70.0.10/24', '02:aa:bb:cc:dd:01', [
      { dst: '0.0.0.0/0', gw: '10.70.0.1' },
    ]);
    await writeRecords('pod-a', { net1, net2 });
    const r1 = ok(await adding);
    const r2 = ok(
      await delegate('ADD', 'pod-a', 'net2', red, { ips: ['10.70.0.10/24'], mac: '02:aa:bb:cc:dd:01' }),
    );
    // Multus for the default-route selection: replaces net2's default route by its own.
    await execIn(a.ns.path, 'ip', ['route', 'del', 'default', 'dev', 'net2']);
    await execIn(a.ns.path, 'ip', ['route', 'add', 'default', 'via', '10.70.0.1', 'dev', 'net2']);

    assert.deepEqual(r1.interfaces, [
      { name: portOf('pod-a', 'net1'), mac: r1.interfaces[0]?.mac },
      { name: 'net1', mac: '0a:58:0a:32:00:05', sandbox: a.ns.path },
    ]);
    assert.deepEqual(r1.ips, [{ address: '10.50.0.5/24', interface: 1 }]);
    assert.deepEqual(r1.routes, [{ dst: '10.60.0.0/16', gw: '10.50.0.1' }]);
    assert.deepEqual(r2.ips, [{ address: '10.70.0.10/24', gateway: '10.70.0.1', interface: 1 }]);
    assert.deepEqual(r2.routes, [{ dst: '0.0.0.0/0', gw: '10.70.0.1' }]);

    const inPod = await links('pod-a');
    assert.match(v4(inPod.get('eth0'))[0] ?? '', /^10\.11\.1\.\d+\/32$/);
    assert.deepEqual(v4(inPod.get('net1')), ['10.50.0.5/24']);
    assert.equal(inPod.get('net1')?.address, '0a:58:0a:32:00:05');
    assert.deepEqual(v4(inPod.get('net2')), ['10.70.0.10/24']);
    assert.equal(inPod.get('net2')?.address, '02:aa:bb:cc:dd:01');
    assert.deepEqual(
      (await routes('pod-a', ['default'])).map((r) => [r.gateway, r.dev]),
      [['10.70.0.1', 'net2']],
      'exactly one default route, on net2',
    );
    assert.deepEqual(
      (await routes('pod-a', ['10.60.0.0/16'])).map((r) => [r.gateway, r.dev]),
      [['10.50.0.1', 'net1']],
    );

    const net1Port = await ovs.getPort(portOf('pod-a', 'net1'));
    assert.ok(net1Port && net1Port.ofport > 0);
    assert.deepEqual(net1Port.externalIds, {
      'iface-id': 'odlcoe-att:default:pod-a:net1',
      'attached-mac': '0a:58:0a:32:00:05',
      'ip-address': '10.50.0.5',
      'container-id': 'cid-pod-a',
      'pod-uid': a.uid,
      'odlcoe-network': 'default/blue',
      'odlcoe-pod': 'default/pod-a',
      'odlcoe-ifname': 'net1',
      'odlcoe-cni-network': 'blue',
    });
    assert.equal(
      (await ovs.getPort(portOf('pod-a', 'net2')))?.externalIds['iface-id'],
      'odlcoe-att:default:pod-a:net2',
    );
    assert.equal((await ovs.getPort(portOf('pod-a', 'eth0')))?.externalIds['iface-id'], 'default:pod-a');

    const check = await delegate('CHECK', 'pod-a', 'net1', blue, { prevResult: r1 });
    assert.equal(check.code, 0, check.stdout);
  });

  it('pods on the same node and network reach each other over the extra interface', async () => {
    const b = await newPod('pod-b');
    await writeRecords('pod-b', {
      net1: allocation('default/blue', 'pod-b', 'net1', '10.50.0.6/24', '0a:58:0a:32:00:06', []),
      net2: allocation('default/red', 'pod-b', 'net2', '10.70.0.11/24', '0a:58:0a:46:00:0b', []),
    });
    eth0B = (await addEth0('pod-b')).ips[0]?.address.split('/')[0] ?? '';
    ok(await delegate('ADD', 'pod-b', 'net1', blue));
    ok(await delegate('ADD', 'pod-b', 'net2', red));
    // No default-route selection on this pod: Multus leaves eth0's default route alone.
    assert.deepEqual(
      (await routes('pod-b', ['default'])).map((r) => r.dev),
      ['eth0'],
    );
    const a = pods.get('pod-a');
    assert.ok(a);
    await waitForPing(a.ns.path, '10.50.0.6');
    await waitForPing(b.ns.path, '10.50.0.5');
    await waitForPing(a.ns.path, '10.70.0.11');
  });

  it('a second pod on another node on the same network gets its own, different address', async () => {
    // Node n2 of the same cluster: a network namespace with its own OVS and agent process,
    // its pod subnet in ODL as the watcher writes it.
    await node.sim.seed([
      {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'n2' },
        status: { addresses: [{ type: 'InternalIP', address: '192.168.56.102' }] },
      },
    ]);
    await putNodeNetwork(node.odl.url, '10.11.2.0/24', 'n2');
    node2Dir = await mkdtemp(join(tmpdir(), 'odlcoe-multus-n2-'));
    node2 = await startSimulatedNode({
      name: 'n2',
      dir: node2Dir,
      kubeconfigPath: join(node.dir, 'kubeconfig'),
      kubePort: node.sim.port,
      odlUrl: node.odl.url,
      odlPort: Number(new URL(node.odl.url).port),
      odlUser: 'admin',
      odlPasswordFile: join(node.dir, 'odl-password'),
      odlDialect: 'bierman02',
      metricsPort: 0,
      logLevel: 'warn',
      logger: silentLogger(),
    });
    const created = await node.kube.request<{ metadata: { uid: string } }>(
      'POST',
      '/api/v1/namespaces/default/pods',
      {
        body: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: {
            name: 'pod-x',
            namespace: 'default',
            annotations: {
              [ATTACHMENTS_ANNOTATION]: formatAttachments(
                new Map([
                  [
                    'net1',
                    allocation('default/blue', 'pod-x', 'net1', '10.50.0.7/24', '0a:58:0a:32:00:07', []),
                  ],
                ]),
              ),
            },
          },
          spec: { nodeName: 'n2', containers: [{ name: 'c', image: 'pause' }] },
        },
      },
    );
    const ns = await createNetns('odlcoe-mpod');
    namespaces.push(ns);
    pods.set('pod-x', { uid: created.metadata.uid, cid: 'cid-pod-x', ns });
    const out = ok(await delegate('ADD', 'pod-x', 'net1', { ...blue, socket: node2.cniSocket }));
    assert.deepEqual(out.ips, [{ address: '10.50.0.7/24', interface: 1 }]);
    assert.deepEqual(v4((await links('pod-x')).get('net1')), ['10.50.0.7/24']);
    assert.notDeepEqual(v4((await links('pod-a')).get('net1')), v4((await links('pod-x')).get('net1')));
    const ovs2 = new Ovs({ dbSocket: node2.ovs.dbSocket });
    try {
      const port = await ovs2.getPort(portOf('pod-x', 'net1'));
      assert.equal(port?.externalIds['ip-address'], '10.50.0.7');
      assert.equal(port?.externalIds['iface-id'], 'odlcoe-att:default:pod-x:net1');
    } finally {
      ovs2.close();
    }
    assert.equal(await ovs.getPort(portOf('pod-x', 'net1')), undefined, 'nothing of it on node n1');
  });

  it('refused allocations: each its own CNI error and Event on the pod, nothing made', async () => {
    const c = await newPod('pod-c');
    const refusals: [string, AttachmentErrorReason, string][] = [
      ['net1', 'ip-taken', '10.50.0.5 is held by default/pod-a'],
      ['net2', 'ip-outside-subnet', '10.99.0.4 is in no subnet of default/blue (10.50.0.0/24)'],
      ['net3', 'malformed-mac', '"0a:zz:00:00:00:01" is not a unicast 48-bit MAC'],
      ['net4', 'unknown-network', 'NetworkAttachmentDefinition default/green does not exist'],
    ];
    await writeRecords(
      'pod-c',
      Object.fromEntries(
        refusals.map(([ifName, reason, msg]) => [ifName, refusal('default/blue', reason, msg)]),
      ),
    );
    for (const [ifName, reason, message] of refusals) {
      const out = await delegate('ADD', 'pod-c', ifName, blue);
      assert.equal(out.code, 1, out.stdout);
      assert.deepEqual(out.json, {
        cniVersion: '1.0.0',
        code: 106,
        msg: `${ifName} on network default/blue refused: ${reason}: ${message}`,
        details: `reason: ${reason}`,
      });
      assert.equal(await ovs.getPort(portOf('pod-c', ifName)), undefined, `no port for ${ifName}`);
      assert.equal(await linkExists(portOf('pod-c', ifName)), false, `no host veth for ${ifName}`);
    }
    assert.deepEqual([...(await links('pod-c')).keys()], ['lo'], 'nothing inside the pod');
    const ofPod = await eventsOf('pod-c', c.uid, refusals.length);
    assert.ok(
      ofPod.every((e) => e.type === 'Warning'),
      'Warning Events',
    );
    const metrics = await (await fetch(`http://127.0.0.1:${node.agent?.metricsPort}/metrics`)).text();
    for (const [, reason] of refusals)
      assert.match(
        metrics,
        new RegExp(`^odlcoe_agent_extra_interface_refusals_total\\{reason="${reason}"\\} 1$`, 'm'),
      );
    assert.deepEqual(ofPod.map((e) => [e.reason, e.message]).sort(), [
      [
        'ExtraInterfaceIpOutsideSubnet',
        `net2 on network default/blue refused: ip-outside-subnet: ${refusals[1]?.[2]}`,
      ],
      ['ExtraInterfaceIpTaken', `net1 on network default/blue refused: ip-taken: ${refusals[0]?.[2]}`],
      [
        'ExtraInterfaceMalformedMac',
        `net3 on network default/blue refused: malformed-mac: ${refusals[2]?.[2]}`,
      ],
      [
        'ExtraInterfaceUnknownNetwork',
        `net4 on network default/blue refused: unknown-network: ${refusals[3]?.[2]}`,
      ],
    ]);
  });

  it('without an allocation in time (or one that is not what the request asks for): try again later, naming what was missing', async () => {
    await newPod('pod-d');
    const none = await delegate('ADD', 'pod-d', 'net1', blue);
    assert.equal(none.code, 1);
    assert.deepEqual(none.json, {
      cniVersion: '1.0.0',
      code: 11,
      msg: `no allocation for net1 of pod default/pod-d within 2 s: pod default/pod-d has no annotation ${ATTACHMENTS_ANNOTATION}`,
      details: `odlcoe-watcher writes it into the pod annotation ${ATTACHMENTS_ANNOTATION}; check that it runs and that the NetworkAttachmentDefinition is an odlcoe network`,
    });
    await writeRecords('pod-d', {
      net1: allocation('default/red', 'pod-d', 'net1', '10.70.0.20/24', '02:aa:bb:cc:dd:20', []),
    });
    const stale = await delegate('ADD', 'pod-d', 'net1', red, { ips: ['10.70.0.21/24'] });
    assert.equal((stale.json as { code: number }).code, 11);
    assert.match(
      (stale.json as { msg: string }).msg,
      /the record for net1 has ips 10\.70\.0\.20\/24, the request asks for 10\.70\.0\.21\/24$/,
    );
    assert.equal(await ovs.getPort(portOf('pod-d', 'net1')), undefined);
    assert.deepEqual([...(await links('pod-d')).keys()], ['lo']);
  });

  it('a record the kernel would refuse (a multicast MAC) and a timeout get their Events too', async () => {
    await writeRecords('pod-c', {
      net5: allocation('default/blue', 'pod-c', 'net5', '10.50.0.9/24', '01:00:5e:00:00:09', []),
    });
    const out = await delegate('ADD', 'pod-c', 'net5', blue);
    assert.equal(out.code, 1, out.stdout);
    assert.equal((out.json as { code: number }).code, 106);
    const msg = (out.json as { msg: string }).msg;
    assert.match(
      msg,
      /^the allocation of net5 \(network default\/blue\) is unusable: .*must be a unicast address/,
    );
    assert.equal(await ovs.getPort(portOf('pod-c', 'net5')), undefined);
    assert.equal(await linkExists(portOf('pod-c', 'net5')), false);
    const c = pods.get('pod-c');
    const d = pods.get('pod-d');
    assert.ok(c && d);
    assert.deepEqual(
      (await eventsOf('pod-c', c.uid, 5)).find((e) => e.reason === 'ExtraInterfaceUnusable')?.message,
      msg,
    );
    const timeouts = await eventsOf('pod-d', d.uid, 1);
    assert.deepEqual(
      timeouts.map((e) => [e.type, e.reason]),
      [['Warning', 'ExtraInterfaceTimeout']],
    );
    assert.match(timeouts[0]?.message ?? '', /^no allocation for net1 of pod default\/pod-d within 2 s/);
  });

  it('an ADD failing half-way (a default route the pod already has) is undone and names the cause', async () => {
    await newPod('pod-f');
    await writeRecords('pod-f', {
      net1: allocation('default/red', 'pod-f', 'net1', '10.70.0.30/24', '02:aa:bb:cc:dd:30', [
        { dst: '0.0.0.0/0', gw: '10.70.0.1' },
      ]),
    });
    await addEth0('pod-f');
    // Called without Multus' default-route step: eth0 keeps its default route.
    const out = await delegate('ADD', 'pod-f', 'net1', red);
    assert.equal(out.code, 1, out.stdout);
    const error = out.json as { code: number; msg: string; details?: string };
    assert.equal(error.code, 103);
    assert.match(error.msg, /^could not configure net1: .*File exists/);
    assert.match(error.details ?? '', /Multus removes the cluster network’s default route/);
    assert.equal(await ovs.getPort(portOf('pod-f', 'net1')), undefined, 'no port');
    assert.equal(await linkExists(portOf('pod-f', 'net1')), false, 'veth removed again');
    assert.deepEqual([...(await links('pod-f')).keys()].sort(), ['eth0', 'lo'], 'no net1 in the pod');
    assert.deepEqual(
      (await routes('pod-f', ['default'])).map((r) => r.dev),
      ['eth0'],
      "eth0's default route untouched",
    );
    assert.ok(await ovs.getPort(portOf('pod-f', 'eth0')));
  });

  it('DEL of net1 leaves eth0 and net2 working', async () => {
    const a = pods.get('pod-a');
    assert.ok(a);
    const leases = await leaseIps(node);
    const del = await delegate('DEL', 'pod-a', 'net1', blue);
    assert.equal(del.code, 0, del.stdout);
    assert.equal(await ovs.getPort(portOf('pod-a', 'net1')), undefined);
    assert.equal(await linkExists(portOf('pod-a', 'net1')), false);
    assert.equal((await links('pod-a')).has('net1'), false);
    assert.deepEqual(await leaseIps(node), leases, 'no lease touched');
    assert.ok(await ovs.getPort(portOf('pod-a', 'eth0')));
    assert.ok(await ovs.getPort(portOf('pod-a', 'net2')));
    await waitForPing(a.ns.path, eth0B);
    await waitForPing(a.ns.path, '10.70.0.11');
    assert.deepEqual(
      (await routes('pod-a', ['default'])).map((r) => [r.gateway, r.dev]),
      [['10.70.0.1', 'net2']],
    );
  });

  it("GC of one network never removes another's live attachments", async () => {
    const valid = ['pod-a', 'pod-b'].map((p) => ({ containerID: pods.get(p)?.cid, ifname: 'eth0' }));
    const gc = await execShim(
      node.shim,
      { CNI_COMMAND: 'GC', CNI_PATH: '/usr/lib/cni' },
      await node.pluginConfig('1.1.0', { 'cni.dev/valid-attachments': valid }),
    );
    assert.equal(gc.code, 0, gc.stdout);
    for (const [pod, ifName] of [
      ['pod-a', 'eth0'],
      ['pod-a', 'net2'],
      ['pod-b', 'eth0'],
      ['pod-b', 'net1'],
      ['pod-b', 'net2'],
    ] as const)
      assert.ok(await ovs.getPort(portOf(pod, ifName)), `${pod} ${ifName} kept`);
    // red's own GC, listing only pod-a's net2: pod-b's red attachment goes, nothing else.
    const redGc = await execShim(
      node.shim,
      { CNI_COMMAND: 'GC', CNI_PATH: '/usr/lib/cni' },
      JSON.stringify({
        ...red,
        cniVersion: '1.1.0',
        'cni.dev/valid-attachments': [{ containerID: 'cid-pod-a', ifname: 'net2' }],
      }),
    );
    assert.equal(redGc.code, 0, redGc.stdout);
    assert.equal(await ovs.getPort(portOf('pod-b', 'net2')), undefined);
    assert.equal(await linkExists(portOf('pod-b', 'net2')), false);
    for (const [pod, ifName] of [
      ['pod-a', 'net2'],
      ['pod-b', 'net1'],
      ['pod-b', 'eth0'],
    ] as const)
      assert.ok(await ovs.getPort(portOf(pod, ifName)), `${pod} ${ifName} kept`);
  });

  it('deleting the pod (Multus: DEL of every delegate, last first) leaves nothing', async () => {
    const a = pods.get('pod-a');
    assert.ok(a);
    for (const [ifName, nad] of [
      ['net2', red],
      ['net1', blue],
    ] as const) {
      const out = await delegate('DEL', 'pod-a', ifName, nad);
      assert.equal(out.code, 0, out.stdout);
    }
    const leased = (await leaseIps(node)).length;
    const del = await execShim(
      node.shim,
      cniEnv('DEL', a.cid, a.ns.path, { name: 'pod-a', uid: a.uid }),
      await node.pluginConfig('1.0.0'),
    );
    assert.equal(del.code, 0, del.stdout);
    await node.deletePod('pod-a');
    const left = (await ovs.listPorts(node.bridge)).filter((p) => p.externalIds['container-id'] === a.cid);
    assert.deepEqual(left, [], 'no OVS port of the pod');
    for (const ifName of ['eth0', 'net1', 'net2'])
      assert.equal(await linkExists(portOf('pod-a', ifName)), false, `no host veth ${ifName}`);
    assert.equal((await leaseIps(node)).length, leased - 1, 'its eth0 lease released');
    assert.ok(await ovs.getPort(portOf('pod-b', 'net1')), "pod-b's attachments stay");
  });

  it("an agent restart removes what a pod deleted without DELs left (its extra interfaces too), never a live pod's", async () => {
    await newPod('pod-e');
    await writeRecords('pod-e', {
      net1: allocation('default/blue', 'pod-e', 'net1', '10.50.0.8/24', '0a:58:0a:32:00:08', []),
    });
    await addEth0('pod-e');
    ok(await delegate('ADD', 'pod-e', 'net1', blue));
    const b = pods.get('pod-b');
    assert.ok(b);
    const leased = (await leaseIps(node)).length;
    // pod-b is deleted while the agent is away: no DEL ever comes for it.
    await node.stopAgent();
    await node.deletePod('pod-b');
    await node.startAgent();
    for (const ifName of ['eth0', 'net1']) {
      assert.equal(await ovs.getPort(portOf('pod-b', ifName)), undefined, `pod-b ${ifName} port removed`);
      assert.equal(await linkExists(portOf('pod-b', ifName)), false, `pod-b ${ifName} veth removed`);
    }
    assert.equal((await leaseIps(node)).length, leased - 1, "pod-b's lease released");
    for (const ifName of ['eth0', 'net1'])
      assert.ok(await ovs.getPort(portOf('pod-e', ifName)), `pod-e ${ifName} kept`);
    assert.deepEqual(v4((await links('pod-e')).get('net1')), ['10.50.0.8/24']);
  });
});
