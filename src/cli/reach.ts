/**
 * `odlcoectl reach <ns>/<pod> <ns>/<pod>|<ip> [--port N/tcp|udp|sctp]`: would NetVirt deliver
 * this packet, through which ODL objects, and which one drops it? Kubernetes only names the
 * pods (their interface names and addresses); the answer comes from what ODL holds, read whole
 * through the kinds table (src/netvirt/reach/ walks it), so it works the same against a real ODL
 * as against the emulator, whatever the watcher thinks it wrote.
 */
import { isIP } from 'node:net';
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from '../k8s/kube-client.js';
import { podAddress, podNetworkEligibility } from '../netvirt/kube.js';
import { canonicalIp, interfaceName } from '../netvirt/names.js';
import {
  analyseReach,
  describeProbe,
  HoldingsIndex,
  holdingsOf,
  parseProbe,
  type ReachEndpoint,
  type ReachResult,
} from '../netvirt/reach/index.js';
import type { OdlReader } from '../odl/reader.js';
import { CliError, EXIT, type ExitCode } from './exit-codes.js';
import { kubePaths, readObject } from './kube-reader.js';
import { parsePodRef } from './trace/index.js';

export interface ReachReport extends ReachResult {
  /** As given on the command line. */
  from: string;
  to: string;
  /** ODL entries that did not parse as their model (the analysis cannot see into them). */
  unparsed: { kind: string; name: string }[];
}

type Target = { pod: { namespace: string; name: string } } | { ip: string };

/** The destination argument: a pod as `<ns>/<pod>`, or an IP address. */
export function parseTarget(arg: string): Target {
  if (isIP(arg) !== 0) return { ip: canonicalIp(arg) };
  return { pod: parsePodRef(arg) };
}

/** A pod's port: its interface name, and its address when Kubernetes knows one (IPv4, as odlcoe routes). */
async function podEndpoint(
  kube: KubeClient,
  ref: { namespace: string; name: string },
  timeoutMs: number,
): Promise<ReachEndpoint> {
  const pod = await readObject<V1Pod>(kube, kubePaths.pod(ref.namespace, ref.name), { timeoutMs });
  const label = `pod ${ref.namespace}/${ref.name}`;
  if (!pod) throw new CliError(`${label} does not exist in Kubernetes`, EXIT.usage);
  const eligibility = podNetworkEligibility(pod);
  if (!eligibility.onNetwork)
    throw new CliError(`${label} ${eligibility.reason}: it has no port on the pod network`, EXIT.usage);
  const ip = podAddress(pod, ['ipv4']);
  return { interface: interfaceName(ref.namespace, ref.name), ...(ip !== undefined ? { ip } : {}) };
}

export async function runReach(
  args: { from: string; to: string; port: string | undefined },
  reader: OdlReader,
  kube: KubeClient,
  timeoutMs: number,
): Promise<{ report: ReachReport; exitCode: ExitCode }> {
  const probe = parseProbe(args.port);
  const source = parsePodRef(args.from);
  const target = parseTarget(args.to);
  // Kubernetes first (names only), then ODL: the answer is about what ODL holds now.
  const from = await podEndpoint(kube, source, timeoutMs);
  const to = 'ip' in target ? { ip: target.ip } : await podEndpoint(kube, target.pod, timeoutMs);
  const snapshot = await reader.snapshot();
  const index = new HoldingsIndex(holdingsOf(snapshot.state, reader.table.kinds));
  const result = analyseReach(index, reader.profile, { from, to, probe });
  const report: ReachReport = {
    from: args.from,
    to: args.to,
    ...result,
    unparsed: snapshot.unparsed.map((u) => ({ kind: u.kind, name: u.name })),
  };
  return { report, exitCode: result.verdict === 'delivered' ? EXIT.ok : EXIT.problem };
}

const end = (given: string, e: { interface?: string; ip: string }) =>
  `${given} (${[e.interface, e.ip].filter((x) => x !== undefined && x !== '').join(', ')})`;

export function renderReach(r: ReachReport): string {
  const lines = [
    `${end(r.from, r.source)} → ${end(r.to, r.destination)}, ${describeProbe(r.probe)}: ${r.verdict.toUpperCase()}`,
  ];
  const width = Math.max(0, ...r.path.map((h) => `${h.kind} ${h.name}`.length));
  r.path.forEach((h, i) =>
    lines.push(`  ${String(i + 1).padStart(2)}. ${`${h.kind} ${h.name}`.padEnd(width)}  ${h.note}`),
  );
  if (r.drop) {
    lines.push('', `dropped by ${r.drop.kind} ${r.drop.name}:`);
    lines.push(`  ${r.drop.reason}`);
    for (const d of r.drop.details ?? []) lines.push(`  - ${d}`);
  }
  if (r.notes.length > 0) lines.push('', 'notes:', ...r.notes.map((n) => `  - ${n}`));
  if (r.unparsed.length > 0)
    lines.push(
      '',
      `ODL holds ${r.unparsed.length} entr${r.unparsed.length === 1 ? 'y' : 'ies'} that do not parse (not considered): ${r.unparsed.map((u) => `${u.kind} ${u.name}`).join(', ')}`,
    );
  return lines.join('\n');
}
