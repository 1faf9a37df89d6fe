import type { V1Namespace, V1NetworkPolicy, V1Pod } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NETWORK_POLICY_KEY } from '../netvirt/keys.js';
import { readPolicy, type PolicySpec } from '../netvirt/policy/spec.js';
import { PolicyIndex } from '../netvirt/policy/translate.js';
import { policyKeysFor, type PolicyKeyLookup } from './policy-keys.js';

const pod = (
  ns: string,
  name: string,
  labels: Record<string, string>,
  ports: Record<string, number> = {},
): V1Pod => ({
  metadata: { namespace: ns, name, uid: `u-${name}`, labels },
  spec: {
    nodeName: 'n1',
    containers: [
      { name: 'c', ports: Object.entries(ports).map(([n, p]) => ({ name: n, containerPort: p })) },
    ],
  },
});
const PODS = [
  pod('x', 'a', { app: 'a' }),
  pod('x', 'b', { role: 'client' }),
  pod('y', 'c', { role: 'client' }),
  pod('y', 'd', {}),
];
const NS: Record<string, Record<string, string>> = { x: { team: 'x' }, y: { team: 'y' } };
const policy = (spec: V1NetworkPolicy['spec']): V1NetworkPolicy => ({
  metadata: { namespace: 'x', name: 'p', uid: 'uid-p' },
  spec: spec!,
});

function lookup(policies: V1NetworkPolicy[]): PolicyKeyLookup {
  const specs = policies.map(readPolicy).filter((p): p is PolicySpec => !('error' in p));
  return {
    clusterName: 'c1',
    profile: 'sodium',
    index: () => new PolicyIndex('c1', 'sodium', specs, (ns) => NS[ns]),
    namespaceLabels: (ns) => NS[ns],
    namespacesWithPods: () => ['x', 'y'],
    podsInNamespace: (ns) => PODS.filter((p) => p.metadata?.namespace === ns),
    podsOnNode: () => PODS,
    node: () => undefined,
  };
}

const FROM_CLIENTS = policy({
  podSelector: { matchLabels: { app: 'a' } },
  ingress: [
    {
      _from: [
        {
          namespaceSelector: { matchLabels: { team: 'y' } },
          podSelector: { matchLabels: { role: 'client' } },
        },
      ],
    },
  ],
});

describe('keys a change affects under NetworkPolicy enforcement', () => {
  it('a policy: the ACL key, the pods it selects and the members of its groups, nothing else', () => {
    const keys = policyKeysFor({ kind: 'networkpolicy', obj: FROM_CLIENTS }, lookup([FROM_CLIENTS])).sort();
    assert.deepEqual(keys, [NETWORK_POLICY_KEY, 'pod/x/a', 'pod/y/c']);
    const same = policyKeysFor(
      {
        kind: 'networkpolicy',
        obj: FROM_CLIENTS,
        old: { ...FROM_CLIENTS, metadata: { ...FROM_CLIENTS.metadata, resourceVersion: '9' } },
      },
      lookup([FROM_CLIENTS]),
    );
    assert.deepEqual(same, [], 'an update that leaves the spec alone');
  });

  it('a pod: itself when its labels or named ports change; the ACL key only when ports are named somewhere', () => {
    const l = lookup([FROM_CLIENTS]);
    const d = PODS[3]!;
    assert.deepEqual(
      policyKeysFor(
        { kind: 'pod', obj: { ...d, metadata: { ...d.metadata, labels: { role: 'client' } } }, old: d },
        l,
      ),
      ['pod/y/d'],
    );
    assert.deepEqual(
      policyKeysFor({ kind: 'pod', obj: { ...d, status: { podIP: '10.0.0.9' } }, old: d }, l),
      [],
      'an IP alone is netvirt-keys.ts’s',
    );
    const named = policy({ podSelector: {}, ingress: [{ ports: [{ port: 'http' }] }] });
    const withPort = pod('y', 'd', {}, { http: 80 });
    assert.deepEqual(policyKeysFor({ kind: 'pod', obj: withPort, old: d }, lookup([named])).sort(), [
      NETWORK_POLICY_KEY,
      'pod/y/d',
    ]);
  });

  it('a namespace: its pods when its labels change and a group selects namespaces', () => {
    const ns = (labels: Record<string, string>): V1Namespace => ({
      metadata: { name: 'y', uid: 'u-y', labels },
    });
    assert.deepEqual(
      policyKeysFor(
        { kind: 'namespace', obj: ns({ team: 'z' }), old: ns({ team: 'y' }) },
        lookup([FROM_CLIENTS]),
      ).sort(),
      ['pod/y/c', 'pod/y/d'],
    );
    assert.deepEqual(
      policyKeysFor({ kind: 'namespace', obj: ns({ team: 'z' }), old: ns({ team: 'y' }) }, lookup([])),
      [],
    );
    assert.deepEqual(
      policyKeysFor(
        { kind: 'namespace', obj: ns({ team: 'y' }), old: ns({ team: 'y' }) },
        lookup([FROM_CLIENTS]),
      ),
      [],
    );
  });
});
