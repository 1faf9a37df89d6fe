/**
 * `pod/<ns>/<name>`: the pod's ietf-interface, elan-interface and vpn-interface.
 *
 * Order is part of correctness, expressed as preconditions that requeue (never sleeps):
 * - create: ietf-interface first (the others' `name` refers to it, and it carries the marker
 *   that makes the vpn-interface ours); the elan-interface once its ELAN instance exists; the
 *   vpn-interface once its VPN instance exists. A missing instance enqueues its key and the
 *   pod waits; the instance's reconcile enqueues its pods once it is created.
 * - delete: vpn-interface, elan-interface, then ietf-interface (its ownership lasts to the end).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { interfaceName, ModelValidationError, translatePod, type PodTranslation } from '../netvirt/index.js';
import type { ReconcileOutcome, WriteGuard } from './backend.js';
import type { InvolvedObject } from './events.js';
import {
  beginAttach,
  elanInstanceOurs,
  podContext,
  vpnInstanceOurs,
  type NetvirtContext,
} from './netvirt-context.js';
import { elanKey, vpnKey } from './netvirt-keys.js';
import { reportCollision } from './reports.js';

function translate(c: NetvirtContext, pod: V1Pod): PodTranslation {
  try {
    return translatePod(pod, podContext(c, pod), c.translate);
  } catch (err) {
    if (!(err instanceof ModelValidationError)) throw err;
    return { state: 'deferred', deferral: { code: 'invalid-object', message: err.message } };
  }
}

export async function reconcilePod(
  c: NetvirtContext,
  namespace: string,
  name: string,
  guard: WriteGuard,
): Promise<ReconcileOutcome> {
  const pod = c.view.pod(namespace, name);
  const ifName = interfaceName(namespace, name);
  const t: PodTranslation = pod ? translate(c, pod) : { state: 'off-network', reason: 'pod deleted' };

  if (t.state === 'deferred') {
    // Desired state unknown (node or namespace not known yet): keep whatever exists. The
    // node/namespace event that resolves it enqueues this pod again.
    c.logger.debug('pod translation deferred', { pod: `${namespace}/${name}`, ...t.deferral });
    return { result: 'deferred' };
  }

  if (t.state === 'off-network') {
    // Dependants first; the ietf-interface, which makes the vpn-interface ours, last.
    await c.writer.converge('vpnInterface', ifName, undefined, guard, { deleteAllowed: true });
    await c.writer.converge('elanInterface', ifName, undefined, guard, { deleteAllowed: true });
    await c.writer.converge('interface', ifName, undefined, guard, { deleteAllowed: true });
    return { result: 'synced' };
  }

  const n = t.network;
  const involved: InvolvedObject = { kind: 'Pod', name, namespace, uid: n.podUid };
  const collision = (kind: 'interface' | 'elanInterface' | 'vpnInterface', reason: string) =>
    reportCollision(c, kind, ifName, reason, involved);

  const iface = await c.writer.converge('interface', ifName, n.interface, guard);
  if (iface.state === 'foreign') return collision('interface', iface.reason);

  // An instance that is missing is being created (its key is enqueued); one being retired is
  // gone soon and then created again (this pod's retry enqueues it); one held by a foreign
  // object is reported by its own key and will not change soon: wait slowly for that.
  // The attach is counted from the readiness check until the write returns, so the instance's
  // retire, which reads only caches, cannot delete it under an interface being written.
  let waiting = false;
  let blocked = false;
  const elanAttach = beginAttach(c, 'elanInstance', n.elanInstanceName);
  if (elanAttach) {
    try {
      const elanIf = await c.writer.converge('elanInterface', ifName, n.elanInterface, guard);
      if (elanIf.state === 'foreign') return collision('elanInterface', elanIf.reason);
    } finally {
      elanAttach();
    }
  } else {
    if (elanInstanceOurs(c, n.elanInstanceName)) {
      // Being retired: look again once that is over.
    } else if (c.state.get('elanInstance', n.elanInstanceName)) blocked = true;
    else c.enqueue(elanKey(n.elanInstanceName));
    c.metrics.objectState('elanInterface', ifName, 'pending');
    waiting = true;
  }

  if (n.vpnInterface) {
    const vpnAttach = beginAttach(c, 'vpnInstance', n.vpnName);
    if (vpnAttach) {
      try {
        const vpnIf = await c.writer.converge('vpnInterface', ifName, n.vpnInterface, guard);
        if (vpnIf.state === 'foreign') return collision('vpnInterface', vpnIf.reason);
      } finally {
        vpnAttach();
      }
    } else {
      if (vpnInstanceOurs(c, n.vpnName)) {
        // Being retired: look again once that is over.
      } else if (c.state.get('vpnInstance', n.vpnName)) blocked = true;
      else c.enqueue(vpnKey(n.vpnName));
      c.metrics.objectState('vpnInterface', ifName, 'pending');
      waiting = true;
    }
  } else if (n.vpnInterfaceDeferred) {
    // The address is known but not its routing (node subnet unknown, address outside it):
    // keep an existing vpn-interface; the node's reconcile enqueues its pods when that changes.
    c.logger.debug('vpn-interface deferred', { pod: `${namespace}/${name}`, ...n.vpnInterfaceDeferred });
  } else {
    // No address yet (or any more): no vpn-interface.
    await c.writer.converge('vpnInterface', ifName, undefined, guard, { deleteAllowed: true });
  }
  if (blocked) return { result: 'foreign', retryAfterMs: c.settings.slowRetryMs };
  return waiting ? { result: 'waiting', retryAfterMs: c.settings.waitRetryMs } : { result: 'synced' };
}
