import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { coeKeysFor, parseCoeKey } from './keys.js';

const pod = (ip?: string, extra: Partial<V1Pod['metadata']> = {}): V1Pod => ({
  metadata: { name: 'p1', namespace: 'ns1', uid: 'u1', ...extra },
  spec: { containers: [], nodeName: 'n1' },
  status: ip ? { phase: 'Running', podIP: ip } : { phase: 'Pending' },
});
const node = (ip: string, heartbeat = 't0'): V1Node => ({
  metadata: { name: 'n1', uid: 'nu1' },
  status: {
    addresses: [{ type: 'InternalIP', address: ip }],
    conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: heartbeat as unknown as Date }],
  },
});
const onNode = () => [pod('10.0.0.5'), { ...pod(), metadata: { name: 'p2', namespace: 'ns2', uid: 'u2' } }];

describe('coeKeysFor', () => {
  it('maps a pod change to its pod key, and skips updates that change nothing it reads', () => {
    assert.deepEqual(coeKeysFor({ kind: 'pod', obj: pod('10.0.0.5') }, onNode), ['pod/ns1/p1']);
    assert.deepEqual(coeKeysFor({ kind: 'pod', obj: pod('10.0.0.5'), old: pod() }, onNode), ['pod/ns1/p1']);
    const labelled = pod('10.0.0.5', { labels: { a: 'b' } });
    assert.deepEqual(coeKeysFor({ kind: 'pod', obj: labelled, old: pod('10.0.0.5') }, onNode), []);
  });

  it('maps a node change to its key, and to its pods when its InternalIP changes, not on heartbeats', () => {
    assert.deepEqual(
      coeKeysFor({ kind: 'node', obj: node('192.168.1.1', 't1'), old: node('192.168.1.1') }, onNode),
      [],
    );
    assert.deepEqual(
      coeKeysFor({ kind: 'node', obj: node('192.168.1.2'), old: node('192.168.1.1') }, onNode).sort(),
      ['node/nu1', 'pod/ns1/p1', 'pod/ns2/p2'],
    );
  });

  it('maps namespaces to nothing (network-NS is the name)', () => {
    assert.deepEqual(
      coeKeysFor({ kind: 'namespace', obj: { metadata: { name: 'ns1', uid: 'x' } } }, onNode),
      [],
    );
  });
});

describe('parseCoeKey', () => {
  it('round-trips every kind and refuses malformed keys', () => {
    assert.deepEqual(parseCoeKey('pod/ns/p'), { kind: 'pod', namespace: 'ns', name: 'p' });
    assert.deepEqual(parseCoeKey('service/ns/s'), { kind: 'service', namespace: 'ns', name: 's' });
    assert.deepEqual(parseCoeKey('node/u'), { kind: 'node', uid: 'u' });
    assert.deepEqual(parseCoeKey('pod-uid/u'), { kind: 'pod-uid', uid: 'u' });
    assert.deepEqual(parseCoeKey('service-uid/u'), { kind: 'service-uid', uid: 'u' });
    for (const bad of ['pod/ns', 'pod/ns/p/x', 'node/', 'elan/x', 'nokind'])
      assert.throws(() => parseCoeKey(bad), /not a coe-northbound key/);
  });
});
