/**
 * The plans of the node gateways, the gateway VPN and the Services (gateway.ts has the design):
 *
 * - `gateway/<node>`: the node's gateway objects, its vpn-interface carrying every Service
 *   route (one extra-route adjacency per Service IP, next hop this gateway);
 * - `gateway-vpn`: the cluster's gateway VPN, one RD per node;
 * - `service/<ns>/<name>`: no entry of its own; a Service whose ClusterIP lies outside the
 *   service range is reported on the Service (and contributes no route to any gateway).
 *
 * Gateways and Service routes exist only when service ranges are configured
 * (`settings.serviceCidrs`); where the settings are not known (odlcoectl), what exists is kept.
 */
import type { V1Node, V1Service } from '@kubernetes/client-node';
import { ModelValidationError } from './errors.js';
import {
  gatewayName,
  GATEWAY_VPN,
  gatewayVpnRouteDistinguishers,
  serviceRoutes,
  translateGateway,
  translateGatewayVpn,
} from './gateway.js';
import { absent, keep, present, type KeyPlan } from './plan.js';
import type { TranslateSettings } from './translate-settings.js';

export interface GatewayPlanInputs {
  settings: TranslateSettings;
  node(name: string): V1Node | undefined;
  nodeSubnet(node: V1Node): string | undefined;
  /** Every node known (the gateway VPN carries one RD per node). */
  nodes?(): Iterable<V1Node>;
  /** Every Service known. */
  services?(): Iterable<V1Service>;
  service?(namespace: string, name: string): V1Service | undefined;
  /**
   * Every route the Services need (`allServiceRoutes`), as the caller keeps it between changes:
   * every gateway carries the same routes, so a Service change re-plans every gateway, and
   * recomputing them per gateway would cost nodes × Services per change.
   */
  serviceRoutes?(): readonly string[];
}

const GATEWAY_KINDS = ['interface', 'elanInstance', 'elanInterface', 'vpnInterface'] as const;

/** undefined: not known here (keep what exists); []: no Services routed (no gateways). */
const serviceCidrsOf = (inputs: GatewayPlanInputs) =>
  inputs.services ? inputs.settings.serviceCidrs : undefined;

/** Every route the Services need, sorted; a Service that cannot be routed adds none. */
export function allServiceRoutes(inputs: GatewayPlanInputs, cidrs: readonly string[]): string[] {
  const out = new Set<string>();
  for (const service of inputs.services?.() ?? []) {
    try {
      for (const r of serviceRoutes(service, cidrs)) out.add(r);
    } catch (err) {
      if (!(err instanceof ModelValidationError)) throw err;
    }
  }
  return [...out].sort();
}

export function planGateway(
  key: string,
  nodeName: string,
  inputs: GatewayPlanInputs,
  routes: () => readonly string[] = () =>
    inputs.serviceRoutes?.() ?? allServiceRoutes(inputs, serviceCidrsOf(inputs) ?? []),
): KeyPlan {
  const name = gatewayName(nodeName);
  const all = (want: 'absent' | 'keep', why: string): KeyPlan => ({
    key,
    entries: GATEWAY_KINDS.map((k) => (want === 'absent' ? absent(k, name, why) : keep(k, name, why))),
    facts: [],
  });
  const cidrs = serviceCidrsOf(inputs);
  if (cidrs === undefined) return all('keep', 'the service settings are not known here');
  if (cidrs.length === 0) return all('absent', 'no service range is configured (no node gateways)');
  const node = inputs.node(nodeName);
  if (!node) return all('absent', 'the node is gone');
  const uid = node.metadata?.uid;
  const involved = { kind: 'Node' as const, name: nodeName, ...(uid ? { uid } : {}) };
  const subnet = inputs.nodeSubnet(node);
  if (subnet === undefined)
    return {
      ...all('keep', `pod subnet of node ${nodeName} is not known yet`),
      facts: [
        {
          fact: 'deferred',
          deferral: {
            code: 'node-subnet-unknown',
            message: `pod subnet of node ${nodeName} is not known yet`,
          },
        },
      ],
    };
  try {
    const g = translateGateway(node, subnet, routes(), inputs.settings);
    return {
      key,
      involved,
      entries: [
        present('interface', name, g.interface),
        present('elanInstance', name, g.elanInstance),
        present('elanInterface', name, g.elanInterface),
        present('vpnInterface', name, g.vpnInterface),
      ],
      facts: [],
    };
  } catch (err) {
    if (!(err instanceof ModelValidationError)) throw err;
    return {
      ...all('keep', err.message),
      involved,
      facts: [{ fact: 'untranslatable', message: `node gateway: ${err.message}` }],
    };
  }
}

export function planGatewayVpn(key: string, inputs: GatewayPlanInputs): KeyPlan {
  const cidrs = serviceCidrsOf(inputs);
  if (cidrs === undefined)
    return {
      key,
      entries: [keep('vpnInstance', GATEWAY_VPN, 'the service settings are not known here')],
      facts: [],
    };
  const nodes = [...(inputs.nodes?.() ?? [])].length;
  if (cidrs.length === 0 || nodes === 0)
    return {
      key,
      grace: true,
      entries: [
        absent('vpnInstance', GATEWAY_VPN, cidrs.length === 0 ? 'no service range is configured' : 'no node'),
      ],
      facts: [],
    };
  const rds = gatewayVpnRouteDistinguishers(inputs.settings.rdAdministrator ?? '', nodes);
  return {
    key,
    grace: true,
    entries: [present('vpnInstance', GATEWAY_VPN, translateGatewayVpn(rds, inputs.settings))],
    facts: [],
  };
}

/** A Service's own key: nothing in ODL, a report when its addresses cannot be routed. */
export function planService(
  key: string,
  namespace: string,
  name: string,
  inputs: GatewayPlanInputs,
): KeyPlan {
  const cidrs = serviceCidrsOf(inputs);
  const service = inputs.service?.(namespace, name);
  if (!service || !cidrs || cidrs.length === 0) return { key, entries: [], facts: [] };
  try {
    serviceRoutes(service, cidrs);
    return { key, entries: [], facts: [] };
  } catch (err) {
    if (!(err instanceof ModelValidationError)) throw err;
    const uid = service.metadata?.uid;
    return {
      key,
      involved: { kind: 'Service', name, namespace, ...(uid ? { uid } : {}) },
      entries: [],
      facts: [{ fact: 'untranslatable', message: `${err.message}; the Service gets no route` }],
    };
  }
}
