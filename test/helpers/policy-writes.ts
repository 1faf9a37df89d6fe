/**
 * ODL programmed with what the NetworkPolicy translation wants for a cluster, through the same
 * plans the watcher executes (the pods' keys carry their port security, `network-policy` the
 * shared ACLs, each policy's `acl-policy/` key its own), written into an empty ODL in
 * dependency order: ACLs (membership groups first, as the plans order them), then the pod
 * network (test/helpers/desired-writes.ts). For tests that need policy-enforcing ODL config
 * before or beside a running watcher.
 */
import type { V1NetworkPolicy } from '@kubernetes/client-node';
import { aclEntry, type Acl } from '../../src/netvirt/acl.js';
import {
  netvirtPaths,
  putOp,
  translateCluster,
  type ClusterObjects,
  type DesiredState,
  type Interface,
  type Profile,
  type TranslateSettings,
  type WriteOp,
} from '../../src/netvirt/index.js';
import { aclPolicyKey, NETWORK_POLICY_KEY, podKey } from '../../src/netvirt/keys.js';
import { planNetvirtKey } from '../../src/netvirt/plan-netvirt.js';
import { readPolicy } from '../../src/netvirt/policy/spec.js';
import { PolicyIndex } from '../../src/netvirt/policy/translate.js';
import { clusterPlanInputs } from '../../src/netvirt/translate-cluster.js';
import type { Dialect } from '../../src/restconf/path.js';
import { desiredWrites } from './desired-writes.js';

export interface PolicyDesired {
  desired: DesiredState;
  index: PolicyIndex;
  /** ACLs in the order the plan writes them. */
  acls: Acl[];
}

export function policyDesired(
  view: ClusterObjects,
  policies: readonly V1NetworkPolicy[],
  settings: TranslateSettings,
): PolicyDesired {
  const specs = policies.map((p) => {
    const read = readPolicy(p);
    if ('error' in read)
      throw new Error(`policy ${p.metadata?.namespace}/${p.metadata?.name}: ${read.error}`);
    return read;
  });
  const labels = new Map(view.namespaces.map((n) => [n.metadata?.name ?? '', n.metadata?.labels ?? {}]));
  const index = new PolicyIndex(settings.clusterName, settings.profile, specs, (ns) => labels.get(ns));
  // One tag reservation for every ACL key, as the watcher's: each key allocates new tags alone.
  const inputs = {
    ...clusterPlanInputs(view, settings),
    policy: () => index,
    acls: () => [],
    aclTagReservations: new Map<string, number>(),
  };
  const desired = translateCluster(view, settings);
  for (const name of desired.interfaces.keys()) {
    const [ns, pod] = name.split(':');
    if (ns === undefined || pod === undefined) continue;
    const entry = planNetvirtKey(podKey(ns, pod), inputs).entries.find((e) => e.kind === 'interface');
    if (entry?.want === 'present') desired.interfaces.set(name, entry.desired as Interface);
  }
  // The shared key first (membership groups), then every policy's own key.
  const keys = [NETWORK_POLICY_KEY, ...index.policies.map((p) => aclPolicyKey(p.namespace, p.name))];
  const acls = keys.flatMap((key) =>
    planNetvirtKey(key, inputs).entries.flatMap((e) =>
      e.kind === 'acl' && e.want === 'present' ? [e.desired as Acl] : [],
    ),
  );
  return { desired, index, acls };
}

/** Every write of `policyDesired`'s result into an empty ODL, in dependency order. */
export function policyWrites(settings: TranslateSettings, d: PolicyDesired): WriteOp[] {
  const paths = netvirtPaths(settings.profile);
  return [
    ...d.acls.map((a) => putOp(paths.acl(a.name), aclEntry(settings.profile, a))),
    ...desiredWrites(settings.profile, d.desired).map((w) => w.op),
  ];
}

/** Both profiles, each over one RESTCONF dialect (the other dialect with the other profile elsewhere). */
export const PROFILES_AND_DIALECTS: readonly (readonly [Profile, Dialect])[] = [
  ['sodium', 'bierman02'],
  ['aluminium', 'rfc8040'],
];
