/**
 * How far ODL is from what the cluster needs, per kind of object: what this cluster owns in
 * ODL now against what the watcher's translation says it should own. Both sides are computed
 * with odlcoectl's own readers (ODL first, then Kubernetes, see src/cli/snapshot.ts) and the
 * same pure translation the watcher runs, so "converged" here means what `odlcoectl dump`
 * and `odlcoectl status` would show.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { readCluster, type KubeSnapshot } from '../cli/kube-reader.js';
import { keysToPlan, planInputs, type PlanSettings } from '../cli/plan-inputs.js';
import { readOdl } from '../cli/snapshot.js';
import type { KubeClient } from '../k8s/kube-client.js';
import { podHasAnyAddress, podNetworkEligibility } from '../netvirt/kube.js';
import { planNetvirtKey } from '../netvirt/plan-netvirt.js';
import { ownerContextOf } from '../netvirt/translate-settings.js';
import type { EntryStore, OdlView } from '../odl/entry-store.js';
import type { RestconfClient } from '../restconf/client.js';

export interface KindProgress {
  kind: string;
  /** The model's list name (`vpn-instance`, ...), as odlcoectl prints it. */
  label: string;
  /** Entries of this kind owned by the cluster in ODL. */
  inOdl: number;
  desired: number;
  /** Desired but not in ODL (sorted). */
  missing: string[];
  /** In ODL but not desired (sorted): garbage, or instances within their grace period. */
  extra: string[];
}

export interface Progress {
  kinds: KindProgress[];
  /** Pods on the pod network (scheduled, not hostNetwork, not finished). */
  podsOnNetwork: number;
  /** `namespace/name` of the pods on the pod network that have no IP yet (sorted). */
  podsWithoutIp: string[];
  /** Every kind matches and every pod has its IP. */
  converged: boolean;
}

/**
 * Names each kind should hold (the `present` entries of every key's plan), and those a plan
 * keeps as they are (its desired state is not known here, e.g. ACLs under NetworkPolicy
 * enforcement, which this view does not evaluate): neither missing nor extra.
 */
function desiredNames(
  kube: KubeSnapshot,
  odl: OdlView,
  settings: PlanSettings,
): { present: Map<string, Set<string>>; kept: Set<string> } {
  const inputs = planInputs(kube, odl, settings);
  const present = new Map<string, Set<string>>(odl.table.kinds.map((k) => [k, new Set()]));
  const kept = new Set<string>();
  for (const key of keysToPlan(kube, odl, ownerContextOf(settings)))
    for (const e of planNetvirtKey(key, inputs).entries)
      if (e.want === 'present') present.get(e.kind)?.add(e.name);
      else if (e.want === 'keep') kept.add(`${e.kind}/${e.name}`);
  return { present, kept };
}

function podName(pod: V1Pod): string {
  return `${pod.metadata?.namespace ?? '?'}/${pod.metadata?.name ?? '?'}`;
}

/**
 * Pure: progress from one consistent pair of reads, per kind in creation order (node entries,
 * then namespaces' VPNs, then per-node ELANs, then pods).
 */
export function progressOf(odl: EntryStore, kube: KubeSnapshot, settings: PlanSettings): Progress {
  const { present: desired, kept } = desiredNames(kube, odl, settings);
  const owner = ownerContextOf(settings);
  // The kinds ODL has a model for (no k8s-node without the COE models).
  const kinds = odl.table.createOrder.map((kind): KindProgress => {
    const spec = odl.table.spec(kind);
    const want = desired.get(kind) ?? new Set<string>();
    const have = new Set(odl.owned(kind, owner).map((e) => spec.nameOf(e)));
    return {
      kind,
      label: spec.label,
      inOdl: have.size,
      desired: want.size,
      missing: [...want].filter((n) => !have.has(n)).sort(),
      extra: [...have].filter((n) => !want.has(n) && !kept.has(`${kind}/${n}`)).sort(),
    };
  });
  const onNetwork = kube.pods.filter((p) => podNetworkEligibility(p).onNetwork);
  const podsWithoutIp = onNetwork
    .filter((p) => !podHasAnyAddress(p))
    .map(podName)
    .sort();
  return {
    kinds,
    podsOnNetwork: onNetwork.length,
    podsWithoutIp,
    converged:
      podsWithoutIp.length === 0 && kinds.every((k) => k.missing.length === 0 && k.extra.length === 0),
  };
}

/** Reads ODL, then Kubernetes, and compares. */
export async function measureProgress(
  client: RestconfClient,
  kube: KubeClient,
  settings: PlanSettings & { timeoutMs: number },
): Promise<Progress> {
  const { state } = await readOdl(client, settings);
  const cluster = await readCluster(kube, { timeoutMs: settings.timeoutMs }, settings.serviceCidrs);
  return progressOf(state, cluster, settings);
}

/** Fixed-width rows: `  vpn-instance      3 / 3`. */
export function renderProgress(p: Progress): string[] {
  const width = Math.max(...p.kinds.map((k) => k.label.length), 'pods with an IP'.length);
  const row = (label: string, have: number, want: number, done: boolean) =>
    `  ${label.padEnd(width)}  ${String(have).padStart(3)} / ${String(want).padEnd(3)} ${done ? 'ok' : '..'}`;
  const podsWithIp = p.podsOnNetwork - p.podsWithoutIp.length;
  return [
    row('pods with an IP', podsWithIp, p.podsOnNetwork, p.podsWithoutIp.length === 0),
    ...p.kinds.map((k) =>
      row(k.label, k.inOdl - k.extra.length, k.desired, k.missing.length === 0 && k.extra.length === 0),
    ),
  ];
}

/** What is still missing, for a deadline message. */
export function describeGaps(p: Progress, limit = 5): string[] {
  const list = (names: string[]) =>
    names.slice(0, limit).join(', ') + (names.length > limit ? `, and ${names.length - limit} more` : '');
  const out: string[] = [];
  if (p.podsWithoutIp.length > 0) out.push(`pods without an IP: ${list(p.podsWithoutIp)}`);
  for (const k of p.kinds) {
    if (k.missing.length > 0) out.push(`${k.label} missing in ODL: ${list(k.missing)}`);
    if (k.extra.length > 0) out.push(`${k.label} in ODL but not needed: ${list(k.extra)}`);
  }
  return out;
}

/** One line: `pods with an IP 5/7, k8s-node 3/3, ...` (for logs and pipes). */
export function compactProgress(p: Progress): string {
  const podsWithIp = p.podsOnNetwork - p.podsWithoutIp.length;
  return [
    `pods with an IP ${podsWithIp}/${p.podsOnNetwork}`,
    ...p.kinds.map(
      (k) =>
        `${k.label} ${k.inOdl - k.extra.length}/${k.desired}${k.extra.length > 0 ? ` (+${k.extra.length} to delete)` : ''}`,
    ),
  ].join(', ');
}
