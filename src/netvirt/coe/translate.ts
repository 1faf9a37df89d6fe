/**
 * Pure translation of Kubernetes objects into ODL's own COE northbound models (`pod:coe`,
 * `service:service-information`, `service:endpoints-info`). No I/O, no clock: the same objects
 * always give the same entries, so a restarted watcher derives exactly what it wrote before.
 * (`k8s-node` entries are ../k8s-node.ts's `translateNode`, shared with the default backend.)
 *
 * Every entry is validated against the model here (the `coe*Entry` builders throw a
 * `ModelValidationError` naming the offending leaf), so a bad value is reported before any
 * write instead of being refused by ODL or, worse, accepted and ignored by NetVirt.
 */
import { isIP } from 'node:net';
import type { V1EndpointSlice, V1Node, V1Pod, V1Service } from '@kubernetes/client-node';
import { compareIp } from '../canonical.js';
import { ModelValidationError } from '../errors.js';
import { nodeInternalIp, podAddress, podNetworkEligibility } from '../kube.js';
import { canonicalIp, clusterUuid, podMac } from '../names.js';
import {
  coeEndpointsEntry,
  coePodEntry,
  coeServiceEntry,
  type CoeEndpointAddress,
  type CoeEndpointPort,
  type CoeEndpoints,
  type CoePod,
  type CoeService,
  type CoeServicePort,
} from './model.js';

/**
 * What a pod needs in ODL now:
 * - `desired`: exactly this entry;
 * - `absent`: no entry (host network, not scheduled, finished, or the pod is gone);
 * - `unknown`: on the pod network, but its entry cannot be built yet (no IP, node not known):
 *   whatever ODL holds for the pod is kept until it can.
 */
export type CoePodTranslation =
  | { state: 'desired'; entry: CoePod }
  | { state: 'absent'; reason: string }
  | { state: 'unknown'; reason: string; code: 'no-address' | 'node-unknown' | 'node-without-internal-ip' };

/** The address families a COE pod interface is built from, in preference order. */
const POD_FAMILIES = ['ipv4', 'ipv6'] as const;

/**
 * The `pod:coe/pods` entry of a pod.
 *
 * - `host-ip-address` is the node's InternalIP as odlcoe picks it (`nodeInternalIp`), the
 *   address NetVirt names the pod's ELAN after; `network-NS` is the namespace (deprecated in the
 *   model, but NetVirt Sodium's PodListener skips a pod without it or without a host IP).
 * - One interface: `uid` = the pod UID (a pod has one interface on the pod network),
 *   `network-id` = the cluster UUID (the cluster has one pod network; releases before Sodium
 *   named the network's ELAN after it), `network-type VXLAN` (NetVirt derives the ELAN
 *   segment type from it), `ip-address` = the pod IP (IPv4 preferred).
 * - `port-mac-address` is the MAC the node agent gives the pod, derived from that IP.
 * - The entry is written only once the pod has an IP: NetVirt's listener acts on the interface,
 *   and the MAC is not known before.
 */
export function translateCoePod(
  pod: V1Pod,
  node: V1Node | undefined,
  clusterName: string,
): CoePodTranslation {
  const eligibility = podNetworkEligibility(pod);
  if (!eligibility.onNetwork) return { state: 'absent', reason: eligibility.reason };
  const { uid, name, namespace } = pod.metadata ?? {};
  if (!uid || !name || !namespace)
    throw new ModelValidationError('pod', 'pod without metadata.uid, name or namespace');
  const ip = podAddress(pod, POD_FAMILIES);
  if (ip === undefined) return { state: 'unknown', reason: 'pod has no IP yet', code: 'no-address' };
  if (!node)
    return {
      state: 'unknown',
      reason: `node ${pod.spec?.nodeName ?? '?'} is not known yet`,
      code: 'node-unknown',
    };
  const hostIp = nodeInternalIp(node);
  if (hostIp === undefined)
    return {
      state: 'unknown',
      reason: `node ${node.metadata?.name ?? '?'} has no InternalIP yet`,
      code: 'node-without-internal-ip',
    };
  const clusterId = clusterUuid(clusterName);
  const entry: CoePod = {
    uid: uid,
    name,
    clusterId,
    hostIpAddress: hostIp,
    networkNs: namespace,
    portMacAddress: podMac(ip),
    interfaces: [{ uid: uid, ipAddress: ip, networkId: clusterId, networkType: 'VXLAN' }],
  };
  coePodEntry(entry);
  return { state: 'desired', entry };
}

/** An IP literal as odlcoe writes it, or a precise error naming where it came from. */
function address(value: string, where: string): string {
  if (isIP(value) === 0)
    throw new ModelValidationError(where, `${JSON.stringify(value)} is not an IP address`);
  return canonicalIp(value);
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

/**
 * The `service:service-information/services` entry of a Service: cluster IP (omitted for a
 * headless `None` service and for ExternalName services, which have none), external IPs,
 * the requested load-balancer IP, the load balancer's ingress IPs, and every port in spec
 * order (`target-port` as a string: a number or a port name).
 */
export function translateCoeService(service: V1Service, clusterName: string): CoeService {
  const { uid, name, namespace } = service.metadata ?? {};
  if (!uid || !name || !namespace)
    throw new ModelValidationError('service', 'service without metadata.uid, name or namespace');
  const where = `service ${namespace}/${name}`;
  const entry: CoeService = { uid: uid, name, clusterId: clusterUuid(clusterName), networkNs: namespace };
  const clusterIp = service.spec?.clusterIP;
  if (clusterIp && clusterIp !== 'None')
    entry.clusterIpAddress = address(clusterIp, `${where} spec.clusterIP`);
  const external = (service.spec?.externalIPs ?? []).map((ip, i) =>
    address(ip, `${where} spec.externalIPs[${i}]`),
  );
  if (external.length > 0) entry.externalIpAddresses = unique(external);
  const requested = service.spec?.loadBalancerIP;
  if (requested) entry.loadBalancerIp = address(requested, `${where} spec.loadBalancerIP`);
  const ingress = (service.status?.loadBalancer?.ingress ?? [])
    .map((ing, i) => (ing.ip ? address(ing.ip, `${where} status.loadBalancer.ingress[${i}].ip`) : undefined))
    .filter((ip): ip is string => ip !== undefined);
  if (ingress.length > 0) entry.ingressIpAddresses = unique(ingress);
  const ports: CoeServicePort[] = (service.spec?.ports ?? []).map((p) => {
    const port: CoeServicePort = { port: p.port };
    if (p.name) port.name = p.name;
    if (p.targetPort !== undefined && p.targetPort !== '') port.targetPort = String(p.targetPort);
    if (p.nodePort !== undefined && p.nodePort !== 0) port.nodePort = p.nodePort;
    return port;
  });
  if (ports.length > 0) entry.servicePorts = ports;
  coeServiceEntry(entry);
  return entry;
}

/** The Service an EndpointSlice belongs to (its `kubernetes.io/service-name` label). */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export function sliceServiceName(slice: V1EndpointSlice): string | undefined {
  return slice.metadata?.labels?.[SERVICE_NAME_LABEL] || undefined;
}

/**
 * The `service:endpoints-info/endpoints` entry of a Service, from ALL its EndpointSlices: every
 * ready endpoint address of every IPv4/IPv6 slice (FQDN slices carry no IP), and the union of
 * the slices' ports. Keyed by the Service's UID: the slices of one Service come and go (and
 * each has its own UID), the Service's UID is what ties the two COE entries together, and it
 * is how the endpoints entry is owned (see ownership.ts).
 *
 * Both lists are keyless in the model (replaced whole), so they are built in a canonical order
 * (addresses by IP, ports by number then name) with duplicates removed: the same endpoint may
 * appear in two slices while the EndpointSlice controller moves it.
 */
export function translateCoeEndpoints(service: V1Service, slices: readonly V1EndpointSlice[]): CoeEndpoints {
  const { uid, name, namespace } = service.metadata ?? {};
  if (!uid || !name || !namespace)
    throw new ModelValidationError('service', 'service without metadata.uid, name or namespace');
  const addresses = new Map<string, CoeEndpointAddress>();
  const ports = new Map<string, CoeEndpointPort>();
  // By name, so that an address listed by two slices is described the same way whatever order
  // the slices come in.
  const ordered = [...slices].sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  for (const slice of ordered) {
    const sliceName = slice.metadata?.name ?? '?';
    if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') continue;
    (slice.endpoints ?? []).forEach((endpoint, i) => {
      // Kubernetes: an unset `ready` is an unknown state that consumers treat as ready.
      if (endpoint.conditions?.ready === false) return;
      endpoint.addresses.forEach((raw, j) => {
        const ip = address(raw, `endpointslice ${namespace}/${sliceName} endpoints[${i}].addresses[${j}]`);
        if (addresses.has(ip)) return;
        const a: CoeEndpointAddress = { ipAddress: ip };
        if (endpoint.hostname) a.hostName = endpoint.hostname;
        if (endpoint.nodeName) a.nodeName = endpoint.nodeName;
        addresses.set(ip, a);
      });
    });
    for (const p of slice.ports ?? []) {
      const port: CoeEndpointPort = {};
      if (p.name) port.name = p.name;
      if (p.port !== undefined && p.port !== null) port.port = p.port;
      ports.set(`${port.port ?? ''}/${port.name ?? ''}`, port);
    }
  }
  const entry: CoeEndpoints = { uid: uid, name, networkNs: namespace };
  if (addresses.size > 0) entry.endpointAddresses = [...addresses.values()].sort(byIp);
  if (ports.size > 0) entry.endpointPorts = [...ports.values()].sort(byPort);
  coeEndpointsEntry(entry);
  return entry;
}

/** Numeric order of addresses (IPv4 before IPv6), so the keyless list has one canonical order. */
function byIp(a: CoeEndpointAddress, b: CoeEndpointAddress): number {
  return compareIp(a.ipAddress ?? '', b.ipAddress ?? '');
}

function byPort(a: CoeEndpointPort, b: CoeEndpointPort): number {
  const pa = a.port ?? -1;
  const pb = b.port ?? -1;
  if (pa !== pb) return pa - pb;
  const na = a.name ?? '';
  const nb = b.name ?? '';
  return na < nb ? -1 : na > nb ? 1 : 0;
}
