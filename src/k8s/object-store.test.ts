import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubernetesObject } from '@kubernetes/client-node';
import { objectKey } from './object-key.js';
import { ObjectStore } from './object-store.js';

function pod(name: string, rv: string, namespace = 'default'): KubernetesObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, resourceVersion: rv } };
}

describe('objectKey', () => {
  it('is namespace/name for namespaced objects and name for cluster-scoped ones', () => {
    assert.equal(objectKey(pod('a', '1', 'ns1')), 'ns1/a');
    assert.equal(objectKey({ kind: 'Node', metadata: { name: 'node-1' } }), 'node-1');
  });

  it('rejects an object without a name', () => {
    assert.throws(
      () => objectKey({ kind: 'Pod', metadata: { namespace: 'x' } }),
      /Pod without metadata.name/,
    );
  });
});

describe('ObjectStore', () => {
  it('reports add, update only when the resourceVersion changed, and delete with the given state', () => {
    const store = new ObjectStore<KubernetesObject>();
    assert.equal(store.upsert(pod('a', '10')).kind, 'add');
    assert.equal(store.upsert(pod('a', '10')).kind, 'unchanged');
    const update = store.upsert(pod('a', '11'));
    assert.equal(update.kind, 'update');
    assert.equal(update.kind === 'update' && update.old.metadata?.resourceVersion, '10');
    const final = pod('a', '12');
    assert.deepEqual(store.remove(final), { kind: 'delete', obj: final });
    assert.equal(store.remove(final).kind, 'unchanged');
    assert.equal(store.size, 0);
  });

  it('treats resourceVersions as opaque: "9" to "10" is a change, not a regression', () => {
    const store = new ObjectStore<KubernetesObject>();
    store.upsert(pod('a', '9'));
    assert.equal(store.upsert(pod('a', '10')).kind, 'update');
    assert.equal(store.upsert(pod('a', 'abc')).kind, 'update');
  });

  it('replace reports vanished, changed and new objects and swaps the contents', () => {
    const store = new ObjectStore<KubernetesObject>();
    store.upsert(pod('keep', '1'));
    store.upsert(pod('change', '1'));
    store.upsert(pod('gone', '1'));
    store.upsert(pod('gone-ns', '1', 'other'));
    const result = store.replace([pod('keep', '1'), pod('change', '2'), pod('new', '3')]);
    assert.deepEqual(result.deleted.map(objectKey).sort(), ['default/gone', 'other/gone-ns']);
    assert.deepEqual(
      result.updated.map((u) => [
        objectKey(u.obj),
        u.old.metadata?.resourceVersion,
        u.obj.metadata?.resourceVersion,
      ]),
      [['default/change', '1', '2']],
    );
    assert.deepEqual(result.added.map(objectKey), ['default/new']);
    assert.deepEqual(store.list().map(objectKey).sort(), ['default/change', 'default/keep', 'default/new']);
  });

  it('replace leaves the cache untouched when an item is malformed', () => {
    const store = new ObjectStore<KubernetesObject>();
    store.upsert(pod('a', '1'));
    assert.throws(
      () => store.replace([pod('b', '1'), { kind: 'Pod', metadata: {} }]),
      /without metadata.name/,
    );
    assert.deepEqual(store.list().map(objectKey), ['default/a']);
  });
});
