/**
 * The watcher's side of NetworkPolicy enforcement: whether it is on (`networkPolicy.enforcement`
 * against what ODL serves), the policy index over the NetworkPolicy informer's objects and the
 * namespaces' labels (made again after either changed: it remembers each pod's bindings), what
 * the ACL keys share (the key owning each ACL name, the acl-tags reserved for writes in flight),
 * and the reports about policies NetVirt cannot express exactly (a Warning Event on the policy
 * and a metric, once per distinct report).
 */
import type { V1NetworkPolicy } from '@kubernetes/client-node';
import { factOf, type KeyPlan } from '../netvirt/plan.js';
import type { AclTagReservations } from '../netvirt/policy/tags.js';
import { readPolicy, type PolicySpec } from '../netvirt/policy/spec.js';
import { PolicyIndex } from '../netvirt/policy/translate.js';
import type { BackendContext } from './backend.js';

export class NetworkPolicies {
  private cached: PolicyIndex | undefined;
  /**
   * The key planning each ACL name, as the ACL plans last said (the sweep's plan lists every
   * desired name, a policy's plan its own): the ACL kind's `ownerKey` (names are hashes).
   */
  private owners = new Map<string, string>();
  /** acl-tags handed out and not yet seen in ODL, shared by every ACL key (tags.ts). */
  readonly tagReservations: AclTagReservations = new Map();
  /** What was last reported per policy uid, so a reconcile that finds the same says nothing. */
  private readonly reported = new Map<string, string>();

  private constructor(private readonly ctx: BackendContext) {}

  /**
   * Enforcement for a backend: `on` needs ODL's ACL modules (a precise start-up error
   * otherwise), `auto` follows them, `off` is off.
   */
  static forBackend(ctx: BackendContext): NetworkPolicies | undefined {
    const mode = ctx.settings.networkPolicyEnforcement;
    if (mode === 'off') return undefined;
    if (!ctx.models.acl) {
      if (mode === 'on')
        throw new Error(
          'networkPolicy.enforcement is on, but ODL does not serve the ACL modules (aclservice, ietf-access-control-list): install NetVirt’s ACL service or set it to auto or off',
        );
      ctx.logger.info('NetworkPolicy is not enforced: ODL serves no ACL modules', { enforcement: mode });
      return undefined;
    }
    return new NetworkPolicies(ctx);
  }

  /** A policy or a namespace's labels changed: the index is made again when next needed. */
  changed(): void {
    this.cached = undefined;
  }

  index(): PolicyIndex {
    this.cached ??= this.build();
    return this.cached;
  }

  private build(): PolicyIndex {
    const specs: PolicySpec[] = [];
    for (const policy of this.ctx.view.networkPolicies?.list() ?? []) {
      const spec = readPolicy(policy);
      if ('error' in spec) this.refused(policy, spec.error);
      else specs.push(spec);
    }
    const view = this.ctx.view;
    return new PolicyIndex(
      this.ctx.settings.clusterName,
      this.ctx.settings.profile,
      specs,
      (ns) => view.namespace(ns)?.metadata?.labels,
    );
  }

  /** A policy the API took but odlcoe cannot read: it isolates nothing, and says so. */
  private refused(policy: V1NetworkPolicy, error: string): void {
    const m = policy.metadata ?? {};
    const message = `not enforced: ${error}`;
    if (!this.once(m.uid ?? `${m.namespace}/${m.name}`, message)) return;
    this.ctx.logger.error('NetworkPolicy cannot be enforced', {
      namespace: m.namespace,
      name: m.name,
      error,
    });
    this.ctx.metrics.policyApproximations.inc({ reason: 'invalid' });
    this.ctx.events.warning(
      {
        kind: 'NetworkPolicy',
        apiVersion: 'networking.k8s.io/v1',
        name: m.name ?? '',
        namespace: m.namespace ?? '',
        ...(m.uid ? { uid: m.uid } : {}),
      },
      'PolicyNotEnforced',
      message,
    );
  }

  /** The key that plans a desired ACL, as far as the plans so far said (undefined: the sweep's). */
  aclKey(name: string): string | undefined {
    return this.owners.get(name);
  }

  /** A new leader term: what was reserved or learnt goes with the old one. */
  reset(): void {
    this.owners = new Map();
    this.tagReservations.clear();
  }

  /** The reports of a plan (what NetVirt could not express, per policy), and the ACLs it plans. */
  report(plan: KeyPlan): void {
    const owners = factOf(plan, 'acl-owners');
    if (owners) this.owners = new Map(owners.owners);
    else
      for (const e of plan.entries)
        if (e.kind === 'acl' && e.want === 'present') this.owners.set(e.name, plan.key);
    for (const f of plan.facts) {
      if (f.fact !== 'policy-approximated') continue;
      const message = f.messages.join('; ');
      if (!this.once(f.policy.uid ?? f.policy.name, message)) continue;
      this.ctx.logger.warn('NetworkPolicy applied in its closest safe form', {
        namespace: f.policy.namespace,
        name: f.policy.name,
        detail: message,
      });
      this.ctx.metrics.policyApproximations.inc({ reason: 'approximated' });
      this.ctx.events.warning(f.policy, 'PolicyApproximated', message);
    }
  }

  private once(id: string, message: string): boolean {
    if (this.reported.get(id) === message) return false;
    this.reported.set(id, message);
    return true;
  }
}
