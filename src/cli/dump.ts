/**
 * `odlcoectl dump`: what this cluster owns in ODL, as a tree: VPN (namespace) → ELAN (node ×
 * namespace) → interfaces (pods), plus the extra networks (ELAN, VPN, attachments), the node
 * gateways and networks, and the k8s-node entries. Reads ODL only. Foreign entries
 * are left out (counted), entries that do not parse are reported; pieces that do not hang
 * together (an ELAN whose namespace has no VPN, an interface whose ELAN is not ours) are
 * listed on their own instead of being dropped, since that is exactly what an operator looks for.
 *
 * Kinds beyond the tree's (a table with more kinds than the netvirt backend's) are listed per
 * kind under `objects`, one line each (the kind's own summary); the member is there only when
 * such kinds are dumped.
 *
 * The JSON shape is documented in docs/cli.md and stable: arrays sorted by name, absent values
 * as null, and only leaves odlcoe writes (nothing ODL allocates, such as elan-tag), so two
 * dumps of the same state are byte-identical.
 */
import type { ElanInstance, ElanInterface } from '../netvirt/elan.js';
import type { Interface } from '../netvirt/interfaces.js';
import type { DhcpNetwork } from '../netvirt/dhcp.js';
import type { K8sNode } from '../netvirt/k8s-node.js';
import { networkSubnets, nodeOfNetwork } from '../netvirt/node-network.js';
import { NETVIRT_KINDS } from '../netvirt/kinds.js';
import {
  GATEWAY_VPN,
  isGatewayName,
  nodeOfGatewayName,
  parseOwnershipMarker,
  vpnName,
} from '../netvirt/names.js';
import {
  attachmentOfInterfaceName,
  isNetworkInstanceName,
  networkOfInstanceName,
} from '../netvirt/network-names.js';
import { vpnRouteDistinguisher, vpnRouteDistinguishers, type OwnerContext } from '../netvirt/ownership.js';
import type { VpnInstance, VpnInterface } from '../netvirt/vpn.js';
import type { EntryStore, UnparsedEntry } from '../odl/entry-store.js';
import { cell, indent, indentedTable, plural } from './render.js';

export interface DumpAdjacency {
  /** `ip_address`: the pod IP with `/32` or `/128`. */
  ipPrefix: string;
  mac: string | null;
  subnetId: string | null;
  gatewayIp: string | null;
}

export interface DumpInterface {
  /** `<namespace>:<pod>`: the ietf-interface name, also the OVS iface-id. */
  name: string;
  namespace: string;
  pod: string;
  /** From the ownership marker. */
  podUid: string | null;
  /** From the elan-interface's static MAC entry. */
  ip: string | null;
  mac: string | null;
  /** The elan-interface's ELAN; null when the pod has no elan-interface. */
  elanInstance: string | null;
  /** The vpn-interface's VPN; null when the pod has no vpn-interface. */
  vpn: string | null;
  /** The primary adjacency; null without a vpn-interface (or one without a primary adjacency). */
  adjacency: DumpAdjacency | null;
}

export interface DumpElan {
  name: string;
  nodeIp: string;
  namespace: string;
  nodeUid: string | null;
  namespaceUid: string | null;
  segmentType: string | null;
  interfaces: DumpInterface[];
}

export interface DumpVpn {
  name: string;
  /** The namespace it serves, when it can be told (its name, or the namespace of its ELANs/interfaces). */
  namespace: string | null;
  routeDistinguisher: string | null;
  elans: DumpElan[];
}

export interface DumpK8sNode {
  uid: string;
  hostName: string | null;
  internalIp: string | null;
  externalIp: string | null;
  podCidr: string | null;
}

export interface DumpNodeNetwork {
  network: string;
  node: string;
  subnets: string[];
}

/** A Service route on a gateway: an extra-route adjacency of its vpn-interface. */
export interface DumpRoute {
  /** `ip/32` or `ip/128`. */
  prefix: string;
  nextHops: string[];
}

/** A node gateway `odlcoe-gw.<node>` (with Services on): its four entries, as ODL holds them. */
export interface DumpGateway {
  name: string;
  node: string;
  /** From the ownership marker of the ietf-interface (else the ELAN's). */
  nodeUid: string | null;
  /** Which of the gateway's entries ODL holds. */
  interface: boolean;
  elanInstance: boolean;
  elanInterface: boolean;
  vpnInterface: boolean;
  /** The elan-interface's static MAC entry. */
  address: string | null;
  mac: string | null;
  /** The vpn-interface's VPN (the gateway VPN `odlcoe.gateways`). */
  vpn: string | null;
  adjacency: DumpAdjacency | null;
  /** The Service routes on it, sorted by prefix. */
  routes: DumpRoute[];
}

/**
 * An extra network's ODL objects: its ELAN `odlcoe-net.<ns>.<nad>` (or an ELAN made in ODL that
 * attachments of ours join), its own VPN when routed `vpn`, and the pods' attachment interfaces
 * `<ns>:<pod>@<if>` in it (each with the VPN its vpn-interface is in: the network's own, its
 * namespace's, or none).
 */
export interface DumpNetwork {
  /** The ELAN. */
  name: string;
  /** The NAD `<ns>/<name>`; null for an ELAN made in ODL. */
  nad: string | null;
  /** From the ELAN's marker; null for an ELAN made in ODL (or none of ours). */
  nadUid: string | null;
  /** Whether odlcoe holds the ELAN (false: made in ODL, or missing). */
  elanOwned: boolean;
  /** The network's own VPN (`"routing": "vpn"`), null when ODL holds none of ours. */
  vpn: { name: string; routeDistinguisher: string | null } | null;
  attachments: DumpInterface[];
}

export interface DumpTree {
  cluster: string;
  profile: string;
  vpns: DumpVpn[];
  /** Owned ELANs whose namespace has no owned VPN. */
  elansWithoutVpn: DumpElan[];
  /** Owned interfaces whose elan-interface is missing or names an ELAN that is not ours. */
  interfacesWithoutElan: DumpInterface[];
  /** Extra networks (NADs): their ELANs and VPNs, and the pods' attachments; not in the pod tree. */
  networks: DumpNetwork[];
  /** k8s-node entries (where ODL has the COE models). */
  k8sNodes: DumpK8sNode[];
  /** Node networks `odlcoe-node:<node>` (dhcp_allocation_pool): each node's pod subnet. */
  nodeNetworks: DumpNodeNetwork[];
  /** Node gateways (with Services on), by name; their entries are not in the pod tree. */
  gateways: DumpGateway[];
  /** The gateway VPN `odlcoe.gateways` (one RD per node), null when ODL holds none of ours. */
  gatewayVpn: { name: string; routeDistinguishers: string[] } | null;
  /** Entries left out because another owner holds them, per kind (`ietf-interface`, ...). */
  foreign: Record<string, number>;
  unparsed: { kind: string; name: string; error: string }[];
  /** Owned entries of kinds outside the tree, by kind label (only when there are such kinds). */
  objects?: Record<string, { name: string; summary: string }[]>;
}

const byName = <T extends { name: string }>(a: T, b: T) => a.name.localeCompare(b.name);

/** `<node ip>:<namespace>` split at the last `:` (IPv6 node IPs contain colons, namespaces never). */
function splitElanName(name: string): { nodeIp: string; namespace: string } {
  const i = name.lastIndexOf(':');
  return i < 0 ? { nodeIp: '', namespace: name } : { nodeIp: name.slice(0, i), namespace: name.slice(i + 1) };
}

/** `<namespace>:<pod>` split at the first `:` (namespaces never contain one). */
function splitInterfaceName(name: string): { namespace: string; pod: string } {
  const a = attachmentOfInterfaceName(name);
  if (a) return { namespace: a.namespace, pod: `${a.pod}@${a.ifname}` };
  const i = name.indexOf(':');
  return i < 0 ? { namespace: '', pod: name } : { namespace: name.slice(0, i), pod: name.slice(i + 1) };
}

function adjacencyOf(v: VpnInterface | undefined): DumpAdjacency | null {
  const a = v?.adjacencies.find((x) => x.adjacencyType === 'primary-adjacency');
  if (!a) return null;
  return {
    ipPrefix: a.ipAddress,
    mac: a.macAddress ?? null,
    subnetId: a.subnetId ?? null,
    gatewayIp: a.subnetGatewayIp ?? null,
  };
}

function interfaceOf(
  name: string,
  description: string | undefined,
  elanIf: ElanInterface | undefined,
  vpnIf: VpnInterface | undefined,
): DumpInterface {
  const { namespace, pod } = splitInterfaceName(name);
  const mac = elanIf?.staticMacEntries?.[0];
  return {
    name,
    namespace,
    pod,
    podUid: parseOwnershipMarker(description)?.uid ?? null,
    ip: mac?.ipPrefix ?? null,
    mac: mac?.macAddress ?? null,
    elanInstance: elanIf?.elanInstanceName ?? null,
    vpn: vpnIf?.vpnInstanceNames[0]?.vpnName ?? null,
    adjacency: adjacencyOf(vpnIf),
  };
}

export function buildDump(
  state: EntryStore,
  owner: OwnerContext,
  unparsed: readonly UnparsedEntry[],
): DumpTree {
  const all = <T extends { name: string }>(kind: string) => state.owned(kind, owner) as T[];
  // Gateways have a section of their own; the pod tree holds the rest.
  const gatewayOwned = <T extends { name: string }>(kind: string) =>
    new Map(
      all<T>(kind)
        .filter((e) => isGatewayName(e.name))
        .map((e) => [e.name, e]),
    );
  // Extra networks' instances and attachments have a section of their own too.
  const ofNetworks = (name: string) =>
    isNetworkInstanceName(name) || attachmentOfInterfaceName(name) !== undefined;
  const owned = <T extends { name: string }>(kind: string) =>
    all<T>(kind).filter((e) => !isGatewayName(e.name) && e.name !== GATEWAY_VPN && !ofNetworks(e.name));
  const networks = buildNetworks(
    all<ElanInstance>('elanInstance').filter((e) => isNetworkInstanceName(e.name)),
    all<VpnInstance>('vpnInstance').filter((v) => isNetworkInstanceName(v.name)),
    all<Interface>('interface').filter((i) => attachmentOfInterfaceName(i.name) !== undefined),
    new Map(all<ElanInterface>('elanInterface').map((e) => [e.name, e])),
    new Map(all<VpnInterface>('vpnInterface').map((e) => [e.name, e])),
  );
  const ifaces = owned<Interface>('interface');
  const elanIfs = new Map(owned<ElanInterface>('elanInterface').map((e) => [e.name, e]));
  const vpnIfs = new Map(owned<VpnInterface>('vpnInterface').map((e) => [e.name, e]));
  const elans = owned<ElanInstance>('elanInstance');
  const vpns = owned<VpnInstance>('vpnInstance');
  const gateways = buildGateways(
    gatewayOwned<Interface>('interface'),
    gatewayOwned<ElanInstance>('elanInstance'),
    gatewayOwned<ElanInterface>('elanInterface'),
    gatewayOwned<VpnInterface>('vpnInterface'),
  );
  const gatewayVpnEntry = all<VpnInstance>('vpnInstance').find((v) => v.name === GATEWAY_VPN);

  const elanNodes = new Map<string, DumpElan>();
  for (const e of elans) {
    const { nodeIp, namespace } = splitElanName(e.name);
    // The marker uid of an ELAN is `<node uid>/<namespace uid>` (elanMarkerUid).
    const uids = parseOwnershipMarker(e.description)?.uid.split('/');
    elanNodes.set(e.name, {
      name: e.name,
      nodeIp,
      namespace,
      nodeUid: uids?.[0] ?? null,
      namespaceUid: uids?.[1] ?? null,
      segmentType: e.segmentType ?? null,
      interfaces: [],
    });
  }
  const interfacesWithoutElan: DumpInterface[] = [];
  for (const i of ifaces) {
    const node = interfaceOf(i.name, i.description, elanIfs.get(i.name), vpnIfs.get(i.name));
    const elan = node.elanInstance === null ? undefined : elanNodes.get(node.elanInstance);
    if (elan) elan.interfaces.push(node);
    else interfacesWithoutElan.push(node);
  }

  const vpnNodes = new Map<string, DumpVpn>();
  for (const v of vpns) {
    vpnNodes.set(v.name, {
      name: v.name,
      namespace: v.name.includes('.') ? null : v.name,
      routeDistinguisher: vpnRouteDistinguisher(v) ?? null,
      elans: [],
    });
  }
  const elansWithoutVpn: DumpElan[] = [];
  for (const elan of elanNodes.values()) {
    elan.interfaces.sort(byName);
    const vpn = vpnNodes.get(vpnName(elan.namespace || '?'));
    if (vpn) {
      vpn.elans.push(elan);
      // A shortened VPN name does not say its namespace; its ELANs do.
      vpn.namespace ??= elan.namespace;
    } else elansWithoutVpn.push(elan);
  }
  for (const vpn of vpnNodes.values()) vpn.elans.sort(byName);

  const has = (kind: string) => state.table.has(kind);
  const nodeNetworks: DumpNodeNetwork[] = (
    has('dhcpNetwork') ? (state.owned('dhcpNetwork', owner) as DhcpNetwork[]) : []
  )
    .map((n) => ({
      network: n.networkId,
      node: nodeOfNetwork(n.networkId) ?? '',
      subnets: networkSubnets(n),
    }))
    .sort((a, b) => a.network.localeCompare(b.network));
  const k8sNodes: DumpK8sNode[] = (has('k8sNode') ? (state.owned('k8sNode', owner) as K8sNode[]) : [])
    .map((n) => ({
      uid: n.uid,
      hostName: n.hostName ?? null,
      internalIp: n.internalIpAddress ?? null,
      externalIp: n.externalIpAddress ?? null,
      podCidr: n.podCidr ?? null,
    }))
    .sort((a, b) => a.uid.localeCompare(b.uid));

  const table = state.table;
  const foreign: Record<string, number> = {};
  for (const kind of table.kinds) {
    const count = [...state.values(kind)].filter(
      (e) => state.ownership(kind, e, owner).owner === 'foreign',
    ).length;
    if (count > 0) foreign[table.label(kind)] = count;
  }
  const others = table.kinds.filter((k) => !NETVIRT_KINDS.has(k));
  const objects: NonNullable<DumpTree['objects']> = {};
  for (const kind of others) {
    const spec = table.spec(kind);
    objects[spec.label] = state
      .owned(kind, owner)
      .map((e) => ({ name: spec.nameOf(e), summary: spec.summary(e) }))
      .sort(byName);
  }

  return {
    cluster: owner.clusterName,
    profile: owner.profile,
    vpns: [...vpnNodes.values()].sort(byName),
    elansWithoutVpn: elansWithoutVpn.sort(byName),
    interfacesWithoutElan: interfacesWithoutElan.sort(byName),
    networks,
    k8sNodes,
    nodeNetworks,
    gateways,
    gatewayVpn: gatewayVpnEntry
      ? { name: gatewayVpnEntry.name, routeDistinguishers: vpnRouteDistinguishers(gatewayVpnEntry) }
      : null,
    foreign,
    unparsed: unparsed
      .map((u) => ({ kind: table.label(u.kind), name: u.name, error: u.error }))
      .sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name)),
    ...(others.length > 0 ? { objects } : {}),
  };
}

/** The extra networks: each ELAN of ours or joined by an attachment of ours, with its VPN and attachments. */
function buildNetworks(
  elans: ElanInstance[],
  vpns: VpnInstance[],
  attachments: Interface[],
  elanIfs: Map<string, ElanInterface>,
  vpnIfs: Map<string, VpnInterface>,
): DumpNetwork[] {
  const out = new Map<string, DumpNetwork>();
  const networkOf = (elan: string): DumpNetwork => {
    let n = out.get(elan);
    if (!n) {
      const nad = networkOfInstanceName(elan);
      n = {
        name: elan,
        nad: nad ? `${nad.namespace}/${nad.name}` : null,
        nadUid: null,
        elanOwned: false,
        vpn: null,
        attachments: [],
      };
      out.set(elan, n);
    }
    return n;
  };
  for (const e of elans) {
    const n = networkOf(e.name);
    n.elanOwned = true;
    n.nadUid = parseOwnershipMarker(e.description)?.uid ?? null;
  }
  for (const v of vpns)
    networkOf(v.name).vpn = { name: v.name, routeDistinguisher: vpnRouteDistinguisher(v) ?? null };
  const lost: DumpInterface[] = [];
  for (const i of attachments) {
    const node = interfaceOf(i.name, i.description, elanIfs.get(i.name), vpnIfs.get(i.name));
    if (node.elanInstance === null) lost.push(node);
    else networkOf(node.elanInstance).attachments.push(node);
  }
  // Attachments without an elan-interface: under a network named by nothing ('-').
  if (lost.length > 0) networkOf('-').attachments.push(...lost);
  for (const n of out.values()) n.attachments.sort(byName);
  return [...out.values()].sort(byName);
}

/** The gateways named by any of their four entries. */
function buildGateways(
  ifaces: Map<string, Interface>,
  elans: Map<string, ElanInstance>,
  elanIfs: Map<string, ElanInterface>,
  vpnIfs: Map<string, VpnInterface>,
): DumpGateway[] {
  const names = new Set([...ifaces.keys(), ...elans.keys(), ...elanIfs.keys(), ...vpnIfs.keys()]);
  return [...names].sort().map((name): DumpGateway => {
    const iface = ifaces.get(name);
    const elanIf = elanIfs.get(name);
    const vpnIf = vpnIfs.get(name);
    const mac = elanIf?.staticMacEntries?.[0];
    return {
      name,
      node: nodeOfGatewayName(name) ?? '',
      nodeUid:
        parseOwnershipMarker(iface?.description ?? elans.get(name)?.description ?? elanIf?.description)
          ?.uid ?? null,
      interface: iface !== undefined,
      elanInstance: elans.has(name),
      elanInterface: elanIf !== undefined,
      vpnInterface: vpnIf !== undefined,
      address: mac?.ipPrefix ?? null,
      mac: mac?.macAddress ?? null,
      vpn: vpnIf?.vpnInstanceNames[0]?.vpnName ?? null,
      adjacency: adjacencyOf(vpnIf),
      routes: serviceRoutesOf(vpnIf),
    };
  });
}

/** The extra-route adjacencies of a gateway's vpn-interface, sorted by prefix. */
export function serviceRoutesOf(v: VpnInterface | undefined): DumpRoute[] {
  return (v?.adjacencies ?? [])
    .filter((a) => a.adjacencyType !== 'primary-adjacency')
    .map((a) => ({ prefix: a.ipAddress, nextHops: a.nextHopIpList ?? [] }))
    .sort((a, b) => a.prefix.localeCompare(b.prefix));
}

/** A gateway's four entries by their model's label, and whether ODL holds each. */
export function gatewayEntries(g: DumpGateway): { label: string; present: boolean }[] {
  return [
    { label: 'ietf-interface', present: g.interface },
    { label: 'elan-instance', present: g.elanInstance },
    { label: 'elan-interface', present: g.elanInterface },
    { label: 'vpn-interface', present: g.vpnInterface },
  ];
}

function renderGateway(g: DumpGateway): string {
  const missing = gatewayEntries(g)
    .filter((e) => !e.present)
    .map((e) => e.label);
  const lines = [
    `gateway ${g.name}  (node ${g.node})  address ${cell(g.address)}  mac ${cell(g.mac)}  vpn ${cell(g.vpn)}  ${plural(g.routes.length, 'Service route')}${missing.length > 0 ? `  missing: ${missing.join(', ')}` : ''}`,
  ];
  for (const r of g.routes) lines.push(indent(`route ${r.prefix} via ${r.nextHops.join(', ') || '-'}`));
  return lines.join('\n');
}

function renderInterface(i: DumpInterface): string {
  const adj = i.adjacency
    ? `adjacency ${i.adjacency.ipPrefix} mac ${cell(i.adjacency.mac)} gw ${cell(i.adjacency.gatewayIp)}`
    : 'no vpn-interface';
  return `interface ${i.name}  ip ${cell(i.ip)}  mac ${cell(i.mac)}  ${adj}${i.vpn && i.adjacency ? ` (vpn ${i.vpn})` : ''}`;
}

function renderElan(e: DumpElan): string {
  const lines = [
    `elan ${e.name}  (node ${e.nodeIp}, namespace ${e.namespace}, ${plural(e.interfaces.length, 'interface')})`,
  ];
  for (const i of e.interfaces) lines.push(indent(renderInterface(i)));
  return lines.join('\n');
}

export function renderDump(t: DumpTree): string {
  const out: string[] = [`ODL objects owned by cluster ${t.cluster} (${t.profile})`, ''];
  if (t.vpns.length === 0) out.push('No VPN instances.');
  for (const v of t.vpns) {
    out.push(`vpn ${v.name}  (namespace ${cell(v.namespace)}, rd ${cell(v.routeDistinguisher)})`);
    for (const e of v.elans) out.push(indent(renderElan(e)));
  }
  if (t.elansWithoutVpn.length > 0) {
    out.push('', 'ELAN instances whose namespace has no VPN of ours:');
    for (const e of t.elansWithoutVpn) out.push(indent(renderElan(e)));
  }
  if (t.interfacesWithoutElan.length > 0) {
    out.push('', 'Interfaces without an ELAN of ours:');
    for (const i of t.interfacesWithoutElan) out.push(indent(renderInterface(i)));
  }
  if (t.networks.length > 0) {
    out.push('', `extra networks: ${t.networks.length}`);
    for (const n of t.networks) {
      const what = n.nad
        ? `NAD ${n.nad}${n.nadUid ? ` uid ${n.nadUid}` : ''}${n.elanOwned ? '' : ', ELAN missing'}`
        : 'ELAN made in ODL';
      const vpn = n.vpn ? `, vpn ${n.vpn.name} (rd ${cell(n.vpn.routeDistinguisher)})` : '';
      out.push(`  elan ${n.name}  (${what}${vpn})`);
      for (const i of n.attachments) out.push(indent(indent(renderInterface(i))));
    }
  }
  out.push('', `node networks: ${t.nodeNetworks.length}`);
  if (t.nodeNetworks.length > 0)
    out.push(
      indentedTable(
        ['NETWORK', 'NODE', 'SUBNETS'],
        t.nodeNetworks.map((n) => [n.network, n.node, n.subnets.join(', ') || '-']),
      ),
    );
  if (t.gateways.length > 0 || t.gatewayVpn) {
    out.push(
      '',
      `node gateways: ${t.gateways.length}${t.gatewayVpn ? `, in vpn ${t.gatewayVpn.name} (rds ${t.gatewayVpn.routeDistinguishers.join(', ') || '-'})` : ''}`,
    );
    for (const g of t.gateways) out.push(indent(renderGateway(g)));
  }
  out.push('', `k8s-nodes: ${t.k8sNodes.length}`);
  if (t.k8sNodes.length > 0)
    out.push(
      indentedTable(
        ['UID', 'HOST', 'INTERNAL IP', 'POD CIDR'],
        t.k8sNodes.map((n) => [n.uid, cell(n.hostName), cell(n.internalIp), cell(n.podCidr)]),
      ),
    );
  for (const [label, entries] of Object.entries(t.objects ?? {})) {
    out.push('', `${label}: ${entries.length}`);
    for (const e of entries) out.push(`  ${e.name}  ${e.summary}`);
  }
  const foreign = Object.entries(t.foreign);
  if (foreign.length > 0)
    out.push('', `Not shown (owned by someone else): ${foreign.map(([k, n]) => `${n} ${k}`).join(', ')}`);
  if (t.unparsed.length > 0) {
    out.push('', 'Entries that do not parse (ownership unknown):');
    for (const u of t.unparsed) out.push(`  ${u.kind} ${u.name}: ${u.error}`);
  }
  return out.join('\n');
}
