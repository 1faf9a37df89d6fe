import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { podOffloadPolicy } from './datapath.js';

describe('podOffloadPolicy', () => {
  it('turns TX checksum offload off on a netdev bridge without userspace TSO', () => {
    const p = podOffloadPolicy({ bridge: 'br-int', datapathType: 'netdev', userspaceTso: false });
    assert.equal(p.txChecksum, 'turn-off');
    assert.match(
      p.why,
      /bridge br-int uses the userspace datapath \(datapath_type netdev\) without other_config:userspace-tso-enable=true/,
    );
  });

  it('leaves it on with userspace TSO (virtio-net headers carry the partial checksum)', () => {
    const p = podOffloadPolicy({ bridge: 'br-int', datapathType: 'netdev', userspaceTso: true });
    assert.equal(p.txChecksum, 'leave');
    assert.match(p.why, /userspace-tso-enable=true/);
  });

  it('leaves it on with the kernel datapath, whatever the TSO setting', () => {
    for (const userspaceTso of [false, true]) {
      const p = podOffloadPolicy({ bridge: 'br-int', datapathType: 'system', userspaceTso });
      assert.equal(p.txChecksum, 'leave');
      assert.match(p.why, /kernel datapath \(datapath_type system\)/);
    }
  });
});
