/**
 * The extra interfaces of a traced pod (docs/networks.md): for every attachment recorded on the
 * pod (`odlcoe.io/attachments`), its record (allocated, or refused with the reason the agent
 * fails the CNI ADD with) and each of its ODL entries judged against the plan the watcher would
 * execute for its key (plan-network.ts), with the NAD read from Kubernetes and its ELAN from ODL.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { errorMessage } from '../../common/log.js';
import type { KubeClient } from '../../k8s/kube-client.js';
import { isAttachmentFailure } from '../../netvirt/attachments.js';
import type { KindContext } from '../../netvirt/kind.js';
import { attachmentKey } from '../../netvirt/keys.js';
import {
  NAD_API_VERSION,
  NAD_PLURAL,
  readNetworkDefinition,
  type NetworkAttachmentDefinition,
  type NetworkDefinition,
} from '../../netvirt/network-config.js';
import type { OwnerContext } from '../../netvirt/ownership.js';
import { planAttachment, podAttachments } from '../../netvirt/plan-network.js';
import type { TranslateSettings } from '../../netvirt/translate-settings.js';
import type { OdlReader } from '../../odl/reader.js';
import { readObject } from '../kube-reader.js';
import type { AttachmentTrace, StepStatus } from './steps.js';

export async function traceAttachments(
  pod: V1Pod,
  settings: TranslateSettings,
  owner: OwnerContext,
  reader: OdlReader,
  kube: KubeClient,
  timeoutMs: number,
): Promise<{ attachments: AttachmentTrace[]; notes: string[] }> {
  const namespace = pod.metadata?.namespace ?? '';
  const podName = pod.metadata?.name ?? '';
  let records;
  try {
    records = podAttachments(pod);
  } catch (err) {
    return { attachments: [], notes: [`the pod's attachment record does not parse: ${errorMessage(err)}`] };
  }
  const nads = new Map<string, NetworkDefinition | undefined>();
  const definition = async (ns: string, name: string): Promise<NetworkDefinition | undefined> => {
    const ref = `${ns}/${name}`;
    if (!nads.has(ref)) {
      const path = `/apis/${NAD_API_VERSION}/namespaces/${encodeURIComponent(ns)}/${NAD_PLURAL}/${encodeURIComponent(name)}`;
      const nad = await readObject<NetworkAttachmentDefinition>(kube, path, { timeoutMs }).catch(
        () => undefined,
      );
      let def = nad ? readNetworkDefinition(nad) : undefined;
      const elan = def?.state === 'odlcoe' ? def.network.elan : undefined;
      if (elan !== undefined && (await reader.readEntry('elanInstance', elan)).state === 'absent')
        def = {
          state: 'invalid',
          message: `spec.config/elan: no ELAN ${JSON.stringify(elan)} exists in ODL`,
        };
      nads.set(ref, def);
    }
    return nads.get(ref);
  };
  const out: AttachmentTrace[] = [];
  for (const [ifname, record] of records) {
    const t: AttachmentTrace = {
      interface: ifname,
      network: record.network,
      record: isAttachmentFailure(record) ? 'refused' : 'allocated',
      entries: [],
    };
    if (isAttachmentFailure(record)) t.problem = `${record.error.reason}: ${record.error.message}`;
    else Object.assign(t, { ips: record.ips, mac: record.mac });
    const [netNs = '', netName = ''] = record.network.split('/');
    const def = await definition(netNs, netName);
    if (def?.state === 'invalid') t.problem ??= `network ${record.network} is invalid: ${def.message}`;
    if (!def && !t.problem)
      t.problem = `network ${record.network} is gone: the watcher removes this interface`;
    const plan = planAttachment(attachmentKey(namespace, podName, ifname), namespace, podName, ifname, {
      settings,
      pod: () => pod,
      networkDefinition: (ns, n) => nads.get(`${ns}/${n}`),
      routeDistinguisher: () => ({ rd: '', reassigned: false }),
    });
    const seen = new Map<string, unknown>();
    const ctx: KindContext = { owner, get: (kind, name) => seen.get(`${kind}/${name}`) };
    for (const entry of plan.entries) {
      const spec = reader.table.spec(entry.kind);
      const at = { kind: spec.label, name: entry.name };
      let read;
      try {
        read = await reader.readEntry(entry.kind, entry.name);
      } catch (err) {
        t.entries.push({ ...at, status: 'error', message: `cannot read it: ${errorMessage(err)}` });
        continue;
      }
      if (read.state === 'unparsed') {
        t.entries.push({ ...at, status: 'unparsed', message: read.error });
        continue;
      }
      const actual = read.state === 'parsed' ? read.entry : undefined;
      if (actual !== undefined) seen.set(`${entry.kind}/${entry.name}`, actual);
      t.entries.push({
        ...at,
        ...judge(entry, actual, spec.diff(entry.want === 'present' ? entry.desired : undefined, actual, ctx)),
      });
    }
    out.push(t);
  }
  return { attachments: out, notes: [] };
}

function judge(
  entry: { want: 'present' | 'absent' | 'keep'; why?: string },
  actual: unknown,
  decision: { action: string; reason?: string; changed?: string[] },
): { status: StepStatus; message: string } {
  if (entry.want === 'keep')
    return { status: 'not-checked', message: `desired state not known here: ${entry.why ?? ''}` };
  if (decision.action === 'foreign') return { status: 'foreign', message: decision.reason ?? "not odlcoe's" };
  if (entry.want === 'absent')
    return actual === undefined
      ? { status: 'ok', message: `absent, as it should be (${entry.why ?? ''})` }
      : {
          status: 'mismatch',
          message: `present but should be gone (${entry.why ?? ''}): the watcher deletes it`,
        };
  if (actual === undefined)
    return { status: 'missing', message: 'missing: the watcher has not written it (yet)' };
  if (decision.action === 'none') return { status: 'ok', message: 'present and as planned' };
  return { status: 'mismatch', message: `differs from the plan: ${(decision.changed ?? []).join(', ')}` };
}
