import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { listEntries, listEntriesFromParent, parseRestconfJson, quoteUnsafeIntegers } from './json-body.js';
import type { DataPath } from './path.js';

const elanList: DataPath = [{ module: 'elan', name: 'elan-instances' }, { name: 'elan-instance' }];
const elanEntry: DataPath = [
  { module: 'elan', name: 'elan-instances' },
  { name: 'elan-instance', keys: ['n1'] },
];

describe('parseRestconfJson', () => {
  it('reads 64-bit integers beyond 2^53 as strings (bierman02 writes them bare), leaves safe ones as numbers', () => {
    const text =
      '{"interface":[{"odl-interface:datapath-node-identifier":18446744073709551615,"vlan-id":100,"neg":-9007199254740993}]}';
    assert.deepEqual(parseRestconfJson(text), {
      interface: [
        {
          'odl-interface:datapath-node-identifier': '18446744073709551615',
          'vlan-id': 100,
          neg: '-9007199254740993',
        },
      ],
    });
  });

  it('does not touch digits inside strings (escaped quotes included), decimals or exponents', () => {
    const text = '{"a":"x\\"12345678901234567890","b":1234567890123456789.5,"c":1e300,"d":9007199254740991}';
    assert.equal(quoteUnsafeIntegers(text), text);
    assert.deepEqual(parseRestconfJson(text), {
      a: 'x"12345678901234567890',
      b: Number('1234567890123456789.5'),
      c: 1e300,
      d: 9007199254740991,
    });
  });

  it('still throws on invalid JSON', () => {
    assert.throws(() => parseRestconfJson('{"a":'), SyntaxError);
  });
});

describe('listEntries', () => {
  const entry = { 'elan-instance-name': 'n1', 'segmentation-id': 1001 };

  it('unwraps the RFC 8040 qualified and the bierman02 unqualified top member', () => {
    assert.deepEqual(listEntries({ 'elan:elan-instance': [entry] }, elanList), [entry]);
    assert.deepEqual(listEntries({ 'elan-instance': [entry] }, elanList), [entry]);
  });

  it('accepts a single object for an entry path, not for a list path', () => {
    assert.deepEqual(listEntries({ 'elan:elan-instance': entry }, elanEntry), [entry]);
    assert.throws(() => listEntries({ 'elan:elan-instance': entry }, elanList), /not a list of entries/);
  });

  it('returns [] for no body and an empty object', () => {
    assert.deepEqual(listEntries(undefined, elanList), []);
    assert.deepEqual(listEntries({}, elanList), []);
  });

  it('refuses another member, a member that merely ends with the name, and non-object entries', () => {
    assert.throws(
      () => listEntries({ 'elan:elan-interface': [entry] }, elanList),
      /expected member "elan-instance".*"elan:elan-interface"/,
    );
    assert.throws(() => listEntries({ 'x:my-elan-instance': [entry] }, elanList), /expected member/);
    assert.throws(
      () => listEntries({ 'elan-instance': [entry, 'n2'] }, elanList),
      /entry 1 of "elan-instance" is a string/,
    );
    assert.throws(() => listEntries([entry], elanList), /got an array/);
  });
});

describe('listEntriesFromParent (bierman02 cannot read a list without keys)', () => {
  const adjacencies: DataPath = [
    { module: 'l3vpn', name: 'vpn-interfaces' },
    { name: 'vpn-interface', keys: ['default:nginx-1'] },
    { module: 'odl-l3vpn', name: 'adjacency' },
  ];
  const adjacency = { ip_address: '10.11.1.5/32', adjacency_type: 'primary-adjacency' };

  it('picks the list out of the parent container', () => {
    const body = { 'elan-instances': { 'elan-instance': [{ 'elan-instance-name': 'n1' }] } };
    assert.deepEqual(listEntriesFromParent(body, elanList), [{ 'elan-instance-name': 'n1' }]);
  });

  it('picks a qualified augment list out of the one-element parent entry', () => {
    const body = { 'vpn-interface': [{ name: 'default:nginx-1', 'odl-l3vpn:adjacency': [adjacency] }] };
    assert.deepEqual(listEntriesFromParent(body, adjacencies), [adjacency]);
  });

  it('reads a parent without the list, a missing parent and an empty answer as no entries', () => {
    assert.deepEqual(listEntriesFromParent({ 'elan-instances': {} }, elanList), []);
    assert.deepEqual(listEntriesFromParent(undefined, elanList), []);
    assert.deepEqual(listEntriesFromParent({}, elanList), []);
  });

  it('refuses answers of the wrong shape', () => {
    assert.throws(
      () => listEntriesFromParent({ 'elan-interfaces': {} }, elanList),
      /expected member "elan-instances"/,
    );
    assert.throws(() => listEntriesFromParent({ 'vpn-interface': [{}, {}] }, adjacencies), /holds 2 entries/);
    assert.throws(
      () => listEntriesFromParent({ 'elan-instances': { 'elan-instance': {} } }, elanList),
      /not a list of entries/,
    );
    assert.throws(() => listEntriesFromParent({ 'elan-instances': 3 }, elanList), /is a number/);
  });
});
