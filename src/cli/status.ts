/**
 * `odlcoectl status`: is the cluster programmed? Pods programmed vs pending (their
 * ietf-interface, elan-interface and vpn-interface present in ODL with the owned leaves the
 * translation wants), collisions with foreign ODL objects, the watcher's Warning Events, the
 * current leader, and whether ODL and Kubernetes answer.
 */
import { performance } from 'node:perf_hooks';
import { readConvergence, type ConvergenceFigures } from '../common/convergence.js';
import { errorMessage } from '../common/log.js';
import type { KubeClient } from '../k8s/kube-client.js';
import type { Decision } from '../netvirt/decision.js';
import type { KindContext } from '../netvirt/kind.js';
import { attachmentKeysOfPod, podKey } from '../netvirt/keys.js';
import type { KeyPlan } from '../netvirt/plan.js';
import { planNetvirtKey, planPod, type NetvirtPlanInputs } from '../netvirt/plan-netvirt.js';
import { ownerContextOf } from '../netvirt/translate-settings.js';
import type { OdlView } from '../odl/entry-store.js';
import { optionalModels, resolveModels, type OdlModels } from '../odl/models.js';
import type { RestconfClient } from '../restconf/client.js';
import type { Dialect } from '../restconf/path.js';
import type { CliModel } from './model.js';
import { EXIT, type ExitCode } from './exit-codes.js';
import {
  readLeader,
  readWatcherEvents,
  type KubeSnapshot,
  type LeaderInfo,
  type WatcherEvent,
} from './kube-reader.js';
import { checkGateway, gatewayFindings, type GatewayCheck } from './gateways.js';
import { keysToPlan, planInputs } from './plan-inputs.js';
import { cell, indentedTable, plural } from './render.js';
import { withModels, type CliConfig } from './settings.js';
import { odlReader, readSnapshot } from './snapshot.js';

export interface Reachability {
  /** The URL asked. */
  endpoint: string;
  reachable: boolean;
  /** Time to the answer (retries included), milliseconds. */
  latencyMs?: number;
  /** Kubernetes only: the server's gitVersion. */
  version?: string;
  error?: string;
}

export interface PendingPod {
  /** `namespace/name`. */
  pod: string;
  node: string | null;
  /** What is missing or differs, in dependency order. */
  reasons: string[];
}

export interface PodProgramming {
  programmed: number;
  pending: number;
  /** Pods odlcoe gives nothing by design (host network, finished). */
  offNetwork: number;
  pendingPods: PendingPod[];
}

/** A pod's extra interface not (yet) as planned. */
export interface PendingAttachment {
  /** `namespace/pod/interface`. */
  attachment: string;
  reasons: string[];
}

/** The pods' extra interfaces (their `attachment/` keys): programmed, pending, refused. */
export interface AttachmentProgramming {
  programmed: number;
  pending: number;
  /** Refused allocations (the pod's Event says why): nothing is programmed for them by design. */
  refused: number;
  pendingAttachments: PendingAttachment[];
}

export interface Collision {
  kind: string;
  name: string;
  reason: string;
}

/** What ODL is: its release profile and the optional models it has, as read from its module list. */
export interface OdlRelease {
  profile: string;
  /** `odl`: read from ODL's module list; `told`: ODL publishes none, the told profile is assumed. */
  detected: 'odl' | 'told';
  dialect: Dialect;
  /** COE (k8s-node, pod, service), ACL service, NAT. */
  models: { coe: boolean; acl: boolean; nat: boolean };
}

export interface StatusReport {
  cluster: string;
  odl: Reachability;
  /** null when ODL's module list could not be read (or contradicts the told profile: see errors). */
  release: OdlRelease | null;
  kubernetes: Reachability;
  leader: LeaderInfo | { lease: string; error: string };
  /** null when ODL or Kubernetes could not be read completely. */
  pods: PodProgramming | null;
  /**
   * The pods' extra interfaces; null when ODL or Kubernetes could not be read, or the API
   * server does not serve NetworkAttachmentDefinitions (extra networks are off).
   */
  attachments: AttachmentProgramming | null;
  collisions: Collision[];
  /** ODL entries that do not parse (never touched by odlcoe). */
  unparsed: { kind: string; name: string; error: string }[];
  /**
   * With `services.cidrs` set: every node's gateway, its entries against the plan and its
   * Service routes; null with Services off or when ODL or Kubernetes could not be read.
   */
  gateways: GatewayCheck[] | null;
  /** Warnings the watcher recorded; null when they could not be read. */
  events: WatcherEvent[] | null;
  /**
   * The leading watcher's convergence progress, from its metrics endpoint (`--watcher-metrics`);
   * null when not asked for. `progress` null: the endpoint answered without it.
   */
  watcher: { endpoint: string; progress: ConvergenceFigures | null; error?: string } | null;
  /** What could not be read, one line each. */
  errors: string[];
}

function describeDecision(label: string, d: Decision, odl: OdlView, kind: string): string | undefined {
  if (odl.isUnparsed(kind, d.name)) return `${label} ${d.name} exists but does not parse`;
  switch (d.action) {
    case 'none':
      return undefined;
    case 'create':
      return `${label} ${d.name} missing`;
    case 'update':
    case 'recreate':
      return `${label} ${d.name} differs (${d.changed.join(', ')})`;
    case 'foreign':
      return `${label} ${d.name} is held by a foreign object (${d.reason})`;
    case 'delete-candidate':
      return `${label} ${d.name} should not exist`;
  }
}

/** What a kind's diff says of `desired` against what the snapshot holds. */
function decide(odl: OdlView, ctx: KindContext, kind: string, name: string, desired: unknown): Decision {
  return odl.table.spec(kind).diff(desired, odl.get(kind, name), ctx, { name });
}

/**
 * What ODL lacks or holds differently from a key's plan (none: programmed). `absent` entries:
 * a pod's mean it is not complete yet (no address, no vpn-interface); an attachment's are by
 * design (an L2 network has no vpn-interface) and count only while ODL still holds them.
 */
function planReasons(plan: KeyPlan, odl: OdlView, ctx: KindContext, absentPending: boolean): string[] {
  const reasons: string[] = [];
  for (const e of plan.entries) {
    const label = odl.table.label(e.kind);
    if (e.want === 'present') {
      const r = describeDecision(label, decide(odl, ctx, e.kind, e.name, e.desired), odl, e.kind);
      if (r) reasons.push(r);
    } else if (e.want === 'keep') reasons.push(`${label} ${e.name} cannot be computed: ${e.why}`);
    else if (absentPending || odl.get(e.kind, e.name) !== undefined) reasons.push(e.why);
  }
  return reasons;
}

/**
 * Programmed vs pending per extra interface recorded on a pod (its `attachment/` key's plan
 * against the ODL snapshot); undefined where NADs are not known. Pure.
 */
export function attachmentProgramming(
  kube: KubeSnapshot,
  odl: OdlView,
  inputs: NetvirtPlanInputs,
  ctx: KindContext,
): AttachmentProgramming | null {
  if (!kube.networkAttachmentDefinitions) return null;
  const out: AttachmentProgramming = { programmed: 0, pending: 0, refused: 0, pendingAttachments: [] };
  const keys = kube.pods.flatMap((pod) => attachmentKeysOfPod(pod)).sort();
  for (const key of keys) {
    const plan = planNetvirtKey(key, inputs);
    if (plan.facts.some((f) => f.fact === 'refused')) {
      out.refused += 1;
      continue;
    }
    const reasons = planReasons(plan, odl, ctx, false);
    if (reasons.length === 0) out.programmed += 1;
    else {
      out.pending += 1;
      out.pendingAttachments.push({ attachment: key.slice('attachment/'.length), reasons });
    }
  }
  return out;
}

/** Programmed vs pending per pod: pure, from the pods' plans and the ODL snapshot. */
export function podProgramming(
  kube: KubeSnapshot,
  odl: OdlView,
  inputs: NetvirtPlanInputs,
  ctx: KindContext,
): PodProgramming {
  const out: PodProgramming = { programmed: 0, pending: 0, offNetwork: 0, pendingPods: [] };
  const id = (p: KubeSnapshot['pods'][number]) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`;
  for (const pod of [...kube.pods].sort((a, b) => id(a).localeCompare(id(b)))) {
    const ns = pod.metadata?.namespace;
    const name = pod.metadata?.name;
    if (!ns || !name) continue;
    const plan = planPod(podKey(ns, name), ns, name, inputs);
    const deferred = plan.facts.find((f) => f.fact === 'deferred');
    if (deferred?.fact === 'deferred') {
      out.pending += 1;
      out.pendingPods.push({ pod: id(pod), node: null, reasons: [deferred.deferral.message] });
      continue;
    }
    if (plan.entries.every((e) => e.want === 'absent')) {
      out.offNetwork += 1;
      continue;
    }
    const reasons = planReasons(plan, odl, ctx, true);
    if (reasons.length === 0) out.programmed += 1;
    else {
      out.pending += 1;
      out.pendingPods.push({ pod: id(pod), node: pod.spec?.nodeName ?? null, reasons });
    }
  }
  return out;
}

/** Names odlcoe needs that a foreign ODL object holds, by kind (create order) and name. */
export function collisions(
  keys: readonly string[],
  odl: OdlView,
  inputs: NetvirtPlanInputs,
  ctx: KindContext,
): Collision[] {
  const found: (Collision & { rank: number })[] = [];
  for (const key of keys) {
    let plan;
    try {
      plan = planNetvirtKey(key, inputs);
    } catch {
      continue;
    }
    for (const e of plan.entries) {
      if (e.want !== 'present') continue;
      const d = decide(odl, ctx, e.kind, e.name, e.desired);
      if (d.action === 'foreign' && d.wanted)
        found.push({
          kind: odl.table.label(e.kind),
          name: e.name,
          reason: d.reason,
          rank: odl.table.createOrder.indexOf(e.kind),
        });
    }
  }
  return found
    .sort((a, b) => a.rank - b.rank || a.name.localeCompare(b.name))
    .map(({ kind, name, reason }) => ({ kind, name, reason }));
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value?: T; ms: number; error?: string }> {
  const started = performance.now();
  try {
    const value = await fn();
    return { value, ms: Math.round(performance.now() - started) };
  } catch (err) {
    return { ms: Math.round(performance.now() - started), error: errorMessage(err) };
  }
}

export async function runStatus(
  config: CliConfig,
  client: RestconfClient,
  kube: KubeClient,
  model?: CliModel,
): Promise<{ report: StatusReport; exitCode: ExitCode }> {
  const opts = { timeoutMs: config.timeoutMs };
  // ODL's module list: whether ODL answers, and what it is (release profile and models).
  const [odlProbe, kubeProbe] = await Promise.all([
    timed(() => client.getModules()),
    timed(() => kube.request<{ gitVersion?: string }>('GET', '/version', { timeoutMs: config.timeoutMs })),
  ]);
  const report: StatusReport = {
    cluster: config.clusterName,
    odl: {
      endpoint: client.modulesUrl(),
      reachable: odlProbe.error === undefined,
      latencyMs: odlProbe.ms,
    },
    release: null,
    kubernetes: {
      endpoint: kube.serverUrl,
      reachable: kubeProbe.error === undefined,
      latencyMs: kubeProbe.ms,
    },
    leader: { lease: `${config.lease.namespace}/${config.lease.name}`, error: 'not read' },
    pods: null,
    attachments: null,
    gateways: null,
    collisions: [],
    unparsed: [],
    events: null,
    watcher: null,
    errors: [],
  };
  let models: OdlModels | undefined;
  if (odlProbe.error !== undefined) {
    report.odl.error = odlProbe.error;
    report.errors.push(`ODL: ${odlProbe.error}`);
  } else {
    try {
      models = resolveModels(odlProbe.value, config.profile, config.odl.url);
      report.release = {
        profile: models.profile,
        detected: models.source,
        dialect: config.odl.dialect,
        models: { coe: models.coe, acl: models.acl, nat: models.nat },
      };
    } catch (err) {
      report.errors.push(`ODL release: ${errorMessage(err)}`);
    }
  }
  if (kubeProbe.error !== undefined) {
    report.kubernetes.error = kubeProbe.error;
    report.errors.push(`Kubernetes: ${kubeProbe.error}`);
  } else if (kubeProbe.value?.gitVersion) {
    report.kubernetes.version = kubeProbe.value.gitVersion;
  }

  if (report.kubernetes.reachable) {
    const [leader, events] = await Promise.all([
      timed(() => readLeader(kube, config.lease, opts)),
      timed(() => readWatcherEvents(kube, opts)),
    ]);
    if (leader.value) report.leader = leader.value;
    else {
      report.leader = { lease: report.leader.lease, error: leader.error ?? 'unknown error' };
      report.errors.push(`leader Lease ${report.leader.lease}: ${leader.error ?? ''}`);
    }
    if (events.value) report.events = events.value;
    else report.errors.push(`Events: ${events.error ?? ''}`);
  }

  if (config.watcherMetrics !== undefined) {
    const endpoint = config.watcherMetrics;
    const scrape = await timed(() => readWatcherProgress(endpoint, config.timeoutMs));
    report.watcher = { endpoint, progress: scrape.value ?? null };
    if (scrape.error !== undefined) {
      report.watcher.error = scrape.error;
      report.errors.push(`watcher metrics ${endpoint}: ${scrape.error}`);
    }
  }

  if (models && report.kubernetes.reachable) {
    const settings = withModels(config, models);
    const owner = ownerContextOf(settings);
    try {
      const { odl, kube: cluster } = await readSnapshot(
        client,
        kube,
        settings,
        opts,
        odlReader(client, settings, model),
      );
      const inputs = planInputs(cluster, odl.state, settings);
      const ctx = odl.state.context(owner);
      report.pods = podProgramming(cluster, odl.state, inputs, ctx);
      report.attachments = attachmentProgramming(cluster, odl.state, inputs, ctx);
      if (cluster.services)
        report.gateways = [...cluster.nodes]
          .sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''))
          .map((node) => checkGateway(node, inputs, odl.state, ctx));
      report.collisions = collisions(keysToPlan(cluster, odl.state, owner), odl.state, inputs, ctx);
      report.unparsed = odl.unparsed.map((u) => ({
        kind: odl.state.table.label(u.kind),
        name: u.name,
        error: u.error,
      }));
    } catch (err) {
      report.errors.push(`reading the cluster and ODL state: ${errorMessage(err)}`);
    }
  }

  const exitCode: ExitCode =
    report.pods === null || report.errors.length > 0
      ? EXIT.unavailable
      : report.pods.pending > 0 ||
          (report.attachments?.pending ?? 0) > 0 ||
          report.collisions.length > 0 ||
          report.unparsed.length > 0 ||
          (report.gateways ?? []).some((g) => !g.ok)
        ? EXIT.problem
        : EXIT.ok;
  return { report, exitCode };
}

/** The convergence figures on a watcher's metrics endpoint (null: it exports none). */
async function readWatcherProgress(url: string, timeoutMs: number): Promise<ConvergenceFigures | null> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return readConvergence(await response.text()) ?? null;
}

/** One line on the leading watcher's convergence. */
export function renderProgress(w: NonNullable<StatusReport['watcher']>): string {
  const p = w.progress;
  if (w.error !== undefined) return `Watcher progress: unknown (${w.endpoint}: ${w.error})`;
  if (!p) return `Watcher progress: none exported (${w.endpoint} is not a leading watcher's metrics)`;
  if (p.pass === null)
    return `Watcher progress: converged (last pass: ${p.total} keys in ${p.elapsedSeconds} s, ${p.ratePerSecond} keys/s)`;
  const eta = p.etaSeconds === null ? 'ETA unknown' : `ETA ${p.etaSeconds} s`;
  return (
    `Watcher progress: converging (${p.pass}, ${p.elapsedSeconds} s in): ${p.settled} of ${p.total} keys settled, ` +
    `${p.pending} pending, ${p.ratePerSecond} keys/s, ${eta}`
  );
}

export function renderStatus(r: StatusReport): string {
  const out: string[] = [`Cluster ${r.cluster}`];
  const reach = (what: string, x: Reachability) =>
    x.reachable
      ? `${what}: reachable (${x.latencyMs ?? '?'} ms)${x.version ? `, ${x.version}` : ''}  ${x.endpoint}`
      : `${what}: UNREACHABLE  ${x.endpoint}: ${x.error ?? ''}`;
  out.push(reach('ODL', r.odl));
  if (r.release)
    out.push(
      `ODL release: ${r.release.profile} profile (${r.release.detected === 'odl' ? 'read from its module list' : 'as told: ODL publishes no module list'}), ${r.release.dialect} dialect, optional models: ${optionalModels(r.release.models)}`,
    );
  out.push(reach('Kubernetes', r.kubernetes));
  if ('error' in r.leader) out.push(`Leader: unknown (Lease ${r.leader.lease}: ${r.leader.error})`);
  else if (!r.leader.exists)
    out.push(`Leader: none (Lease ${r.leader.lease} does not exist: is the watcher running?)`);
  else
    out.push(
      `Leader: ${r.leader.holder ?? '(no holder)'}${r.leader.expired ? ' (EXPIRED: not renewed in time, nobody leads)' : ''}` +
        `  Lease ${r.leader.lease}, renewed ${r.leader.renewTime ?? 'never'}`,
    );
  if (r.watcher) out.push(renderProgress(r.watcher));
  out.push('');
  if (r.pods === null) out.push('Pods: unknown (ODL and Kubernetes must both be readable)');
  else {
    out.push(
      `Pods: ${r.pods.programmed} programmed, ${r.pods.pending} pending, ${r.pods.offNetwork} off the pod network`,
    );
    if (r.pods.pendingPods.length > 0) {
      out.push(
        indentedTable(
          ['POD', 'NODE', 'WHY'],
          r.pods.pendingPods.map((p) => [p.pod, cell(p.node), p.reasons.join('; ')]),
        ),
      );
    }
  }
  if (r.attachments !== null) {
    const a = r.attachments;
    out.push(`Extra interfaces: ${a.programmed} programmed, ${a.pending} pending, ${a.refused} refused`);
    if (a.pendingAttachments.length > 0)
      out.push(
        indentedTable(
          ['ATTACHMENT', 'WHY'],
          a.pendingAttachments.map((p) => [p.attachment, p.reasons.join('; ')]),
        ),
      );
  }
  if (r.gateways !== null) {
    const ok = r.gateways.filter((g) => g.ok).length;
    out.push('', `Node gateways: ${ok} complete, ${r.gateways.length - ok} not`);
    if (r.gateways.length > 0)
      out.push(
        indentedTable(
          ['NODE', 'GATEWAY', 'ADDRESS', 'ODL OBJECTS', 'SERVICE ROUTES'],
          r.gateways.map((g) => [
            g.node,
            g.gateway,
            cell(g.address),
            g.ok ? 'ok' : gatewayFindings(g).join('; '),
            `${g.routes.inOdl} / ${g.routes.desired}`,
          ]),
        ),
      );
  }
  if (r.collisions.length > 0) {
    out.push(
      '',
      `Collisions with foreign ODL objects: ${r.collisions.length}`,
      indentedTable(
        ['KIND', 'NAME', 'WHY'],
        r.collisions.map((c) => [c.kind, c.name, c.reason]),
      ),
    );
  }
  if (r.unparsed.length > 0) {
    out.push(
      '',
      `ODL entries that do not parse (left alone): ${r.unparsed.length}`,
      indentedTable(
        ['KIND', 'NAME', 'ERROR'],
        r.unparsed.map((u) => [u.kind, u.name, u.error]),
      ),
    );
  }
  out.push('');
  if (r.events === null) out.push('Watcher events: unknown');
  else if (r.events.length === 0) out.push('Watcher events: none');
  else {
    out.push(`Watcher events: ${plural(r.events.length, 'warning')}`);
    out.push(
      indentedTable(
        ['LAST SEEN', 'OBJECT', 'REASON', 'COUNT', 'MESSAGE'],
        r.events.map((e) => [cell(e.lastSeen), e.object, e.reason, String(e.count), e.message]),
      ),
    );
  }
  if (r.errors.length > 0) out.push('', 'Could not read:', ...r.errors.map((e) => `  ${e}`));
  return out.join('\n');
}
