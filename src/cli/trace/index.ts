/**
 * `odlcoectl trace <namespace>/<pod>`: why does this pod have no network?
 *
 * Walks everything the pod's network is made of, in dependency order, compares each piece
 * with what it should be (computed by the same pure translation the watcher uses), and points
 * at the FIRST thing that is missing or disagrees, since everything after it usually follows
 * from it:
 *
 *   pod scheduled, has an IP → node subnet (k8s-node entry) → VPN → ELAN → ietf-interface →
 *   elan-interface → vpn-interface and its adjacency → OVS port → its external_ids → the pod
 *   interface's TX checksum offload (on a userspace datapath)
 *
 * Then every extra interface recorded on the pod (attachments.ts): its record and its ODL
 * entries; a problem there makes the verdict `problem` when the primary interface is fine.
 *
 * Every step is still evaluated and shown (an operator fixing the first problem wants to know
 * what comes next). The OVS steps need the node's OVSDB; elsewhere they are skipped with a note.
 */
import { errorMessage } from '../../common/log.js';
import { validatePodRef } from '../../k8s/names.js';
import { validateBridgeName } from '../../ovs/names.js';
import type { KubeClient } from '../../k8s/kube-client.js';
import { interfaceName } from '../../netvirt/names.js';
import { ownerContextOf, translateSettingsOf } from '../../netvirt/translate-settings.js';
import type { RestconfClient } from '../../restconf/client.js';
import { CliError, EXIT, type ExitCode } from '../exit-codes.js';
import type { CliSettings } from '../settings.js';
import { odlReader } from '../snapshot.js';
import { checkPod } from './facts.js';
import { checkOdl, OdlProbe } from './odl.js';
import { checkChecksumOffload } from './offload.js';
import { checkOvs, type OvsCheckOptions } from './ovs.js';
import { finish, renderTrace } from './render.js';
import { PROBLEMS, Trace, type TraceReport, type TraceVerdict } from './steps.js';
import { traceAttachments } from './attachments.js';

export { renderTrace, type OvsCheckOptions };
export {
  TRACE_STEPS,
  type StepStatus,
  type TraceReport,
  type TraceStep,
  type TraceStepName,
  type TraceVerdict,
} from './steps.js';

/** `<namespace>/<pod>`, validated as Kubernetes names (they end up in URLs and OVSDB queries). */
export function parsePodRef(ref: string): { namespace: string; name: string } {
  const slash = ref.indexOf('/');
  if (slash <= 0 || slash === ref.length - 1 || ref.indexOf('/', slash + 1) >= 0)
    throw new CliError(`pod ${JSON.stringify(ref)} must be given as <namespace>/<pod>`, EXIT.usage);
  const namespace = ref.slice(0, slash);
  const name = ref.slice(slash + 1);
  try {
    validatePodRef(namespace, name);
  } catch (err) {
    throw new CliError(errorMessage(err), EXIT.usage);
  }
  return { namespace, name };
}

export async function runTrace(
  ref: { namespace: string; name: string },
  settings: CliSettings,
  client: RestconfClient,
  kube: KubeClient,
  ovsOpts: OvsCheckOptions,
): Promise<{ report: TraceReport; exitCode: ExitCode }> {
  validateBridgeName(ovsOpts.bridge);
  const trace = new Trace();
  const facts = await checkPod(trace, kube, ref, settings.timeoutMs);
  const report = (verdictOverride?: TraceVerdict) => finish(ref, trace, facts, verdictOverride);
  if (facts === 'off-network') {
    trace.skipRest('the pod is off the pod network by design');
    return report('off-network');
  }
  if (!facts) {
    trace.skipRest('the pod cannot be looked at');
    return report();
  }
  const odl = new OdlProbe(odlReader(client, settings), ownerContextOf(settings));
  await checkOdl(trace, odl, facts, translateSettingsOf(settings), settings.subnetSource);
  if (facts.node && facts.namespace) {
    const found = await checkOvs(
      trace,
      facts,
      ovsOpts,
      interfaceName(ref.namespace, ref.name),
      settings.timeoutMs,
    );
    await checkChecksumOffload(trace, ovsOpts, found);
  }
  const result = report();
  const extra = await traceAttachments(
    facts.pod,
    translateSettingsOf(settings),
    ownerContextOf(settings),
    odlReader(client, settings),
    kube,
    settings.timeoutMs,
  );
  result.report.notes.push(...extra.notes);
  if (extra.attachments.length === 0) return result;
  result.report.attachments = extra.attachments;
  const troubled = extra.attachments.some(
    (a) => a.problem !== undefined || a.entries.some((e) => PROBLEMS.has(e.status)),
  );
  if (troubled && result.report.verdict === 'ok') {
    result.report.verdict = 'problem';
    result.exitCode = EXIT.problem;
  }
  return result;
}
