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
}

/** Whether the cached ELAN instance `name` exists and is this cluster's. */
export function elanInstanceReady(c: NetvirtContext, name: string): boolean {
  const elan = c.state.get('elanInstance', name);
  return elan !== undefined && markerOwnership(elan.description, 'node-namespace', c.owner).owner === 'ours';
}

/** Whether the cached VPN instance `name` exists and is this cluster's. */
export function vpnInstanceReady(c: NetvirtContext, name: string): boolean {
  const vpn = c.state.get('vpnInstance', name);
  return vpn !== undefined && vpnInstanceOwnership(vpn, c.owner).owner === 'ours';
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
