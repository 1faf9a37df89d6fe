/**
 * `odlcoectl trace`, run as a child process as an operator runs it on the pod's node: a pod
 * whose ODL objects the watcher wrote and whose OVS port the agent attached (a real veth on a
 * real userspace OVS, with the agent's external_ids) traces OK with exit 0; then, one fault at
 * a time, made by hand the way things break in production, the trace names the FIRST broken
 * piece in dependency order, with the object and where it lives, and exits 1.
 *
 * The OVS part needs root (a network namespace, a veth, ovs-vswitchd); the ODL/Kubernetes
 * part of the trace runs everywhere.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { TraceReport } from '../../src/cli/trace/index.js';
import { run } from '../../src/common/exec.js';
import { deleteHostVeth } from '../../src/agent/netns.js';
import { Ovs } from '../../src/ovs/ovs.js';
import { netvirtPaths } from '../../src/netvirt/index.js';
import { turnTxChecksumOffloadOff } from '../../src/ovs/pod-interface.js';
import { createNetns, skipUnlessRoot, type TestNetns } from '../helpers/netns.js';
import { startOvsSandbox, type OvsSandbox } from '../helpers/ovs-sandbox.js';
import { createBareVeth } from '../helpers/pod-veth.js';
import { createCluster, createPod, programOdl, startHarness, uidOf, type CliHarness } from './testing.js';

const BRIDGE = 'br-int';
const POD = 'default/web-0';
const IFACE = 'default:web-0';
const MAC = '0a:58:0a:0b:01:05';
const IP = '10.11.1.5';

function parse(stdout: string): TraceReport {
  return JSON.parse(stdout) as TraceReport;
}

describe('odlcoectl trace on the pod node (real OVS)', { skip: skipUnlessRoot() }, () => {
  let h: CliHarness;
  let netns: TestNetns | undefined;
  let sandbox: OvsSandbox | undefined;
  let ovs: Ovs;
  let podUid: string;
  let apiUid: string;
  const port = `veth${randomBytes(4).toString('hex')}`;
  const peer = `pod${port.slice(4)}`;

  const attach = () =>
    ovs.addPort(BRIDGE, port, {
      'iface-id': IFACE,
      'attached-mac': MAC,
      'ip-address': IP,
      'pod-uid': podUid,
      'container-id': 'c0ffee',
    });
  const args = () => ['trace', POD, '--ovs-db', sandbox?.dbSocket ?? '', '-o', 'json'];
  /** As an operator runs it: a child process. */
  const trace = () => h.spawn(args());
  /** The same, in this process (faster, for the finer-grained cases). */
  const traceHere = () => h.run(args());

  before(async () => {
    h = await startHarness('sodium', 'bierman02');
    const cluster = await createCluster(h);
    await programOdl(h, cluster);
    podUid = uidOf(cluster.pods, 'web-0', 'default');
    apiUid = uidOf(cluster.pods, 'api-0', 'team-a');
    // The node's OVS runs in its own namespace (so it shares nothing with other tests), with
    // the host end of the pod's veth there, as the agent leaves it after a CNI ADD.
    netns = await createNetns('odlcoectl');
    await run('ip', ['-n', netns.name, 'link', 'add', port, 'type', 'veth', 'peer', 'name', peer]);
    await run('ip', ['-n', netns.name, 'link', 'set', port, 'up']);
    await run('ip', ['-n', netns.name, 'link', 'set', peer, 'up']);
    sandbox = await startOvsSandbox({ netns: netns.name });
    ovs = new Ovs({ dbSocket: sandbox.dbSocket });
    await ovs.ensureBridge(BRIDGE, { datapathType: 'netdev' });
    await attach();
  });

  after(async () => {
    await sandbox?.stop();
    await netns?.remove();
    await h?.close();
  });

  it('a healthy pod traces OK (exit 0), OVS port and external_ids included', async () => {
    const res = await trace();
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const r = parse(res.stdout);
    assert.equal(r.verdict, 'ok');
    assert.equal(r.firstProblem, null);
    assert.deepEqual(
      r.steps.map((s) => [s.step, s.status]),
      [
        ['pod', 'ok'],
        ['node-subnet', 'ok'],
        ['vpn-instance', 'ok'],
        ['elan-instance', 'ok'],
        ['ietf-interface', 'ok'],
        ['elan-interface', 'ok'],
        ['vpn-interface', 'ok'],
        ['ovs-port', 'ok'],
        ['ovs-external-ids', 'ok'],
        // The veth is in the node's namespace, not in trace's: its pod end cannot be looked at.
        ['checksum-offload', 'not-checked'],
      ],
    );
    assert.match(
      r.steps.find((s) => s.step === 'checksum-offload')?.message ?? '',
      new RegExp(
        `${port} is not a veth in this network namespace \\(run trace in the host network namespace`,
      ),
    );
    assert.equal(r.steps.find((s) => s.step === 'ovs-port')?.object, `OVS port ${port}`);
    assert.deepEqual([r.node, r.ip, r.mac], ['node-a', IP, MAC]);
  });

  it("on the pod's node it reports the pod interface's TX checksum offload against the datapath", async () => {
    // As the agent leaves a pod on a node: the host end beside a userspace OVS in trace's own
    // network namespace, the pod end in the pod's.
    const hostOvs = await startOvsSandbox();
    const podNetns = await createNetns('odlcoectl-pod');
    let hostVeth: string | undefined;
    try {
      const hostBridge = new Ovs({ dbSocket: hostOvs.dbSocket });
      await hostBridge.ensureBridge(BRIDGE, { datapathType: 'netdev' });
      ({ hostVeth } = await createBareVeth(podNetns.path, {
        mac: '0a:58:0a:0b:01:06',
        track: (v) => (hostVeth = v),
      }));
      await hostBridge.addPort(BRIDGE, hostVeth, {
        'iface-id': 'team-a:api-0',
        'attached-mac': '0a:58:0a:0b:01:06',
        'ip-address': '10.11.1.6',
        'pod-uid': apiUid,
        'container-id': 'c0ffee-api',
      });
      hostBridge.close();
      // OVS's own notation for the socket, as `ovs-vsctl --db` takes it.
      const traceApi = () =>
        h.spawn(['trace', 'team-a/api-0', '--ovs-db', `unix:${hostOvs.dbSocket}`, '-o', 'json']);
      const offloadStep = (r: TraceReport) => r.steps.find((s) => s.step === 'checksum-offload');

      // A veth as the kernel makes it: offload on, which the netdev datapath cannot carry.
      const on = await traceApi();
      assert.equal(on.code, 1, on.stderr + on.stdout);
      const broken = parse(on.stdout);
      assert.equal(broken.firstProblem?.step, 'checksum-offload');
      assert.equal(broken.firstProblem?.status, 'mismatch');
      assert.equal(broken.firstProblem?.object, `eth0 in network namespace ${podNetns.name}`);
      assert.match(
        broken.firstProblem?.message ?? '',
        /TX checksum offload is on for eth0 .* without other_config:userspace-tso-enable=true.*bad checksums/,
      );

      // As the agent's ADD leaves it.
      await turnTxChecksumOffloadOff(podNetns.path, 'eth0');
      const off = await traceApi();
      assert.equal(off.code, 0, off.stderr + off.stdout);
      assert.equal(offloadStep(parse(off.stdout))?.status, 'ok');
      assert.match(
        offloadStep(parse(off.stdout))?.message ?? '',
        /TX checksum offload is off on eth0 in network namespace/,
      );

      // With userspace TSO configured, offload may stay on.
      await hostOvs.vsctl(['set', 'Open_vSwitch', '.', 'other_config:userspace-tso-enable=true']);
      await run('nsenter', [`--net=${podNetns.path}`, 'ethtool', '-K', 'eth0', 'tx', 'on']);
      const tso = await traceApi();
      assert.equal(tso.code, 0, tso.stderr + tso.stdout);
      assert.match(offloadStep(parse(tso.stdout))?.message ?? '', /may stay on: .*userspace-tso-enable=true/);
    } finally {
      if (hostVeth) await deleteHostVeth(hostVeth).catch(() => undefined);
      await podNetns.remove();
      await hostOvs.stop();
    }
  });

  it("lists every OVS port of the pod, its extra interfaces' (Multus attachments) too, and no other pod's", async () => {
    const extraPort = (name: string, pod: string, ifName: string, ip: string) => [
      'add-port',
      BRIDGE,
      name,
      '--',
      'set',
      'Interface',
      name,
      'type=internal',
      `external_ids:iface-id="odlcoe-att:${pod.replace('/', ':')}:${ifName}"`,
      'external_ids:container-id=c0ffee',
      'external_ids:odlcoe-network="default/blue"',
      `external_ids:odlcoe-pod="${pod}"`,
      `external_ids:odlcoe-ifname=${ifName}`,
      'external_ids:attached-mac="0a:58:0a:32:00:05"',
      `external_ids:ip-address=${ip}`,
    ];
    const mine = `veth${randomBytes(4).toString('hex')}`;
    const other = `veth${randomBytes(4).toString('hex')}`;
    await sandbox?.vsctl(extraPort(mine, POD, 'net1', '10.50.0.5'));
    await sandbox?.vsctl(extraPort(other, 'team-a/api-0', 'net1', '10.50.0.6'));
    try {
      const res = await traceHere();
      assert.equal(res.code, 0, res.stderr + res.stdout);
      const r = parse(res.stdout);
      assert.equal(r.verdict, 'ok');
      assert.deepEqual(
        r.ovsPorts?.map((p) => [p.ifName, p.port, p.ifaceId, p.network, p.mac, p.ips]),
        [
          ['eth0', port, IFACE, null, MAC, [IP]],
          ['net1', mine, 'odlcoe-att:default:web-0:net1', 'default/blue', '0a:58:0a:32:00:05', ['10.50.0.5']],
        ],
      );
      const human = await h.run(['trace', POD, '--ovs-db', sandbox?.dbSocket ?? '']);
      assert.equal(human.code, 0, human.stderr);
      assert.match(
        human.stdout,
        new RegExp(
          `^OVS ports of the pod:\n  eth0  ${port}  ofport \\d+  iface-id ${IFACE}  mac ${MAC}  ip ${IP}\n  net1  ${mine}  ofport \\d+  iface-id odlcoe-att:default:web-0:net1  network default/blue  mac 0a:58:0a:32:00:05  ip 10.50.0.5$`,
          'm',
        ),
      );
    } finally {
      await sandbox?.vsctl(['del-port', BRIDGE, mine]);
      await sandbox?.vsctl(['del-port', BRIDGE, other]);
    }
  });

  it('after the OVS port is removed by hand it pinpoints the missing port', async () => {
    await sandbox?.vsctl(['del-port', BRIDGE, port]);
    try {
      const res = await trace();
      assert.equal(res.code, 1, res.stderr);
      const r = parse(res.stdout);
      assert.equal(r.verdict, 'problem');
      assert.equal(r.firstProblem?.step, 'ovs-port');
      assert.equal(r.firstProblem?.status, 'missing');
      assert.match(
        r.firstProblem?.message ?? '',
        /no OVS port with external_ids:iface-id=default:web-0 on br-int/,
      );
      // Everything before it was fine.
      assert.ok(r.steps.slice(0, 7).every((s) => s.status === 'ok'));
      // And the human output says the same, marked.
      const human = await h.run(['trace', POD, '--ovs-db', sandbox?.dbSocket ?? '']);
      assert.equal(human.code, 1);
      assert.match(
        human.stdout,
        /^> MISSING +ovs-port +no OVS port with external_ids:iface-id=default:web-0/m,
      );
      assert.match(human.stdout, /FIRST PROBLEM \(ovs-port\)/);
    } finally {
      await attach();
    }
  });

  it('a wrong attached-mac on the port is named', async () => {
    await sandbox?.vsctl(['set', 'Interface', port, 'external_ids:attached-mac="0a:58:0a:0b:01:99"']);
    try {
      const res = await traceHere();
      assert.equal(res.code, 1, res.stderr);
      const r = parse(res.stdout);
      assert.equal(r.firstProblem?.step, 'ovs-external-ids');
      assert.match(
        r.firstProblem?.message ?? '',
        /attached-mac is 0a:58:0a:0b:01:99, the pod's MAC is 0a:58:0a:0b:01:05/,
      );
    } finally {
      await sandbox?.vsctl(['set', 'Interface', port, `external_ids:attached-mac="${MAC}"`]);
    }
  });

  it("a static pod's port carries the static UID, which its mirror pod only annotates", async () => {
    // kubelet passes CNI the static pod's UID (a hash of its manifest); the API server's copy,
    // the mirror pod, has a UID of its own and the static one in kubernetes.io/config.mirror.
    const staticUid = 'b1f0c7d2e3a4956877a1b2c3d4e5f607';
    const setMirror = async (value: string | undefined) => {
      const pod = await h.core.readNamespacedPod({ name: 'web-0', namespace: 'default' });
      const annotations = { ...(pod.metadata?.annotations ?? {}) };
      if (value === undefined) delete annotations['kubernetes.io/config.mirror'];
      else annotations['kubernetes.io/config.mirror'] = value;
      pod.metadata = { ...pod.metadata, annotations };
      await h.core.replaceNamespacedPod({ name: 'web-0', namespace: 'default', body: pod });
    };
    await sandbox?.vsctl(['set', 'Interface', port, `external_ids:pod-uid="${staticUid}"`]);
    try {
      const mismatch = parse((await traceHere()).stdout);
      assert.equal(mismatch.firstProblem?.step, 'ovs-external-ids');
      assert.match(
        mismatch.firstProblem?.message ?? '',
        new RegExp(`pod-uid is ${staticUid}, the pod's UID is ${podUid}`),
      );
      await setMirror(staticUid);
      const res = await traceHere();
      assert.equal(res.code, 0, res.stderr + res.stdout);
      assert.equal(parse(res.stdout).steps.find((s) => s.step === 'ovs-external-ids')?.status, 'ok');
    } finally {
      await setMirror(undefined);
      await sandbox?.vsctl(['set', 'Interface', port, `external_ids:pod-uid="${podUid}"`]);
    }
    assert.equal((await traceHere()).code, 0);
  });

  it('after the ietf-interface is deleted by hand from ODL it pinpoints that, with its path', async () => {
    const path = netvirtPaths('sodium').interface(IFACE);
    const saved = await h.odl.get(path);
    await h.odl.delete(path);
    try {
      const res = await trace();
      assert.equal(res.code, 1, res.stderr);
      const r = parse(res.stdout);
      assert.equal(r.firstProblem?.step, 'ietf-interface');
      assert.equal(r.firstProblem?.status, 'missing');
      assert.equal(r.firstProblem?.object, `ietf-interface ${IFACE}`);
      const url = `${h.emulator.url}/restconf/config/ietf-interfaces:interfaces/interface/${IFACE}`;
      assert.equal(r.firstProblem?.path, url);
      assert.match(
        r.firstProblem?.message ?? '',
        new RegExp(`ietf-interface ${IFACE} is missing in ODL \\(${url.replace(/[.]/g, '\\.')}\\)`),
      );
      // Its elan-interface is still there; the OVS port too.
      assert.equal(r.steps.find((s) => s.step === 'elan-interface')?.status, 'ok');
      assert.equal(r.steps.find((s) => s.step === 'ovs-port')?.status, 'ok');
    } finally {
      await h.odl.put(path, saved);
    }
    assert.equal((await traceHere()).code, 0);
  });

  it('a node without a pod subnet in ODL comes before everything in ODL that needs it', async () => {
    // The node's network (odlcoe-node:<node>) is where ODL holds its pod subnet, on every release.
    const path = netvirtPaths('sodium').dhcpNetwork('odlcoe-node:node-a');
    const saved = await h.odl.get(path);
    await h.odl.delete(path);
    try {
      const res = await traceHere();
      assert.equal(res.code, 1, res.stderr);
      const r = parse(res.stdout);
      assert.equal(r.firstProblem?.step, 'node-subnet');
      assert.match(
        r.firstProblem?.message ?? '',
        /^dhcp-network odlcoe-node:node-a is missing in ODL \(http:\/\/127\.0\.0\.1:\d+\/restconf\/config\/dhcp_allocation_pool:dhcp_allocation_pool\/network\/odlcoe-node:node-a/,
      );
    } finally {
      await h.odl.put(path, saved);
    }
  });
});

describe('odlcoectl trace (Kubernetes and ODL side)', () => {
  let h: CliHarness;

  before(async () => {
    h = await startHarness('aluminium', 'rfc8040');
    await programOdl(h, await createCluster(h));
  });
  after(async () => h?.close());

  it('without OVS access the OVS steps are skipped with a note, and the rest is OK', async () => {
    const res = await h.run(['trace', 'team-a/api-0', '--ovs-db', '/nonexistent/db.sock', '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    const r = parse(res.stdout);
    assert.equal(r.verdict, 'ok');
    assert.equal(r.steps.find((s) => s.step === 'ovs-port')?.status, 'not-checked');
    assert.match(r.steps.find((s) => s.step === 'ovs-port')?.message ?? '', /run trace on node node-a/);
  });

  it('a VPN deleted by hand is the first problem, before the ELAN and interfaces', async () => {
    const path = netvirtPaths('aluminium').vpnInstance('team-a');
    const saved = await h.odl.get(path);
    await h.odl.delete(path);
    try {
      const res = await h.run(['trace', 'team-a/api-0', '--no-ovs', '-o', 'json']);
      assert.equal(res.code, 1);
      const r = parse(res.stdout);
      assert.equal(r.firstProblem?.step, 'vpn-instance');
      assert.match(
        r.firstProblem?.message ?? '',
        /^vpn-instance team-a is missing in ODL \(http:\/\/127\.0\.0\.1:\d+\/rests\/data\/l3vpn-instances-interfaces:vpn-instances\/vpn-instance=team-a/,
      );
    } finally {
      await h.odl.put(path, saved);
    }
  });

  it('a pod without an IP yet is the first problem', async () => {
    await createPod(h, { namespace: 'default', name: 'starting', node: 'node-b', phase: 'Pending' });
    const res = await h.run(['trace', 'default/starting', '--no-ovs', '-o', 'json']);
    assert.equal(res.code, 1);
    const r = parse(res.stdout);
    assert.equal(r.firstProblem?.step, 'pod');
    assert.match(r.firstProblem?.message ?? '', /has no IP address yet/);
    // What can be checked without an IP still is: its ietf-interface is missing (the watcher never saw it).
    assert.equal(r.steps.find((s) => s.step === 'ietf-interface')?.status, 'missing');
    assert.equal(r.steps.find((s) => s.step === 'vpn-interface')?.status, 'skipped');
  });

  it('a host-network pod is off the pod network by design (exit 0)', async () => {
    const res = await h.run(['trace', 'kube-system/host-agent', '--no-ovs', '-o', 'json']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(parse(res.stdout).verdict, 'off-network');
  });

  it('a pod that does not exist is the first problem (exit 1); a malformed reference or OVSDB target is a usage error (exit 2)', async () => {
    const missing = await h.run(['trace', 'default/nope', '--no-ovs', '-o', 'json']);
    assert.equal(missing.code, 1);
    assert.match(parse(missing.stdout).firstProblem?.message ?? '', /pod default\/nope does not exist/);
    const bad = await h.run(['trace', 'web-0']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /must be given as <namespace>\/<pod>/);
    const evil = await h.run(['trace', 'default/../../etc']);
    assert.equal(evil.code, 2);
    const remote = await h.run(['trace', 'default/web-0', '--ovs-db', 'tcp:127.0.0.1:6640']);
    assert.equal(remote.code, 2);
    assert.match(remote.stderr, /--ovs-db: OVSDB target "tcp:127\.0\.0\.1:6640" is not supported \(tcp\)/);
  });

  it('ODL unreachable: exit 3, the trace says what it could not read', async () => {
    const res = await h.run([
      '--odl-url',
      'http://127.0.0.1:1',
      'trace',
      'default/web-0',
      '--no-ovs',
      '-o',
      'json',
    ]);
    assert.equal(res.code, 3, res.stdout);
    const r = parse(res.stdout);
    assert.equal(r.verdict, 'incomplete');
    assert.equal(r.steps.find((s) => s.step === 'node-subnet')?.status, 'error');
  });
});
