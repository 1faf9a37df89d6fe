/**
 * What each coe-northbound key makes right (see keys.ts); `node/<uid>` is reconcile-node.ts,
 * shared with the netvirt backend. Level-triggered: every reconcile reads the cluster view and
 * the ODL cache and converges; running it twice writes nothing the second time.
 */
import type { CoeEndpoints, CoeService, OwnerContext, TranslateSettings } from '../../netvirt/index.js';
import type { ReconcileOutcome, WriteGuard } from '../backend.js';
import type { InvolvedObject } from '../events.js';
import type { NodeSubnets } from '../node-subnets.js';
import type { ObjectWriter } from '../object-writer.js';
import type { NodeEntryContext } from '../reconcile-node.js';
import { reportCollision, reportUntranslatable } from '../reports.js';
import { podKey, serviceKey } from './keys.js';
import type { CoeEntries, CoeOdlCache } from './odl-cache.js';
import type { ServiceSlices } from './service-slices.js';
import {
  translateCoeEndpoints,
  translateCoePod,
  translateCoeService,
  type PodTranslation,
} from './translate.js';

export interface CoeContext extends NodeEntryContext {
  cache: CoeOdlCache;
  writer: ObjectWriter<CoeEntries>;
  owner: OwnerContext;
  /** For `translateNode` (k8s-node entries are built as by the netvirt backend). */
  translate: TranslateSettings;
  subnets: NodeSubnets;
  slices: ServiceSlices;
}

const SYNCED: ReconcileOutcome = { result: 'synced' };
const DELETE = { deleteAllowed: true } as const;

/**
 * `pod/<ns>/<name>`: entries of earlier pods of this name go first (NetVirt derives the
 * interface name `<ns>:<pod>` from both, and a removal processed after the new pod's addition
 * would delete the new interface); then the pod's own entry is written, removed, or (no IP or
 * node yet) kept as it is.
 */
export async function reconcilePod(
  c: CoeContext,
  namespace: string,
  name: string,
  guard: WriteGuard,
): Promise<ReconcileOutcome> {
  const pod = c.view.pod(namespace, name);
  const current = pod?.metadata?.uid;
  let t: PodTranslation;
  if (!pod) {
    t = { state: 'absent', reason: 'pod is gone' };
  } else {
    const nodeName = pod.spec?.nodeName;
    try {
      t = translateCoePod(pod, nodeName ? c.view.node(nodeName) : undefined, c.settings.clusterName);
    } catch (err) {
      return reportUntranslatable(c, err, {
        kind: 'Pod',
        namespace,
        name,
        ...(current ? { uid: current } : {}),
      });
    }
  }
  const uids = new Set(c.cache.podsNamed(namespace, name));
  // The pod's own entry, even if it lacks the name or namespace it should carry.
  if (current !== undefined && c.cache.get('coePod', current)) uids.add(current);
  for (const uid of [...uids].sort()) {
    if (uid === current && t.state !== 'absent') continue;
    await c.writer.converge('coePod', uid, undefined, guard, DELETE);
  }
  if (t.state === 'unknown') return { result: 'deferred' };
  if (t.state === 'absent') return SYNCED;
  const result = await c.writer.converge('coePod', t.entry.uid, t.entry, guard);
  if (result.state === 'foreign')
    return reportCollision(c, 'coePod', t.entry.uid, result.reason, {
      kind: 'Pod',
      namespace,
      name,
      uid: t.entry.uid,
    });
  return SYNCED;
}

/**
 * `service/<ns>/<name>`: the services and endpoints entries of the Service (both under its
 * uid). Earlier Services of this name go first; an endpoints entry is deleted before its
 * services entry and created after it, because the services entry is what makes it ours.
 */
export async function reconcileService(
  c: CoeContext,
  namespace: string,
  name: string,
  guard: WriteGuard,
): Promise<ReconcileOutcome> {
  const service = c.view.service(namespace, name);
  const current = service?.metadata?.uid;
  const involved: InvolvedObject = {
    kind: 'Service',
    namespace,
    name,
    ...(current ? { uid: current } : {}),
  };
  let desired: { service: CoeService; endpoints: CoeEndpoints } | undefined;
  if (service) {
    try {
      desired = {
        service: translateCoeService(service, c.settings.clusterName),
        endpoints: translateCoeEndpoints(service, c.slices.slicesOf(namespace, name)),
      };
    } catch (err) {
      return reportUntranslatable(c, err, involved);
    }
  }
  const uids = new Set(c.cache.servicesNamed(namespace, name));
  if (current !== undefined && c.cache.get('coeService', current)) uids.add(current);
  for (const uid of [...uids].sort()) {
    if (uid === current && desired) continue;
    await removeService(c, uid, guard);
  }
  if (!desired) return SYNCED;
  const uid = desired.service.uid;
  const s = await c.writer.converge('coeService', uid, desired.service, guard);
  if (s.state === 'foreign') return reportCollision(c, 'coeService', uid, s.reason, involved);
  const e = await c.writer.converge('coeEndpoints', uid, desired.endpoints, guard);
  if (e.state === 'foreign') return reportCollision(c, 'coeEndpoints', uid, e.reason, involved);
  return SYNCED;
}

async function removeService(c: CoeContext, uid: string, guard: WriteGuard): Promise<void> {
  // Endpoints first: they are owned through the services entry.
  await c.writer.converge('coeEndpoints', uid, undefined, guard, DELETE);
  await c.writer.converge('coeService', uid, undefined, guard, DELETE);
}

/**
 * `pod-uid/<uid>`: a pods entry of this cluster without the name or namespace that would tie
 * it to a pod key. If a pod with that uid exists, its own key rewrites the entry (it finds it
 * by uid); otherwise the entry is garbage.
 */
export async function reconcilePodUid(
  c: CoeContext,
  uid: string,
  guard: WriteGuard,
): Promise<ReconcileOutcome> {
  if (!c.cache.get('coePod', uid)) return SYNCED;
  const pod = c.view.pods.list().find((p) => p.metadata?.uid === uid);
  if (pod?.metadata?.namespace && pod.metadata.name) {
    c.enqueue(podKey(pod.metadata.namespace, pod.metadata.name));
    return SYNCED;
  }
  await c.writer.converge('coePod', uid, undefined, guard, DELETE);
  return SYNCED;
}

/** `service-uid/<uid>`: as `pod-uid`, for a services entry (and its endpoints entry). */
export async function reconcileServiceUid(
  c: CoeContext,
  uid: string,
  guard: WriteGuard,
): Promise<ReconcileOutcome> {
  if (!c.cache.get('coeService', uid)) return SYNCED;
  const service = c.view.services?.list().find((s) => s.metadata?.uid === uid);
  if (service?.metadata?.namespace && service.metadata.name) {
    c.enqueue(serviceKey(service.metadata.namespace, service.metadata.name));
    return SYNCED;
  }
  await removeService(c, uid, guard);
  return SYNCED;
}
