/**
 * `network-policy`: every ACL of the cluster (allow-all, per node, per policy and direction,
 * per peer group), from the policy index (policy/translate.ts), the pods and nodes, and the
 * ACLs ODL holds (their `acl-tag`s are kept; this cluster's that nothing needs any more go).
 * One key for all ACLs: an ACL's name is a hash, so only a key that knows every desired name
 * can tell which of ODL's ACLs are no longer needed. A pod's bindings are its own key's
 * (plan-netvirt.ts), so a label change on one pod writes that pod's interface only.
 *
 * Order inside the plan: membership ACLs first (rules naming them as remote group need them),
 * and on the way out the rules' ACLs before the groups they name.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { ACL_TYPE_IPV4, isClusterAclName, liveAces, type Acl, type InterfaceAcl } from './acl.js';
import { interfaceName } from './names.js';
import { ModelValidationError } from './errors.js';
import { gatewayAddress } from './gateway.js';
import type { GatewayPlanInputs } from './plan-gateway.js';
import type { PolicyIndex } from './policy/translate.js';
import { absent, keep, present, type EntryPlan, type KeyPlan, type PlanFact } from './plan.js';
import { allocateAclTags } from './policy/tags.js';

/** What the ACL plan reads (the watcher's netvirt plan inputs provide it). */
export interface PolicyPlanInputs extends GatewayPlanInputs {
  podsInNamespace(namespace: string): readonly V1Pod[];
  namespaceNames(): Iterable<string>;
  /**
   * NetworkPolicy enforcement: the policy index over the current policies and namespaces;
   * undefined (or absent) when odlcoe does not enforce policy, and then neither ACLs nor port
   * security are odlcoe's to write.
   */
  policy?(): PolicyIndex | undefined;
  /** The ACLs ODL holds (their tags, and this cluster's that are no longer needed). */
  acls?(): Iterable<Acl>;
  /** The port security ODL holds on an interface (whether a pod's memberships are in place yet). */
  interfaceAcl?(name: string): InterfaceAcl | undefined;
}

/** The pods on the network, by the same placement rule their own plans use. */
function podsOnNetwork(inputs: PolicyPlanInputs, placed: (pod: V1Pod) => boolean): V1Pod[] {
  const out: V1Pod[] = [];
  for (const ns of new Set(inputs.namespaceNames()))
    for (const pod of inputs.podsInNamespace(ns)) if (placed(pod)) out.push(pod);
  return out;
}

/** The node's gateway address, where node gateways are on and its subnet is known. */
function nodeGateway(node: V1Node, inputs: PolicyPlanInputs): string | undefined {
  if ((inputs.settings.serviceCidrs ?? []).length === 0) return undefined;
  const subnet = inputs.nodeSubnet(node);
  if (subnet === undefined) return undefined;
  try {
    return gatewayAddress(subnet);
  } catch (err) {
    if (err instanceof ModelValidationError) return undefined;
    throw err;
  }
}

export function planNetworkPolicy(
  key: string,
  inputs: PolicyPlanInputs,
  placed: (pod: V1Pod) => boolean,
): KeyPlan {
  const cluster = inputs.settings.clusterName;
  const ours = (a: Acl) => a.type === ACL_TYPE_IPV4 && isClusterAclName(a.name, cluster);
  const actual = [...(inputs.acls?.() ?? [])];
  const index = inputs.policy?.();
  if (!index)
    return {
      key,
      entries: actual
        .filter(ours)
        .map((a) => keep('acl', a.name, 'NetworkPolicy is not enforced: ACLs are left as they are')),
      facts: [],
    };
  const nodes = [...(inputs.nodes?.() ?? [])].map((node) => {
    const gateway = nodeGateway(node, inputs);
    return gateway === undefined ? { node } : { node, gateway };
  });
  const pods = podsOnNetwork(inputs, placed);
  const { acls, roles, notes } = index.acls(pods, nodes);
  const pending = holdOldRules(acls, actual, ours, pods, index, inputs);
  const names = [...acls.keys()].sort();
  const tags = inputs.settings.profile === 'sodium' ? undefined : allocateAclTags(names, actual, ours);
  const groupsFirst = (a: string, b: string) =>
    Number(roles.get(b)?.role === 'group') - Number(roles.get(a)?.role === 'group') || a.localeCompare(b);
  const entries: EntryPlan[] = [];
  for (const name of [...names].sort(groupsFirst)) {
    const acl = acls.get(name)!;
    if (tags) {
      const tag = tags.get(name);
      if (tag === undefined) {
        entries.push(keep('acl', name, 'no acl-tag left in odlcoe’s range'));
        continue;
      }
      acl.aclTag = tag;
    }
    entries.push(present('acl', name, acl));
  }
  // Unneeded ACLs: rules first, the groups they may name last.
  const unneeded = actual.filter((a) => ours(a) && !acls.has(a.name));
  const isGroup = (a: Acl) => a.aces.length === 0;
  for (const a of [...unneeded.filter((x) => !isGroup(x)), ...unneeded.filter(isGroup)])
    entries.push(absent('acl', a.name, 'no NetworkPolicy, pod or node needs it'));
  const facts: PlanFact[] = [];
  for (const p of index.policies) {
    const messages = notes.get(`${p.namespace}/${p.name}`);
    if (messages)
      facts.push({
        fact: 'policy-approximated',
        policy: {
          kind: 'NetworkPolicy',
          apiVersion: 'networking.k8s.io/v1',
          namespace: p.namespace,
          name: p.name,
          uid: p.uid,
        },
        messages,
      });
  }
  if (pending.length > 0) facts.push({ fact: 'memberships-pending', interfaces: pending });
  return { key, entries, facts };
}

/**
 * Make before break across keys: a changed rule that names a new peer group allows nothing
 * until the group's members are bound to it (their own keys write that). Until every member
 * is, the rules the new ones replace stay in force (kept in the desired ACL); the interfaces
 * still to be bound are returned, for the key to wait on.
 */
function holdOldRules(
  acls: Map<string, Acl>,
  actual: readonly Acl[],
  ours: (a: Acl) => boolean,
  pods: readonly V1Pod[],
  index: PolicyIndex,
  inputs: PolicyPlanInputs,
): string[] {
  const replacing: { desired: Acl; old: ReturnType<typeof liveAces> }[] = [];
  const groups = new Set<string>();
  for (const a of actual) {
    const desired = ours(a) ? acls.get(a.name) : undefined;
    if (!desired) continue;
    const wanted = new Set(desired.aces.map((x) => x.ruleName));
    const live = liveAces(a);
    const held = new Set(live.map((x) => x.ruleName));
    const old = live.filter((x) => !wanted.has(x.ruleName));
    const newGroups = desired.aces
      .filter((x) => !held.has(x.ruleName) && x.remoteGroupId)
      .map((x) => x.remoteGroupId!);
    if (old.length === 0 || newGroups.length === 0) continue;
    replacing.push({ desired, old });
    for (const g of newGroups) groups.add(g);
  }
  if (replacing.length === 0) return [];
  const pending: string[] = [];
  for (const pod of pods) {
    const needed = index.groupsOf(pod).filter((g) => groups.has(g));
    if (needed.length === 0) continue;
    const name = interfaceName(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '');
    const bound = new Set(inputs.interfaceAcl?.(name)?.securityGroups.map((g) => g.toLowerCase()) ?? []);
    if (needed.some((g) => !bound.has(g))) pending.push(name);
  }
  if (pending.length > 0)
    for (const r of replacing) r.desired.aces.push(...r.old.map((x) => ({ ...x, deleted: false })));
  return pending;
}
