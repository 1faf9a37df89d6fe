/**
 * The steps of a trace and how each is judged: what `odlcoectl trace` reports, and the
 * collector the checks record into (in dependency order, each step once).
 */
export const TRACE_STEPS = [
  'pod',
  'node-subnet',
  'vpn-instance',
  'elan-instance',
  'ietf-interface',
  'elan-interface',
  'vpn-interface',
  'ovs-port',
  'ovs-external-ids',
  'checksum-offload',
] as const;
export type TraceStepName = (typeof TRACE_STEPS)[number];

/**
 * - `ok`: present and as it should be.
 * - `missing`, `mismatch`, `foreign` (the name is held by an object odlcoe does not own),
 *   `unparsed` (present but not in the model's shape): problems.
 * - `error`: could not be read (ODL or Kubernetes failed); the trace is incomplete.
 * - `skipped`: cannot be judged because something it depends on is absent.
 * - `not-checked`: deliberately not looked at (no OVSDB here, `--no-ovs`).
 */
export type StepStatus =
  'ok' | 'missing' | 'mismatch' | 'foreign' | 'unparsed' | 'error' | 'skipped' | 'not-checked';
export const PROBLEMS: ReadonlySet<StepStatus> = new Set(['missing', 'mismatch', 'foreign', 'unparsed']);

export interface TraceStep {
  step: TraceStepName;
  status: StepStatus;
  /** What was looked at, e.g. `ietf-interface default:web-0`. */
  object: string | null;
  /** Where: the RESTCONF URL of an ODL entry, the API path of a Kubernetes object, the OVSDB socket. */
  path: string | null;
  message: string;
  /** Owned leaves that differ (mismatch only). */
  changed?: string[];
}

export interface AttachmentEntryTrace {
  /** The model's list name (`elan-interface`). */
  kind: string;
  name: string;
  status: StepStatus;
  message: string;
}

export interface AttachmentTrace {
  interface: string;
  network: string;
  /** `allocated`, or `refused` (the record carries the reason the agent fails the CNI ADD with). */
  record: 'allocated' | 'refused';
  ips?: string[];
  mac?: string;
  /** The refusal (`<reason>: <message>`), or what is wrong with the network. */
  problem?: string;
  entries: AttachmentEntryTrace[];
}

export type TraceVerdict = 'ok' | 'problem' | 'off-network' | 'incomplete';

/**
 * One OVS port of the pod on its node's bridge: its `eth0` (iface-id `<namespace>:<pod>`) and
 * every extra interface (a Multus attachment, `odlcoe-pod` = the pod).
 */
export interface TracePort {
  /** The interface in the pod: `odlcoe-ifname`, `eth0` for the pod's own port. */
  ifName: string;
  port: string;
  ofport: number;
  /** What ovs-vswitchd reports when it could not attach the port. */
  error: string | null;
  ifaceId: string | null;
  /** The NetworkAttachmentDefinition `<namespace>/<name>`; null for the pod's own port. */
  network: string | null;
  mac: string | null;
  ips: string[];
}

export interface TraceReport {
  pod: string;
  node: string | null;
  ip: string | null;
  mac: string | null;
  verdict: TraceVerdict;
  /** The first step with a problem, in dependency order; null when there is none. */
  firstProblem: TraceStep | null;
  steps: TraceStep[];
  notes: string[];
  /** Every OVS port of the pod, `eth0` first; absent when OVS was not looked at. */
  ovsPorts?: TracePort[];
  /** The pod's extra interfaces (attachments.ts); only for a pod that has any recorded. */
  attachments?: AttachmentTrace[];
}

export class Trace {
  readonly steps: TraceStep[] = [];
  readonly notes: string[] = [];
  ovsPorts: TracePort[] | undefined;

  add(
    step: TraceStepName,
    status: StepStatus,
    object: string | null,
    path: string | null,
    message: string,
    changed?: string[],
  ): void {
    const s: TraceStep = { step, status, object, path, message };
    if (changed && changed.length > 0) s.changed = changed;
    this.steps.push(s);
  }

  /** Marks every step not evaluated yet as skipped. */
  skipRest(reason: string): void {
    for (const step of TRACE_STEPS)
      if (!this.steps.some((s) => s.step === step)) this.add(step, 'skipped', null, null, reason);
  }
}
