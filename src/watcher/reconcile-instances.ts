/**
 * `elan/<ip>:<ns>` and `vpn/<name>`: the instances pods attach to.
 *
 * Created on first need (a pod on the pod network in that namespace, on that node for an
 * ELAN), kept while a pod they may serve cannot be placed yet; once unneeded, deleted after the
 * grace period, and only when no interface in ODL still refers to them (the pods' reconciles
 * delete those first). Need and keep follow the rules `translateCluster` uses
 * (`elanInstanceNeed`, `vpnInstanceNeed` in src/netvirt/translate.ts), applied to one key.
 * After a create, the pods that were waiting for the instance are enqueued.
 */
import type { V1Namespace, V1Pod } from '@kubernetes/client-node';
import {
  allocateRouteDistinguishers,
  elanInstanceNeed,
  instanceUse,
  recoverRouteDistinguishers,
  translateElanInstance,
  translateVpnInstance,
  vpnInstanceNeed,
  vpnName,
  vpnRouteDistinguisher,
  type InstanceNeed,
  type InstanceUse,
} from '../netvirt/index.js';
import type { ReconcileOutcome, WriteGuard } from './backend.js';
import { instanceGate, placeInView, type InstanceKind, type NetvirtContext } from './netvirt-context.js';
import { podKey, podKeyOfInterface } from './netvirt-keys.js';
import { reportCollision } from './reports.js';

const keyOf = (pod: V1Pod) => podKey(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '');

/** How soon to look again at a retire held back by an attach in flight (one write). */
const ATTACH_RETRY_MS = 100;

/**
 * Deletes an unneeded instance once its grace period is over and nothing refers to it.
 * `referrers` are interface names in ODL that still use it; `recheck` recomputes them from the
 * caches, undefined when the instance is needed again.
 *
 * From its first await to its end the instance is marked as retiring, so no pod starts an
 * interface on it meanwhile (its readiness check says no and it waits), and it does not start
 * while a pod's interface write is in flight (that interface is in no cache yet).
 */
async function retire(
  c: NetvirtContext,
  key: string,
  kind: InstanceKind,
  name: string,
  referrers: string[],
  recheck: () => string[] | undefined,
  guard: WriteGuard,
): Promise<ReconcileOutcome> {
  const decision = c.writer.decide(kind, name, undefined);
  if (decision.action !== 'delete-candidate') {
    // Absent, or not ours: nothing to retire.
    c.grace.needed(key);
    c.metrics.objectState(kind, name, 'undesired');
    return { result: 'synced' };
  }
  const remaining = c.grace.remaining(key);
  if (remaining > 0) return { result: 'grace', retryAfterMs: remaining };
  const referrerKind = kind === 'elanInstance' ? 'elanInterface' : 'vpnInterface';
  const ours = referrers.filter(
    (ifName) => c.writer.decide(referrerKind, ifName, undefined).action === 'delete-candidate',
  );
  if (ours.length > 0) {
    // Their pods are gone too (or going): make sure they are reconciled, then look again.
    for (const ifName of ours) {
      const pk = podKeyOfInterface(ifName);
      if (pk) c.enqueue(pk);
    }
    c.logger.debug('instance unneeded but still referred to; waiting', {
      kind,
      name,
      referrers: ours.length,
    });
    return { result: 'waiting', retryAfterMs: c.settings.waitRetryMs };
  }
  if (referrers.length > 0) {
    // Someone else's interfaces use it: deleting it would break them. Keep it, say so, look again later.
    c.logger.warn('unneeded instance kept: interfaces odlcoe does not own refer to it', {
      kind,
      name,
      referrers: referrers.slice(0, 5),
    });
    return { result: 'foreign', retryAfterMs: c.settings.slowRetryMs };
  }
  // Mark and check in one synchronous step: no await between here and the attach counts.
  const gate = instanceGate(c);
  if (!gate.beginRetire(kind, name)) {
    c.logger.debug('instance retire waits for an interface being attached to it', { kind, name });
    return { result: 'waiting', retryAfterMs: Math.min(ATTACH_RETRY_MS, c.settings.waitRetryMs) };
  }
  try {
    // Re-read the instance, then look again at need and referrers: both may have changed while
    // ODL answered (a pod scheduled, an interface that landed just before the mark).
    await c.state.refresh(kind, name);
    const now = recheck();
    if (now === undefined || now.length > 0) {
      c.logger.debug('instance no longer retirable after re-read; looking again', {
        kind,
        name,
        needed: now === undefined,
      });
      return { result: 'waiting', retryAfterMs: Math.min(ATTACH_RETRY_MS, c.settings.waitRetryMs) };
    }
    await c.writer.converge(kind, name, undefined, guard, { deleteAllowed: true });
    c.grace.needed(key);
    return { result: 'synced' };
  } finally {
    gate.endRetire(kind, name);
  }
}

// ---------------------------------------------------------------------------------------------
// ELAN: one per node × namespace

/** The pods of a namespace with what each means to its instances (the rules of translate.ts). */
function usesIn(c: NetvirtContext, ns: string): { pod: V1Pod; use: InstanceUse }[] {
  return c.view.podsInNamespace(ns).map((pod) => ({ pod, use: instanceUse(placeInView(c, pod)) }));
}

/** The elan-interfaces in the ODL cache that use ELAN `elanName`. */
function elanReferrers(c: NetvirtContext, elanName: string): string[] {
  return [...c.state.values('elanInterface')]
    .filter((e) => e.elanInstanceName === elanName)
    .map((e) => e.name);
}

export async function reconcileElan(
  c: NetvirtContext,
  key: string,
  elanName: string,
  ns: string,
  guard: WriteGuard,
): Promise<ReconcileOutcome> {
  const pods = usesIn(c, ns);
  const needOf = (uses: InstanceUse[]) => elanInstanceNeed(elanName, ns, uses);
  const need = needOf(pods.map((p) => p.use));
  if (need === 'keep') {
    c.grace.needed(key);
    return { result: 'deferred' };
  }
  if (need === 'unneeded') {
    const recheck = () =>
      needOf(usesIn(c, ns).map((p) => p.use)) === 'unneeded' ? elanReferrers(c, elanName) : undefined;
    return retire(c, key, 'elanInstance', elanName, elanReferrers(c, elanName), recheck, guard);
  }
  c.grace.needed(key);
  const here = pods.filter((p) => p.use.use === 'attached' && p.use.elanInstanceName === elanName);
  const first = here[0]?.use;
  const node = first?.use === 'attached' ? c.view.node(first.nodeName) : undefined;
  const namespace = c.view.namespace(ns);
  // Placed pods were placed against these very caches: both are known.
  if (!node || !namespace)
    throw new Error(`ELAN ${elanName} is needed, but its node or namespace is not cached`);
  const desired = translateElanInstance(node, namespace, c.translate);
  if (desired.name !== elanName) throw new Error(`ELAN key ${key} translates to ${desired.name}`);
  const result = await c.writer.converge('elanInstance', elanName, desired, guard);
  if (result.state === 'foreign')
    return reportCollision(c, 'elanInstance', elanName, result.reason, {
      kind: 'Namespace',
      name: ns,
      uid: namespace.metadata?.uid,
    });
  if (result.state === 'written') for (const { pod } of here) c.enqueue(keyOf(pod));
  return { result: 'synced' };
}

// ---------------------------------------------------------------------------------------------
// VPN: one per namespace

/**
 * The namespace whose VPN is `name`. Known namespaces come first: a shortened name (40
 * characters) is its own `vpnName`, so trying `name` first would take the VPN of a long
 * namespace for a namespace of that literal name, which has no pods, and retire it. `name`
 * itself is the fallback for a namespace that is gone.
 */
function namespaceOfVpn(c: NetvirtContext, name: string): string | undefined {
  const candidates = [
    ...c.view.namespacesWithPods(),
    ...c.view.namespaces.list().map((n) => n.metadata?.name ?? ''),
    name,
  ];
  return candidates.find((ns) => ns !== '' && vpnName(ns) === name);
}

/**
 * The namespace's RD: the one its VPN has in ODL, else one reserved earlier in this term, else
 * the lowest free one. Synchronous, so two VPN reconciles running at once cannot pick the same.
 */
function routeDistinguisher(c: NetvirtContext, ns: string): { rd: string; reassigned: boolean } {
  const existing = recoverRouteDistinguishers(c.state.values('vpnInstance'), [ns], c.owner);
  // RDs of VPNs that are not ours are taken too: ODL keys VPN state by RD, whoever wrote it.
  const known = new Set(existing.values());
  for (const vpn of c.state.values('vpnInstance')) {
    const rd = vpnRouteDistinguisher(vpn);
    if (rd !== undefined && !known.has(rd)) existing.set(`foreign-vpn:${vpn.name}`, rd);
  }
  for (const [reservedNs, rd] of c.rdReservations)
    if (!existing.has(reservedNs)) existing.set(reservedNs, rd);
  const { byNamespace, reassigned } = allocateRouteDistinguishers([ns], existing, {
    administrator: c.settings.rdAdministrator,
  });
  const rd = byNamespace.get(ns);
  if (rd === undefined) throw new Error(`no route distinguisher allocated for namespace ${ns}`);
  c.rdReservations.set(ns, rd);
  return { rd, reassigned: reassigned.includes(ns) };
}

/** The vpn-interfaces in the ODL cache that use VPN `name`. */
function vpnReferrers(c: NetvirtContext, name: string): string[] {
  return [...c.state.values('vpnInterface')]
    .filter((v) => v.vpnInstanceNames.some((n) => n.vpnName === name))
    .map((v) => v.name);
}

/** VPN `name`'s namespace, its pods that use the pod network, and whether the VPN is needed. */
function vpnNeedOf(
  c: NetvirtContext,
  name: string,
): { ns?: string; pods: { pod: V1Pod; use: InstanceUse }[]; namespace?: V1Namespace; need: InstanceNeed } {
  const ns = namespaceOfVpn(c, name);
  const pods = ns === undefined ? [] : usesIn(c, ns).filter((p) => p.use.use !== 'none');
  const namespace = ns === undefined ? undefined : c.view.namespace(ns);
  const need: InstanceNeed =
    ns === undefined
      ? 'unneeded'
      : vpnInstanceNeed(
          ns,
          namespace !== undefined,
          pods.map((p) => p.use),
        );
  return { ns, pods, namespace, need };
}

export async function reconcileVpn(
  c: NetvirtContext,
  key: string,
  name: string,
  guard: WriteGuard,
): Promise<ReconcileOutcome> {
  const { ns, pods, namespace, need } = vpnNeedOf(c, name);
  if (need === 'keep') {
    // Pods of a namespace not known yet (cache order): keep its VPN.
    c.grace.needed(key);
    return { result: 'deferred' };
  }
  if (need === 'unneeded' || !namespace || ns === undefined) {
    const recheck = () => {
      const now = vpnNeedOf(c, name);
      const unneeded = now.need === 'unneeded' || !now.namespace || now.ns === undefined;
      return unneeded ? vpnReferrers(c, name) : undefined;
    };
    const outcome = await retire(c, key, 'vpnInstance', name, vpnReferrers(c, name), recheck, guard);
    if (ns !== undefined && outcome.result === 'synced' && !c.state.get('vpnInstance', name))
      c.rdReservations.delete(ns);
    return outcome;
  }
  c.grace.needed(key);
  const { rd, reassigned } = routeDistinguisher(c, ns);
  if (reassigned)
    c.logger.warn('VPN route distinguisher is shared with another namespace; giving this one a new RD', {
      namespace: ns,
      vpn: name,
      rd,
    });
  const desired = translateVpnInstance(namespace, rd, c.translate);
  const result = await c.writer.converge('vpnInstance', name, desired, guard);
  if (result.state === 'foreign')
    return reportCollision(c, 'vpnInstance', name, result.reason, {
      kind: 'Namespace',
      name: ns,
      uid: namespace.metadata?.uid,
    });
  if (result.state === 'written') for (const { pod } of pods) c.enqueue(keyOf(pod));
  return { result: 'synced' };
}
