/**
 * The table of ODL object kinds odlcoe reads and writes (the contract is kind.ts). Each entry
 * gathers what the code knows about its kind; the functions it names live beside the kind's
 * model (interfaces.ts, elan.ts, vpn.ts, k8s-node.ts, coe/) and its diff (diff.ts, coe/diff.ts).
 *
 * Dependencies, as NetVirt needs them:
 * - an elan-interface or vpn-interface names the ietf-interface of the same name (a leafref:
 *   the ELAN and VPN services bind only once Genius knows the interface), and the vpn-interface
 *   is owned through it;
 * - an elan-interface needs its elan-instance, a vpn-interface its vpn-instance(s): ODL accepts
 *   dangling names and then silently does nothing, so odlcoe never writes one;
 * - a COE endpoints entry is owned through the services entry of the same uid;
 * - an interface's `security-groups` name ACLs, and an ACE's `remote-group-id` another ACL:
 *   aclservice binds what exists when the reference is written (on Aluminium a rule whose
 *   remote ACL has no tag yet is skipped for good), so the ACLs come first.
 * The writer enforces them for every write and delete (watcher/object-writer.ts).
 */
import { EntryReader } from './json.js';
import { ACL_MODULE, aclEntry, isClusterAclName, liveAces, readAcl, type Acl } from './acl.js';
import { aclKeyOf, aclKindName, aclOwnership, diffAcl } from './acl-diff.js';
import { coeEndpointsOwnership, coePodOwnership, coeServiceOwnership } from './coe/ownership.js';
import { diffCoeEndpoints, diffCoePod, diffCoeService } from './coe/diff.js';
import {
  coeEndpointsEntry,
  coePodEntry,
  coeServiceEntry,
  readCoeEndpoints,
  readCoePod,
  readCoeService,
  type CoeEndpoints,
  type CoePod,
  type CoeService,
} from './coe/model.js';
import {
  diffElanInstance,
  diffElanInterface,
  diffInterface,
  diffVpnInstance,
  diffVpnInterface,
} from './diff.js';
import {
  elanInstanceEntry,
  elanInterfaceEntry,
  readElanInstance,
  readElanInterface,
  type ElanInstance,
  type ElanInterface,
} from './elan.js';
import { dhcpNetworkEntry, readDhcpNetwork, type DhcpNetwork } from './dhcp.js';
import { interfaceEntry, readInterface, type Interface } from './interfaces.js';
import { diffK8sNode, k8sNodeEntry, k8sNodeOwnership, readK8sNode, type K8sNode } from './k8s-node.js';
import { KindTable, type KindContext, type OdlKindSpec } from './kind.js';
import {
  elanMarkerKind,
  interfaceMarkerKind,
  markerOwnership,
  vpnInstanceOwnership,
  vpnInterfaceOwnership,
  vpnRouteDistinguisher,
} from './ownership.js';
import { isGatewayName } from './names.js';
import { nodeOfCoeGateway } from './coe/gateway.js';
import { attachmentOfInterfaceName, isNetworkInstanceName } from './network-names.js';
import {
  elanKey,
  gatewayKey,
  keyOfInterfaceName,
  keyOfNetworkInstance,
  keyOfVpnName,
  NETWORK_POLICY_KEY,
  nodeKey,
  nodeNetworkKey,
} from './keys.js';
import { diffNodeNetwork, nodeNetworkOwnership, nodeNetworkSummary, nodeOfNetwork } from './node-network.js';
import { namedKey, podUidKey, serviceUidKey } from './coe/keys.js';
import { netvirtPaths, vpnModule } from './paths.js';
import type { Profile } from './profile.js';
import {
  readVpnInstance,
  readVpnInterface,
  vpnInstanceEntry,
  vpnInterfaceEntry,
  type VpnInstance,
  type VpnInterface,
} from './vpn.js';

/** Every entry type by kind. */
export interface OdlEntries {
  vpnInterface: VpnInterface;
  elanInterface: ElanInterface;
  interface: Interface;
  elanInstance: ElanInstance;
  vpnInstance: VpnInstance;
  k8sNode: K8sNode;
  dhcpNetwork: DhcpNetwork;
  coePod: CoePod;
  coeService: CoeService;
  coeEndpoints: CoeEndpoints;
  acl: Acl;
}
export type OdlKind = keyof OdlEntries;

/** One raw list entry parsed as the list's own parser would (same error locations). */
const parseOne = <T>(raw: Record<string, unknown>, list: string, read: (r: EntryReader) => T): T =>
  read(EntryReader.of(raw, `${list}[0]`));

const paths = netvirtPaths;
const orDash = (v: string | number | undefined) => (v === undefined ? '-' : String(v));
const ietfOf = (ctx: KindContext, name: string) => ctx.get('interface', name) as Interface | undefined;
/** Every elan-interface joins an ELAN of odlcoe's, except an attachment's to a user's ELAN. */
const joinsOwnElan = (e: ElanInterface) =>
  attachmentOfInterfaceName(e.name) === undefined || isNetworkInstanceName(e.elanInstanceName);

export const interfaceKind: OdlKindSpec<Interface> = {
  kind: 'interface',
  label: 'ietf-interface',
  module: () => 'ietf-interfaces',
  list: (p) => [...paths(p).interfaces(), { name: 'interface' }],
  entry: (p, name) => paths(p).interface(name),
  keyMember: 'name',
  parse: (_p, raw) => parseOne(raw, 'interface', readInterface),
  nameOf: (e) => e.name,
  build: (p, e) => interfaceEntry(e, p),
  ownership: (a, ctx) => markerOwnership(a.description, interfaceMarkerKind(a.name), ctx.owner),
  ownershipRule:
    'description marker odlcoe:<cluster>:pod:<pod uid>, or for a node gateway (odlcoe-gw.<node>) odlcoe:<cluster>:node-gateway:<node uid>',
  diff: (d, a, ctx, opts) => diffInterface(d, a, ctx.owner, opts),
  after: ['acl'],
  prerequisites: (e) => (e.acl?.securityGroups ?? []).map((g) => ({ kind: 'acl', name: g, owned: true })),
  ownerKey: (name) => keyOfInterfaceName(name),
  summary: (e) =>
    `${e.type}${e.parentInterface ? `, bound to ${e.parentInterface}` : ', not bound to a port'}`,
};

export const elanInstanceKind: OdlKindSpec<ElanInstance> = {
  kind: 'elanInstance',
  label: 'elan-instance',
  module: () => 'elan',
  list: (p) => [...paths(p).elanInstances(), { name: 'elan-instance' }],
  entry: (p, name) => paths(p).elanInstance(name),
  keyMember: 'elan-instance-name',
  parse: (_p, raw) => parseOne(raw, 'elan-instance', readElanInstance),
  nameOf: (e) => e.name,
  build: (_p, e) => elanInstanceEntry(e),
  ownership: (a, ctx) => markerOwnership(a.description, elanMarkerKind(a.name), ctx.owner),
  ownershipRule:
    'description marker odlcoe:<cluster>:node-namespace:<node uid × namespace uid>, or for a node gateway ELAN (odlcoe-gw.<node>) odlcoe:<cluster>:node-gateway:<node uid>, or for a network ELAN (odlcoe-net.<ns>.<nad>) odlcoe:<cluster>:network:<NAD uid>',
  diff: (d, a, ctx, opts) => diffElanInstance(d, a, ctx.owner, opts),
  after: [],
  prerequisites: () => [],
  ownerKey: (name) =>
    isGatewayName(name) ? keyOfInterfaceName(name) : (keyOfNetworkInstance(name) ?? elanKey(name)),
  summary: (e) => `segment ${orDash(e.segmentType)}, elan-tag ${orDash(e.elanTag)}`,
};

export const elanInterfaceKind: OdlKindSpec<ElanInterface> = {
  kind: 'elanInterface',
  label: 'elan-interface',
  module: () => 'elan',
  list: (p) => [...paths(p).elanInterfaces(), { name: 'elan-interface' }],
  entry: (p, name) => paths(p).elanInterface(name),
  keyMember: 'name',
  parse: (_p, raw) => parseOne(raw, 'elan-interface', readElanInterface),
  nameOf: (e) => e.name,
  build: (_p, e) => elanInterfaceEntry(e),
  ownership: (a, ctx) => markerOwnership(a.description, interfaceMarkerKind(a.name), ctx.owner),
  ownershipRule: 'description marker, as its ietf-interface',
  diff: (d, a, ctx, opts) => diffElanInterface(d, a, ctx.owner, opts),
  after: ['interface', 'elanInstance'],
  prerequisites: (e) => [
    { kind: 'interface', name: e.name, owned: true },
    // An attachment may join an ELAN an ODL user made (a NAD's "elan"): it must exist, not be ours.
    { kind: 'elanInstance', name: e.elanInstanceName, owned: joinsOwnElan(e) },
  ],
  ownerKey: (name) => keyOfInterfaceName(name),
  summary: (e) => {
    const mac = e.staticMacEntries?.[0];
    return `in ${e.elanInstanceName}${mac ? `, ${mac.macAddress} ${orDash(mac.ipPrefix)}` : ''}`;
  },
};

export const vpnInstanceKind: OdlKindSpec<VpnInstance> = {
  kind: 'vpnInstance',
  label: 'vpn-instance',
  module: vpnModule,
  list: (p) => [...paths(p).vpnInstances(), { name: 'vpn-instance' }],
  entry: (p, name) => paths(p).vpnInstance(name),
  keyMember: 'vpn-instance-name',
  parse: (p, raw) => parseOne(raw, 'vpn-instance', (r) => readVpnInstance(p, r)),
  nameOf: (e) => e.name,
  build: (_p, e) => vpnInstanceEntry(e),
  ownership: (a, ctx) => vpnInstanceOwnership(a, ctx.owner),
  ownershipRule:
    'Sodium: description marker odlcoe:<cluster>:namespace:<namespace uid> (a network VPN odlcoe-net.<ns>.<nad>: network:<NAD uid>); Aluminium (no description leaf): one RD under the cluster RD administrator, exactly the cluster route target (a network VPN: exactly its own RD), bgpvpn-type InternalVPN',
  diff: (d, a, ctx, opts) => diffVpnInstance(d, a, ctx.owner, opts),
  after: [],
  prerequisites: () => [],
  ownerKey: (name) => keyOfVpnName(name),
  summary: (e) => `rd ${orDash(vpnRouteDistinguisher(e))}`,
};

export const vpnInterfaceKind: OdlKindSpec<VpnInterface> = {
  kind: 'vpnInterface',
  label: 'vpn-interface',
  module: vpnModule,
  list: (p) => [...paths(p).vpnInterfaces(), { name: 'vpn-interface' }],
  entry: (p, name) => paths(p).vpnInterface(name),
  keyMember: 'name',
  parse: (p, raw) => parseOne(raw, 'vpn-interface', (r) => readVpnInterface(p, r)),
  nameOf: (e) => e.name,
  build: (p: Profile, e) => vpnInterfaceEntry(p, e),
  ownership: (a, ctx) => vpnInterfaceOwnership(a, ietfOf(ctx, a.name), ctx.owner),
  ownershipRule: 'through the ietf-interface of the same name (the model has no description leaf)',
  diff: (d, a, ctx, opts) =>
    diffVpnInterface(d, a, ietfOf(ctx, (d ?? a)?.name ?? opts?.name ?? ''), ctx.owner, opts),
  after: ['interface', 'vpnInstance'],
  prerequisites: (e) => [
    { kind: 'interface', name: e.name, owned: true },
    ...e.vpnInstanceNames.map((v) => ({ kind: 'vpnInstance', name: v.vpnName, owned: true })),
  ],
  ownerKey: (name) => keyOfInterfaceName(name),
  summary: (e) => {
    const adj = e.adjacencies.find((a) => a.adjacencyType === 'primary-adjacency');
    const routes = e.adjacencies.filter((a) => a.adjacencyType === 'extra-route').length;
    return `in ${e.vpnInstanceNames.map((v) => v.vpnName).join(', ')}, adjacency ${orDash(adj?.ipAddress)} mac ${orDash(adj?.macAddress)} gateway ${orDash(adj?.subnetGatewayIp)}${routes > 0 ? `, ${routes} extra route(s)` : ''}`;
  },
};

export const k8sNodeKind: OdlKindSpec<K8sNode> = {
  kind: 'k8sNode',
  label: 'k8s-node',
  module: () => 'k8s-node',
  list: (p) => [...paths(p).k8sNodesInfo(), { name: 'k8s-nodes' }],
  entry: (p, uid) => paths(p).k8sNode(uid),
  keyMember: 'uid',
  parse: (_p, raw) => parseOne(raw, 'k8s-nodes', readK8sNode),
  nameOf: (e) => e.uid,
  build: (_p, e) => k8sNodeEntry(e),
  ownership: (a, ctx) => k8sNodeOwnership(a, ctx.owner),
  ownershipRule: 'cluster-id = the name-based UUID of odlcoe:<cluster>',
  diff: (d, a, ctx, opts) => diffK8sNode(d, a, ctx.owner, opts),
  after: [],
  prerequisites: () => [],
  ownerKey: (uid) => nodeKey(uid),
  summary: (e) => `node ${orDash(e.hostName)} ${orDash(e.internalIpAddress)}, pod-cidr ${orDash(e.podCidr)}`,
};

/**
 * `dhcp_allocation_pool` networks: odlcoe's are the node networks (`odlcoe-node:<node>`, one
 * key per node name: the entry outlives the Node object while its subnet is in use), any other
 * network is someone else's and only read.
 */
export const dhcpNetworkKind: OdlKindSpec<DhcpNetwork> = {
  kind: 'dhcpNetwork',
  label: 'dhcp-network',
  module: () => 'dhcp_allocation_pool',
  list: (p) => [...paths(p).dhcpAllocationPool(), { name: 'network' }],
  entry: (p, name) => paths(p).dhcpNetwork(name),
  keyMember: 'network-id',
  parse: (_p, raw) => parseOne(raw, 'network', readDhcpNetwork),
  nameOf: (e) => e.networkId,
  build: (_p, e) => dhcpNetworkEntry(e),
  ownership: (a) => nodeNetworkOwnership(a),
  ownershipRule:
    "network-id in odlcoe's name space odlcoe-node:<node name> (the model has no description leaf); the node key of that name owns it",
  diff: (d, a, ctx, opts) => diffNodeNetwork(d, a, ctx.owner, opts),
  after: [],
  prerequisites: () => [],
  ownerKey: (name) => {
    const node = nodeOfNetwork(name);
    return node === undefined ? undefined : nodeNetworkKey(node);
  },
  summary: (e) => nodeNetworkSummary(e),
};

/** A services entry and its endpoints entry (same uid) belong to the Service's key. */
function serviceOwnerKey(uid: string, ctx: KindContext): string {
  const service = ctx.get('coeService', uid) as CoeService | undefined;
  const named = service && namedKey(service);
  return named ? `service/${named}` : serviceUidKey(uid);
}

const uidOpts = (opts: { name?: string } | undefined) => (opts?.name !== undefined ? { uid: opts.name } : {});

export const coePodKind: OdlKindSpec<CoePod> = {
  kind: 'coePod',
  label: 'coe-pod',
  module: () => 'pod',
  list: (p) => [...paths(p).coePods(), { name: 'pods' }],
  entry: (p, uid) => paths(p).coePod(uid),
  keyMember: 'uid',
  parse: (_p, raw) => parseOne(raw, 'pods', readCoePod),
  nameOf: (e) => e.uid,
  build: (_p, e) => coePodEntry(e),
  ownership: (a, ctx) => coePodOwnership(a, ctx.owner.clusterName),
  ownershipRule: 'cluster-id = the name-based UUID of odlcoe:<cluster>',
  diff: (d, a, ctx, opts) => diffCoePod(d, a, ctx.owner, uidOpts(opts)),
  after: [],
  prerequisites: () => [],
  ownerKey: (uid, ctx) => {
    const entry = ctx.get('coePod', uid) as CoePod | undefined;
    const gatewayOf = entry && nodeOfCoeGateway(entry);
    if (gatewayOf !== undefined) return gatewayKey(gatewayOf);
    const named = entry && namedKey(entry);
    return named ? `pod/${named}` : podUidKey(uid);
  },
  summary: (e) => `${orDash(e.networkNs)}/${orDash(e.name)} on ${orDash(e.hostIpAddress)}`,
};

export const coeServiceKind: OdlKindSpec<CoeService> = {
  kind: 'coeService',
  label: 'coe-service',
  module: () => 'service',
  list: (p) => [...paths(p).coeServices(), { name: 'services' }],
  entry: (p, uid) => paths(p).coeService(uid),
  keyMember: 'uid',
  parse: (_p, raw) => parseOne(raw, 'services', readCoeService),
  nameOf: (e) => e.uid,
  build: (_p, e) => coeServiceEntry(e),
  ownership: (a, ctx) => coeServiceOwnership(a, ctx.owner.clusterName),
  ownershipRule: 'cluster-id = the name-based UUID of odlcoe:<cluster>',
  diff: (d, a, ctx, opts) => diffCoeService(d, a, ctx.owner, uidOpts(opts)),
  after: [],
  prerequisites: () => [],
  ownerKey: (uid, ctx) => serviceOwnerKey(uid, ctx),
  summary: (e) => `${orDash(e.networkNs)}/${orDash(e.name)} cluster IP ${orDash(e.clusterIpAddress)}`,
};

export const coeEndpointsKind: OdlKindSpec<CoeEndpoints> = {
  kind: 'coeEndpoints',
  label: 'coe-endpoints',
  module: () => 'service',
  list: (p) => [...paths(p).coeEndpointsInfo(), { name: 'endpoints' }],
  entry: (p, uid) => paths(p).coeEndpoints(uid),
  keyMember: 'uid',
  parse: (_p, raw) => parseOne(raw, 'endpoints', readCoeEndpoints),
  nameOf: (e) => e.uid,
  build: (_p, e) => coeEndpointsEntry(e),
  ownership: (a, ctx) =>
    coeEndpointsOwnership(a, ctx.get('coeService', a.uid) as CoeService | undefined, ctx.owner.clusterName),
  ownershipRule: 'through the services entry of the same uid (the model has no cluster-id)',
  diff: (d, a, ctx, opts) => {
    const uid = (d ?? a)?.uid ?? opts?.name ?? '';
    return diffCoeEndpoints(
      d,
      a,
      ctx.get('coeService', uid) as CoeService | undefined,
      ctx.owner,
      uidOpts(opts),
    );
  },
  after: ['coeService'],
  prerequisites: (e) => [{ kind: 'coeService', name: e.uid, owned: true }],
  ownerKey: (uid, ctx) => serviceOwnerKey(uid, ctx),
  summary: (e) => `${orDash(e.networkNs)}/${orDash(e.name)}, ${e.endpointAddresses?.length ?? 0} address(es)`,
};

/**
 * NetVirt's security groups. An ACE naming another ACL as its remote group needs that ACL
 * first; both are of this kind, so the order is a prerequisite only (`after` cannot name the
 * kind itself), and the plan retires the referring rules before the group they refer to.
 */
export const aclKind: OdlKindSpec<Acl> = {
  kind: 'acl',
  label: 'acl',
  module: () => ACL_MODULE,
  list: (p) => [...paths(p).accessLists(), { name: 'acl' }],
  entry: (p, name) => {
    const key = aclKeyOf(name);
    return paths(p).acl(key.name, key.type);
  },
  keyMember: 'acl-name',
  parse: (_p, raw) => parseOne(raw, 'acl', readAcl),
  nameOf: (e) => aclKindName(e),
  build: (p, e) => aclEntry(p, e),
  ownership: (a, ctx) => aclOwnership(a, ctx.owner),
  ownershipRule:
    'acl-type ipv4-acl and an acl-name that is a version-8 UUID starting with the cluster tag (the first 32 bits of SHA-256 of odlcoe:<cluster>); the model has no description leaf',
  diff: (d, a, ctx, opts) => diffAcl(d, a, ctx.owner, opts),
  after: [],
  prerequisites: (e) =>
    [
      ...new Set(
        liveAces(e).flatMap((a) => (a.remoteGroupId && a.remoteGroupId !== e.name ? [a.remoteGroupId] : [])),
      ),
    ].map((g) => ({ kind: 'acl', name: g, owned: true })),
  ownerKey: (name, ctx) =>
    isClusterAclName(name, ctx.owner.clusterName)
      ? (ctx.owner.aclKey?.(name) ?? NETWORK_POLICY_KEY)
      : undefined,
  summary: (e) => {
    const live = liveAces(e);
    const dying = e.aces.length - live.length;
    return `${live.length} rule(s)${dying > 0 ? `, ${dying} being removed` : ''}${e.aclTag !== undefined ? `, acl-tag ${e.aclTag}` : ''}`;
  },
};

/** What the netvirt backend writes (and odlcoectl reads for it). */
export const NETVIRT_KINDS = new KindTable([
  vpnInterfaceKind,
  elanInterfaceKind,
  interfaceKind,
  aclKind,
  elanInstanceKind,
  vpnInstanceKind,
  k8sNodeKind,
  dhcpNetworkKind,
]);

/** What the coe-northbound backend writes. */
export const COE_KINDS = new KindTable([coePodKind, coeEndpointsKind, coeServiceKind, k8sNodeKind]);
