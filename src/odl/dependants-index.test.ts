import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DependantsIndex } from './dependants-index.js';

const ref = (kind: string, name: string) => ({ kind, name });
const vpn = ref('vpnInstance', 'ns-1');

describe('DependantsIndex', () => {
  it('keeps each link once and returns dependants sorted by kind, then name', () => {
    const index = new DependantsIndex();
    index.add(ref('interface', 'p1'), ref('vpnInterface', 'p1'));
    index.add(ref('interface', 'p1'), ref('elanInterface', 'p1'));
    index.add(ref('interface', 'p1'), ref('elanInterface', 'p1'));
    assert.deepEqual(index.get(ref('interface', 'p1')), [
      ref('elanInterface', 'p1'),
      ref('vpnInterface', 'p1'),
    ]);
    assert.deepEqual(index.get(ref('interface', 'p2')), []);
    assert.deepEqual(
      index.get(ref('elanInstance', 'p1')),
      [],
      'the same name of another kind is another prerequisite',
    );
  });

  it('grows past the flat form and shrinks back through removals, forgetting an empty prerequisite', () => {
    const index = new DependantsIndex();
    const names = Array.from({ length: 20 }, (_, i) => `pod-${String(i).padStart(2, '0')}`);
    for (const n of names) index.add(vpn, ref('vpnInterface', n));
    index.add(vpn, ref('vpnInterface', 'pod-03'));
    index.add(vpn, ref('elanInterface', 'x'));
    assert.deepEqual(index.get(vpn), [
      ref('elanInterface', 'x'),
      ...names.map((n) => ref('vpnInterface', n)),
    ]);
    index.remove(vpn, ref('elanInterface', 'x'));
    for (const n of names.slice(0, 17)) index.remove(vpn, ref('vpnInterface', n));
    assert.deepEqual(
      index.get(vpn),
      names.slice(17).map((n) => ref('vpnInterface', n)),
    );
    // Removing something never added changes nothing, in either form.
    index.remove(vpn, ref('vpnInterface', 'pod-00'));
    index.add(vpn, ref('vpnInterface', 'pod-05'));
    assert.deepEqual(
      index.get(vpn).map((r) => r.name),
      ['pod-05', 'pod-17', 'pod-18', 'pod-19'],
    );
    assert.equal(index.size, 1);
    for (const n of ['pod-05', 'pod-17', 'pod-18', 'pod-19']) index.remove(vpn, ref('vpnInterface', n));
    assert.deepEqual(index.get(vpn), []);
    assert.equal(index.size, 0, 'no prerequisite without dependants is kept');
  });

  it('forgets a prerequisite whose many dependants all go, and clears', () => {
    const index = new DependantsIndex();
    for (let i = 0; i < 30; i += 1) index.add(vpn, ref('vpnInterface', `p${i}`));
    for (let i = 0; i < 30; i += 1) index.remove(vpn, ref('vpnInterface', `p${i}`));
    assert.equal(index.size, 0);
    index.add(vpn, ref('vpnInterface', 'p1'));
    index.clear();
    assert.deepEqual(index.get(vpn), []);
  });
});
