import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { parseNetvirtKey, podKeyOfInterface } from '../netvirt/keys.js';
import { netvirtKeysFor, networksOfPod, type KeyLookup } from './netvirt-keys.js';

const node = (name: string, ip: string, extra: Partial<V1Node> = {}): V1Node => ({
  metadata: { name, uid: `uid-${name}` },
  status: { addresses: [{ type: 'InternalIP', address: ip }] },
  ...extra,
});
const pod = (ns: string, name: string, nodeName: string, ip?: string): V1Pod => ({
  metadata: { namespace: ns, name, uid: `uid-${name}` },
  spec: { nodeName, containers: [] },
  status: ip ? { phase: 'Running', podIP: ip, podIPs: [{ ip }] } : { phase: 'Pending' },
});

function lookup(nodes: V1Node[], pods: V1Pod[]): KeyLookup {
  return {
    node: (name) => nodes.find((n) => n.metadata?.name === name),
    podsOnNode: (name) => pods.filter((p) => p.spec?.nodeName === name),
    podsInNamespace: (ns) => pods.filter((p) => p.metadata?.namespace === ns),
    podsSelecting: (network) => pods.filter((p) => networksOfPod(p).includes(network)),
  };
}

describe('netvirt keys', () => {
  it('parses every kind, including ELANs of IPv6 nodes', () => {
    assert.deepEqual(parseNetvirtKey('pod/ns1/web-0'), { kind: 'pod', namespace: 'ns1', name: 'web-0' });
    assert.deepEqual(parseNetvirtKey('elan/fd00::1:ns1'), {
      kind: 'elan',
      elanName: 'fd00::1:ns1',
      nodeIp: 'fd00::1',
      namespace: 'ns1',
    });
    assert.deepEqual(parseNetvirtKey('vpn/ns1'), { kind: 'vpn', vpnName: 'ns1' });
    assert.deepEqual(parseNetvirtKey('node/0b1c'), { kind: 'node', uid: '0b1c' });
    for (const bad of ['pod/ns1', 'pod/a/b/c', 'elan/noColon', 'x/y', 'vpn/', ''])
      assert.throws(() => parseNetvirtKey(bad), /not a netvirt key/);
  });

  it('maps an interface name back to its pod key', () => {
    assert.equal(podKeyOfInterface('ns1:web-0'), 'pod/ns1/web-0');
    assert.equal(podKeyOfInterface('tap1234'), undefined);
    assert.equal(podKeyOfInterface(':x'), undefined);
  });

  it('a pod event names the pod, its namespace VPN and its node × namespace ELAN', () => {
    const nodes = [node('n1', '10.0.0.1')];
    const p = pod('ns1', 'web-0', 'n1');
    assert.deepEqual(netvirtKeysFor({ kind: 'pod', obj: p }, lookup(nodes, [p])).sort(), [
      'elan/10.0.0.1:ns1',
      'pod/ns1/web-0',
      'vpn/ns1',
    ]);
  });

  it('a pod on an unknown node names no ELAN (the node event will)', () => {
    const p = pod('ns1', 'web-0', 'n9');
    assert.deepEqual(netvirtKeysFor({ kind: 'pod', obj: p }, lookup([], [p])).sort(), [
      'pod/ns1/web-0',
      'vpn/ns1',
    ]);
  });

  it('ignores pod updates that change nothing translation reads', () => {
    const old = pod('ns1', 'web-0', 'n1', '10.1.0.5');
    const labelled = { ...old, metadata: { ...old.metadata, labels: { a: 'b' } } };
    assert.deepEqual(netvirtKeysFor({ kind: 'pod', obj: labelled, old }, lookup([], [labelled])), []);
    const readdressed = pod('ns1', 'web-0', 'n1', '10.1.0.6');
    assert.ok(
      netvirtKeysFor({ kind: 'pod', obj: readdressed, old }, lookup([], [readdressed])).includes(
        'pod/ns1/web-0',
      ),
    );
  });

  it('a node whose address changes names its entry, its pods and the ELANs of both addresses', () => {
    const old = node('n1', '10.0.0.1');
    const moved = node('n1', '10.0.0.2');
    const pods = [pod('ns1', 'a', 'n1'), pod('ns2', 'b', 'n1'), pod('ns1', 'c', 'n2')];
    assert.deepEqual(netvirtKeysFor({ kind: 'node', obj: moved, old }, lookup([moved], pods)).sort(), [
      'elan/10.0.0.1:ns1',
      'elan/10.0.0.1:ns2',
      'elan/10.0.0.2:ns1',
      'elan/10.0.0.2:ns2',
      'node-network/n1',
      'node/uid-n1',
      'pod/ns1/a',
      'pod/ns2/b',
    ]);
  });

  it('ignores node heartbeats (status conditions only)', () => {
    const old = node('n1', '10.0.0.1');
    const beat = { ...old, status: { ...old.status, conditions: [{ type: 'Ready', status: 'True' }] } };
    assert.deepEqual(netvirtKeysFor({ kind: 'node', obj: beat, old }, lookup([beat], [])), []);
  });

  it('a namespace event names its VPN and, when it appears, its pods', () => {
    const nodes = [node('n1', '10.0.0.1')];
    const pods = [pod('ns1', 'a', 'n1')];
    const ns = { metadata: { name: 'ns1', uid: 'u1' } };
    assert.deepEqual(netvirtKeysFor({ kind: 'namespace', obj: ns }, lookup(nodes, pods)).sort(), [
      'elan/10.0.0.1:ns1',
      'pod/ns1/a',
      'vpn/ns1',
    ]);
    const relabelled = { metadata: { ...ns.metadata, labels: { x: 'y' } } };
    assert.deepEqual(netvirtKeysFor({ kind: 'namespace', obj: relabelled, old: ns }, lookup(nodes, pods)), [
      'vpn/ns1',
    ]);
  });

  it('names a long namespace VPN by its shortened name', () => {
    const ns = 'a-very-long-namespace-name-that-exceeds-forty-characters';
    const keys = netvirtKeysFor(
      { kind: 'namespace', obj: { metadata: { name: ns, uid: 'u' } } },
      lookup([], []),
    );
    assert.equal(keys.length, 1);
    assert.ok(keys[0]?.startsWith('vpn/a-very-long-namespace'));
    assert.equal(keys[0]?.length, 'vpn/'.length + 40);
  });
});
