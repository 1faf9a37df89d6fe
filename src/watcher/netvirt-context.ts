/**
 * What the netvirt reconcilers share: the ODL cache and writer, settings in the shapes the
 * netvirt module wants, grace clocks and node subnets.
 */
import type { V1Pod } from '@kubernetes/client-node';
import {
  markerOwnership,
  ModelValidationError,
  placePod,
  vpnInstanceOwnership,
  type OwnerContext,
  type PodContext,
  type PodPlacement,
  type TranslateSettings,
} from '../netvirt/index.js';
import type { BackendContext } from './backend.js';
import type { GracePeriods } from './grace-period.js';
import type { NodeSubnets } from './node-subnets.js';
import type { ObjectWriter } from './object-writer.js';
import type { OdlEntries, OdlState } from './odl-state.js';

export interface NetvirtContext extends BackendContext {
  state: OdlState;
  writer: ObjectWriter<OdlEntries>;
  owner: OwnerContext;
  translate: TranslateSettings;
  subnets: NodeSubnets;
  grace: GracePeriods;
  /** namespace → RD handed out but not yet visible in the ODL cache (allocation is synchronous). */
  rdReservations: Map<string, string>;
  /** Retires and attaches in flight, per instance (created on first use; see `instanceGate`). */
  instanceGate?: InstanceGate;
}

export type InstanceKind = 'elanInstance' | 'vpnInstance';

/**
 * Keeps an instance's retire and the pod writes that attach interfaces to it apart. Both
 * decide from caches and then await ODL; without this, a pod could POST its elan- or
 * vpn-interface while a retire that saw no referrers awaits its re-read, and the DELETE that
 * follows would leave the interface pointing at nothing. JS runs one reconcile step at a time,
 * so each check-and-mark below is atomic as long as it is not split by an await.
 */
export class InstanceGate {
  private readonly retiring = new Set<string>();
  private readonly attaching = new Map<string, number>();

  isRetiring(kind: InstanceKind, name: string): boolean {
    return this.retiring.has(`${kind}/${name}`);
  }

  attachingTo(kind: InstanceKind, name: string): number {
    return this.attaching.get(`${kind}/${name}`) ?? 0;
  }

  /** Marks the instance as retiring; false (nothing marked) while a pod is attaching to it. */
  beginRetire(kind: InstanceKind, name: string): boolean {
    const key = `${kind}/${name}`;
    if ((this.attaching.get(key) ?? 0) > 0 || this.retiring.has(key)) return false;
    this.retiring.add(key);
    return true;
  }

  endRetire(kind: InstanceKind, name: string): void {
    this.retiring.delete(`${kind}/${name}`);
  }

  /** Counts an attach in flight; the returned release (idempotent) ends it. */
  beginAttach(kind: InstanceKind, name: string): () => void {
    const key = `${kind}/${name}`;
    this.attaching.set(key, (this.attaching.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.attaching.get(key) ?? 1) - 1;
      if (left > 0) this.attaching.set(key, left);
      else this.attaching.delete(key);
    };
  }
}

export function instanceGate(c: NetvirtContext): InstanceGate {
  c.instanceGate ??= new InstanceGate();
  return c.instanceGate;
}

/** Whether the cached ELAN instance `name` exists and is this cluster's. */
export function elanInstanceOurs(c: NetvirtContext, name: string): boolean {
  const elan = c.state.get('elanInstance', name);
  return elan !== undefined && markerOwnership(elan.description, 'node-namespace', c.owner).owner === 'ours';
}

/** Whether the cached VPN instance `name` exists and is this cluster's. */
export function vpnInstanceOurs(c: NetvirtContext, name: string): boolean {
  const vpn = c.state.get('vpnInstance', name);
  return vpn !== undefined && vpnInstanceOwnership(vpn, c.owner).owner === 'ours';
}

/** Whether interfaces may attach to ELAN instance `name`: ours, and not being retired. */
export function elanInstanceReady(c: NetvirtContext, name: string): boolean {
  return elanInstanceOurs(c, name) && !instanceGate(c).isRetiring('elanInstance', name);
}

/** Whether interfaces may attach to VPN instance `name`: ours, and not being retired. */
export function vpnInstanceReady(c: NetvirtContext, name: string): boolean {
  return vpnInstanceOurs(c, name) && !instanceGate(c).isRetiring('vpnInstance', name);
}

/**
 * Starts an attach to an instance if it is ready, in the same synchronous step as the check,
 * so a retire cannot begin in between: the caller must call the release once its write is
 * done (finally). Undefined: not ready, nothing started.
 */
export function beginAttach(c: NetvirtContext, kind: InstanceKind, name: string): (() => void) | undefined {
  const ready = kind === 'elanInstance' ? elanInstanceReady(c, name) : vpnInstanceReady(c, name);
  return ready ? instanceGate(c).beginAttach(kind, name) : undefined;
}

/** What a pod's translation depends on, from the cluster view and the node subnets. */
export function podContext(c: NetvirtContext, pod: V1Pod): PodContext {
  const ctx: PodContext = {};
  const nodeName = pod.spec?.nodeName;
  const node = nodeName ? c.view.node(nodeName) : undefined;
  const namespace = pod.metadata?.namespace ? c.view.namespace(pod.metadata.namespace) : undefined;
  if (node) {
    ctx.node = node;
    const subnet = c.subnets.subnetFor(node);
    if (subnet !== undefined) ctx.nodeSubnet = subnet;
  }
  if (namespace) ctx.namespace = namespace;
  return ctx;
}

/**
 * Where a pod of the view attaches. A pod whose values do not validate is deferred, as its
 * own reconcile defers it: whatever exists for it (its namespace's instances included) is kept.
 */
export function placeInView(c: NetvirtContext, pod: V1Pod): PodPlacement {
  try {
    return placePod(pod, podContext(c, pod));
  } catch (err) {
    if (!(err instanceof ModelValidationError)) throw err;
    const namespace = pod.metadata?.namespace;
    return {
      state: 'deferred',
      deferral: { code: 'invalid-object', message: err.message },
      ...(namespace ? { namespace } : {}),
    };
  }
}
