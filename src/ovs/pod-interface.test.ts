import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseTxChecksumming, txChecksumFeaturesKept } from './pod-interface.js';

describe('reading ethtool', () => {
  it('finds the TX checksum features the kernel refused to turn off (ethtool 6.1 still exits 0)', () => {
    // `ethtool -K lo tx off`: loopback keeps its checksum offload.
    const lo =
      'Actual changes:\ntx-checksum-ip-generic: on [requested off]\ntx-checksum-sctp: on [requested off]\n';
    assert.deepEqual(txChecksumFeaturesKept(lo), ['tx-checksum-ip-generic']);
    // A veth: everything went (and TSO with it).
    const veth =
      'Actual changes:\ntx-checksum-ip-generic: off\ntx-tcp-segmentation: off [not requested]\ntx-checksum-sctp: off\n';
    assert.deepEqual(txChecksumFeaturesKept(veth), []);
    // Already off: ethtool prints nothing.
    assert.deepEqual(txChecksumFeaturesKept(''), []);
  });

  it('reads tx-checksumming from ethtool -k', () => {
    const out =
      'Features for eth0:\nrx-checksumming: on\ntx-checksumming: off\n\ttx-checksum-ipv4: off [fixed]\n';
    assert.equal(parseTxChecksumming(out), 'off');
    assert.equal(
      parseTxChecksumming(out.replace('tx-checksumming: off', 'tx-checksumming: on [fixed]')),
      'on',
    );
    assert.throws(() => parseTxChecksumming('Features for eth0:\n'), /did not report tx-checksumming/);
  });
});
