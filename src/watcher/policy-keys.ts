/**
 * Which keys a Kubernetes change affects under NetworkPolicy enforcement (pure, like
 * netvirt-keys.ts, which it adds to). A pod's bindings are its own key's, a policy's ACLs its
 * `acl-policy/` key's, the shared ACLs and the sweep `network-policy`'s (plan-policy.ts), so:
 * - a policy change: its own ACL key, the sweep (its old ACLs, its peer groups), and the pods
 *   whose bindings the old or the new policy touches (the ones it selects, the members of its
 *   peer groups);
 * - a pod whose labels or named container ports changed (or that came or went): that pod (its
 *   memberships); the ACL keys of the policies of its namespace that select it and resolve
 *   ingress named ports against it; where an egress named port splits a peer group it is (or
 *   was) in, the group's splits (the sweep's) and the policies naming that group. Never a node's
 *   ACL, nor a policy whose ACLs do not read the pod;
 * - a namespace whose labels changed, where a peer group selects namespaces: its pods, and the
 *   keys of named-port splits of groups that select namespaces;
 * - a node change: the sweep key, which holds the node ACLs.
 */
import type { V1NetworkPolicy, V1Pod } from '@kubernetes/client-node';
import { aclPolicyKey, NETWORK_POLICY_KEY, podKey } from '../netvirt/keys.js';
import type { Labels } from '../netvirt/policy/selector.js';
import { readPolicy, type PolicySpec } from '../netvirt/policy/spec.js';
import { PolicyIndex } from '../netvirt/policy/translate.js';
import type { Profile } from '../netvirt/profile.js';
import type { ClusterChange } from './cluster-view.js';
import type { KeyLookup } from './netvirt-keys.js';
import { nodeProjection, podProjection } from './projections.js';

export interface PolicyKeyLookup extends KeyLookup {
  clusterName: string;
  profile: Profile;
  /** The index over every current policy. */
  index(): PolicyIndex;
  namespaceLabels(namespace: string): Labels | undefined;
  /** Namespaces with pods. */
  namespacesWithPods(): Iterable<string>;
}

/** What of a pod its bindings depend on besides its IPs (which netvirt-keys.ts watches). */
export function podPolicyProjection(pod: V1Pod): string {
  const ports = (pod.spec?.containers ?? []).flatMap((c) =>
    (c.ports ?? []).filter((p) => p.name).map((p) => [p.name, p.protocol ?? 'TCP', p.containerPort]),
  );
  const labels = Object.entries(pod.metadata?.labels ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return JSON.stringify([labels, ports]);
}

const keyOf = (pod: V1Pod) => podKey(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '');

/** The pods whose bindings a policy touches: those it selects and the members of its groups. */
function podsTouchedBy(policy: V1NetworkPolicy | undefined, lookup: PolicyKeyLookup, out: Set<string>): void {
  if (!policy) return;
  const spec = readPolicy(policy);
  if ('error' in spec) return;
  const alone = new PolicyIndex(lookup.clusterName, lookup.profile, [spec], (ns) =>
    lookup.namespaceLabels(ns),
  );
  const groupsEverywhere = alone.selectsNamespaces || alone.usesNamedPorts;
  const namespaces = groupsEverywhere ? [...lookup.namespacesWithPods()] : [spec.namespace];
  for (const ns of namespaces)
    for (const pod of lookup.podsInNamespace(ns))
      if (alone.selects(spec, pod) || alone.groupsOf(pod).length > 0) out.add(keyOf(pod));
}

const keyOfPolicy = (p: PolicySpec) => aclPolicyKey(p.namespace, p.name);

/** The ACL keys whose ACLs read `pod` (its named ports): see the header. */
function aclKeysReading(pod: V1Pod, index: PolicyIndex, out: Set<string>): void {
  for (const p of index.policiesIn(pod.metadata?.namespace ?? ''))
    if (index.hasIngressNamedPorts(p) && index.selects(p, pod)) {
      out.add(keyOfPolicy(p));
      // A resolution no selected pod gives any more leaves an ACL for the sweep.
      out.add(NETWORK_POLICY_KEY);
    }
  for (const { group } of index.namedPortGroups()) {
    if (!index.inGroup(group, pod)) continue;
    out.add(NETWORK_POLICY_KEY);
    for (const p of index.policiesNamingGroup(group.id)) out.add(keyOfPolicy(p));
  }
}

export function policyKeysFor(change: ClusterChange, lookup: PolicyKeyLookup): string[] {
  const out = new Set<string>();
  switch (change.kind) {
    case 'networkpolicy': {
      if (change.old && JSON.stringify(change.old.spec) === JSON.stringify(change.obj.spec)) break;
      const m = change.obj.metadata;
      if (m?.namespace && m.name) out.add(aclPolicyKey(m.namespace, m.name));
      out.add(NETWORK_POLICY_KEY);
      podsTouchedBy(change.old, lookup, out);
      podsTouchedBy(change.obj, lookup, out);
      break;
    }
    case 'pod': {
      const moved = !change.old || podPolicyProjection(change.old) !== podPolicyProjection(change.obj);
      if (moved) out.add(keyOf(change.obj));
      // The ACLs count only the pods on the network: one that gets its node or address counts now.
      const placed = change.old && podProjection(change.old) !== podProjection(change.obj);
      const index = lookup.index();
      if ((!moved && !placed) || !index.usesNamedPorts) break;
      aclKeysReading(change.obj, index, out);
      if (change.old) aclKeysReading(change.old, index, out);
      break;
    }
    case 'namespace': {
      const labels = (n: typeof change.obj | undefined) => JSON.stringify(n?.metadata?.labels ?? {});
      if (change.old && labels(change.old) === labels(change.obj)) break;
      const index = lookup.index();
      if (!index.selectsNamespaces) break;
      for (const pod of lookup.podsInNamespace(change.obj.metadata?.name ?? '')) out.add(keyOf(pod));
      for (const { group } of index.namedPortGroups()) {
        if (!('selector' in group.namespaces)) continue;
        out.add(NETWORK_POLICY_KEY);
        for (const p of index.policiesNamingGroup(group.id)) out.add(keyOfPolicy(p));
      }
      break;
    }
    case 'node':
      // Node ACLs carry the node's addresses.
      if (!change.old || nodeProjection(change.old) !== nodeProjection(change.obj))
        out.add(NETWORK_POLICY_KEY);
      break;
    case 'service':
    case 'endpointslice':
      break;
  }
  return [...out];
}
