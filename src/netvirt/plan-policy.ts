/**
 * The ACL keys' plans (NetworkPolicy enforcement), from the policy index (policy/translate.ts),
 * the pods and nodes, and the ACLs ODL holds (their `acl-tag`s are kept):
 *
 * - `acl-policy/<ns>/<name>`: one policy's ACLs (per direction it isolates, per resolution of
 *   its ingress named ports), with make-before-break for its changed rules;
 * - `network-policy`: the shared ACLs (allow-all, per node, the membership ACL of every peer
 *   group) and the sweep: an ACL's name is a hash, so only a key that knows every desired name
 *   can tell which of this cluster's ACLs ODL holds are no longer needed. It computes the names
 *   alone (`PolicyIndex.aclNames`), not the rules, so it stays cheap as the cluster grows, and
 *   it removes what a deleted policy left even when the policy went while the watcher was down.
 *
 * A pod's bindings are its own key's (plan-netvirt.ts), so a label change on one pod writes that
 * pod's interface only. Order: membership ACLs first (rules naming them as remote group need
 * them: the kinds table's prerequisites make a policy's key wait for them), and on the way out
 * the rules' ACLs before the groups they name.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { ACL_TYPE_IPV4, isClusterAclName, liveAces, type Acl, type InterfaceAcl } from './acl.js';
import { aclPolicyKey } from './keys.js';
import { interfaceName } from './names.js';
import { ModelValidationError } from './errors.js';
import { gatewayAddress } from './gateway.js';
import type { GatewayPlanInputs } from './plan-gateway.js';
import type { AclRole, NodeGateway, PodSource, PolicyIndex } from './policy/translate.js';
import { absent, keep, present, type EntryPlan, type KeyPlan, type PlanFact } from './plan.js';
import { allocateAclTags, type AclTagReservations } from './policy/tags.js';

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
  /** acl-tags handed out but not yet in ODL, shared by every ACL key (absent: this plan's own). */
  aclTagReservations?: AclTagReservations;
}

/**
 * The pods on the network (by the same placement rule their own plans use), by namespace, each
 * namespace filtered once per plan and only when asked for.
 */
function podsOnNetwork(inputs: PolicyPlanInputs, placed: (pod: V1Pod) => boolean): PodSource {
  const byNamespace = new Map<string, V1Pod[]>();
  return {
    namespaces: () => new Set(inputs.namespaceNames()),
    inNamespace: (ns) => {
      let pods = byNamespace.get(ns);
      if (!pods) byNamespace.set(ns, (pods = inputs.podsInNamespace(ns).filter(placed)));
      return pods;
    },
  };
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

const oursIn = (cluster: string) => (a: Acl) => a.type === ACL_TYPE_IPV4 && isClusterAclName(a.name, cluster);

/** `network-policy`: the shared ACLs, and the removal of this cluster's ACLs nothing needs. */
export function planNetworkPolicy(
  key: string,
  inputs: PolicyPlanInputs,
  placed: (pod: V1Pod) => boolean,
): KeyPlan {
  const ours = oursIn(inputs.settings.clusterName);
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
  const nodes: NodeGateway[] = [...(inputs.nodes?.() ?? [])].map((node) => {
    const gateway = nodeGateway(node, inputs);
    return gateway === undefined ? { node } : { node, gateway };
  });
  const pods = podsOnNetwork(inputs, placed);
  const { acls, roles } = index.sharedAcls(pods, nodes);
  const entries = presentEntries(acls, roles, actual, ours, inputs);
  // Unneeded ACLs: rules first, the groups they may name last.
  const wanted = index.aclNames(pods, nodes);
  const unneeded = actual.filter((a) => ours(a) && !wanted.has(a.name));
  const isGroup = (a: Acl) => a.aces.length === 0;
  for (const a of [...unneeded.filter((x) => !isGroup(x)), ...unneeded.filter(isGroup)])
    entries.push(absent('acl', a.name, 'no NetworkPolicy, pod or node needs it'));
  const owners = new Map<string, string>();
  for (const [name, p] of wanted) owners.set(name, p ? aclPolicyKey(p.namespace, p.name) : key);
  return { key, entries, facts: [{ fact: 'acl-owners', owners }] };
}

/**
 * `acl-policy/<ns>/<name>`: that policy's ACLs. A policy that is gone (or enforcement off) plans
 * nothing: what it left is the sweep's (`network-policy`) once no interface is bound to it.
 */
export function planPolicyAcls(
  key: string,
  namespace: string,
  name: string,
  inputs: PolicyPlanInputs,
  placed: (pod: V1Pod) => boolean,
): KeyPlan {
  const index = inputs.policy?.();
  const p = index?.policy(namespace, name);
  if (!index || !p) return { key, entries: [], facts: [] };
  const ours = oursIn(inputs.settings.clusterName);
  const actual = [...(inputs.acls?.() ?? [])];
  const pods = podsOnNetwork(inputs, placed);
  const { acls, roles, notes } = index.policyAcls(p, pods);
  const pending = holdOldRules(acls, actual, ours, pods, index, inputs);
  const entries = presentEntries(acls, roles, actual, ours, inputs);
  const facts: PlanFact[] = [];
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
  if (pending.length > 0) facts.push({ fact: 'memberships-pending', interfaces: pending });
  return { key, entries, facts };
}

/** The desired ACLs as entries, membership groups first, each with its acl-tag (Aluminium). */
function presentEntries(
  acls: Map<string, Acl>,
  roles: Map<string, AclRole>,
  actual: readonly Acl[],
  ours: (a: Acl) => boolean,
  inputs: PolicyPlanInputs,
): EntryPlan[] {
  const names = [...acls.keys()].sort();
  const tags =
    inputs.settings.profile === 'sodium'
      ? undefined
      : allocateAclTags(names, actual, ours, inputs.aclTagReservations);
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
  return entries;
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
  pods: PodSource,
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
  for (const [pod, needed] of index.membersOfGroupAcls(groups, pods)) {
    const name = interfaceName(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '');
    const bound = new Set(inputs.interfaceAcl?.(name)?.securityGroups.map((g) => g.toLowerCase()) ?? []);
    if (needed.some((g) => !bound.has(g))) pending.push(name);
  }
  pending.sort();
  if (pending.length > 0)
    for (const r of replacing) r.desired.aces.push(...r.old.map((x) => ({ ...x, deleted: false })));
  return pending;
}
