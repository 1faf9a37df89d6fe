import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { subnetHoldsAddress as cidrContains, SubnetAllocator } from './subnet-allocator.js';

describe('SubnetAllocator', () => {
  it('hands out the lowest free subnet and keeps each node on its own', () => {
    const a = new SubnetAllocator('10.244.0.0/22', 24);
    assert.equal(a.capacity, 4n);
    assert.equal(a.allocate('n1'), '10.244.0.0/24');
    assert.equal(a.allocate('n2'), '10.244.1.0/24');
    assert.equal(a.allocate('n1'), '10.244.0.0/24');
    assert.equal(a.allocate('n3'), '10.244.2.0/24');
    assert.equal(a.allocate('n4'), '10.244.3.0/24');
    assert.equal(a.allocate('n5'), undefined, 'exhausted');
    assert.ok(a.release('n2'));
    assert.equal(a.allocate('n5'), '10.244.1.0/24');
    assert.equal(a.get('n1'), '10.244.0.0/24');
  });

  it('recovers allocations and never hands out an overlapping subnet', () => {
    const a = new SubnetAllocator('10.244.0.0/22', 24);
    assert.equal(
      a.recover('old', '10.244.0.0/23'),
      undefined,
      'a bigger subnet from earlier settings is kept',
    );
    assert.equal(a.recover('n2', '10.244.3.0/24'), undefined);
    assert.match(a.recover('dup', '10.244.1.0/24') ?? '', /overlaps 10\.244\.0\.0\/23/);
    assert.match(a.recover('bad', '10.244.1.7/24') ?? '', /host bits/);
    assert.equal(a.allocate('n3'), '10.244.2.0/24');
    assert.equal(a.allocate('n4'), undefined);
  });

  it('keeps allocations outside the cluster CIDR (settings changed) without blocking it', () => {
    const a = new SubnetAllocator('10.244.0.0/23', 24);
    assert.equal(a.recover('n1', '10.9.0.0/24'), undefined);
    assert.equal(a.allocate('n2'), '10.244.0.0/24');
    assert.equal(a.get('n1'), '10.9.0.0/24');
  });

  it('carves IPv6 subnets', () => {
    const a = new SubnetAllocator('fd00:10::/62', 64);
    assert.equal(a.allocate('n1'), 'fd00:10::/64');
    assert.equal(a.allocate('n2'), 'fd00:10:0:1::/64');
  });

  it('refuses a prefix length that does not fit the cluster CIDR', () => {
    assert.throws(() => new SubnetAllocator('10.244.0.0/16', 8), /between/);
    assert.throws(() => new SubnetAllocator('10.244.0.5/16', 24), /host bits/);
  });

  it('cidrContains: an adjacency address (with or without its /32 or /128) in a subnet', () => {
    assert.equal(cidrContains('10.244.1.0/24', '10.244.1.7/32'), true);
    assert.equal(cidrContains('10.244.1.0/24', '10.244.1.255'), true);
    assert.equal(cidrContains('10.244.1.0/24', '10.244.2.0/32'), false);
    assert.equal(cidrContains('fd00:1::/64', 'fd00:1::5/128'), true);
    assert.equal(cidrContains('10.244.1.0/24', '::ffff:10.244.1.7/128'), false, 'other family');
    assert.equal(cidrContains('10.244.1.0/24', 'not-an-ip/32'), false);
    assert.equal(cidrContains('nonsense', '10.244.1.7/32'), false);
  });
});
