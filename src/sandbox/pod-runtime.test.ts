import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AddressPodRuntime,
  CniCallError,
  kubeletCniArgs,
  newContainerId,
  parseAddResult,
  pluginConfig,
} from './pod-runtime.js';

const pod = { namespace: 'shop', name: 'cart', uid: '0b7c3c52-1b1f-4f57-9d1d-2f6f1c1e0a01' };

describe('kubelet CNI arguments', () => {
  it('are what containerd sends for a pod sandbox', () => {
    const id = newContainerId();
    assert.match(id, /^[0-9a-f]{64}$/);
    assert.equal(
      kubeletCniArgs(pod, id),
      `IgnoreUnknown=1;K8S_POD_NAMESPACE=shop;K8S_POD_NAME=cart;K8S_POD_INFRA_CONTAINER_ID=${id};K8S_POD_UID=${pod.uid}`,
    );
  });
});

describe('pluginConfig', () => {
  const conflist = {
    cniVersion: '1.1.0',
    name: 'odlcoe',
    plugins: [{ type: 'odlcoe', socket: '/run/x.sock', ipam: { type: 'host-local' } }],
  };

  it('merges cniVersion and name into the plugin, as libcni does', () => {
    assert.deepEqual(JSON.parse(pluginConfig(conflist)), {
      cniVersion: '1.1.0',
      name: 'odlcoe',
      type: 'odlcoe',
      socket: '/run/x.sock',
      ipam: { type: 'host-local' },
    });
  });

  it('adds prevResult for DEL', () => {
    const prev = { cniVersion: '1.1.0', ips: [] };
    assert.deepEqual(JSON.parse(pluginConfig(conflist, prev)).prevResult, prev);
  });

  it('refuses a conflist it does not understand', () => {
    assert.throws(() => pluginConfig({ name: 'x', plugins: [] }), /no cniVersion or name/);
    assert.throws(
      () => pluginConfig({ ...conflist, plugins: [{ type: 'bridge' }] }),
      /exactly one plugin, of type odlcoe/,
    );
    assert.throws(
      () => pluginConfig({ ...conflist, plugins: [...conflist.plugins, ...conflist.plugins] }),
      /exactly one/,
    );
  });
});

describe('parseAddResult', () => {
  it('takes the IPs, the pod MAC and the host veth', () => {
    const parsed = parseAddResult({
      cniVersion: '1.1.0',
      interfaces: [
        { name: 'veth0123abcd', mac: 'aa:bb:cc:dd:ee:ff' },
        { name: 'eth0', mac: '0a:58:0a:4d:01:02', sandbox: '/run/netns/x' },
      ],
      ips: [{ address: '10.77.1.2/24', gateway: '10.77.1.1', interface: 1 }],
    });
    assert.deepEqual(parsed, { ips: ['10.77.1.2'], mac: '0a:58:0a:4d:01:02', hostInterface: 'veth0123abcd' });
  });

  it('refuses a result without an address', () => {
    assert.throws(() => parseAddResult({ interfaces: [], ips: [] }), /no IP address/);
  });
});

describe('CniCallError', () => {
  it('knows "try again later"', () => {
    assert.equal(new CniCallError('ADD', 11, 'not ready').tryAgainLater, true);
    assert.equal(new CniCallError('ADD', 7, 'bad config').tryAgainLater, false);
    assert.match(new CniCallError('ADD', 11, 'not ready').message, /CNI ADD failed \(code 11\): not ready/);
  });
});

describe('AddressPodRuntime', () => {
  it('hands out addresses after the gateway, never the broadcast address, and reuses released ones', async () => {
    const runtime = new AddressPodRuntime('10.9.0.0/29'); // .1 gateway, .2-.6 usable, .7 broadcast
    const got: string[] = [];
    for (let i = 0; i < 5; i += 1) got.push((await runtime.add({ ...pod, name: `p${i}` })).ips[0] as string);
    assert.deepEqual(got, ['10.9.0.2', '10.9.0.3', '10.9.0.4', '10.9.0.5', '10.9.0.6']);
    await assert.rejects(runtime.add({ ...pod, name: 'p5' }), /has no free address/);
    await runtime.remove({ pod, containerId: newContainerId(), ips: ['10.9.0.4'] });
    assert.deepEqual((await runtime.add({ ...pod, name: 'p6' })).ips, ['10.9.0.4']);
  });

  it('aligns a CIDR written with host bits', async () => {
    const runtime = new AddressPodRuntime('10.9.1.77/24');
    assert.deepEqual((await runtime.add(pod)).ips, ['10.9.1.2']);
  });

  it('refuses what it cannot serve', () => {
    assert.throws(() => new AddressPodRuntime('fd00::/64'), /IPv4/);
    assert.throws(() => new AddressPodRuntime('10.0.0.0/31'), /at least 4 addresses/);
    assert.throws(() => new AddressPodRuntime('banana'), /not a CIDR/);
  });
});
