/**
 * How far ODL is from what the cluster needs, per kind of object: what this cluster owns in
 * ODL now against what the watcher's translation says it should own. Both sides are computed
 * with odlcoectl's own readers (ODL first, then Kubernetes, see src/cli/snapshot.ts) and the
 * same pure translation the watcher runs, so "converged" here means what `odlcoectl dump`
 * and `odlcoectl status` would show.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { desiredState, type DesiredInputs } from '../cli/desired.js';
import { readCluster, type KubeSnapshot } from '../cli/kube-reader.js';
import { KIND_LABEL, ownedEntries } from '../cli/odl-objects.js';
import type { CliSettings } from '../cli/settings.js';
import { readOdl } from '../cli/snapshot.js';
import type { KubeClient } from '../k8s/kube-client.js';
import { podHasAnyAddress, podNetworkEligibility, type DesiredState } from '../netvirt/index.js';
import type { RestconfClient } from '../restconf/client.js';
import type { OdlKind, OdlState } from '../watcher/odl-state.js';

export interface KindProgress {
  kind: OdlKind;
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

/** The order a reader follows: node entries, then namespaces' VPNs, then per-node ELANs, then pods. */
export const PROGRESS_KINDS: readonly OdlKind[] = [
  'k8sNode',
  'vpnInstance',
  'elanInstance',
  'interface',
  'elanInterface',
  'vpnInterface',
];

function desiredNames(desired: DesiredState, kind: OdlKind): string[] {
  switch (kind) {
    case 'interface':
      return [...desired.interfaces.keys()];
    case 'elanInstance':
      return [...desired.elanInstances.keys()];
    case 'elanInterface':
      return [...desired.elanInterfaces.keys()];
    case 'vpnInstance':
      return [...desired.vpnInstances.keys()];
    case 'vpnInterface':
      return [...desired.vpnInterfaces.keys()];
    case 'k8sNode':
      return [...desired.k8sNodes.keys()];
  }
}

function podName(pod: V1Pod): string {
  return `${pod.metadata?.namespace ?? '?'}/${pod.metadata?.name ?? '?'}`;
}

/** Pure: progress from one consistent pair of reads. */
export function progressOf(odl: OdlState, kube: KubeSnapshot, inputs: DesiredInputs): Progress {
  const desired = desiredState(kube, odl, inputs);
  const kinds = PROGRESS_KINDS.map((kind): KindProgress => {
    const want = new Set(desiredNames(desired, kind));
    const have = new Set(ownedEntries(odl, kind, inputs.owner).map((e) => ('name' in e ? e.name : e.uid)));
    return {
      kind,
      label: KIND_LABEL[kind],
      inOdl: have.size,
      desired: want.size,
      missing: [...want].filter((n) => !have.has(n)).sort(),
      extra: [...have].filter((n) => !want.has(n)).sort(),
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
  settings: CliSettings,
  inputs: DesiredInputs,
): Promise<Progress> {
  const { state } = await readOdl(client, settings);
  const cluster = await readCluster(kube, { timeoutMs: settings.timeoutMs });
  return progressOf(state, cluster, inputs);
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
