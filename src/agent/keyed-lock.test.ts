import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyedLock } from './keyed-lock.js';

const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
};

describe('KeyedLock', () => {
  it('runs one key in arrival order and other keys in parallel', async () => {
    const lock = new KeyedLock();
    const order: string[] = [];
    const g = gate();
    const first = lock.run('a', async () => {
      order.push('a1 start');
      await g.opened;
      order.push('a1 end');
    });
    const second = lock.run('a', async () => {
      order.push('a2');
    });
    const other = lock.run('b', async () => {
      order.push('b');
    });
    await other;
    assert.deepEqual(order, ['a1 start', 'b']);
    assert.equal(lock.isHeld('a'), true);
    g.open();
    await Promise.all([first, second]);
    assert.deepEqual(order, ['a1 start', 'b', 'a1 end', 'a2']);
    assert.equal(lock.isHeld('a'), false);
  });

  it('releases the key when the holder throws', async () => {
    const lock = new KeyedLock();
    await assert.rejects(
      lock.run('k', async () => {
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.equal(await lock.run('k', async () => 'next'), 'next');
    assert.equal(lock.isHeld('k'), false);
  });
});
