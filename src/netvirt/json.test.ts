import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson, findMember, sameJson } from './json.js';

describe('findMember', () => {
  it('finds a member by its local name, qualified by any module or not', () => {
    assert.deepEqual(findMember({ name: 'a' }, 'name'), { member: 'name', value: 'a' });
    assert.deepEqual(findMember({ 'odl-interface:l2vlan-mode': 'trunk' }, 'l2vlan-mode'), {
      member: 'odl-interface:l2vlan-mode',
      value: 'trunk',
    });
  });

  it('does not take a member whose local name only ends with the name', () => {
    const obj = { 'm:elan-instance-name': 'x', 'elan-name': 'y', 'a:b:name': 'z' };
    assert.equal(findMember(obj, 'name'), undefined);
    assert.equal(findMember(obj, 'instance-name'), undefined);
    assert.deepEqual(findMember(obj, 'elan-instance-name'), { member: 'm:elan-instance-name', value: 'x' });
  });

  it('finds nothing for an absent member, nor for what an object inherits', () => {
    assert.equal(findMember({ 'm:other': 1 }, 'name'), undefined);
    assert.equal(findMember({}, 'constructor'), undefined);
    assert.equal(findMember({}, 'toString'), undefined);
  });
});

describe('sameJson', () => {
  // Pairs that differ or agree in every way canonicalJson tells apart (or does not).
  const values: unknown[] = [
    undefined,
    null,
    0,
    1,
    '1',
    '',
    true,
    'true',
    [],
    {},
    [1, 2],
    [2, 1],
    ['1', 2],
    [undefined],
    { a: 1 },
    { a: 1, b: undefined },
    { b: undefined, a: 1 },
    { a: '1' },
    { 0: 'x' },
    ['x'],
    { a: { b: [1, { c: 'd' }] } },
    { a: { b: [1, { c: 'd', e: undefined }] } },
    { a: { b: [1, { c: 'e' }] } },
    { a: 1, b: 2 },
    { b: 2, a: 1 },
    { a: 1, c: 2 },
  ];

  it('agrees with comparing canonical JSON texts, for every pair', () => {
    for (const a of values)
      for (const b of values)
        assert.equal(
          sameJson(a, b),
          canonicalJson(a) === canonicalJson(b),
          `${JSON.stringify(a) ?? 'undefined'} vs ${JSON.stringify(b) ?? 'undefined'}`,
        );
  });
});
