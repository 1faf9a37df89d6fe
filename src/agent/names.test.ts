import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  hostVethName,
  NameError,
  validateBridgeName,
  validateContainerId,
  validateIfName,
  validateMac,
  validateMtu,
  validateNetnsPath,
  validateNetworkName,
  validatePodRef,
} from './names.js';

function table(fn: (v: string) => unknown, valid: string[], invalid: [string, RegExp][]): void {
  for (const v of valid) {
    it(`accepts ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`, () => {
      assert.doesNotThrow(() => fn(v));
    });
  }
  for (const [v, why] of invalid) {
    it(`rejects ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`, () => {
      assert.throws(
        () => fn(v),
        (err: unknown) => err instanceof NameError && why.test(err.message),
      );
    });
  }
}

describe('validateContainerId', () => {
  table(
    validateContainerId,
    ['a', '0123456789abcdef'.repeat(4), 'podman_infra.1-x', 'A'.repeat(256)],
    [
      ['', /must not be empty/],
      ['-abc', /must start with a letter or digit/],
      ['_abc', /must start with a letter or digit/],
      ['.abc', /must start with a letter or digit/],
      ['abc/../etc', /only letters, digits/],
      ['abc def', /only letters, digits/],
      ['abc\n', /only letters, digits/],
      ['abc\u0000', /only letters, digits/],
      ['abc:1', /only letters, digits/],
      ['ä', /must start with a letter or digit/],
      ['a'.repeat(257), /longer than 256/],
    ],
  );
});

describe('validateIfName', () => {
  table(
    validateIfName,
    ['eth0', 'net1', 'a', 'x'.repeat(15), 'eth#0', 'e.0', 'veth_a-b', 'é'.repeat(7)],
    [
      ['', /must not be empty/],
      ['x'.repeat(16), /longer than 15 bytes/],
      ['é'.repeat(8), /longer than 15 bytes/],
      ['.', /"\." or "\.\."/],
      ['..', /"\." or "\.\."/],
      ['eth/0', /"\/", ":" or whitespace/],
      ['eth:0', /"\/", ":" or whitespace/],
      ['eth 0', /"\/", ":" or whitespace/],
      ['eth\t0', /"\/", ":" or whitespace/],
      ['eth\u00a00', /"\/", ":" or whitespace/],
      ['eth\u00000', /control characters/],
      ['-eth0', /must not start with "-"/],
    ],
  );
});

describe('validateNetnsPath', () => {
  table(
    validateNetnsPath,
    ['/var/run/netns/cni-1234', '/proc/4242/ns/net', '/run/netns/a b'],
    [
      ['', /must not be empty/],
      ['run/netns/x', /absolute/],
      ['/run/netns/../../etc/passwd', /normalised/],
      ['/run//netns/x', /normalised/],
      ['/run/netns/x/', /normalised/],
      ['/run/./netns/x', /normalised/],
      ['/', /normalised/],
      ['/run/netns/x\u0000y', /control characters/],
      ['/run/netns/x\ny', /control characters/],
      [`/${'a'.repeat(4096)}`, /too long/],
    ],
  );
});

describe('validateBridgeName', () => {
  table(
    validateBridgeName,
    ['br-int', 'br-ex', 'br_t.1', 'x'.repeat(15)],
    [
      ['', /must not be empty/],
      ['x'.repeat(16), /longer than 15/],
      ['br int', /whitespace/],
      ['br/int', /"\/"/],
      ['-br', /must not start with "-"/],
      ['br#1', /only letters, digits/],
      ['.br', /only letters, digits|"\."/],
    ],
  );
});

describe('validatePodRef', () => {
  const ok: [string, string][] = [
    ['default', 'nginx-7c5ddbdf54-x2x9k'],
    ['kube-system', 'coredns.1'],
    ['a'.repeat(63), 'b'.repeat(253)],
  ];
  for (const [ns, name] of ok) {
    it(`accepts ${ns.slice(0, 20)}/${name.slice(0, 20)}`, () =>
      assert.doesNotThrow(() => validatePodRef(ns, name)));
  }
  const bad: [string, string, RegExp][] = [
    ['', 'pod', /invalid podNamespace "": must not be empty/],
    ['Default', 'pod', /podNamespace.*DNS-1123 label/],
    ['ns.x', 'pod', /podNamespace.*DNS-1123 label/],
    ['-ns', 'pod', /podNamespace.*DNS-1123 label/],
    ['a'.repeat(64), 'pod', /podNamespace.*longer than 63/],
    ['ns', '', /podName.*must not be empty/],
    ['ns', 'Pod', /podName.*DNS-1123 subdomain/],
    ['ns', 'pod:1', /podName.*DNS-1123 subdomain/],
    ['ns', 'pod..x', /podName.*DNS-1123 subdomain/],
    ['ns', 'pod-', /podName.*DNS-1123 subdomain/],
    ['ns', 'b'.repeat(254), /podName.*longer than 253/],
  ];
  for (const [ns, name, why] of bad) {
    it(`rejects ${JSON.stringify(ns.slice(0, 20))}/${JSON.stringify(name.slice(0, 20))}`, () => {
      assert.throws(
        () => validatePodRef(ns, name),
        (err: unknown) => err instanceof NameError && why.test(err.message),
      );
    });
  }
});

describe('validateMac, validateMtu, validateNetworkName', () => {
  table(
    validateMac,
    ['0a:58:0a:0b:01:05', '02:00:00:00:00:01'],
    [
      ['0A:58:0A:0B:01:05', /lower-case hex/],
      ['0a-58-0a-0b-01-05', /lower-case hex/],
      ['0a:58:0a:0b:01', /lower-case hex/],
      ['01:00:5e:00:00:01', /unicast/],
      ['00:00:00:00:00:00', /all zeros/],
    ],
  );
  it('bounds the MTU', () => {
    assert.equal(validateMtu(1450), 1450);
    for (const bad of [0, 67, 65536, 1500.5, Number.NaN]) assert.throws(() => validateMtu(bad), NameError);
  });
  table(
    validateNetworkName,
    ['odlcoe', 'k8s-pod-network', 'net_1.a'],
    [
      ['', /must not be empty/],
      ['../etc', /must start with a letter or digit/],
      ['a/b', /only letters/],
    ],
  );
});

describe('hostVethName', () => {
  it('is veth + the first 8 hex digits of sha256(containerId/ifName)', () => {
    const id = 'a'.repeat(64);
    const expected = `veth${createHash('sha256').update(`${id}/eth0`).digest('hex').slice(0, 8)}`;
    assert.equal(hostVethName(id, 'eth0'), expected);
    assert.match(hostVethName(id, 'eth0'), /^veth[0-9a-f]{8}$/);
  });

  it('is stable and depends on both container id and interface', () => {
    assert.equal(hostVethName('abc', 'eth0'), hostVethName('abc', 'eth0'));
    assert.notEqual(hostVethName('abc', 'eth0'), hostVethName('abd', 'eth0'));
    assert.notEqual(hostVethName('abc', 'eth0'), hostVethName('abc', 'eth1'));
  });

  it('fits a network device name', () => {
    assert.equal(hostVethName('x', 'eth0').length, 12);
  });

  it('refuses invalid inputs instead of hashing them', () => {
    assert.throws(() => hostVethName('../x', 'eth0'), NameError);
    assert.throws(() => hostVethName('abc', 'eth/0'), NameError);
  });
});
