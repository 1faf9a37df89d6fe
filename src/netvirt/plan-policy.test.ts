import type { V1NetworkPolicy, V1Pod } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aclName, liveAces, type Acl, type InterfaceAcl } from './acl.js';
import { aclKind } from './kinds.js';
import { aclPolicyKey, NETWORK_POLICY_KEY } from './keys.js';
import { factOf, type EntryPlan } from './plan.js';
import { planNetworkPolicy, planPolicyAcls, type PolicyPlanInputs } from './plan-policy.js';
import { readPolicy, type PolicySpec } from './policy/spec.js';
import { PolicyIndex } from './policy/translate.js';
import type { Profile } from './profile.js';

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

function inputs(
  peer: string,
  acls: Acl[],
  bound: Record<string, InterfaceAcl>,
  profile: Profile = 'sodium',
  policies: PolicySpec[] = [policy(peer)],
): PolicyPlanInputs {
  const index = new PolicyIndex('c1', profile, policies, () => ({}));
  return {
    settings: { clusterName: 'c1', profile, routeTarget: '64512:1', segmentType: 'vxlan' },
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

const WEB_KEY = aclPolicyKey('x', 'web');

const desiredOf = (entries: EntryPlan[]): Acl[] =>
  entries.flatMap((e) => (e.want === 'present' ? [e.desired as Acl] : []));

/** ODL as the ACL keys plan it for a policy with peer `peer` (the shared key's, then the policy's). */
const asPlanned = (peer: string): Acl[] => [
  ...desiredOf(planNetworkPolicy(NETWORK_POLICY_KEY, inputs(peer, [], {}), () => true).entries),
  ...desiredOf(planPolicyAcls(WEB_KEY, 'x', 'web', inputs(peer, [], {}), () => true).entries),
];

describe('the ACL keys’ plans', () => {
  it('keeps replaced rules until the members of the new peer group are bound to it', () => {
    const all = () => true;
    // ODL as the old policy (peer role=a) left it.
    const odl = asPlanned('a');
    const index = new PolicyIndex('c1', 'sodium', [policy('b')], () => ({}));
    const policyAcl = index.policyAcl(policy('b'), 'ingress', '');
    const oldRules = liveAces(odl.find((a) => a.name === policyAcl)!).map((a) => a.ruleName);

    const unbound = {
      'x:client': { portSecurityEnabled: true, securityGroups: [], allowedAddressPairs: [] },
    };
    const waiting = planPolicyAcls(WEB_KEY, 'x', 'web', inputs('b', odl, unbound), all);
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
    const done = planPolicyAcls(WEB_KEY, 'x', 'web', inputs('b', odl, bound), all);
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

  it('sweeps what a gone policy left, rules before the groups they name; the policy’s key plans nothing', () => {
    const all = () => true;
    const odl = asPlanned('a');
    const index = new PolicyIndex('c1', 'sodium', [policy('a')], () => ({}));
    const policyAcl = index.policyAcl(policy('a'), 'ingress', '');
    const groupAcl = odl.find((a) => a.aces.length === 0 && a.name !== policyAcl)!.name;
    // As after a restart: ODL holds the policy's ACLs, the cluster no longer has the policy.
    const gone = inputs('a', odl, {}, 'sodium', []);
    assert.deepEqual(planPolicyAcls(WEB_KEY, 'x', 'web', gone, all).entries, []);
    const sweep = planNetworkPolicy(NETWORK_POLICY_KEY, gone, all);
    const removed = sweep.entries.filter((e) => e.want === 'absent').map((e) => e.name);
    assert.deepEqual(removed, [policyAcl, groupAcl], 'the policy ACL, then the group it names');
    assert.ok(
      sweep.entries.filter((e) => e.want === 'present').every((e) => !removed.includes(e.name)),
      'nothing both kept and removed',
    );
  });

  it('names the key of every desired ACL, for the ACL kind’s ownerKey', () => {
    const plan = planNetworkPolicy(NETWORK_POLICY_KEY, inputs('a', [], {}), () => true);
    const owners = factOf(plan, 'acl-owners')?.owners;
    assert.ok(owners, 'the sweep’s plan lists the owners');
    const index = new PolicyIndex('c1', 'sodium', [policy('a')], () => ({}));
    assert.equal(owners.get(index.policyAcl(policy('a'), 'ingress', '')), WEB_KEY);
    assert.equal(owners.get(index.allowAllAcl('egress')), NETWORK_POLICY_KEY);
    const shared = desiredOf(plan.entries).map((a) => a.name);
    assert.ok(
      shared.every((n) => owners.get(n) === NETWORK_POLICY_KEY),
      'the shared ACLs are the sweep key’s',
    );
    // The ACL kind's ownerKey asks the owner context (the watcher keeps these owners there).
    const owner = {
      clusterName: 'c1',
      profile: 'sodium' as const,
      routeTarget: '64512:1',
      rdAdministrator: '64512',
      aclKey: (name: string) => owners.get(name),
    };
    const ctx = { owner, get: () => undefined };
    assert.equal(aclKind.ownerKey(index.policyAcl(policy('a'), 'ingress', ''), ctx), WEB_KEY);
    assert.equal(
      aclKind.ownerKey(aclName('c1', 'policy:long-gone:ingress'), ctx),
      NETWORK_POLICY_KEY,
      'a name of ours no plan wants: the sweep’s',
    );
    assert.equal(aclKind.ownerKey(aclName('c2', 'allow-all:ingress'), ctx), undefined, 'another cluster’s');
  });

  it('hands out distinct acl-tags to keys planning at the same time, and keeps a reserved tag', () => {
    const all = () => true;
    // Two keys plan against the same ODL before either has written: one reservation map.
    const aclTagReservations = new Map<string, number>();
    const at = (odl: Acl[]) => ({ ...inputs('a', odl, {}, 'aluminium'), aclTagReservations });
    const shared = desiredOf(planNetworkPolicy(NETWORK_POLICY_KEY, at([]), all).entries);
    const own = desiredOf(planPolicyAcls(WEB_KEY, 'x', 'web', at([]), all).entries);
    const tags = [...shared, ...own].map((a) => a.aclTag);
    assert.ok(
      tags.every((t) => t !== undefined) && new Set(tags).size === tags.length,
      `distinct tags across keys: ${JSON.stringify(tags)}`,
    );
    const again = desiredOf(planPolicyAcls(WEB_KEY, 'x', 'web', at([]), all).entries);
    assert.deepEqual(
      again.map((a) => a.aclTag),
      own.map((a) => a.aclTag),
      'a key planned again before its write keeps its tags',
    );
    // Once ODL holds them, ODL is the record and the reservations go.
    planNetworkPolicy(NETWORK_POLICY_KEY, at([...shared, ...own]), all);
    assert.equal(aclTagReservations.size, 0, 'no reservation left once ODL holds every ACL');
    // Without a shared reservation the two keys would collide: the test above can fail.
    const alone = desiredOf(
      planPolicyAcls(WEB_KEY, 'x', 'web', inputs('a', [], {}, 'aluminium'), all).entries,
    );
    assert.ok(
      alone.some((a) => shared.some((b) => b.aclTag === a.aclTag)),
      'each key alone starts at the lowest free tag',
    );
  });
});
