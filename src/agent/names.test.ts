import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { NameError } from '../common/name-error.js';
import { validatorTable } from '../common/testing.js';
import { EXTERNAL_ID, isPodPort } from '../ovs/external-ids.js';
import { hostVethName, validateContainerId, validateMac, validateMtu, validateNetworkName } from './names.js';

describe('validateContainerId', () => {
  validatorTable(
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

describe('validateMac, validateMtu, validateNetworkName', () => {
  validatorTable(
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
  validatorTable(
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

  it("makes the names by which odlcoe's pod ports are recognised on the bridge", () => {
    const name = hostVethName('c0ffee', 'eth0');
    assert.equal(isPodPort({ name, ofport: 1, externalIds: { [EXTERNAL_ID.containerId]: 'c0ffee' } }), true);
  });
});
