import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allocateRouteDistinguishers, parseRouteDistinguisher } from './route-distinguisher.js';

describe('route distinguishers', () => {
  it('parses the three RD types and refuses the rest', () => {
    assert.deepEqual(parseRouteDistinguisher('64512:4294967295'), {
      administrator: '64512',
      assigned: 4294967295,
    });
    assert.deepEqual(parseRouteDistinguisher('4200000000:65535'), {
      administrator: '4200000000',
      assigned: 65535,
    });
    assert.deepEqual(parseRouteDistinguisher('192.0.2.1:7'), { administrator: '192.0.2.1', assigned: 7 });
    assert.throws(() => parseRouteDistinguisher('4200000000:65536'), /above 65535/);
    assert.throws(() => parseRouteDistinguisher('192.0.2.1:65536'), /above 65535/);
    assert.throws(() => parseRouteDistinguisher('10'), /3\.\.21/);
    assert.throws(() => parseRouteDistinguisher('100'), /ASN:nn/);
    assert.throws(() => parseRouteDistinguisher('abc:1'), /neither an AS number/);
    assert.throws(() => parseRouteDistinguisher('100:x'), /ASN:nn/);
    assert.throws(() => parseRouteDistinguisher('4294967295:4294967295'), /21|above/);
  });

  it('keeps existing RDs and gives new namespaces the lowest free numbers, in name order', () => {
    const existing = new Map([
      ['default', '64512:2'],
      ['old-gone', '64512:1'], // VPN still in ODL until garbage collection: its RD stays taken
      ['foreign-admin', '65000:3'],
    ]);
    const { byNamespace, reassigned } = allocateRouteDistinguishers(
      ['zeta', 'default', 'alpha', 'beta'],
      existing,
      { administrator: '64512' },
    );
    assert.deepEqual([...byNamespace].sort(), [
      ['alpha', '64512:3'],
      ['beta', '64512:4'],
      ['default', '64512:2'],
      ['zeta', '64512:5'],
    ]);
    assert.deepEqual(reassigned, []);
  });

  it('is independent of input order and stable across restarts', () => {
    const a = allocateRouteDistinguishers(['b', 'a', 'c'], new Map(), { administrator: '64512' }).byNamespace;
    const b = allocateRouteDistinguishers(['c', 'b', 'a'], new Map(), { administrator: '64512' }).byNamespace;
    assert.deepEqual([...a].sort(), [...b].sort());
    assert.equal(a.get('a'), '64512:1');
    // After a restart, the recovered map reproduces the assignment; a new namespace fills a gap.
    const recovered = new Map([...a].filter(([ns]) => ns !== 'b'));
    const again = allocateRouteDistinguishers(['a', 'c', 'd'], recovered, {
      administrator: '64512',
    }).byNamespace;
    assert.equal(again.get('a'), '64512:1');
    assert.equal(again.get('c'), '64512:3');
    assert.equal(again.get('d'), '64512:2');
  });

  it('splits a shared RD: the first namespace keeps it, the others are reassigned', () => {
    const existing = new Map([
      ['web', '100:1'],
      ['api', '100:1'],
    ]);
    const { byNamespace, reassigned } = allocateRouteDistinguishers(['web', 'api'], existing, {
      administrator: '100',
    });
    assert.equal(byNamespace.get('api'), '100:1');
    assert.equal(byNamespace.get('web'), '100:2');
    assert.deepEqual(reassigned, ['web']);
  });

  it('honours first, the IPv4 administrator range, and fails when exhausted', () => {
    assert.equal(
      allocateRouteDistinguishers(['a'], new Map(), {
        administrator: '10.0.0.1',
        first: 100,
      }).byNamespace.get('a'),
      '10.0.0.1:100',
    );
    const full = new Map([['x', '10.0.0.1:65535']]);
    assert.throws(
      () => allocateRouteDistinguishers(['a'], full, { administrator: '10.0.0.1', first: 65535 }),
      /no free assigned number/,
    );
    assert.throws(
      () => allocateRouteDistinguishers(['a'], new Map(), { administrator: 'asn1' }),
      /neither an AS number/,
    );
  });

  it('tolerates an unparsable existing RD without colliding with it', () => {
    const { byNamespace } = allocateRouteDistinguishers(['a', 'b'], new Map([['a', 'legacy']]), {
      administrator: '64512',
    });
    assert.equal(byNamespace.get('a'), 'legacy');
    assert.equal(byNamespace.get('b'), '64512:1');
  });
});
