import type { V1NetworkPolicy, V1Pod } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { liveAces, type Acl, type InterfaceAcl } from './acl.js';
import { NETWORK_POLICY_KEY } from './keys.js';
import { factOf, type EntryPlan } from './plan.js';
import { planNetworkPolicy, type PolicyPlanInputs } from './plan-policy.js';
import { readPolicy, type PolicySpec } from './policy/spec.js';
import { PolicyIndex } from './policy/translate.js';

const pod = (name: string, labels: Record<string, string>): V1Pod => ({
  metadata: { namespace: 'x', name, uid: `u-${name}`, labels },
  spec: { nodeName: 'n1', containers: [] },
  status: { podIP: '10.0.0.1', podIPs: [{ ip: '10.0.0.1' }] },
});
const PODS = [pod('web', { app: 'web' }), pod('client', { role: 'a', next: 'b' })];

const policy = (peer: string): PolicySpec => {
  const p: V1NetworkPolicy = {
    metadata: { namespace: 'x', name: 'web', uid: 'uid-web' },
    spec: {
      podSelector: { matchLabels: { app: 'web' } },
      ingress: [{ _from: [{ podSelector: { matchLabels: peer === 'a' ? { role: 'a' } : { next: 'b' } } }] }],
    },
  };
  const spec = readPolicy(p);
  if ('error' in spec) throw new Error(spec.error);
  return spec;
};

function inputs(peer: string, acls: Acl[], bound: Record<string, InterfaceAcl>): PolicyPlanInputs {
  const index = new PolicyIndex('c1', 'sodium', [policy(peer)], () => ({}));
  return {
    settings: { clusterName: 'c1', profile: 'sodium', routeTarget: '64512:1', segmentType: 'vxlan' },
    node: () => undefined,
    nodeSubnet: () => undefined,
    nodes: () => [],
    podsInNamespace: (ns) => (ns === 'x' ? PODS : []),
    namespaceNames: () => ['x'],
    policy: () => index,
    acls: () => acls,
    interfaceAcl: (name) => bound[name],
  };
}

const desiredOf = (entries: EntryPlan[]): Acl[] =>
  entries.flatMap((e) => (e.want === 'present' ? [e.desired as Acl] : []));

describe('the network-policy plan', () => {
  it('keeps replaced rules until the members of the new peer group are bound to it', () => {
    const all = () => true;
    // ODL as the old policy (peer role=a) left it.
    const before = planNetworkPolicy(NETWORK_POLICY_KEY, inputs('a', [], {}), all);
    const odl = desiredOf(before.entries);
    const index = new PolicyIndex('c1', 'sodium', [policy('b')], () => ({}));
    const policyAcl = index.policyAcl(policy('b'), 'ingress', '');
    const oldRules = liveAces(odl.find((a) => a.name === policyAcl)!).map((a) => a.ruleName);

    const unbound = {
      'x:client': { portSecurityEnabled: true, securityGroups: [], allowedAddressPairs: [] },
    };
    const waiting = planNetworkPolicy(NETWORK_POLICY_KEY, inputs('b', odl, unbound), all);
    const kept = desiredOf(waiting.entries).find((a) => a.name === policyAcl)!;
    for (const r of oldRules)
      assert.ok(
        kept.aces.some((a) => a.ruleName === r),
        `old rule ${r} still wanted`,
      );
    assert.equal(kept.aces.length, oldRules.length * 2, 'old and new rules side by side');
    assert.deepEqual(factOf(waiting, 'memberships-pending')?.interfaces, ['x:client']);

    const groups = index.securityGroupsOf(PODS[1]!);
    const bound = {
      'x:client': { portSecurityEnabled: true, securityGroups: groups, allowedAddressPairs: [] },
    };
    const done = planNetworkPolicy(NETWORK_POLICY_KEY, inputs('b', odl, bound), all);
    const now = desiredOf(done.entries).find((a) => a.name === policyAcl)!;
    assert.ok(
      !now.aces.some((a) => oldRules.includes(a.ruleName)),
      'the old rules go once the member is bound',
    );
    assert.equal(factOf(done, 'memberships-pending'), undefined);
  });

  it('keeps every ACL of ours as it is when policy is not enforced', () => {
    const odl = desiredOf(planNetworkPolicy(NETWORK_POLICY_KEY, inputs('a', [], {}), () => true).entries);
    const off = { ...inputs('a', odl, {}), policy: () => undefined };
    const plan = planNetworkPolicy(NETWORK_POLICY_KEY, off, () => true);
    assert.equal(plan.entries.length, odl.length);
    assert.ok(plan.entries.every((e) => e.want === 'keep'));
  });
});
