/**
 * A trace's verdict (the first problem in dependency order, or why there is no answer) and its
 * human rendering.
 */
import { podMac } from '../../netvirt/names.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import type { PodFacts } from './facts.js';
import {
  PROBLEMS,
  TRACE_STEPS,
  type AttachmentTrace,
  type StepStatus,
  type TraceReport,
  type TraceStep,
  type TracePort,
  type TraceVerdict,
  type Trace,
} from './steps.js';

export function finish(
  ref: { namespace: string; name: string },
  trace: Trace,
  facts: PodFacts | 'off-network' | undefined,
  verdictOverride?: TraceVerdict,
): { report: TraceReport; exitCode: ExitCode } {
  const steps = TRACE_STEPS.map((name) => trace.steps.find((s) => s.step === name)).filter(
    (s): s is TraceStep => s !== undefined,
  );
  const firstProblem = steps.find((s) => PROBLEMS.has(s.status)) ?? null;
  const firstError = steps.find((s) => s.status === 'error');
  // A problem found before any read failed is a definite answer; after one, it may be a consequence.
  const problemFirst =
    firstProblem !== null && (!firstError || steps.indexOf(firstProblem) < steps.indexOf(firstError));
  const verdict: TraceVerdict =
    verdictOverride ??
    (problemFirst ? 'problem' : firstError ? 'incomplete' : firstProblem ? 'problem' : 'ok');
  const pod = typeof facts === 'object' ? facts : undefined;
  const report: TraceReport = {
    pod: `${ref.namespace}/${ref.name}`,
    node: pod?.pod.spec?.nodeName ?? null,
    ip: pod?.address ?? null,
    mac: pod?.address ? podMac(pod.address) : null,
    verdict,
    firstProblem: verdict === 'problem' ? firstProblem : null,
    steps,
    notes: trace.notes,
    ...(trace.ovsPorts ? { ovsPorts: trace.ovsPorts } : {}),
  };
  const exitCode =
    verdict === 'problem' ? EXIT.problem : verdict === 'incomplete' ? EXIT.unavailable : EXIT.ok;
  return { report, exitCode };
}

const STATUS_TEXT: Record<StepStatus, string> = {
  ok: 'ok',
  missing: 'MISSING',
  mismatch: 'MISMATCH',
  foreign: 'FOREIGN',
  unparsed: 'UNPARSED',
  error: 'ERROR',
  skipped: 'skipped',
  'not-checked': 'not checked',
};

function renderAttachments(attachments: readonly AttachmentTrace[]): string[] {
  const out = ['Extra interfaces:'];
  for (const a of attachments) {
    const what = a.record === 'allocated' ? `${(a.ips ?? []).join(',')} ${a.mac ?? ''}` : 'REFUSED';
    out.push(`  ${a.interface} on ${a.network}: ${what}${a.problem ? ` (${a.problem})` : ''}`);
    for (const e of a.entries)
      out.push(`    ${STATUS_TEXT[e.status].padEnd(11)} ${`${e.kind} ${e.name}`}  ${e.message}`);
  }
  const troubled = attachments.filter(
    (a) => a.problem !== undefined || a.entries.some((e) => PROBLEMS.has(e.status)),
  );
  if (troubled.length > 0)
    out.push(`EXTRA INTERFACE PROBLEM: ${troubled.map((a) => a.interface).join(', ')} (see above)`);
  return out;
}

export function renderTrace(r: TraceReport): string {
  const head = `Trace of pod ${r.pod}${r.node ? ` on node ${r.node}` : ''}${r.ip ? `, IP ${r.ip}, MAC ${r.mac}` : ''}`;
  const width = Math.max(...TRACE_STEPS.map((s) => s.length));
  const lines = r.steps.map((s) => {
    const marker = r.firstProblem === s ? '>' : ' ';
    return `${marker} ${STATUS_TEXT[s.status].padEnd(11)} ${s.step.padEnd(width)}  ${s.message}`;
  });
  const out = [head, '', ...lines, ''];
  const unchecked = r.steps.filter((s) => s.status === 'not-checked').map((s) => s.step);
  if (r.verdict === 'ok' && unchecked.length === 0)
    out.push('OK: everything the pod network is made of is present and as it should be.');
  else if (r.verdict === 'ok')
    out.push(`OK as far as checked: no problem found (not checked: ${unchecked.join(', ')}).`);
  else if (r.verdict === 'off-network')
    out.push('The pod is off the pod network by design; nothing to check.');
  else if (r.verdict === 'incomplete')
    out.push('INCOMPLETE: some parts could not be read (see ERROR lines); no problem found before them.');
  else if (r.firstProblem) out.push(`FIRST PROBLEM (${r.firstProblem.step}): ${r.firstProblem.message}`);
  if (r.ovsPorts) out.push('', ...renderPorts(r.ovsPorts));
  if (r.attachments) out.push('', ...renderAttachments(r.attachments));
  for (const n of r.notes) out.push(`note: ${n}`);
  return out.join('\n');
}

/** The pod's OVS ports, one line each: its interface, the port, what it is bound to. */
function renderPorts(ports: readonly TracePort[]): string[] {
  if (ports.length === 0) return ['OVS ports of the pod: none'];
  const width = Math.max(...ports.map((p) => p.ifName.length));
  return [
    'OVS ports of the pod:',
    ...ports.map(
      (p) =>
        `  ${p.ifName.padEnd(width)}  ${p.port}  ${p.error ? `NOT ATTACHED (${p.error})` : `ofport ${p.ofport}`}  iface-id ${p.ifaceId ?? '-'}  ${p.network ? `network ${p.network}  ` : ''}mac ${p.mac ?? '-'}  ip ${p.ips.join(',') || '-'}`,
    ),
  ];
}
