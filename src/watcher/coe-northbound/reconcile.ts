/**
 * What each coe-northbound key makes right (see keys.ts). Level-triggered: every reconcile
 * reads the cluster view and the ODL cache and converges; running it twice writes nothing the
 * second time.
 */
import { errorMessage } from '../../common/log.js';
import {
  ModelValidationError,
  translateNode,
  type CoeEndpoints,
  type CoeService,
  type OwnerContext,
  type TranslateSettings,
} from '../../netvirt/index.js';
import type { BackendContext, ReconcileOutcome, WriteGuard } from '../backend.js';
import type { InvolvedObject } from '../events.js';
import { nodeKey, podKey, serviceKey } from './keys.js';
import type { CoeKind, CoeOdlCache } from './odl-cache.js';
import type { CoeNodeSubnets } from './node-subnets.js';
import type { ServiceView } from './service-view.js';
import {
  translateCoeEndpoints,
  translateCoePod,
  translateCoeService,
  type PodTranslation,
} from './translate.js';
import type { CoeWriter } from './writer.js';

export interface CoeContext extends BackendContext {
  cache: CoeOdlCache;
  writer: CoeWriter;
  owner: OwnerContext;
  /** For `translateNode` (k8s-node entries are built as by the netvirt backend). */
  translate: TranslateSettings;
  subnets: CoeNodeSubnets;
  services: ServiceView;
}

const SYNCED: ReconcileOutcome = { result: 'synced' };

/**
 * A uid this cluster needs is held by an entry it does not own: warn, count, and (for pods and
 * nodes) record a Warning Event. The entry is never touched; the key is retried slowly.
 */
function reportCollision(
  c: CoeContext,
  kind: CoeKind,
  uid: string,
  reason: string,
  involved?: InvolvedObject,
): ReconcileOutcome {
  c.metrics.collisions.inc({ kind });
  c.logger.warn('ODL COE entry with a uid odlcoe needs is not owned by this cluster; leaving it alone', {
    kind,
    uid,
    reason,
  });
  if (involved)
    c.events.warning(
      involved,
      'ForeignOdlObject',
      `ODL ${kind} ${uid} exists but is not owned by odlcoe cluster ${c.settings.clusterName} (${reason}); ` +
        'it is left alone: remove it in ODL, odlcoe retries periodically',
    );
  return { result: 'foreign', retryAfterMs: c.settings.slowRetryMs };
}

/** An object odlcoe cannot describe in the model: reported, ODL left as it is until the object changes. */
function reportUntranslatable(
  c: CoeContext,
  what: string,
  err: unknown,
  involved?: InvolvedObject,
): ReconcileOutcome {
  if (!(err instanceof ModelValidationError)) throw err;
  c.logger.warn('cannot translate Kubernetes object into the COE model; ODL left as it is', {
    object: what,
    error: errorMessage(err),
  });
  if (involved) c.events.warning(involved, 'InvalidForOdl', `cannot be written to ODL: ${errorMessage(err)}`);
  return { result: 'deferred' };
}

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
      return reportUntranslatable(c, `pod ${namespace}/${name}`, err, {
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
    await c.writer.converge('coePod', uid, undefined, guard);
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
  const service = c.services.service(namespace, name);
  const current = service?.metadata?.uid;
  let desired: { service: CoeService; endpoints: CoeEndpoints } | undefined;
  if (service) {
    try {
      desired = {
        service: translateCoeService(service, c.settings.clusterName),
        endpoints: translateCoeEndpoints(service, c.services.slicesOf(namespace, name)),
      };
    } catch (err) {
      return reportUntranslatable(c, `service ${namespace}/${name}`, err);
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
  if (s.state === 'foreign') return reportCollision(c, 'coeService', uid, s.reason);
  const e = await c.writer.converge('coeEndpoints', uid, desired.endpoints, guard);
  if (e.state === 'foreign') return reportCollision(c, 'coeEndpoints', uid, e.reason);
  return SYNCED;
}

async function removeService(c: CoeContext, uid: string, guard: WriteGuard): Promise<void> {
  // Endpoints first: they are owned through the services entry.
  await c.writer.converge('coeEndpoints', uid, undefined, guard);
  await c.writer.converge('coeService', uid, undefined, guard);
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
  await c.writer.converge('coePod', uid, undefined, guard);
  return SYNCED;
}

/** `service-uid/<uid>`: as `pod-uid`, for a services entry (and its endpoints entry). */
export async function reconcileServiceUid(
  c: CoeContext,
  uid: string,
  guard: WriteGuard,
): Promise<ReconcileOutcome> {
  if (!c.cache.get('coeService', uid)) return SYNCED;
  const service = c.services.services.list().find((s) => s.metadata?.uid === uid);
  if (service?.metadata?.namespace && service.metadata.name) {
    c.enqueue(serviceKey(service.metadata.namespace, service.metadata.name));
    return SYNCED;
  }
  await removeService(c, uid, guard);
  return SYNCED;
}

/**
 * `node/<uid>`: the node's k8s-node entry (host name, internal and external IP, pod subnet),
 * exactly as the netvirt backend writes it: the node agent reads its subnet there.
 */
export async function reconcileNode(
  c: CoeContext,
  uid: string,
  guard: WriteGuard,
): Promise<ReconcileOutcome> {
  const node = c.view.nodeByUid(uid);
  if (!node) {
    const result = await c.writer.converge('k8sNode', uid, undefined, guard);
    if (result.state !== 'foreign' && c.subnets.release(uid)) {
      c.logger.info('node gone; its subnet is free again', { node: uid });
      // Nodes that found the pool used up may fit now.
      for (const other of c.view.nodes.list()) {
        const otherUid = other.metadata?.uid;
        if (otherUid && !c.subnets.allocated(otherUid)) c.enqueue(nodeKey(otherUid));
      }
    }
    c.metrics.nodeSubnet(uid, true);
    return SYNCED;
  }
  const name = node.metadata?.name ?? uid;
  const entry = c.subnets.entrySubnet(node);
  if (entry.kind === 'exhausted') {
    c.metrics.subnetExhausted.inc();
    c.metrics.nodeSubnet(uid, false);
    const cidr = c.settings.clusterCidr ?? '?';
    c.logger.error('no free pod subnet left for node: the cluster CIDR is used up', {
      node: name,
      clusterCidr: cidr,
      nodePrefixLength: c.settings.nodePrefixLength,
    });
    c.events.warning(
      { kind: 'Node', name, uid },
      'PodSubnetExhausted',
      `no free /${c.settings.nodePrefixLength ?? '?'} pod subnet left in cluster CIDR ${cidr}; pods on this node get no network until a node is removed or the CIDR is widened`,
    );
  } else {
    c.metrics.nodeSubnet(uid, true);
    if (entry.kind === 'none' && entry.problem)
      c.logger.debug('node has no usable pod subnet yet', { node: name, problem: entry.problem });
  }
  let desired;
  try {
    desired = translateNode(node, entry.kind === 'subnet' ? entry.cidr : undefined, c.translate);
  } catch (err) {
    return reportUntranslatable(c, `node ${name}`, err, { kind: 'Node', name, uid });
  }
  const result = await c.writer.converge('k8sNode', uid, desired, guard);
  if (result.state === 'foreign')
    return reportCollision(c, 'k8sNode', uid, result.reason, { kind: 'Node', name, uid });
  if (entry.kind === 'exhausted') return { result: 'exhausted', retryAfterMs: c.settings.slowRetryMs };
  return SYNCED;
}
