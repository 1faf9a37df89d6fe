import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyFifo } from './key-fifo.js';

describe('key fifo', () => {
  it('returns keys in arrival order across compactions', () => {
    const fifo = new KeyFifo<number>();
    const out: number[] = [];
    for (let i = 0; i < 5000; i++) {
      fifo.push(i);
      if (i % 3 === 0) out.push(fifo.shift() as number);
    }
    for (let k = fifo.shift(); k !== undefined; k = fifo.shift()) out.push(k);
    assert.deepEqual(
      out,
      Array.from({ length: 5000 }, (_, i) => i),
    );
    assert.equal(fifo.length, 0);
  });

  it('drain empties the queue in order', () => {
    const fifo = new KeyFifo<string>();
    fifo.push('a');
    fifo.push('b');
    fifo.push('c');
    fifo.shift();
    assert.deepEqual(fifo.drain(), ['b', 'c']);
    assert.equal(fifo.length, 0);
    assert.equal(fifo.shift(), undefined);
  });
});
