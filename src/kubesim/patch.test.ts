import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Json } from './patch.js';
import { jsonPatch, mergePatch, strategicMergePatch } from './patch.js';
import { ApiError } from './status.js';

const code = (expected: number) => (err: unknown) => err instanceof ApiError && err.code === expected;

describe('JSON merge patch (RFC 7386)', () => {
  it('merges objects, deletes with null and replaces lists', () => {
    const target: Json = { a: 1, b: { c: 2, d: 3 }, l: [1, 2] };
    assert.deepEqual(mergePatch(target, { b: { c: null, e: 4 }, l: [3], f: 'x' }), {
      a: 1,
      b: { d: 3, e: 4 },
      l: [3],
      f: 'x',
    });
    assert.deepEqual(target, { a: 1, b: { c: 2, d: 3 }, l: [1, 2] }, 'the target is not modified');
  });
});

describe('strategic merge patch', () => {
  it('merges list fields by their merge keys', () => {
    const pod: Json = {
      metadata: { finalizers: ['a'] },
      status: {
        podIPs: [{ ip: '10.0.0.1' }],
        conditions: [
          { type: 'Ready', status: 'False' },
          { type: 'Scheduled', status: 'True' },
        ],
      },
    };
    const patched = strategicMergePatch(pod, {
      metadata: { finalizers: ['b', 'a'] },
      status: { podIPs: [{ ip: 'fd00::1' }], conditions: [{ type: 'Ready', status: 'True' }] },
    });
    assert.deepEqual(patched, {
      metadata: { finalizers: ['a', 'b'] },
      status: {
        podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }],
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'Scheduled', status: 'True' },
        ],
      },
    });
  });

  it('replaces lists without a merge strategy and honours $patch directives', () => {
    const target: Json = {
      spec: {
        containers: [
          { name: 'a', image: '1' },
          { name: 'b', image: '2' },
        ],
        args: ['x'],
      },
      status: { conditions: [{ type: 'Ready' }] },
    };
    assert.deepEqual(strategicMergePatch(target, { spec: { args: ['y'] } }), {
      ...target,
      spec: { ...(target.spec as object), args: ['y'] },
    });
    const deleted = strategicMergePatch(target, {
      spec: { containers: [{ name: 'a', $patch: 'delete' }] },
    }) as { spec: { containers: unknown[] } };
    assert.deepEqual(deleted.spec.containers, [{ name: 'b', image: '2' }]);
    const replaced = strategicMergePatch(target, {
      status: { conditions: [{ $patch: 'replace' }, { type: 'New' }] },
    }) as { status: unknown };
    assert.deepEqual(replaced.status, { conditions: [{ type: 'New' }] });
    const map = strategicMergePatch(
      { metadata: { labels: { a: '1', b: '2' } } },
      { metadata: { labels: { $patch: 'replace', c: '3' } } },
    );
    assert.deepEqual(map, { metadata: { labels: { c: '3' } } });
    // kubectl apply sends ordering hints; they never end up in the object.
    const ordered = strategicMergePatch(
      { spec: { ports: [{ port: 80 }] } },
      { spec: { '$setElementOrder/ports': [{ port: 80 }, { port: 81 }], ports: [{ port: 81 }] } },
    );
    assert.deepEqual(ordered, { spec: { ports: [{ port: 80 }, { port: 81 }] } });
  });

  it('rejects a list element without its merge key', () => {
    assert.throws(() => strategicMergePatch({}, { status: { conditions: [{ status: 'True' }] } }), code(400));
  });
});

describe('JSON patch (RFC 6902)', () => {
  it('applies add, remove, replace, move, copy and test in order', () => {
    const target: Json = { metadata: { labels: { a: '1' } }, list: [1, 2, 3] };
    const result = jsonPatch(target, [
      { op: 'add', path: '/metadata/labels/b~1c', value: '2' },
      { op: 'remove', path: '/metadata/labels/a' },
      { op: 'replace', path: '/list/0', value: 9 },
      { op: 'add', path: '/list/-', value: 4 },
      { op: 'move', from: '/list/1', path: '/moved' },
      { op: 'copy', from: '/moved', path: '/copied' },
      { op: 'test', path: '/copied', value: 2 },
    ]);
    assert.deepEqual(result, { metadata: { labels: { 'b/c': '2' } }, list: [9, 3, 4], moved: 2, copied: 2 });
    assert.deepEqual(
      target,
      { metadata: { labels: { a: '1' } }, list: [1, 2, 3] },
      'the target is not modified',
    );
  });

  it('fails the whole patch on a failed test or a missing path (422) and on malformed operations (400)', () => {
    assert.throws(() => jsonPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }]), code(422));
    assert.throws(() => jsonPatch({ a: 1 }, [{ op: 'remove', path: '/b' }]), code(422));
    assert.throws(() => jsonPatch({ a: 1 }, [{ op: 'replace', path: '/b/c', value: 1 }]), code(422));
    assert.throws(() => jsonPatch({ a: 1 }, [{ op: 'add', path: '/b' }]), code(400));
    assert.throws(() => jsonPatch({ a: 1 }, { op: 'add' }), code(400));
    assert.throws(() => jsonPatch({ a: 1 }, [{ op: 'frobnicate', path: '/a' }]), code(400));
  });
});
