/**
 * Which keys a Kubernetes change affects under NetworkPolicy enforcement (pure, like
 * netvirt-keys.ts, which it adds to). A pod's bindings are its own key's, the ACLs the
 * `network-policy` key's, so:
 * - a policy change: the ACL key, and the pods whose bindings the old or the new policy
 *   touches (the ones it selects, the members of its peer groups);
 * - a pod whose labels or named container ports changed: that pod (its memberships);
 * - a namespace whose labels changed, where a peer group selects namespaces: its pods;
 * - the ACL key as well when ACLs depend on pods (named ports) or on nodes (node ACLs).
 */
import type { V1NetworkPolicy, V1Pod } from '@kubernetes/client-node';
import { NETWORK_POLICY_KEY, podKey } from '../netvirt/keys.js';
import type { Labels } from '../netvirt/policy/selector.js';
import { readPolicy } from '../netvirt/policy/spec.js';
import { PolicyIndex } from '../netvirt/policy/translate.js';
import type { Profile } from '../netvirt/profile.js';
import type { ClusterChange } from './cluster-view.js';
import type { KeyLookup } from './netvirt-keys.js';
import { nodeProjection } from './projections.js';

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

export function policyKeysFor(change: ClusterChange, lookup: PolicyKeyLookup): string[] {
  const out = new Set<string>();
  switch (change.kind) {
    case 'networkpolicy':
      if (change.old && JSON.stringify(change.old.spec) === JSON.stringify(change.obj.spec)) break;
      out.add(NETWORK_POLICY_KEY);
      podsTouchedBy(change.old, lookup, out);
      podsTouchedBy(change.obj, lookup, out);
      break;
    case 'pod': {
      const moved = !change.old || podPolicyProjection(change.old) !== podPolicyProjection(change.obj);
      if (moved) out.add(keyOf(change.obj));
      // A pod that comes or goes, or renames a port, changes the ACLs only through named ports.
      if (moved && lookup.index().usesNamedPorts) out.add(NETWORK_POLICY_KEY);
      break;
    }
    case 'namespace': {
      const labels = (n: typeof change.obj | undefined) => JSON.stringify(n?.metadata?.labels ?? {});
      if (change.old && labels(change.old) === labels(change.obj)) break;
      const index = lookup.index();
      if (!index.selectsNamespaces) break;
      for (const pod of lookup.podsInNamespace(change.obj.metadata?.name ?? '')) out.add(keyOf(pod));
      if (index.usesNamedPorts) out.add(NETWORK_POLICY_KEY);
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
