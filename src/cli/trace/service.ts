/**
 * `odlcoectl trace svc/<namespace>/<name>`: why does this Service's IP not answer?
 *
 * A Service IP reaches a node through NetVirt as an extra route on every node gateway's
 * vpn-interface, next hop that gateway's address (docs/architecture.md, "Node gateways and
 * Services"); kube-proxy on the node does the rest. This follows the Service's IPs (ClusterIPs,
 * externalIPs, LoadBalancer ingress IPs) to those routes, per gateway: the gateway's entries,
 * whether ODL holds each route, and its next hop. Everything it names as missing is what the
 * watcher would write.
 */
import type { V1Service } from '@kubernetes/client-node';
import { errorMessage } from '../../common/log.js';
import type { KubeClient } from '../../k8s/kube-client.js';
import { validatePodRef } from '../../k8s/names.js';
import { ModelValidationError } from '../../netvirt/errors.js';
import { serviceIps, serviceRoutes, type ServiceIps } from '../../netvirt/gateway.js';
import { ownerContextOf } from '../../netvirt/translate-settings.js';
import type { VpnInterface } from '../../netvirt/vpn.js';
import type { RestconfClient } from '../../restconf/client.js';
import { CliError, EXIT, type ExitCode } from '../exit-codes.js';
import { checkGateway, gatewayFindings, type GatewayCheck } from '../gateways.js';
import { checkLocalGatewayPorts, type LocalGatewayPorts } from './gateway-port.js';
import type { OvsCheckOptions } from './ovs.js';
import { planInputs } from '../plan-inputs.js';
import { cell, indentedTable } from '../render.js';
import type { CliSettings } from '../settings.js';
import { readSnapshot } from '../snapshot.js';

export const SERVICE_PREFIX = 'svc/';

/** `svc/<namespace>/<name>`, validated as Kubernetes names; undefined for anything else. */
export function parseServiceRef(ref: string): { namespace: string; name: string } | undefined {
  if (!ref.startsWith(SERVICE_PREFIX)) return undefined;
  const [namespace, name, ...more] = ref.slice(SERVICE_PREFIX.length).split('/');
  if (!namespace || !name || more.length > 0)
    throw new CliError(`Service ${JSON.stringify(ref)} must be given as svc/<namespace>/<name>`, EXIT.usage);
  try {
    validatePodRef(namespace, name);
  } catch (err) {
    throw new CliError(errorMessage(err), EXIT.usage);
  }
  return { namespace, name };
}

export type RouteStatus = 'ok' | 'missing' | 'wrong-next-hop';

export interface ServiceRouteCheck {
  /** `ip/32` or `ip/128`. */
  prefix: string;
  status: RouteStatus;
  /** The next hops ODL holds (empty when missing). */
  nextHops: string[];
}

export interface ServiceGatewayTrace extends GatewayCheck {
  /** The Service's routes on this gateway. */
  serviceRoutes: ServiceRouteCheck[];
}

export type ServiceVerdict = 'ok' | 'problem' | 'no-routes' | 'incomplete';

export interface ServiceTraceReport {
  service: string;
  type: string | null;
  ips: ServiceIps | null;
  /** The host routes the Service needs on every gateway, sorted. */
  routes: string[];
  verdict: ServiceVerdict;
  /** Why the Service has no routes, or what could not be read. */
  reason: string | null;
  gateways: ServiceGatewayTrace[];
  /** The gateway ports on this host's OVS (trace run on a node), against their ODL side. */
  localGateway: LocalGatewayPorts;
  /** One line per missing or wrong piece, in gateway order. */
  missing: string[];
}

/** ok: 0; no-routes (headless, ExternalName): 0; problem: 1; incomplete: 3. */
const EXIT_OF: Record<ServiceVerdict, ExitCode> = {
  ok: EXIT.ok,
  'no-routes': EXIT.ok,
  problem: EXIT.problem,
  incomplete: EXIT.unavailable,
};

export async function runServiceTrace(
  ref: { namespace: string; name: string },
  settings: CliSettings,
  client: RestconfClient,
  kube: KubeClient,
  ovsOpts: OvsCheckOptions = { skip: true, bridge: 'br-int' },
): Promise<{ report: ServiceTraceReport; exitCode: ExitCode }> {
  const report: ServiceTraceReport = {
    service: `${ref.namespace}/${ref.name}`,
    type: null,
    ips: null,
    routes: [],
    verdict: 'incomplete',
    reason: null,
    gateways: [],
    localGateway: { checked: false, note: 'not looked at', ports: [], findings: [] },
    missing: [],
  };
  const done = (verdict: ServiceVerdict, reason: string | null = null) => {
    report.verdict = verdict;
    report.reason = reason;
    return { report, exitCode: EXIT_OF[verdict] };
  };
  if (settings.serviceCidrs.length === 0)
    throw new CliError(
      'services.cidrs is not set: Services have no routes in ODL (give the watcher’s config file or --service-cidrs)',
      EXIT.usage,
    );
  let snapshot;
  try {
    snapshot = await readSnapshot(client, kube, settings, { timeoutMs: settings.timeoutMs });
  } catch (err) {
    return done('incomplete', `reading ODL and Kubernetes: ${errorMessage(err)}`);
  }
  const { odl, kube: cluster } = snapshot;
  const service = cluster.services?.find(
    (s: V1Service) => s.metadata?.namespace === ref.namespace && s.metadata.name === ref.name,
  );
  if (!service) {
    report.missing.push(`Service ${report.service} does not exist`);
    return done('problem', `Service ${report.service} does not exist`);
  }
  report.type = service.spec?.type ?? 'ClusterIP';
  report.ips = serviceIps(service);
  try {
    report.routes = serviceRoutes(service, settings.serviceCidrs);
  } catch (err) {
    if (!(err instanceof ModelValidationError)) throw err;
    report.missing.push(`${err.message}; the watcher routes none of its IPs`);
    return done('problem', err.message);
  }
  if (report.routes.length === 0)
    return done(
      'no-routes',
      `a ${service.spec?.type === 'ExternalName' ? 'ExternalName' : 'headless'} Service gets no route`,
    );

  const inputs = planInputs(cluster, odl.state, settings);
  const ctx = odl.state.context(ownerContextOf(settings));
  const nodes = [...cluster.nodes].sort((a, b) =>
    (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
  );
  if (nodes.length === 0) report.missing.push('no node: no gateway carries the routes');
  for (const node of nodes) {
    const g = checkGateway(node, inputs, odl.state, ctx);
    const vpnIf = odl.state.get('vpnInterface', g.gateway) as VpnInterface | undefined;
    const serviceRoutesOnIt = report.routes.map((prefix): ServiceRouteCheck => {
      const adj = vpnIf?.adjacencies.find(
        (a) => a.ipAddress === prefix && a.adjacencyType !== 'primary-adjacency',
      );
      if (!adj) return { prefix, status: 'missing', nextHops: [] };
      const nextHops = adj.nextHopIpList ?? [];
      return { prefix, status: nextHops.join(',') === (g.address ?? '') ? 'ok' : 'wrong-next-hop', nextHops };
    });
    report.gateways.push({ ...g, serviceRoutes: serviceRoutesOnIt });
    report.missing.push(...gatewayFindings(g));
    for (const r of serviceRoutesOnIt)
      if (r.status === 'missing') report.missing.push(`route ${r.prefix} on ${g.gateway} missing`);
      else if (r.status === 'wrong-next-hop')
        report.missing.push(
          `route ${r.prefix} on ${g.gateway} has next hop ${r.nextHops.join(', ') || '-'}, not the gateway ${cell(g.address)}`,
        );
  }
  report.localGateway = await checkLocalGatewayPorts(report.gateways, ovsOpts, settings.timeoutMs);
  report.missing.push(...report.localGateway.findings);
  return done(report.missing.length === 0 ? 'ok' : 'problem');
}

export function renderServiceTrace(r: ServiceTraceReport): string {
  const ips = r.ips
    ? [
        ...r.ips.clusterIps.map((ip) => `clusterIP ${ip}`),
        ...r.ips.externalIps.map((ip) => `externalIP ${ip}`),
        ...r.ips.ingressIps.map((ip) => `ingress ${ip}`),
      ].join(', ') || 'no IP'
    : '-';
  const out = [`Trace of Service ${r.service}${r.type ? ` (${r.type})` : ''}: ${ips}`];
  if (r.routes.length > 0) out.push(`routes on every node gateway: ${r.routes.join(', ')}`);
  out.push('');
  if (r.gateways.length > 0)
    out.push(
      indentedTable(
        ['NODE', 'GATEWAY', 'ADDRESS', 'ENTRIES', 'ROUTE', 'NEXT HOP', 'STATUS'],
        r.gateways.flatMap((g) => {
          const entries =
            g.problem !== null
              ? `cannot be planned: ${g.problem}`
              : g.entries.every((e) => e.status === 'ok')
                ? 'ok'
                : g.entries
                    .filter((e) => e.status !== 'ok')
                    .map((e) => `${e.kind} ${e.status.toUpperCase()}`)
                    .join(', ');
          return g.serviceRoutes.map((route, i) => [
            i === 0 ? g.node : '',
            i === 0 ? g.gateway : '',
            i === 0 ? cell(g.address) : '',
            i === 0 ? entries : '',
            route.prefix,
            route.nextHops.join(', ') || '-',
            route.status === 'ok' ? 'ok' : route.status.toUpperCase(),
          ]);
        }),
      ),
      '',
    );
  const local = r.localGateway;
  if (local.checked && local.ports.length > 0)
    out.push(
      'Gateway ports on this host’s OVS:',
      ...local.ports.map(
        (p) =>
          `  ${p.node}: ${p.port} ofport ${p.ofport}${p.problems.length === 0 ? ', as its ODL side says' : `: ${p.problems.join('; ')}`}`,
      ),
      '',
    );
  else if (local.note !== null) out.push(`Gateway port: ${local.note}.`, '');
  if (r.verdict === 'ok')
    out.push('OK: every gateway is complete and carries the Service’s routes via itself.');
  else if (r.verdict === 'no-routes') out.push(`No routes by design: ${r.reason ?? ''}.`);
  else if (r.verdict === 'incomplete') out.push(`INCOMPLETE: ${r.reason ?? 'something could not be read'}.`);
  else out.push('MISSING OR WRONG:', ...r.missing.map((m) => `  ${m}`));
  return out.join('\n');
}
