/**
 * What the netvirt reconcilers share: the ODL cache and writer, settings in the shapes the
 * netvirt module wants, grace clocks, node subnets, and collision reporting.
 */
import type { V1Pod } from '@kubernetes/client-node';
import {
  markerOwnership,
  podNetworkEligibility,
  vpnInstanceOwnership,
  type OwnerContext,
  type TranslateSettings,
} from '../netvirt/index.js';
import type { BackendContext } from './backend.js';
import type { InvolvedObject } from './events.js';
import type { GracePeriods } from './grace-period.js';
import type { NodeSubnets } from './node-subnets.js';
import type { ObjectWriter } from './object-writer.js';
import type { OdlKind, OdlState } from './odl-state.js';

export interface NetvirtContext extends BackendContext {
  state: OdlState;
  writer: ObjectWriter;
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

/** Pods of the view that are on the pod network. */
export function onNetwork(pods: Iterable<V1Pod>): V1Pod[] {
  return [...pods].filter((p) => podNetworkEligibility(p).onNetwork);
}

/**
 * A name odlcoe needs is held by an object it does not own: warn, count, and record a Warning
 * Event on the Kubernetes object that needs it. The object is never touched; the caller
 * retries the key slowly.
 */
export function reportCollision(
  c: NetvirtContext,
  kind: OdlKind,
  name: string,
  reason: string,
  involved: InvolvedObject,
): void {
  c.metrics.collisions.inc({ kind });
  c.logger.warn('ODL object with a name odlcoe needs is not owned by odlcoe; leaving it alone', {
    kind,
    name,
    reason,
    involved: `${involved.kind} ${involved.namespace ? `${involved.namespace}/` : ''}${involved.name}`,
  });
  c.events.warning(
    involved,
    'ForeignOdlObject',
    `ODL ${kind} ${name} exists but is not owned by odlcoe cluster ${c.settings.clusterName} (${reason}); ` +
      'it is left alone: remove or rename it in ODL, odlcoe retries periodically',
  );
}
