import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { abortFanout } from './abort-fanout.js';

describe('abortFanout', () => {
  it('holds one listener per source however many children live', () => {
    const term = new AbortController();
    const queue = new AbortController();
    const fan = abortFanout([term.signal, queue.signal]);
    const children = Array.from({ length: 300 }, () => fan.child());
    assert.equal(getEventListeners(term.signal, 'abort').length, 1);
    assert.equal(getEventListeners(queue.signal, 'abort').length, 1);
    for (const c of children) assert.equal(c.signal.aborted, false);
    fan.dispose();
    assert.equal(getEventListeners(term.signal, 'abort').length, 0);
    assert.equal(getEventListeners(queue.signal, 'abort').length, 0);
  });

  it('aborts the live children with the first source reason, not the released ones', () => {
    const term = new AbortController();
    const queue = new AbortController();
    const fan = abortFanout([term.signal, queue.signal]);
    const live = fan.child();
    const done = fan.child();
    done.release();
    const reason = new Error('leader term ended');
    term.abort(reason);
    queue.abort(new Error('work queue stopped'));
    assert.equal(live.signal.reason, reason);
    assert.equal(done.signal.aborted, false);
    // A child made after a source fired starts aborted.
    assert.equal(fan.child().signal.reason, reason);
  });

  it('starts aborted when a source already is', () => {
    const queue = new AbortController();
    queue.abort(new Error('stopped'));
    const fan = abortFanout([new AbortController().signal, queue.signal]);
    assert.equal(fan.child().signal.aborted, true);
  });
});
