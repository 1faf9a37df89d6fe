import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CniError } from './error.js';
import { parseCniRequest, type CniEnv } from './request.js';
import { compareVersions, requireVersionFor } from './version.js';

const config = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ cniVersion: '1.0.0', name: 'odlcoe', type: 'odlcoe', ...extra });
const addEnv: CniEnv = {
  CNI_COMMAND: 'ADD',
  CNI_CONTAINERID: 'c0ffee',
  CNI_NETNS: '/var/run/netns/p1',
  CNI_IFNAME: 'eth0',
  CNI_ARGS: 'K8S_POD_NAMESPACE=default;K8S_POD_NAME=p1',
  CNI_PATH: '/opt/cni/bin',
};

function code(fn: () => unknown): number {
  try {
    fn();
  } catch (err) {
    if (err instanceof CniError) return err.code;
    throw err;
  }
  return 0;
}

describe('parseCniRequest', () => {
  it('parses a complete ADD', () => {
    const req = parseCniRequest(
      addEnv,
      config({ mtu: 1400, ipam: { type: 'host-local', ranges: [[{ subnet: '10.11.1.0/24' }]] } }),
    );
    assert.equal(req.command, 'ADD');
    assert.equal(req.config.mtu, 1400);
    assert.equal(req.config.ipamSubnet, '10.11.1.0/24');
    assert.equal(req.args.podName, 'p1');
  });

  it('maps bad input to the CNI error codes', () => {
    const cases: [string, CniEnv, string, number][] = [
      ['no CNI_COMMAND', { ...addEnv, CNI_COMMAND: '' }, config(), 4],
      ['unknown command', { ...addEnv, CNI_COMMAND: 'FROB' }, config(), 4],
      ['no container id', { ...addEnv, CNI_CONTAINERID: undefined }, config(), 4],
      ['bad container id', { ...addEnv, CNI_CONTAINERID: '../x' }, config(), 4],
      ['no ifname', { ...addEnv, CNI_IFNAME: undefined }, config(), 4],
      ['ifname too long', { ...addEnv, CNI_IFNAME: 'a-very-long-ifname' }, config(), 4],
      ['no netns on ADD', { ...addEnv, CNI_NETNS: '' }, config(), 4],
      ['relative netns', { ...addEnv, CNI_NETNS: 'netns/p1' }, config(), 4],
      ['stdin not JSON', addEnv, '{', 6],
      ['stdin not an object', addEnv, '[1]', 6],
      ['no cniVersion', addEnv, JSON.stringify({ name: 'n', type: 'odlcoe' }), 7],
      ['unsupported cniVersion', addEnv, config({ cniVersion: '0.2.0' }), 1],
      ['future cniVersion', addEnv, config({ cniVersion: '2.0.0' }), 1],
      ['no name', addEnv, JSON.stringify({ cniVersion: '1.0.0', type: 'odlcoe' }), 7],
      ['bad mtu', addEnv, config({ mtu: 10 }), 7],
      ['CHECK before 0.4.0', { ...addEnv, CNI_COMMAND: 'CHECK' }, config({ cniVersion: '0.3.1' }), 1],
      ['GC before 1.1.0', { CNI_COMMAND: 'GC' }, config(), 1],
      ['STATUS before 1.1.0', { CNI_COMMAND: 'STATUS' }, config(), 1],
      [
        'bad valid-attachments',
        { CNI_COMMAND: 'GC' },
        config({ cniVersion: '1.1.0', 'cni.dev/valid-attachments': [{ containerID: 'x' }] }),
        7,
      ],
      ['bad CNI_ARGS', { ...addEnv, CNI_ARGS: 'garbage' }, config(), 4],
    ];
    for (const [name, env, stdin, expected] of cases)
      assert.equal(
        code(() => parseCniRequest(env, stdin)),
        expected,
        name,
      );
  });

  it('lets DEL go without netns and prevResult', () => {
    const req = parseCniRequest(
      { CNI_COMMAND: 'DEL', CNI_CONTAINERID: 'c0ffee', CNI_IFNAME: 'eth0' },
      config(),
    );
    assert.equal(req.netns, '');
    assert.equal(req.config.prevResult, undefined);
  });

  it('reads GC valid attachments', () => {
    const req = parseCniRequest(
      { CNI_COMMAND: 'GC' },
      config({ cniVersion: '1.1.0', 'cni.dev/valid-attachments': [{ containerID: 'a', ifname: 'eth0' }] }),
    );
    assert.deepEqual(req.config.validAttachments, [{ containerId: 'a', ifName: 'eth0' }]);
  });
});

describe('versions', () => {
  it('compares numerically', () => {
    assert.equal(compareVersions('0.10.0', '0.4.0'), 1);
    assert.equal(compareVersions('1.0.0', '1.0.0'), 0);
    assert.equal(compareVersions('0.3.1', '1.1.0'), -1);
  });

  it('names the supported versions in the incompatibility error', () => {
    assert.throws(
      () => requireVersionFor('ADD', '0.1.0'),
      (err: unknown) =>
        err instanceof CniError && /0\.3\.0, 0\.3\.1, 0\.4\.0, 1\.0\.0, 1\.1\.0/.test(err.details ?? ''),
    );
  });

  it("takes a config without ipam for a NetworkAttachmentDefinition's, with Multus' runtimeConfig ips and mac", () => {
    const primary = parseCniRequest(addEnv, config({ ipam: { type: 'host-local', subnet: '10.11.1.0/24' } }));
    assert.equal(primary.config.extra, undefined);
    const nad = parseCniRequest(
      { ...addEnv, CNI_IFNAME: 'net1' },
      config({ name: 'blue', runtimeConfig: { ips: ['10.50.0.9/24'], mac: '0a:00:00:00:00:09' } }),
    );
    assert.deepEqual(nad.config.extra, { ips: ['10.50.0.9/24'], mac: '0a:00:00:00:00:09' });
    assert.deepEqual(parseCniRequest(addEnv, config()).config.extra, {});
    assert.deepEqual(
      parseCniRequest(addEnv, config({ runtimeConfig: { ips: [], mac: '' } })).config.extra,
      {},
    );
    for (const runtimeConfig of [[], 'x', { ips: '10.50.0.9' }, { ips: [''] }, { ips: [9] }, { mac: 5 }])
      assert.equal(
        code(() => parseCniRequest(addEnv, config({ runtimeConfig }))),
        7,
        JSON.stringify(runtimeConfig),
      );
  });
});
