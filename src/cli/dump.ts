/**
 * `odlcoectl dump`: what this cluster owns in ODL, as a tree: VPN (namespace) → ELAN (node ×
 * namespace) → interfaces (pods), plus the k8s-node entries. Reads ODL only. Foreign entries
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
import { parseOwnershipMarker, vpnName } from '../netvirt/names.js';
import { vpnRouteDistinguisher, type OwnerContext } from '../netvirt/ownership.js';
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

export interface DumpTree {
  cluster: string;
  profile: string;
  vpns: DumpVpn[];
  /** Owned ELANs whose namespace has no owned VPN. */
  elansWithoutVpn: DumpElan[];
  /** Owned interfaces whose elan-interface is missing or names an ELAN that is not ours. */
  interfacesWithoutElan: DumpInterface[];
  /** k8s-node entries (where ODL has the COE models). */
  k8sNodes: DumpK8sNode[];
  /** Node networks `odlcoe-node:<node>` (dhcp_allocation_pool): each node's pod subnet. */
  nodeNetworks: DumpNodeNetwork[];
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
  const owned = <T>(kind: string) => state.owned(kind, owner) as T[];
  const ifaces = owned<Interface>('interface');
  const elanIfs = new Map(owned<ElanInterface>('elanInterface').map((e) => [e.name, e]));
  const vpnIfs = new Map(owned<VpnInterface>('vpnInterface').map((e) => [e.name, e]));
  const elans = owned<ElanInstance>('elanInstance');
  const vpns = owned<VpnInstance>('vpnInstance');

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
  const nodeNetworks: DumpNodeNetwork[] = (has('dhcpNetwork') ? owned<DhcpNetwork>('dhcpNetwork') : [])
    .map((n) => ({
      network: n.networkId,
      node: nodeOfNetwork(n.networkId) ?? '',
      subnets: networkSubnets(n),
    }))
    .sort((a, b) => a.network.localeCompare(b.network));
  const k8sNodes: DumpK8sNode[] = (has('k8sNode') ? owned<K8sNode>('k8sNode') : [])
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
    k8sNodes,
    nodeNetworks,
    foreign,
    unparsed: unparsed
      .map((u) => ({ kind: table.label(u.kind), name: u.name, error: u.error }))
      .sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name)),
    ...(others.length > 0 ? { objects } : {}),
  };
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
  out.push('', `node networks: ${t.nodeNetworks.length}`);
  if (t.nodeNetworks.length > 0)
    out.push(
      indentedTable(
        ['NETWORK', 'NODE', 'SUBNETS'],
        t.nodeNetworks.map((n) => [n.network, n.node, n.subnets.join(', ') || '-']),
      ),
    );
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
