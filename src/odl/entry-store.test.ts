import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NETVIRT_KINDS } from '../netvirt/kinds.js';
import { EntryStore } from './entry-store.js';

const elanInterface = (name: string, elan: string) => ({ name, elanInstanceName: elan });
const vpnInterface = (name: string, ...vpns: string[]) => ({
  name,
  vpnInstanceNames: vpns.map((vpnName) => ({ vpnName })),
  adjacencies: [],
});
const names = (store: EntryStore, kind: string, name: string) =>
  store.dependants({ kind, name }).map((r) => `${r.kind}/${r.name}`);

describe('EntryStore dependants', () => {
  it('follows each entry through create, update, remove and unparsed', () => {
    const store = new EntryStore(NETVIRT_KINDS);
    store.set('elanInterface', elanInterface('p1', 'elan-a'));
    store.set('vpnInterface', vpnInterface('p1', 'vpn-a'));
    assert.deepEqual(names(store, 'interface', 'p1'), ['elanInterface/p1', 'vpnInterface/p1']);
    assert.deepEqual(names(store, 'elanInstance', 'elan-a'), ['elanInterface/p1']);

    // An update moves the entry from its old prerequisites to its new ones.
    store.set('elanInterface', elanInterface('p1', 'elan-b'));
    store.set('vpnInterface', vpnInterface('p1', 'vpn-b', 'vpn-c'));
    assert.deepEqual(names(store, 'elanInstance', 'elan-a'), []);
    assert.deepEqual(names(store, 'elanInstance', 'elan-b'), ['elanInterface/p1']);
    assert.deepEqual(names(store, 'vpnInstance', 'vpn-a'), []);
    assert.deepEqual(names(store, 'vpnInstance', 'vpn-c'), ['vpnInterface/p1']);
    assert.deepEqual(names(store, 'interface', 'p1'), ['elanInterface/p1', 'vpnInterface/p1']);

    store.remove('vpnInterface', 'p1');
    assert.deepEqual(names(store, 'interface', 'p1'), ['elanInterface/p1']);
    assert.deepEqual(names(store, 'vpnInstance', 'vpn-b'), []);
    // An entry that no longer parses needs nothing the store knows of.
    store.setUnparsed('elanInterface', 'p1');
    assert.deepEqual(names(store, 'interface', 'p1'), []);
    assert.deepEqual(names(store, 'elanInstance', 'elan-b'), []);
    // Removing what is not there changes nothing.
    store.remove('elanInterface', 'p9');
    assert.deepEqual(names(store, 'interface', 'p9'), []);
  });

  it('re-indexes a kind read whole, and forgets everything on clear', () => {
    const store = new EntryStore(NETVIRT_KINDS);
    store.set('elanInterface', elanInterface('p1', 'elan-a'));
    store.set('elanInterface', elanInterface('p2', 'elan-a'));
    store.set('vpnInterface', vpnInterface('p1', 'vpn-a'));
    store.replaceKind(
      'elanInterface',
      new Map([
        ['p2', elanInterface('p2', 'elan-b')],
        ['p3', elanInterface('p3', 'elan-a')],
      ]),
      new Set(['p1']),
    );
    assert.deepEqual(names(store, 'elanInstance', 'elan-a'), ['elanInterface/p3']);
    assert.deepEqual(names(store, 'elanInstance', 'elan-b'), ['elanInterface/p2']);
    assert.deepEqual(names(store, 'interface', 'p1'), ['vpnInterface/p1'], 'other kinds keep their links');
    assert.ok(store.isUnparsed('elanInterface', 'p1'));
    store.clear();
    for (const [kind, name] of [
      ['elanInstance', 'elan-a'],
      ['elanInstance', 'elan-b'],
      ['interface', 'p1'],
      ['vpnInstance', 'vpn-a'],
    ] as const)
      assert.deepEqual(names(store, kind, name), [], `${kind}/${name} after clear`);
  });
});
