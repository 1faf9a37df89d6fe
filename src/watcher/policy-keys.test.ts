import type { V1Namespace, V1NetworkPolicy, V1Pod } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aclPolicyKey, NETWORK_POLICY_KEY } from '../netvirt/keys.js';
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
    podsSelecting: () => [],
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

const P_KEY = aclPolicyKey('x', 'p');

describe('keys a change affects under NetworkPolicy enforcement', () => {
  it('a policy: its ACL key, the sweep, the pods it selects and the members of its groups, nothing else', () => {
    const keys = policyKeysFor({ kind: 'networkpolicy', obj: FROM_CLIENTS }, lookup([FROM_CLIENTS])).sort();
    assert.deepEqual(keys, [P_KEY, NETWORK_POLICY_KEY, 'pod/x/a', 'pod/y/c']);
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

  it('a pod: itself when its labels or named ports change; no ACL key unless named ports make its ACLs read the pod', () => {
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
    // Named ports, but the policy is in namespace x: nothing of it reads pod y/d.
    const named = policy({ podSelector: {}, ingress: [{ ports: [{ port: 'http' }] }] });
    const withPort = pod('y', 'd', {}, { http: 80 });
    assert.deepEqual(policyKeysFor({ kind: 'pod', obj: withPort, old: d }, lookup([named])), ['pod/y/d']);
  });

  it('a pod a policy selects and resolves an ingress named port against: that policy’s key and the sweep', () => {
    const named = policy({
      podSelector: { matchLabels: { app: 'a' } },
      ingress: [{ ports: [{ port: 'http' }] }],
    });
    const other = {
      ...policy({
        podSelector: { matchLabels: { role: 'client' } },
        ingress: [{ ports: [{ port: 'http' }] }],
      }),
      metadata: { namespace: 'x', name: 'q', uid: 'uid-q' },
    };
    const a = PODS[0]!;
    const l = lookup([named, other, FROM_CLIENTS]);
    const renumbered = pod('x', 'a', { app: 'a' }, { http: 8080 });
    assert.deepEqual(
      policyKeysFor({ kind: 'pod', obj: renumbered, old: a }, l).sort(),
      [P_KEY, NETWORK_POLICY_KEY, 'pod/x/a'],
      'not policy q (it does not select the pod), not the node ACL',
    );
    assert.deepEqual(
      policyKeysFor({ kind: 'pod', obj: { ...a, status: { podIP: '10.0.0.9' } }, old: a }, l).sort(),
      [P_KEY, NETWORK_POLICY_KEY],
      'a pod that gets its address counts in the resolutions now: the ACL keys, its own key is netvirt-keys.ts’s',
    );
    assert.deepEqual(
      policyKeysFor({ kind: 'pod', obj: renumbered }, l).sort(),
      [P_KEY, NETWORK_POLICY_KEY, 'pod/x/a'],
      'a pod that comes or goes',
    );
  });

  it('a pod in a peer group an egress named port splits: the sweep (the splits) and the policies naming the group', () => {
    const egress = policy({
      podSelector: {},
      policyTypes: ['Egress'],
      egress: [{ to: [{ podSelector: { matchLabels: { role: 'client' } } }], ports: [{ port: 'http' }] }],
    });
    const b = PODS[1]!;
    const l = lookup([egress]);
    assert.deepEqual(
      policyKeysFor({ kind: 'pod', obj: pod('x', 'b', { role: 'client' }, { http: 81 }), old: b }, l).sort(),
      [P_KEY, NETWORK_POLICY_KEY, 'pod/x/b'],
    );
    assert.deepEqual(
      policyKeysFor({ kind: 'pod', obj: pod('x', 'b', { role: 'server' }), old: b }, l).sort(),
      [P_KEY, NETWORK_POLICY_KEY, 'pod/x/b'],
      'it leaves the group',
    );
    const a = PODS[0]!;
    assert.deepEqual(
      policyKeysFor({ kind: 'pod', obj: pod('x', 'a', { app: 'b' }), old: a }, l),
      ['pod/x/a'],
      'in no split group before or after',
    );
  });

  it('a node: the sweep key, which holds the node ACLs, when its addresses change', () => {
    const node = (ip: string) => ({
      metadata: { name: 'n1', uid: 'u-n1' },
      status: { addresses: [{ type: 'InternalIP', address: ip }] },
    });
    const l = lookup([FROM_CLIENTS]);
    assert.deepEqual(policyKeysFor({ kind: 'node', obj: node('10.1.0.2'), old: node('10.1.0.1') }, l), [
      NETWORK_POLICY_KEY,
    ]);
    assert.deepEqual(policyKeysFor({ kind: 'node', obj: node('10.1.0.1'), old: node('10.1.0.1') }, l), []);
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
    const egress = policy({
      podSelector: {},
      policyTypes: ['Egress'],
      egress: [{ to: [{ namespaceSelector: { matchLabels: { team: 'y' } } }], ports: [{ port: 'http' }] }],
    });
    assert.deepEqual(
      policyKeysFor(
        { kind: 'namespace', obj: ns({ team: 'z' }), old: ns({ team: 'y' }) },
        lookup([FROM_CLIENTS, egress]),
      ).sort(),
      [P_KEY, NETWORK_POLICY_KEY, 'pod/y/c', 'pod/y/d'],
      'a namespace-selecting group an egress named port splits: its splits and the policy naming it',
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
