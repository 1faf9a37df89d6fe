import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError } from '../common/config-file.js';
import { buildAgentConfig, ifaceNamingOf } from './config.js';

describe('buildAgentConfig', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'odlcoe-agent-config-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('fills defaults around the required settings', () => {
    const c = buildAgentConfig({ flags: { nodeName: 'n1', odlUrl: 'http://odl:8181' } });
    assert.equal(c.ovs.bridge, 'br-int');
    assert.equal(c.cni.socket, '/run/odlcoe/cni.sock');
    assert.equal(c.cni.confDir, '/etc/cni/net.d');
    assert.equal(c.cni.cniVersion, '1.0.0');
    assert.equal(c.cni.mtu, 1450);
    assert.equal(c.odl.dialect, 'rfc8040');
    assert.equal(c.metrics.port, 9102);
  });

  it('coe-northbound needs the cluster name, and names ports as Sodium’s renderer does', () => {
    const base = { nodeName: 'n1', odlUrl: 'http://odl:8181' };
    assert.throws(
      () => buildAgentConfig({ flags: { ...base, backend: 'coe-northbound' } }),
      (err: unknown) =>
        err instanceof ConfigError &&
        /--cluster-name.*is required with --backend coe-northbound/.test(err.message),
    );
    assert.throws(
      () => buildAgentConfig({ flags: { ...base, clusterName: 'Bad_Name' } }),
      (err: unknown) => err instanceof ConfigError && /--cluster-name/.test(err.message),
    );
    const coe = buildAgentConfig({ flags: { ...base, backend: 'coe-northbound', clusterName: 'test' } });
    assert.deepEqual(ifaceNamingOf(coe), { backend: 'coe-northbound', clusterName: 'test' });
    assert.deepEqual(ifaceNamingOf(buildAgentConfig({ flags: base })), { backend: 'netvirt' });
  });

  it('layers file < environment < flags', async () => {
    const file = join(dir, 'agent.yaml');
    await writeFile(
      file,
      'nodeName: from-file\nodl:\n  url: http://file:8181\n  dialect: rfc8040\ncni:\n  mtu: 1400\novs:\n  bridge: br-file\n',
    );
    const c = buildAgentConfig({
      file,
      env: { NODE_NAME: 'from-env', ODLCOE_ODL_URL: 'http://env:8181' },
      flags: { odlUrl: 'http://flag:8181', mtu: '1350', odlManager: ['tcp:10.0.0.1:6640'] },
    });
    assert.equal(c.nodeName, 'from-env');
    assert.equal(c.odl.url, 'http://flag:8181');
    assert.equal(c.odl.dialect, 'rfc8040');
    assert.equal(c.cni.mtu, 1350);
    assert.equal(c.ovs.bridge, 'br-file');
    assert.deepEqual(c.ovs.managers, ['tcp:10.0.0.1:6640']);
  });

  it('names every bad key', () => {
    assert.throws(
      () => buildAgentConfig({ flags: { mtu: 'big', socket: 'relative.sock', tunnelIp: 'x' } }),
      (err: unknown) =>
        err instanceof ConfigError &&
        /nodeName/.test(err.message) &&
        /odl/.test(err.message) &&
        /cni\.mtu/.test(err.message) &&
        /cni\.socket: must be an absolute path/.test(err.message) &&
        /ovs\.tunnelIp: must be an IP address/.test(err.message),
    );
  });

  it('takes the parent pid from the flag or the file, and refuses one that names no single process', () => {
    const base = { nodeName: 'n1', odlUrl: 'http://odl:8181' };
    assert.equal(buildAgentConfig({ flags: base }).parentPid, undefined);
    assert.equal(buildAgentConfig({ flags: { ...base, parentPid: '4242' } }).parentPid, 4242);
    // kill(2) reads 0 and negative pids as process groups.
    for (const bad of ['0', '-1', '1.5', 'init'])
      assert.throws(
        () => buildAgentConfig({ flags: { ...base, parentPid: bad } }),
        (err: unknown) => err instanceof ConfigError && /parentPid/.test(err.message),
        bad,
      );
  });

  it("takes ovsdb-server's socket as a path or unix:<path>, and refuses every other OVSDB target", () => {
    const base = { nodeName: 'n1', odlUrl: 'http://odl:8181' };
    const socket = (ovsDb: string) => buildAgentConfig({ flags: { ...base, ovsDb } }).ovs.dbSocket;
    assert.equal(socket('/run/openvswitch/db.sock'), '/run/openvswitch/db.sock');
    assert.equal(socket('unix:/run/openvswitch/db.sock'), '/run/openvswitch/db.sock');
    assert.equal(
      buildAgentConfig({ flags: base, env: { ODLCOE_OVS_DB: 'unix:/var/run/ovs/db.sock' } }).ovs.dbSocket,
      '/var/run/ovs/db.sock',
    );
    const refused: [string, RegExp][] = [
      [
        'tcp:127.0.0.1:6640',
        /OVSDB target "tcp:127\.0\.0\.1:6640" is not supported \(tcp\): .*local unix socket only/,
      ],
      ['ssl:10.0.0.1:6640', /OVSDB target "ssl:10\.0\.0\.1:6640" is not supported \(ssl\)/],
      ['punix:/run/openvswitch/db.sock', /is not supported \(punix\)/],
      ['db.sock', /"db\.sock" must be an absolute path, or unix:<absolute path>/],
      ['unix:db.sock', /"unix:db\.sock" must be an absolute path, or unix:<absolute path>/],
      ['unix:', /must be an absolute path/],
    ];
    for (const [target, message] of refused)
      assert.throws(
        () => buildAgentConfig({ flags: { ...base, ovsDb: target } }),
        (err: unknown) =>
          err instanceof ConfigError && /--ovs-db/.test(err.message) && message.test(err.message),
        target,
      );
  });

  it('rejects unknown keys in the file (typos)', async () => {
    const file = join(dir, 'typo.json');
    await writeFile(
      file,
      JSON.stringify({ nodeName: 'n', odl: { url: 'http://o:8181' }, cni: { mut: 1400 } }),
    );
    assert.throws(() => buildAgentConfig({ file }), /cni: Unrecognized key/);
  });
});
