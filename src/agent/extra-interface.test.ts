import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AttachmentRecord } from '../netvirt/attachments.js';
import { extraInterfaceEventReason, staticRequestMismatch } from './extra-interface.js';

const record: AttachmentRecord = {
  network: 'default/red',
  interfaceName: 'default:web:net2',
  ips: ['10.70.0.10/24', 'fd00:70::a/64'],
  mac: '02:aa:bb:cc:dd:01',
  routes: [],
};

describe('staticRequestMismatch', () => {
  it('takes a record that has exactly the static ips (with or without prefix, any order) and mac', () => {
    assert.equal(staticRequestMismatch(record, {}), undefined);
    assert.equal(
      staticRequestMismatch(record, { ips: ['fd00:70:0::a', '10.70.0.10/24'], mac: '02:AA:BB:CC:DD:01' }),
      undefined,
    );
  });

  it('says how a record differs from the request (a watcher behind an edited annotation)', () => {
    assert.equal(
      staticRequestMismatch(record, { ips: ['10.70.0.11/24'] }),
      'has ips 10.70.0.10/24, fd00:70::a/64, the request asks for 10.70.0.11/24',
    );
    assert.equal(
      staticRequestMismatch(record, { mac: '02:aa:bb:cc:dd:02' }),
      'has MAC 02:aa:bb:cc:dd:01, the request asks for 02:aa:bb:cc:dd:02',
    );
  });

  it('lets a refusal through: it is the answer to the request', () => {
    const refused: AttachmentRecord = {
      network: 'default/red',
      error: { reason: 'ip-taken', message: '10.70.0.10 is held by default/other' },
    };
    assert.equal(staticRequestMismatch(refused, { ips: ['10.70.0.10'] }), undefined);
  });
});

describe('extraInterfaceEventReason', () => {
  it('gives every cause its own CamelCase reason, so Events of different causes are not merged', () => {
    assert.deepEqual(
      ['ip-taken', 'ip-outside-subnet', 'malformed-mac', 'unknown-network', 'timeout'].map(
        extraInterfaceEventReason,
      ),
      [
        'ExtraInterfaceIpTaken',
        'ExtraInterfaceIpOutsideSubnet',
        'ExtraInterfaceMalformedMac',
        'ExtraInterfaceUnknownNetwork',
        'ExtraInterfaceTimeout',
      ],
    );
  });
});
