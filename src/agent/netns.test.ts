import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NameError } from '../common/name-error.js';
import type { PodInterfaceSpec } from './netns.js';
import {
  configurePodInterface,
  createPodInterface,
  createVethPair,
  deleteHostVeth,
  deleteHostVethIfOwned,
  deletePodInterface,
  hostVethOwner,
  inspectPodInterface,
  NetnsError,
  vethOwnerTag,
} from './netns.js';

// The kernel side is covered by test/agent/dataplane.test.ts (root); these check what is
// refused before any `ip` runs, and the answers for namespaces that do not exist.
const spec: PodInterfaceSpec = {
  netns: '/run/netns/odlcoe-unit-does-not-exist',
  ifName: 'eth0',
  hostVeth: 'veth01234567',
  mac: '0a:58:0a:0b:01:05',
  mtu: 1450,
  addresses: [{ cidr: '10.11.1.5/24', gateway: '10.11.1.1' }],
  routes: [{ dst: '0.0.0.0/0', gw: '10.11.1.1' }],
};

describe('createPodInterface input validation', () => {
  const bad: [string, Partial<PodInterfaceSpec>, RegExp | (new (...a: never[]) => Error)][] = [
    ['a relative netns', { netns: 'netns/x' }, NameError],
    ['a bad interface name', { ifName: 'eth:0' }, NameError],
    ['a bad host veth name', { hostVeth: 'veth 1' }, NameError],
    ['a multicast MAC', { mac: '01:00:5e:00:00:01' }, NameError],
    ['a tiny MTU', { mtu: 10 }, NameError],
    ['an address without prefix', { addresses: [{ cidr: '10.11.1.5' }] }, /invalid interface address/],
    ['a route with host bits', { routes: [{ dst: '10.0.0.1/8' }] }, /host bits/],
    ['a route mixing families', { routes: [{ dst: '0.0.0.0/0', gw: 'fd00::1' }] }, /mixes IPv4 and IPv6/],
    ['a gateway that is no address', { routes: [{ dst: '0.0.0.0/0', gw: 'gw' }] }, /invalid route gateway/],
  ];
  for (const [what, change, expected] of bad) {
    it(`refuses ${what}`, async () => {
      await assert.rejects(createPodInterface({ ...spec, ...change }), expected);
    });
  }

  it('refuses a netns path that does not exist, before creating anything', async () => {
    await assert.rejects(
      createPodInterface(spec),
      (e: unknown) => e instanceof NetnsError && /does not exist/.test(e.message),
    );
  });

  it('refuses a path that is not a network namespace', async () => {
    await assert.rejects(createPodInterface({ ...spec, netns: '/tmp' }), /is not a network namespace/);
  });
});

describe('the two halves an ADD runs separately', () => {
  it('createVethPair validates and refuses a missing namespace before creating anything', async () => {
    await assert.rejects(createVethPair({ ...spec, mtu: 10 }), NameError);
    await assert.rejects(createVethPair({ ...spec, hostVeth: 'veth:1' }), NameError);
    await assert.rejects(createVethPair(spec), NetnsError);
  });

  it('configurePodInterface validates everything before running ip', async () => {
    await assert.rejects(configurePodInterface({ ...spec, mac: 'ff:ff:ff:ff:ff:ff' }), NameError);
    await assert.rejects(
      configurePodInterface({ ...spec, addresses: [{ cidr: '10.11.1.5' }] }),
      /invalid interface address/,
    );
    await assert.rejects(configurePodInterface({ ...spec, routes: [{ dst: '10.0.0.1/8' }] }), /host bits/);
  });
});

describe('teardown and inspection of what is gone', () => {
  it('deletePodInterface succeeds when the namespace is gone', async () => {
    await deletePodInterface(spec.netns, 'eth0');
  });

  it('inspectPodInterface answers undefined for a missing namespace', async () => {
    assert.equal(await inspectPodInterface(spec.netns, 'eth0'), undefined);
  });

  it('validates names on teardown too', async () => {
    await assert.rejects(deleteHostVeth('a/b'), NameError);
    await assert.rejects(deletePodInterface('/run/netns/x', '..'), NameError);
  });
});

describe('veth owner tags', () => {
  it('is the container id, or its sha256 when the kernel would refuse an alias that long', () => {
    const id = 'a'.repeat(64);
    assert.equal(vethOwnerTag(id), id);
    assert.equal(vethOwnerTag('b'.repeat(255)), 'b'.repeat(255));
    const long = 'c'.repeat(256);
    assert.match(vethOwnerTag(long), /^sha256:[0-9a-f]{64}$/);
    assert.notEqual(vethOwnerTag(long), vethOwnerTag(`${'c'.repeat(255)}d`));
  });

  it('validates the container id and the device name before running ip', async () => {
    assert.throws(() => vethOwnerTag('bad id'), NameError);
    assert.throws(() => vethOwnerTag(''), NameError);
    await assert.rejects(createVethPair({ ...spec, owner: 'x y' }), NameError);
    await assert.rejects(hostVethOwner('a/b'), NameError);
    await assert.rejects(deleteHostVethIfOwned('veth01234567', 'x#y'), NameError);
  });
});
