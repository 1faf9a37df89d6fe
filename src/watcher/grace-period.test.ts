import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GracePeriods } from './grace-period.js';

describe('GracePeriods', () => {
  it('counts from the first time a key is unneeded, and starts over once needed again', () => {
    let now = 1000;
    const g = new GracePeriods(300, () => now);
    assert.equal(g.remaining('vpn/a'), 300);
    now += 200;
    assert.equal(g.remaining('vpn/a'), 100);
    now += 100;
    assert.equal(g.remaining('vpn/a'), 0);
    g.needed('vpn/a');
    assert.equal(g.remaining('vpn/a'), 300);
    g.clear();
    now += 50;
    assert.equal(g.remaining('vpn/a'), 300);
  });
});
