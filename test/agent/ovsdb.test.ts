import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/common/exec.js';
import { hostVethName } from '../../src/agent/names.js';
import { deleteHostVeth } from '../../src/agent/netns.js';
import { Ovs, OvsError, OvsPortConflictError } from '../../src/ovs/ovs.js';
import { OvsdbClient, OvsdbTransactionError } from '../../src/ovs/ovsdb/client.js';
import { createNetns, skipUnlessRoot, type TestNetns } from '../helpers/netns.js';
import { startOvsSandbox, type OvsSandbox } from '../helpers/ovs-sandbox.js';
import { createBareVeth, newContainerId } from '../helpers/pod-veth.js';
import { readPidFile, stopPid } from '../helpers/processes.js';

/**
 * The OVSDB JSON-RPC path of Ovs against the real ovsdb-server and ovs-vswitchd (userspace),
 * checked against what ovs-vsctl sees in the same database.
 */

const BRIDGE = 'br-int';

describe('Ovs over OVSDB JSON-RPC, real ovsdb-server', { skip: skipUnlessRoot() }, () => {
  let sandbox: OvsSandbox;
  let ovs: Ovs;
  const namespaces: TestNetns[] = [];
  const hostVeths: string[] = [];

  /** A pod end in a fresh namespace and its host end, ready to be added to OVS. */
  async function newVeth(): Promise<{ hostVeth: string; containerId: string }> {
    const ns = await createNetns('odlcoe-ovsdb');
    namespaces.push(ns);
    return createBareVeth(ns.path, { mac: '0a:58:0a:0b:02:01', track: (veth) => hostVeths.push(veth) });
  }

  const vsctlPorts = async () => (await sandbox.vsctl(['list-ports', BRIDGE])).split('\n').filter(Boolean);

  before(async () => {
    sandbox = await startOvsSandbox();
    await sandbox.vsctl(['add-br', BRIDGE, '--', 'set', 'Bridge', BRIDGE, 'datapath_type=netdev']);
    ovs = new Ovs({ dbSocket: sandbox.dbSocket, timeoutSeconds: 10 });
  });

  after(async () => {
    ovs?.close();
    for (const veth of hostVeths) await deleteHostVeth(veth).catch(() => undefined);
    for (const ns of namespaces) await ns.remove().catch(() => undefined);
    await sandbox?.stop();
  });

  it('inserts a port that ovs-vswitchd attaches, and deletes it', async () => {
    const { hostVeth, containerId } = await newVeth();
    const steps: string[] = [];
    const port = await ovs.addPort(
      BRIDGE,
      hostVeth,
      { 'iface-id': 'default:a', 'container-id': containerId },
      { onStep: (step) => steps.push(step) },
    );
    assert.deepEqual(steps, ['insert', 'attach']);
    assert.ok(port.ofport > 0);
    // ovs-vsctl sees the same rows, and the ofport ovs-vswitchd assigned.
    assert.deepEqual(await vsctlPorts(), [hostVeth]);
    assert.equal((await sandbox.vsctl(['get', 'Interface', hostVeth, 'ofport'])).trim(), String(port.ofport));
    assert.deepEqual(await ovs.listPorts(BRIDGE), [port]);
    assert.equal(await ovs.delPort(BRIDGE, hostVeth), 'removed');
    assert.deepEqual(await vsctlPorts(), []);
    assert.equal(await ovs.getPort(hostVeth), undefined);
    // Port and Interface rows are gone too (garbage-collected with the Bridge reference).
    assert.equal((await sandbox.vsctl(['--columns=name', 'find', 'Port', `name=${hostVeth}`])).trim(), '');
    assert.equal(await ovs.delPort(BRIDGE, hostVeth), 'absent');
    await deleteHostVeth(hostVeth);
  });

  it('round-trips external_ids with ":" and odd characters exactly', async () => {
    const { hostVeth, containerId } = await newVeth();
    const ids = {
      'iface-id': 'kube-system:coredns-5d78c9869d-x2x4k',
      'container-id': containerId,
      note: 'a "quoted", {braced} = [value]\\ é € 😀 \t tab, semi;colon',
      'k:with/colon.and-dash_': '',
    };
    await ovs.addPort(BRIDGE, hostVeth, ids);
    assert.deepEqual((await ovs.getPort(hostVeth))?.externalIds, ids);
    // ovs-vsctl prints what OVSDB holds: the same values, in its own quoting.
    assert.equal(
      (await sandbox.vsctl(['get', 'Interface', hostVeth, 'external_ids:iface-id'])).trim(),
      '"kube-system:coredns-5d78c9869d-x2x4k"',
    );
    const viaVsctl = JSON.parse(
      (
        await sandbox.vsctl(['--format=json', '--columns=external_ids', 'list', 'Interface', hostVeth])
      ).trim(),
    ) as { data: [[['map', [string, string][]]]] };
    assert.deepEqual(Object.fromEntries(viaVsctl.data[0][0][1]), ids);
    // A filtered listing matches on exact pairs, ":" and all.
    assert.deepEqual(
      (await ovs.listPorts(BRIDGE, { withExternalIds: { 'iface-id': ids['iface-id'] } })).map((p) => p.name),
      [hostVeth],
    );
    assert.deepEqual(
      await ovs.listPorts(BRIDGE, { withExternalIds: { 'iface-id': 'kube-system:other' } }),
      [],
    );
    assert.equal(
      await ovs.delPort(BRIDGE, hostVeth, { ifExternalIds: { 'container-id': containerId } }),
      'removed',
    );
    await deleteHostVeth(hostVeth);
  });

  it('detects a port ovs-vswitchd cannot open (Interface error column) and removes its row', async () => {
    const missing = hostVethName(newContainerId(), 'eth0');
    await assert.rejects(
      ovs.addPort(BRIDGE, missing, { 'container-id': 'x' }),
      (err: unknown) =>
        err instanceof OvsError && /could not attach .*(No such device|could not open)/i.test(err.message),
    );
    assert.equal(await ovs.getPort(missing), undefined);
    assert.deepEqual(await vsctlPorts(), []);
  });

  it('refuses a bridge that does not exist without writing anything', async () => {
    const { hostVeth } = await newVeth();
    await assert.rejects(ovs.addPort('br-absent', hostVeth, {}), /bridge br-absent does not exist/);
    assert.equal(await ovs.getPort(hostVeth), undefined);
    await deleteHostVeth(hostVeth);
  });

  it('deletes only with the owner it is told, checked in the removing transaction', async () => {
    const { hostVeth, containerId } = await newVeth();
    const ids = { 'iface-id': 'default:owned', 'container-id': containerId };
    await ovs.addPort(BRIDGE, hostVeth, ids);
    assert.equal(
      await ovs.delPort(BRIDGE, hostVeth, { ifExternalIds: { 'container-id': 'another-container' } }),
      'not-owned',
    );
    assert.deepEqual(await vsctlPorts(), [hostVeth]);
    // Repeated ADD of the same attachment: the same port; another owner: a conflict.
    assert.equal((await ovs.addPort(BRIDGE, hostVeth, ids)).externalIds['container-id'], containerId);
    await assert.rejects(
      ovs.addPort(BRIDGE, hostVeth, { ...ids, 'container-id': 'another-container' }),
      OvsPortConflictError,
    );
    assert.equal(
      await ovs.delPort(BRIDGE, hostVeth, { ifExternalIds: { 'container-id': containerId } }),
      'removed',
    );
    assert.deepEqual(await vsctlPorts(), []);
    await deleteHostVeth(hostVeth);
  });

  it('carries many concurrent adds and deletes on its one connection', async () => {
    const veths = await Promise.all(Array.from({ length: 12 }, () => newVeth()));
    const ports = await Promise.all(
      veths.map((v, i) =>
        ovs.addPort(BRIDGE, v.hostVeth, { 'iface-id': `default:p${i}`, 'container-id': v.containerId }),
      ),
    );
    for (const p of ports) assert.ok(p.ofport > 0, `${p.name} ofport ${p.ofport}`);
    assert.equal(new Set(ports.map((p) => p.ofport)).size, ports.length);
    assert.deepEqual(await vsctlPorts(), veths.map((v) => v.hostVeth).sort());
    const outcomes = await Promise.all(
      veths.map((v) => ovs.delPort(BRIDGE, v.hostVeth, { ifExternalIds: { 'container-id': v.containerId } })),
    );
    assert.deepEqual(new Set(outcomes), new Set(['removed']));
    assert.deepEqual(await vsctlPorts(), []);
    for (const v of veths) await deleteHostVeth(v.hostVeth);
  });

  it('evaluates a wait inside ovsdb-server: a precondition that fails aborts the whole transaction', async () => {
    const client = new OvsdbClient({ socketPath: sandbox.dbSocket });
    try {
      await assert.rejects(
        client.transact('Open_vSwitch', [
          { op: 'insert', table: 'Bridge', row: { name: 'br-never' }, 'uuid-name': 'b' },
          {
            op: 'wait',
            timeout: 0,
            table: 'Bridge',
            where: [['name', '==', BRIDGE]],
            columns: ['name'],
            until: '==',
            rows: [],
          },
        ]),
        (err: unknown) =>
          err instanceof OvsdbTransactionError && err.index === 1 && err.error === 'timed out',
      );
      assert.doesNotMatch(await sandbox.vsctl(['list-br']), /br-never/);
    } finally {
      client.close();
    }
  });
});

describe('Ovs reconnects after an ovsdb-server restart', { skip: skipUnlessRoot() }, () => {
  let dir: string;
  let dbSocket: string;
  let pid: number | undefined;

  async function startOvsdb(): Promise<void> {
    await run('ovsdb-server', [
      join(dir, 'conf.db'),
      `--remote=punix:${dbSocket}`,
      `--pidfile=${join(dir, 'ovsdb-server.pid')}`,
      `--log-file=${join(dir, 'ovsdb-server.log')}`,
      `--unixctl=${join(dir, 'ovsdb-server.ctl')}`,
      '--detach',
      '--no-chdir',
      '-vconsole:off',
    ]);
    pid = await readPidFile(join(dir, 'ovsdb-server.pid'));
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'odlcoe-ovsdb-restart-'));
    dbSocket = join(dir, 'db.sock');
    await run('ovsdb-tool', ['create', join(dir, 'conf.db'), '/usr/share/openvswitch/vswitch.ovsschema']);
    await startOvsdb();
    await run('ovs-vsctl', [`--db=unix:${dbSocket}`, '--no-wait', 'init']);
    await run('ovs-vsctl', [`--db=unix:${dbSocket}`, '--no-wait', 'add-br', 'br-r']);
  });

  after(async () => {
    if (pid !== undefined) await stopPid(pid);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('fails while the server is down and works again, on the same Ovs, once it is back', async () => {
    const ovs = new Ovs({ dbSocket, timeoutSeconds: 5 });
    try {
      await ovs.ping();
      assert.deepEqual(await ovs.listPorts('br-r'), []);
      await stopPid(pid as number);
      pid = undefined;
      await assert.rejects(ovs.ping(), (err: unknown) => err instanceof OvsError);
      await startOvsdb();
      await ovs.ping();
      // Data written before the restart is there; so are writes after it.
      await run('ovs-vsctl', [`--db=unix:${dbSocket}`, '--no-wait', 'add-port', 'br-r', 'vethr0']);
      assert.deepEqual(
        (await ovs.listPorts('br-r')).map((p) => p.name),
        ['vethr0'],
      );
      assert.equal(await ovs.delPort('br-r', 'vethr0'), 'removed');
      assert.deepEqual(await ovs.listPorts('br-r'), []);
    } finally {
      ovs.close();
    }
  });
});
