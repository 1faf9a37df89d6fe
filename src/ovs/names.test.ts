import { describe } from 'node:test';
import { validatorTable } from '../common/testing.js';
import { validateBridgeName, validateIfName, validateNetnsPath } from './names.js';

describe('validateIfName', () => {
  validatorTable(
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

describe('validateBridgeName', () => {
  validatorTable(
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

describe('validateNetnsPath', () => {
  validatorTable(
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
