import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NameError } from '../common/name-error.js';
import { Ovs, OvsError, ovsdbSocketPath } from './ovs.js';

// Real OVS behaviour is covered by test/agent/dataplane.test.ts and test/agent/ovsdb.test.ts
// (root, userspace OVS); these check what is refused before OVSDB or ovs-vsctl is ever
// asked, against a socket nothing listens on.
const ovs = new Ovs({ dbSocket: '/nonexistent/odlcoe/db.sock', timeoutSeconds: 1 });

describe('Ovs input validation', () => {
  it('refuses bad constructor options', () => {
    assert.throws(() => new Ovs({ dbSocket: 'relative.sock' }), /absolute path/);
    assert.throws(() => new Ovs({ dbSocket: 'tcp:127.0.0.1:6640' }), OvsError);
    assert.throws(() => new Ovs({ timeoutSeconds: 0 }), /positive integer/);
    assert.throws(() => new Ovs({ timeoutSeconds: 1.5 }), /positive integer/);
  });

  it("reads ovsdb-server's socket as a path or unix:<path>, and nothing else", () => {
    assert.equal(ovsdbSocketPath('/run/openvswitch/db.sock'), '/run/openvswitch/db.sock');
    assert.equal(ovsdbSocketPath('unix:/run/openvswitch/db.sock'), '/run/openvswitch/db.sock');
    for (const target of [
      'tcp:127.0.0.1:6640',
      'ssl:odl:6640',
      'ptcp:6640',
      'punix:/x',
      'db.sock',
      'unix:x',
      '',
    ])
      assert.throws(() => ovsdbSocketPath(target), OvsError, target);
  });

  it('refuses bad bridge and port names', async () => {
    await assert.rejects(ovs.ensureBridge('br int'), NameError);
    await assert.rejects(ovs.ensureBridge('x'.repeat(16)), NameError);
    await assert.rejects(ovs.addPort('br-int', '-veth', {}), NameError);
    await assert.rejects(ovs.delPort('br-int', 'a/b'), NameError);
    await assert.rejects(ovs.getPort(''), NameError);
    await assert.rejects(ovs.listPorts('br:x'), NameError);
  });

  it('refuses unknown OpenFlow versions', async () => {
    await assert.rejects(
      ovs.ensureBridge('br-int', { protocols: ['OpenFlow13', 'OpenFlow99'] }),
      /unknown OpenFlow protocol/,
    );
    await assert.rejects(ovs.ensureBridge('br-int', { protocols: [] }), /at least one/);
  });

  it('refuses malformed manager and controller targets', async () => {
    for (const bad of [
      '10.0.0.1:6640',
      'tcp:10.0.0.1',
      'tcp:10.0.0.1:70000',
      'http://x:1',
      'tcp:a b:1',
      'unix:relative',
    ]) {
      await assert.rejects(ovs.setManager([bad]), OvsError, bad);
      await assert.rejects(ovs.setController('br-int', [bad]), OvsError, bad);
    }
  });

  it('refuses a local_ip that is not an address', async () => {
    await assert.rejects(ovs.setLocalIp('10.0.0.300'), /not an IP address/);
    await assert.rejects(ovs.setLocalIp('node1'), /not an IP address/);
  });

  it('refuses external_ids it could not write faithfully', async () => {
    await assert.rejects(ovs.addPort('br-int', 'veth01234567', { '': 'x' }), /invalid external_ids key/);
    await assert.rejects(ovs.addPort('br-int', 'veth01234567', { 'a=b': 'x' }), /invalid external_ids key/);
    await assert.rejects(
      ovs.addPort('br-int', 'veth01234567', { k: 'a\u0000b' }),
      /invalid external_ids value/,
    );
    await assert.rejects(
      ovs.addPort('br-int', 'veth01234567', { k: 'x'.repeat(1025) }),
      /invalid external_ids value/,
    );
  });

  it('ping fails when ovsdb-server is unreachable', async () => {
    await assert.rejects(
      ovs.ping(),
      /cannot connect to ovsdb-server at \/nonexistent\/odlcoe\/db.sock: ENOENT/,
    );
  });
});
