import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from './resources.js';
import { RESOURCE_TYPES } from './resources.js';
import { labelsMatch, objectPredicate, parseFieldSelector, parseLabelSelector } from './selectors.js';
import { ApiError } from './status.js';

const pods = RESOURCE_TYPES.find((r) => r.plural === 'pods')!;
const nodes = RESOURCE_TYPES.find((r) => r.plural === 'nodes')!;

function obj(labels: Record<string, string>, extra: Record<string, unknown> = {}): KubeObject {
  return {
    metadata: { name: 'p', namespace: 'ns', uid: 'u', resourceVersion: '1', creationTimestamp: '', labels },
    ...extra,
  };
}

const match = (selector: string, labels: Record<string, string>) =>
  labelsMatch(parseLabelSelector(selector), labels);

describe('label selectors', () => {
  it('parses every operator', () => {
    assert.deepEqual(parseLabelSelector('a=1, b==2,c!=3,d in (x, y),e notin (z),f,!g,h>4,i<5'), [
      { key: 'a', operator: '=', values: ['1'] },
      { key: 'b', operator: '=', values: ['2'] },
      { key: 'c', operator: '!=', values: ['3'] },
      { key: 'd', operator: 'in', values: ['x', 'y'] },
      { key: 'e', operator: 'notin', values: ['z'] },
      { key: 'f', operator: 'exists', values: [] },
      { key: 'g', operator: '!exists', values: [] },
      { key: 'h', operator: 'gt', values: ['4'] },
      { key: 'i', operator: 'lt', values: ['5'] },
    ]);
    assert.deepEqual(parseLabelSelector(''), []);
    assert.deepEqual(parseLabelSelector('example.com/role=db'), [
      { key: 'example.com/role', operator: '=', values: ['db'] },
    ]);
    assert.deepEqual(parseLabelSelector('a='), [{ key: 'a', operator: '=', values: [''] }]);
  });

  it('matches as the API server does, including missing labels', () => {
    assert.equal(match('app=web', { app: 'web' }), true);
    assert.equal(match('app=web', {}), false);
    assert.equal(match('app!=web', {}), true, '!= matches a missing label');
    assert.equal(match('app notin (web)', {}), true, 'notin matches a missing label');
    assert.equal(match('app in (web,db)', { app: 'db' }), true);
    assert.equal(match('app in (web,db)', {}), false);
    assert.equal(match('app', { app: '' }), true);
    assert.equal(match('!app', { app: '' }), false);
    assert.equal(match('n>3', { n: '4' }), true);
    assert.equal(match('n>3', { n: 'x' }), false);
    assert.equal(match('a=1,b=2', { a: '1', b: '3' }), false);
  });

  it('rejects malformed selectors with 400', () => {
    for (const bad of [
      'a in b',
      'a in ()',
      'a=1,',
      '=1',
      'a b',
      'a>x',
      'Bad Key=1',
      'a=in valid',
      'a=' + 'x'.repeat(64),
    ]) {
      assert.throws(
        () => parseLabelSelector(bad),
        (err: unknown) => err instanceof ApiError && err.code === 400,
        bad,
      );
    }
  });
});

describe('field selectors', () => {
  it('supports the pod fields odlcoe uses and rejects unknown ones', () => {
    const p = obj(
      {},
      { spec: { nodeName: 'n1', hostNetwork: true }, status: { phase: 'Running', podIP: '10.0.0.1' } },
    );
    const pred = (s: string) => objectPredicate(pods, undefined, s)!(p);
    assert.equal(pred('spec.nodeName=n1'), true);
    assert.equal(pred('spec.nodeName!=n1'), false);
    assert.equal(pred('spec.hostNetwork=true'), true);
    assert.equal(pred('status.phase==Running,metadata.namespace=ns,metadata.name=p'), true);
    assert.equal(pred('status.podIP=10.0.0.2'), false);
    assert.throws(
      () => parseFieldSelector('spec.unschedulable=true', pods),
      /field label not supported: spec.unschedulable/,
    );
    assert.deepEqual(parseFieldSelector('spec.unschedulable=true', nodes), [
      { field: 'spec.unschedulable', operator: '=', value: 'true' },
    ]);
  });

  it('treats a missing field as the empty string and unescapes values', () => {
    assert.equal(objectPredicate(pods, undefined, 'spec.nodeName=')!(obj({}, { spec: {} })), true);
    assert.deepEqual(parseFieldSelector('metadata.name=a\\,b', pods), [
      { field: 'metadata.name', operator: '=', value: 'a,b' },
    ]);
    assert.throws(
      () => parseFieldSelector('metadata.name', pods),
      (err: unknown) => err instanceof ApiError && err.code === 400,
    );
  });

  it('combines label and field selectors', () => {
    const p = obj({ app: 'web' }, { spec: { nodeName: 'n1' } });
    assert.equal(objectPredicate(pods, 'app=web', 'spec.nodeName=n1')!(p), true);
    assert.equal(objectPredicate(pods, 'app=db', 'spec.nodeName=n1')!(p), false);
    assert.equal(objectPredicate(pods, '', ''), undefined);
  });
});
