import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { abortScope } from './abort-scope.js';

describe('abortScope', () => {
  it('aborts with the parent and unhooks from it on dispose', () => {
    const parent = new AbortController();
    const scope = abortScope(parent.signal);
    assert.equal(getEventListeners(parent.signal, 'abort').length, 1);
    scope.dispose();
    assert.equal(getEventListeners(parent.signal, 'abort').length, 0);
    const live = abortScope(parent.signal);
    parent.abort(new Error('parent stopped'));
    assert.equal(live.signal.aborted, true);
    assert.match(String(live.signal.reason), /parent stopped/);
    assert.equal(live.timedOut(), false);
    live.dispose();
  });

  it('starts aborted under an aborted parent', () => {
    const parent = new AbortController();
    parent.abort(new Error('already'));
    assert.equal(abortScope(parent.signal, 1000).signal.aborted, true);
  });

  it('says when the deadline ended it', async () => {
    const scope = abortScope(undefined, 5);
    await new Promise((resolve) => scope.signal.addEventListener('abort', resolve, { once: true }));
    assert.equal(scope.timedOut(), true);
    scope.dispose();
  });
});
