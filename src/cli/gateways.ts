/**
 * The node gateways as odlcoectl checks them (with `services.cidrs` set): per node, the four
 * entries the watcher's plan wants (`odlcoe-gw.<node>`: ietf-interface, elan-instance,
 * elan-interface, vpn-interface in the gateway VPN) against what ODL holds, and the Service
 * routes on its vpn-interface. `status` shows every gateway; `trace svc/<ns>/<name>` follows one
 * Service's routes through them. Pure, over one snapshot of both sides.
 */
import type { V1Node } from '@kubernetes/client-node';
import { gatewayAddress, gatewayName } from '../netvirt/gateway.js';
import type { KindContext } from '../netvirt/kind.js';
import { gatewayKey } from '../netvirt/keys.js';
import { planGateway } from '../netvirt/plan-gateway.js';
import type { NetvirtPlanInputs } from '../netvirt/plan-netvirt.js';
import type { VpnInterface } from '../netvirt/vpn.js';
import type { OdlView } from '../odl/entry-store.js';

export type GatewayEntryStatus = 'ok' | 'missing' | 'differs' | 'foreign' | 'unparsed';

export interface GatewayEntryCheck {
  /** The model's list name: `ietf-interface`, `elan-instance`, ... */
  kind: string;
  name: string;
  status: GatewayEntryStatus;
  /** What differs or why it is foreign. */
  detail?: string;
}

export interface GatewayCheck {
  node: string;
  gateway: string;
  /** The gateway's address (the subnet's second); null when the node has no usable subnet. */
  address: string | null;
  /** The four entries; empty when the gateway cannot be planned (see problem). */
  entries: GatewayEntryCheck[];
  /** Service routes: as many as the plan wants, and as many as ODL's vpn-interface holds. */
  routes: { desired: number; inOdl: number };
  /** Why the gateway cannot be planned (no subnet yet, a subnet too small, no InternalIP). */
  problem: string | null;
  ok: boolean;
}

export function checkGateway(
  node: V1Node,
  inputs: NetvirtPlanInputs,
  odl: OdlView,
  ctx: KindContext,
): GatewayCheck {
  const nodeName = node.metadata?.name ?? '';
  const name = gatewayName(nodeName);
  const plan = planGateway(gatewayKey(nodeName), nodeName, inputs);
  const subnet = inputs.nodeSubnet(node);
  let address: string | null = null;
  try {
    address = subnet === undefined ? null : gatewayAddress(subnet);
  } catch {
    address = null;
  }
  const fact = plan.facts[0];
  const problem =
    fact?.fact === 'untranslatable'
      ? fact.message
      : fact?.fact === 'deferred'
        ? fact.deferral.message
        : plan.entries.some((e) => e.want !== 'present')
          ? (plan.entries.find((e) => e.want !== 'present')?.why ?? 'not planned')
          : null;
  const entries: GatewayEntryCheck[] = [];
  let desiredRoutes = 0;
  if (problem === null)
    for (const e of plan.entries) {
      if (e.want !== 'present') continue;
      const kind = odl.table.label(e.kind);
      if (e.kind === 'vpnInterface') desiredRoutes = extraRoutes(e.desired as VpnInterface);
      if (odl.isUnparsed(e.kind, e.name)) {
        entries.push({ kind, name: e.name, status: 'unparsed' });
        continue;
      }
      const d = odl.table.spec(e.kind).diff(e.desired, odl.get(e.kind, e.name), ctx, { name: e.name });
      switch (d.action) {
        case 'none':
          entries.push({ kind, name: e.name, status: 'ok' });
          break;
        case 'create':
          entries.push({ kind, name: e.name, status: 'missing' });
          break;
        case 'foreign':
          entries.push({ kind, name: e.name, status: 'foreign', detail: d.reason });
          break;
        case 'update':
        case 'recreate':
          entries.push({ kind, name: e.name, status: 'differs', detail: d.changed.join(', ') });
          break;
        case 'delete-candidate':
          break;
      }
    }
  const inOdl = extraRoutes(odl.get('vpnInterface', name) as VpnInterface | undefined);
  return {
    node: nodeName,
    gateway: name,
    address,
    entries,
    routes: { desired: desiredRoutes, inOdl },
    problem,
    ok: problem === null && entries.every((e) => e.status === 'ok'),
  };
}

const extraRoutes = (v: VpnInterface | undefined) =>
  (v?.adjacencies ?? []).filter((a) => a.adjacencyType !== 'primary-adjacency').length;

/** One line per gateway entry that is not as planned (`ietf-interface odlcoe-gw.a missing`). */
export function gatewayFindings(g: GatewayCheck): string[] {
  if (g.problem !== null) return [`gateway ${g.gateway}: ${g.problem}`];
  return g.entries
    .filter((e) => e.status !== 'ok')
    .map((e) => `${e.kind} ${e.name} ${e.status}${e.detail ? ` (${e.detail})` : ''}`);
}
