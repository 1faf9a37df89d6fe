import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DelayHeap } from './delay-heap.js';

describe('delay heap', () => {
  it('pops due keys earliest first and leaves the rest', () => {
    const heap = new DelayHeap<string>();
    heap.schedule('c', 30);
    heap.schedule('a', 10);
    heap.schedule('d', 40);
    heap.schedule('b', 20);
    assert.deepEqual(heap.popDue(25), ['a', 'b']);
    assert.equal(heap.size, 2);
    assert.equal(heap.peekReadyAt(), 30);
    assert.deepEqual(heap.popDue(100), ['c', 'd']);
    assert.equal(heap.peekReadyAt(), undefined);
  });

  it('keeps insertion order among keys due at the same instant', () => {
    const heap = new DelayHeap<string>();
    for (const key of ['x', 'y', 'z', 'w']) heap.schedule(key, 5);
    assert.deepEqual(heap.popDue(5), ['x', 'y', 'z', 'w']);
  });

  it('holds a key once; a shorter delay moves it earlier, a longer one is ignored', () => {
    const heap = new DelayHeap<string>();
    assert.equal(heap.schedule('k', 100), true);
    assert.equal(heap.schedule('other', 50), true);
    assert.equal(heap.schedule('k', 200), false);
    assert.equal(heap.readyAt('k'), 100);
    assert.equal(heap.schedule('k', 10), true);
    assert.equal(heap.size, 2);
    assert.equal(heap.peekReadyAt(), 10);
    assert.deepEqual(heap.popDue(1000), ['k', 'other']);
    assert.equal(heap.readyAt('k'), undefined);
  });

  it('stays ordered under many random inserts, moves and pops', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const heap = new DelayHeap<string>();
    const expected = new Map<string, number>();
    for (let i = 0; i < 5000; i++) {
      const key = `k${Math.floor(random() * 2000)}`;
      const at = Math.floor(random() * 10_000);
      heap.schedule(key, at);
      expected.set(key, Math.min(expected.get(key) ?? Infinity, at));
    }
    assert.equal(heap.size, expected.size);
    const popped = heap.popDue(Infinity);
    const times = popped.map((k) => expected.get(k) as number);
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
    );
    assert.deepEqual(new Set(popped), new Set(expected.keys()));
  });

  it('clear forgets everything', () => {
    const heap = new DelayHeap<string>();
    heap.schedule('a', 1);
    heap.clear();
    assert.equal(heap.size, 0);
    assert.equal(heap.readyAt('a'), undefined);
    assert.equal(heap.schedule('a', 2), true);
  });
});
