import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePodSubnet } from './pod-subnet.js';

describe('parsePodSubnet', () => {
  it('normalises, takes the first address as gateway and counts what host-local can hand out', () => {
    assert.deepEqual(parsePodSubnet(' 10.11.1.0/24 '), {
      cidr: '10.11.1.0/24',
      gateway: '10.11.1.1',
      family: 4,
      rangeStart: '10.11.1.2',
      capacity: 253,
    });
    assert.deepEqual(parsePodSubnet('10.11.1.77/24').cidr, '10.11.1.0/24');
    assert.equal(parsePodSubnet('10.0.0.0/30').capacity, 1);
    const v6 = parsePodSubnet('fd00:10:0:1::/64');
    assert.equal(v6.gateway, 'fd00:10:0:1::1');
    assert.equal(v6.family, 6);
  });

  it('rejects free text that is no subnet, and subnets with no room for a pod', () => {
    for (const bad of ['', 'ten', '10.11.1.0', '10.11.1.0/33', '10.0.0.0/31', '10.0.0.1/32', 'fd00::/127']) {
      assert.throws(() => parsePodSubnet(bad), /pod subnet/, bad);
    }
  });

  it('with the node gateway on, host-local starts at the third address and counts one address less', () => {
    const off = parsePodSubnet('10.11.1.0/24');
    const on = parsePodSubnet('10.11.1.0/24', true);
    assert.equal(off.rangeStart, '10.11.1.2');
    assert.equal(on.rangeStart, '10.11.1.3');
    assert.equal(on.capacity, off.capacity - 1);
  });
});
