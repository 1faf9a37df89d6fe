/**
 * The sandbox's human output after convergence: what ODL holds per namespace and node (built
 * from odlcoectl's dump tree, so it says exactly what `odlcoectl dump` says), what the data
 * path shows, and where to look next. Pure rendering.
 */
import type { OvsPort } from '../ovs/ovs.js';
import type { DumpElan, DumpInterface, DumpTree } from '../cli/dump.js';
import type { PingResult } from './datapath.js';
import type { ExchangeResult, TrafficResult } from './pod-traffic.js';

export interface NodeDataPath {
  node: string;
  /** The node's br-int ports with the external_ids the agent set. */
  ports: OvsPort[];
  pings: PingResult[];
  /** HTTP GET and UDP echo between the same pairs of pods. */
  traffic: TrafficResult[];
  /** What the node's datapath needs of pod interfaces (src/ovs/datapath.ts). */
  checksumOffload?: string;
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
    for (const ping of n.pings) {
      const result = ping.ok
        ? `ok${ping.rttMs !== undefined ? ` (${ping.rttMs} ms)` : ''}`
        : `FAILED: ${ping.error ?? 'no answer'}`;
      out.push(`    ping ${ping.from.pod} ${ping.from.ip} -> ${ping.to.pod} ${ping.to.ip}: ${result}`);
    }
    for (const t of n.traffic) {
      const pair = `${t.from.pod} ${t.from.ip} -> ${t.to.pod} ${t.to.ip}`;
      out.push(`    tcp  ${pair} HTTP GET: ${exchange(t.tcp)}`, `    udp  ${pair} echo: ${exchange(t.udp)}`);
    }
    if (n.pings.length === 0) out.push('    (fewer than two pods on this node: nothing to ping)');
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
