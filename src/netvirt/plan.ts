/**
 * A plan: what ODL should hold for one key, as pure data. Made by one function per backend
 * (plan-netvirt.ts, coe/plan.ts) from plain inputs, and read by everything that needs to know
 * what ODL should hold: the watcher executes it, odlcoectl's status, gc and trace compare it
 * with what ODL holds, the whole-cluster fold (translate-cluster.ts) and the tests' oracles
 * collect it. Nothing decides "what should be there" a second way.
 *
 * A plan says, per ODL entry the key owns, `present` (with the entry), `absent`, or `keep` (its
 * desired state cannot be known now: leave whatever exists), plus the facts the executor turns
 * into outcomes and reports (a deferral, a used-up subnet pool, an object that cannot be
 * described in the model) and an operator reads in odlcoectl.
 */
import type { Deferral } from './translate-pod.js';

/** A Kubernetes object reports about a key are recorded on. */
export interface KubeObjectRef {
  kind: 'Pod' | 'Service' | 'Namespace' | 'Node' | 'NetworkAttachmentDefinition' | 'NetworkPolicy';
  /** For kinds outside core/v1 (`k8s.cni.cncf.io/v1` for a NetworkAttachmentDefinition). */
  apiVersion?: string;
  name: string;
  /** Namespaced kinds only. */
  namespace?: string;
  uid?: string;
}

export type EntryPlan =
  | { kind: string; name: string; want: 'present'; desired: unknown }
  | { kind: string; name: string; want: 'absent'; why: string }
  | { kind: string; name: string; want: 'keep'; why: string };

/** Where a node's pod subnet stands, for the subnet in its k8s-node entry. */
export type EntrySubnet =
  | { kind: 'subnet'; cidr: string }
  /** The watcher does not own the leaf (`odl`), or the node has no usable subnet yet. */
  | { kind: 'none'; problem?: string }
  /** `allocate`: the cluster CIDR is used up. */
  | { kind: 'exhausted' };

export type PlanFact =
  /** The key's desired state cannot be known now: whatever exists is kept. */
  | { fact: 'deferred'; deferral: Deferral }
  /** Part of it cannot be known now (a pod's vpn-interface without its node subnet). */
  | { fact: 'partly-deferred'; deferral: Deferral }
  /** A Kubernetes object cannot be described in the model (what and why): nothing is written. */
  | { fact: 'untranslatable'; message: string }
  /**
   * A request of the object was refused (an attachment the watcher could not allocate): its
   * entries are made right (absent) and the refusal reported like an untranslatable object.
   */
  | { fact: 'refused'; message: string }
  /** A namespace's VPN gets a new route distinguisher (its old one is held by another VPN). */
  | { fact: 'rd-reassigned'; namespace: string; vpn: string; rd: string }
  /**
   * A node's subnet: what its entry carries, what its pods are addressed from (undefined: not
   * known yet), and for a node that is gone, what still holds addresses of its subnet.
   */
  | { fact: 'node-subnet'; entry: EntrySubnet; pods: string | undefined }
  | { fact: 'subnet-held'; subnet: string; holder: string }
  /** A NetworkPolicy applied in its closest safe form: what could not be expressed, and what odlcoe did. */
  | { fact: 'policy-approximated'; policy: KubeObjectRef; messages: string[] }
  /** Replaced ACL rules kept until these interfaces are bound to the peer groups that replace them. */
  | { fact: 'memberships-pending'; interfaces: string[] }
  /**
   * The key that plans each desired ACL (the sweep's plan knows every name): an ACL's name is a
   * hash, so the ACL kind's `ownerKey` learns it from here (plan-policy.ts).
   */
  | { fact: 'acl-owners'; owners: Map<string, string> };

export interface KeyPlan {
  key: string;
  entries: EntryPlan[];
  /** Reports about the key go to this object (undefined: it is gone). */
  involved?: KubeObjectRef;
  /**
   * An instance's key (VPN, ELAN): its absent entries are deleted only once the key has been
   * unneeded for a grace period, and a plan that needs the instance again stops that clock.
   */
  grace?: boolean;
  facts: PlanFact[];
}

export function factOf<F extends PlanFact['fact']>(
  plan: KeyPlan,
  fact: F,
): Extract<PlanFact, { fact: F }> | undefined {
  return plan.facts.find((f): f is Extract<PlanFact, { fact: F }> => f.fact === fact);
}

export const present = (kind: string, name: string, desired: unknown): EntryPlan => ({
  kind,
  name,
  want: 'present',
  desired,
});
export const absent = (kind: string, name: string, why: string): EntryPlan => ({
  kind,
  name,
  want: 'absent',
  why,
});
export const keep = (kind: string, name: string, why: string): EntryPlan => ({
  kind,
  name,
  want: 'keep',
  why,
});
