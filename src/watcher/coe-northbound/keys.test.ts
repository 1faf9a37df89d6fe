import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1EndpointSlice, V1Node, V1Pod, V1Service } from '@kubernetes/client-node';
import { parseCoeKey } from '../../netvirt/coe/keys.js';
import { coeKeysFor } from './keys.js';

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

  it('also names the pods of the same name in other namespaces (one name, one interface in NetVirt)', () => {
    const elsewhere = (name: string) =>
      name === 'p1' ? [pod('10.0.0.5'), pod('10.0.0.6', { namespace: 'ns2', uid: 'u9' })] : [];
    assert.deepEqual(coeKeysFor({ kind: 'pod', obj: pod('10.0.0.5') }, onNode, elsewhere), [
      'pod/ns1/p1',
      'pod/ns2/p1',
    ]);
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

describe('coeKeysFor Services and EndpointSlices', () => {
  const service = (over: Partial<V1Service> = {}): V1Service => ({
    metadata: { name: 'web', namespace: 'ns1', uid: 's1' },
    spec: { clusterIP: '10.96.0.10', ports: [{ port: 80 }] },
    ...over,
  });
  const slice = (serviceName: string, ready = true): V1EndpointSlice => ({
    metadata: { name: 'web-1', namespace: 'ns1', labels: { 'kubernetes.io/service-name': serviceName } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.244.1.5'], conditions: { ready } }],
  });

  it('maps a Service change to its key, and skips label and status heartbeat updates', () => {
    assert.deepEqual(coeKeysFor({ kind: 'service', obj: service() }, onNode), ['service/ns1/web']);
    const labelled = service({ metadata: { name: 'web', namespace: 'ns1', uid: 's1', labels: { a: 'b' } } });
    assert.deepEqual(coeKeysFor({ kind: 'service', obj: labelled, old: service() }, onNode), []);
    const moved = service({ spec: { clusterIP: '10.96.0.11', ports: [{ port: 80 }] } });
    assert.deepEqual(coeKeysFor({ kind: 'service', obj: moved, old: service() }, onNode), [
      'service/ns1/web',
    ]);
  });

  it('maps a slice change to the key of its Service (and of the one it left)', () => {
    assert.deepEqual(coeKeysFor({ kind: 'endpointslice', obj: slice('web') }, onNode), ['service/ns1/web']);
    assert.deepEqual(coeKeysFor({ kind: 'endpointslice', obj: slice('web'), old: slice('web') }, onNode), []);
    assert.deepEqual(
      coeKeysFor({ kind: 'endpointslice', obj: slice('web', false), old: slice('web') }, onNode),
      ['service/ns1/web'],
    );
    assert.deepEqual(
      coeKeysFor({ kind: 'endpointslice', obj: slice('api'), old: slice('web') }, onNode).sort(),
      ['service/ns1/api', 'service/ns1/web'],
    );
    // A slice without a Service (no label) names nothing.
    const orphan = { ...slice('web'), metadata: { name: 'x', namespace: 'ns1' } };
    assert.deepEqual(coeKeysFor({ kind: 'endpointslice', obj: orphan }, onNode), []);
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
