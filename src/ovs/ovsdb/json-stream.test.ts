import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JsonStreamParser } from './json-stream.js';

describe('JsonStreamParser', () => {
  it('splits back-to-back messages, however the bytes arrive', () => {
    const messages = [
      { id: 1, result: [{ rows: [{ name: 'a}b{', note: 'say "hi" \\ there ]' }] }], error: null },
      { id: null, method: 'update', params: ['x', { Interface: {} }] },
      { id: 'echo', method: 'echo', params: [] },
      { id: 2, result: [{ rows: [{ name: 'é€😀' }] }], error: null },
    ];
    const bytes = Buffer.from(messages.map((m) => JSON.stringify(m)).join(''), 'utf8');
    for (const size of [1, 2, 3, 7, bytes.length]) {
      const parser = new JsonStreamParser();
      const out: unknown[] = [];
      for (let i = 0; i < bytes.length; i += size) out.push(...parser.push(bytes.subarray(i, i + size)));
      assert.deepEqual(out, messages, `chunks of ${size} bytes`);
    }
  });

  it('accepts whitespace between messages and keeps an incomplete one for later', () => {
    const parser = new JsonStreamParser();
    assert.deepEqual(parser.push(Buffer.from('{"a":1}\n  {"b":')), [{ a: 1 }]);
    assert.deepEqual(parser.push(Buffer.from('[2]}')), [{ b: [2] }]);
  });

  it('rejects what is not a JSON-RPC stream', () => {
    assert.throws(() => new JsonStreamParser().push(Buffer.from('hello')), /unexpected "h"/);
    assert.throws(() => new JsonStreamParser().push(Buffer.from('{"a":1}}')), /unbalanced/);
    assert.throws(() => new JsonStreamParser().push(Buffer.from('{"a":tru}')), SyntaxError);
    assert.throws(() => new JsonStreamParser(16).push(Buffer.from('{"a":"0123456789abcdef')), /larger than/);
  });
});
