/**
 * The sandbox's human output after convergence: what ODL holds per namespace and node (built
 * from odlcoectl's dump tree, so it says exactly what `odlcoectl dump` says), what the data
 * path shows, and where to look next. Pure rendering.
 */
import type { OvsPort } from '../ovs/ovs.js';
import { gatewayEntries, type DumpElan, type DumpInterface, type DumpTree } from '../cli/dump.js';
import type { ExtraPingResult, PingResult } from './datapath.js';
import type { ExchangeResult, TrafficResult } from './pod-traffic.js';

export interface NodeDataPath {
  node: string;
  /** The node's br-int ports with the external_ids the agent set. */
  ports: OvsPort[];
  pings: PingResult[];
  /** Pings over the pods' extra interfaces (Multus attachments), per extra network. */
  extraPings?: ExtraPingResult[];
  /** HTTP GET and UDP echo between the same pairs of pods. */
  traffic: TrafficResult[];
  /** What the node's datapath needs of pod interfaces (src/ovs/datapath.ts). */
  checksumOffload?: string;
  /**
   * With Services on: the node's host side (its network namespace) to its pods through the
   * gateway port: a ping to every pod, an HTTP GET to the first (what kubelet's probes do).
   */
  host?: { pings: PingResult[]; http: TrafficResult | undefined };
}

/** A Service whose routes the summary shows on every gateway. */
export interface ShownService {
  /** `namespace/name`. */
  ref: string;
  /** Its host routes (`ip/32`), sorted. */
  prefixes: string[];
}

export interface SandboxEndpoints {
  workDir: string;
  logFile: string;
  kubeconfig: string;
  kubeUrl: string;
  odlUrl: string;
  odlUser: string;
  odlPassword: string;
  /** The ODL URLs (in the sandbox's dialect) of the lists worth a look. */
  odlListUrls: { label: string; url: string }[];
  /** A config file for odlcoectl (`--config`). */
  cliConfig: string;
  /** How to run odlcoectl from the project directory. */
  cliCommand: string;
  watcherUrl: string;
  agents: { node: string; url: string; log: string; ovsDb: string }[];
  /** The ODL write log (one JSON line per accepted RESTCONF write). */
  odlWriteLog: string;
  gracePeriodSeconds: number;
  /** A pod of the cluster to name in examples (`namespace/name`), if there is one. */
  examplePod?: { namespace: string; name: string };
}

const pad = (text: string, width: number) => text.padEnd(width);

function interfaceLine(i: DumpInterface): string {
  const vpn = i.adjacency
    ? `vpn-interface ${i.adjacency.ipPrefix}${i.vpn ? ` in ${i.vpn}` : ''}`
    : 'no vpn-interface yet (no IP)';
  return `${pad(i.pod, 16)} ${pad(i.ip ?? '-', 15)} ${pad(i.mac ?? '-', 17)}  ${vpn}`;
}

function elanBlock(e: DumpElan, nodeNames: Map<string, string>): string[] {
  const node = nodeNames.get(e.nodeIp);
  return [
    `    ${node ? `${node} (${e.nodeIp})` : `node ${e.nodeIp}`}: elan-instance ${e.name}, ${e.interfaces.length} pod${e.interfaces.length === 1 ? '' : 's'}`,
    ...e.interfaces.map((i) => `      ${interfaceLine(i)}`),
  ];
}

/** ODL's content, per namespace (its VPN), then per node (its ELAN), then per pod. */
export function renderOdlSummary(dump: DumpTree): string[] {
  const nodeNames = new Map<string, string>();
  for (const n of dump.k8sNodes) if (n.internalIp && n.hostName) nodeNames.set(n.internalIp, n.hostName);
  const out = [
    `ODL now holds, for cluster "${dump.cluster}" (${dump.profile}), what \`odlcoectl dump\` reads back:`,
  ];
  if (dump.vpns.length === 0) out.push('  no VPN instance (no namespace has a pod on the pod network)');
  for (const vpn of dump.vpns) {
    out.push(
      `  namespace ${vpn.namespace ?? '?'}: vpn-instance ${vpn.name}, rd ${vpn.routeDistinguisher ?? '-'}`,
    );
    for (const elan of vpn.elans) out.push(...elanBlock(elan, nodeNames));
  }
  if (dump.elansWithoutVpn.length > 0) {
    out.push('  ELAN instances whose namespace has no VPN (yet):');
    for (const elan of dump.elansWithoutVpn) out.push(...elanBlock(elan, nodeNames));
  }
  if (dump.interfacesWithoutElan.length > 0) {
    out.push('  interfaces without an ELAN (yet):');
    for (const i of dump.interfacesWithoutElan) out.push(`      ${i.namespace}/${interfaceLine(i)}`);
  }
  for (const n of dump.networks) {
    const vpn = n.vpn ? `, vpn-instance ${n.vpn.name}` : '';
    out.push(
      `  extra network ${n.nad ?? n.name}: elan-instance ${n.name}${vpn}, ${n.attachments.length} attachment${n.attachments.length === 1 ? '' : 's'}`,
    );
    for (const i of n.attachments) out.push(`      ${interfaceLine(i)}`);
  }
  out.push('  node networks (dhcp_allocation_pool: the agents read their pod subnet here):');
  for (const n of dump.nodeNetworks)
    out.push(`    ${pad(n.node, 10)} ${pad(n.network, 24)} subnet ${n.subnets.join(', ') || '-'}`);
  if (dump.k8sNodes.length > 0) {
    out.push('  k8s-node entries (ODL’s COE models):');
    const byHost = [...dump.k8sNodes].sort((a, b) =>
      (a.hostName ?? a.uid).localeCompare(b.hostName ?? b.uid),
    );
    for (const n of byHost)
      out.push(
        `    ${pad(n.hostName ?? n.uid, 10)} ${pad(n.internalIp ?? '-', 15)} pod-cidr ${n.podCidr ?? '-'}`,
      );
  }
  return out;
}

/** The node gateways in ODL (ietf-, elan-, vpn-interface, ELAN) and one Service's routes on each. */
export function renderGateways(dump: DumpTree, service: ShownService | undefined): string[] {
  const vpn = dump.gatewayVpn;
  const out = [
    `  node gateways (Services on)${vpn ? `: vpn-instance ${vpn.name}, rds ${vpn.routeDistinguishers.join(', ')}` : ': no gateway VPN'}`,
  ];
  for (const g of dump.gateways) {
    const entries = gatewayEntries(g).map((e) => `${e.label} ${e.present ? 'ok' : 'MISSING'}`);
    out.push(
      `    ${pad(g.node, 10)} ${pad(g.name, 20)} ${pad(g.address ?? '-', 15)} ${pad(g.mac ?? '-', 17)}  ${entries.join(', ')}; ${g.routes.length} Service route${g.routes.length === 1 ? '' : 's'}`,
    );
  }
  if (service) {
    out.push(`  Service ${service.ref} (${service.prefixes.join(', ')}): extra routes on every gateway`);
    for (const g of dump.gateways)
      for (const prefix of service.prefixes) {
        const route = g.routes.find((r) => r.prefix === prefix);
        out.push(
          `    ${pad(prefix, 18)} on ${pad(g.name, 20)} ${route ? `next hop ${route.nextHops.join(', ')}` : 'MISSING'}`,
        );
      }
  }
  return out;
}

/**
 * What is wrong with the gateways, one line each: a node without all four gateway entries, a
 * gateway without the shown Service's routes (next hop: the gateway's own address).
 */
export function gatewayProblems(
  dump: DumpTree,
  nodes: readonly string[],
  service: ShownService | undefined,
): string[] {
  const out: string[] = [];
  if (!dump.gatewayVpn) out.push('the gateway VPN is missing in ODL');
  for (const node of nodes) {
    const g = dump.gateways.find((x) => x.node === node);
    if (!g) {
      out.push(`node ${node} has no gateway in ODL`);
      continue;
    }
    const missing = gatewayEntries(g).filter((e) => !e.present);
    if (missing.length > 0)
      out.push(`gateway ${g.name} misses its ${missing.map((e) => e.label).join(', ')}`);
    for (const prefix of service?.prefixes ?? []) {
      const route = g.routes.find((r) => r.prefix === prefix);
      const own = g.address ?? '?';
      if (!route) out.push(`gateway ${g.name} has no route ${prefix} (Service ${service?.ref ?? ''})`);
      else if (route.nextHops.join(',') !== own)
        out.push(`gateway ${g.name} routes ${prefix} via ${route.nextHops.join(', ')}, not its own ${own}`);
    }
  }
  return out;
}

/** Ports and pings of the simulated nodes, and an honest word about what is not shown. */
export function renderDataPath(nodes: readonly NodeDataPath[], skippedReason: string | undefined): string[] {
  if (nodes.length === 0) {
    return [
      'Data path: not shown.',
      `  ${skippedReason ?? 'no simulated node was started'}`,
      '  Run `sudo npm start` on a machine with Open vSwitch (openvswitch-switch) to see two nodes with real',
      '  agents wire real pods (network namespaces, veths, userspace OVS) that ping each other and exchange',
      '  TCP (HTTP) and UDP.',
    ];
  }
  const out = [
    'Data path (real pods: network namespaces wired by the agents through the CNI shim, userspace OVS):',
  ];
  for (const n of nodes) {
    out.push(`  ${n.node} br-int ports:`);
    if (n.checksumOffload) out.push(`    (${n.checksumOffload})`);
    for (const p of n.ports) {
      const ids = p.externalIds;
      out.push(
        `    ${pad(p.name, 13)} iface-id ${pad(ids['iface-id'] ?? '-', 26)} attached-mac ${ids['attached-mac'] ?? '-'}  ip ${ids['ip-address'] ?? '-'}`,
      );
    }
    for (const ping of n.pings)
      out.push(
        `    ping ${ping.from.pod} ${ping.from.ip} -> ${ping.to.pod} ${ping.to.ip}: ${pingResult(ping)}`,
      );
    for (const t of n.traffic) {
      const pair = `${t.from.pod} ${t.from.ip} -> ${t.to.pod} ${t.to.ip}`;
      out.push(`    tcp  ${pair} HTTP GET: ${exchange(t.tcp)}`, `    udp  ${pair} echo: ${exchange(t.udp)}`);
    }
    if (n.pings.length === 0) out.push('    (fewer than two pods on this node: nothing to ping)');
    for (const p of n.extraPings ?? [])
      out.push(
        `    ping ${p.from.pod} ${p.from.ip} -> ${p.to.pod} ${p.to.ip} over ${p.ifName} (extra network ${p.network}): ${pingResult(p)}`,
      );
    if (n.host) {
      out.push(`    host side (${n.node}'s network namespace) through its gateway port:`);
      for (const p of n.host.pings)
        out.push(`      ping ${p.from.ip} -> ${p.to.pod} ${p.to.ip}: ${pingResult(p)}`);
      const http = n.host.http;
      if (http)
        out.push(
          `      tcp  ${http.from.ip} -> ${http.to.pod} ${http.to.ip} HTTP GET: ${exchange(http.tcp)}`,
        );
      if (n.host.pings.length === 0) out.push('      (no pod on this node)');
    }
  }
  out.push(
    '  Not shown: pods on different nodes reaching each other. NetVirt carries that traffic in VXLAN tunnels',
    '  through OpenFlow rules ODL programs into every br-int; the emulator stores configuration but programs',
    '  no flows, and the simulated nodes have no network between them. Same-node traffic crosses br-int by MAC',
    '  learning (no controller is attached), which is not how NetVirt forwards either.',
  );
  return out;
}

export function renderNextSteps(e: SandboxEndpoints): string[] {
  const out = [
    'Where to look next:',
    '  kubectl, against the simulated API server:',
    `    export KUBECONFIG=${e.kubeconfig}`,
    '    kubectl get nodes',
    '    kubectl get pods -A -o custom-columns=NAMESPACE:.metadata.namespace,NAME:.metadata.name,NODE:.spec.nodeName,IP:.status.podIP',
    ...(e.examplePod
      ? [
          `    kubectl -n ${e.examplePod.namespace} delete pod ${e.examplePod.name}    # its ODL objects go; unused instances after ${e.gracePeriodSeconds}s`,
        ]
      : []),
    '  the ODL emulator over RESTCONF:',
    ...e.odlListUrls.map((u) => `    curl -s -u ${e.odlUser}:${e.odlPassword} ${u.url}    # ${u.label}`),
    `    curl -s -u ${e.odlUser}:${e.odlPassword} ${e.odlUrl}/odlcoe-emulator/counters`,
    `    tail -f ${e.odlWriteLog}    # every RESTCONF write odlcoe makes`,
    '  odlcoectl, the operator CLI (from the project directory):',
    `    ${e.cliCommand} --config ${e.cliConfig} dump`,
    `    ${e.cliCommand} --config ${e.cliConfig} status`,
    `    ${e.cliCommand} --config ${e.cliConfig} subnets`,
  ];
  const agent = e.agents[0];
  if (e.examplePod) {
    const pod = `${e.examplePod.namespace}/${e.examplePod.name}`;
    out.push(
      agent
        ? `    ${e.cliCommand} --config ${e.cliConfig} trace ${pod} --ovs-db ${agent.ovsDb}    # on ${agent.node}`
        : `    ${e.cliCommand} --config ${e.cliConfig} trace ${pod} --no-ovs`,
    );
  }
  out.push('  metrics and health:', `    watcher      ${e.watcherUrl}/metrics  (/readyz, /healthz)`);
  for (const a of e.agents) out.push(`    agent ${pad(a.node, 6)} ${a.url}/metrics  (/readyz, /healthz)`);
  out.push('  logs:', `    ${e.logFile}`);
  for (const a of e.agents) out.push(`    ${a.log}`);
  return out;
}

function exchange(r: ExchangeResult): string {
  return r.ok ? `ok${r.ms !== undefined ? ` (${r.ms} ms)` : ''}` : `FAILED: ${r.error ?? 'no answer'}`;
}

function pingResult(p: PingResult): string {
  return p.ok ? `ok${p.rttMs !== undefined ? ` (${p.rttMs} ms)` : ''}` : `FAILED: ${p.error ?? 'no answer'}`;
}
