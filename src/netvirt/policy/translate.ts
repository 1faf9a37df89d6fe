/**
 * NetworkPolicy → NetVirt security groups (netvirt-features.md §3.3), pure. The watcher
 * evaluates every selector; NetVirt only sees ACLs and memberships:
 *
 * - every pod on the network gets port security, its addresses (with its MAC, and the IPv6
 *   link-local address of that MAC) as allowed-address-pairs, and ACLs:
 *   - per direction no policy isolates it in, the shared allow-all ACL of that direction;
 *   - per policy that selects it, that policy's ACL of each direction the policy isolates
 *     (an ingress ACL per resolution of the named ports the policy uses, resolved against the
 *     pod's own container ports);
 *   - its node's ACL: the node's addresses and its gateway always reach it, and it them;
 *   - the membership ACL (no rules) of every peer group it belongs to, which rules of other
 *     ACLs name as `remote-group-id` (aclservice matches the members' allowed addresses);
 * - a rule is the cross product of its ports, its peers and both address families, one ACE
 *   each (permit-only: the union of all ACLs is Kubernetes' additive semantics);
 * - `ipBlock.except` is subtracted (CIDR arithmetic); an egress named port splits the peer
 *   group by the number each member gives the name.
 *
 * `PolicyIndex` holds what depends on policies and namespaces only, so a pod's port security
 * is computed from it without looking at other pods; the ACLs need the pods for named ports.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { isIP } from 'node:net';
import {
  ACL_TYPE_IPV4,
  aceRuleName,
  aclName,
  PROTOCOL_NUMBERS,
  type Ace,
  type AceDirection,
  type Acl,
  type AllowedAddressPair,
  type InterfaceAcl,
} from '../acl.js';
import { podAddress, type IpFamily } from '../kube.js';
import { canonicalIp, podMac } from '../names.js';
import type { Profile } from '../profile.js';
import { formatPrefix } from './cidr.js';
import { selectorMatches, type Labels } from './selector.js';
import {
  podGroup,
  type PodGroup,
  type PolicyDirection,
  type PolicyPort,
  type PolicyRule,
  type PolicySpec,
} from './spec.js';

const DIRECTIONS: readonly PolicyDirection[] = ['ingress', 'egress'];
const ANY: Record<4 | 6, string> = { 4: '0.0.0.0/0', 6: '::/0' };

/** What an ACL stands for, for odlcoectl and the reachability analysis. */
export type AclRole =
  | { role: 'allow-all'; direction: PolicyDirection }
  | { role: 'node'; node: string }
  | { role: 'policy'; namespace: string; name: string; direction: PolicyDirection; variant: string }
  | { role: 'group'; group: string };

export interface PolicyAcls {
  /** Desired ACLs by name, without `acl-tag` (allocated against ODL: tags.ts). */
  acls: Map<string, Acl>;
  roles: Map<string, AclRole>;
  /** Per policy (`<ns>/<name>`), what could not be expressed exactly. */
  notes: Map<string, string[]>;
}

/** A named port as a policy uses it. */
interface NamedPort {
  protocol: PolicyPort['protocol'];
  name: string;
}
const namedPortId = (p: NamedPort) => `${p.protocol}/${p.name}`;

/** The number a pod's containers give a named port, if any. */
export function resolveNamedPort(pod: V1Pod, port: NamedPort): number | undefined {
  for (const c of pod.spec?.containers ?? [])
    for (const p of c.ports ?? [])
      if (p.name === port.name && (p.protocol ?? 'TCP') === port.protocol) return p.containerPort;
  return undefined;
}

const podLabels = (pod: V1Pod): Labels => pod.metadata?.labels ?? {};

export class PolicyIndex {
  readonly policies: readonly PolicySpec[];
  /** Peer groups rules name, by id: each has a membership ACL. */
  private readonly groups = new Map<string, PodGroup>();
  /** Groups an egress named port splits by number: group id → the group and its named ports. */
  private readonly namedGroups = new Map<string, { group: PodGroup; ports: NamedPort[] }>();

  constructor(
    readonly clusterName: string,
    readonly profile: Profile,
    policies: readonly PolicySpec[],
    private readonly namespaceLabels: (ns: string) => Labels | undefined,
  ) {
    this.policies = [...policies].sort((a, b) => a.uid.localeCompare(b.uid));
    for (const p of this.policies)
      for (const dir of DIRECTIONS)
        for (const rule of p.rules[dir] ?? []) {
          for (const peer of rule.peers) if (peer.kind === 'pods') this.groups.set(peer.group.id, peer.group);
          if (dir !== 'egress') continue;
          const named = rule.ports.flatMap((x) =>
            typeof x.port === 'string' ? [{ protocol: x.protocol, name: x.port }] : [],
          );
          if (named.length === 0) continue;
          const peers = rule.peers.length > 0 ? rule.peers : [{ kind: 'any' as const }];
          for (const peer of peers) {
            if (peer.kind === 'ipBlock') continue;
            const group = peer.kind === 'pods' ? peer.group : ALL_PODS;
            const entry = this.namedGroups.get(group.id) ?? { group, ports: [] };
            for (const n of named)
              if (!entry.ports.some((x) => namedPortId(x) === namedPortId(n))) entry.ports.push(n);
            this.namedGroups.set(group.id, entry);
          }
        }
  }

  /** Whether any rule uses a named port (then the ACLs depend on the pods' container ports). */
  get usesNamedPorts(): boolean {
    return (
      this.namedGroups.size > 0 ||
      this.policies.some((p) =>
        (p.rules.ingress ?? []).some((r) => r.ports.some((x) => typeof x.port === 'string')),
      )
    );
  }

  /** Whether any peer group selects namespaces by label (then namespace labels decide memberships). */
  get selectsNamespaces(): boolean {
    return [...this.groups.values(), ...[...this.namedGroups.values()].map((g) => g.group)].some(
      (g) => 'selector' in g.namespaces,
    );
  }

  // ---- names

  allowAllAcl(direction: PolicyDirection): string {
    return aclName(this.clusterName, `allow-all:${direction}`);
  }

  nodeAcl(nodeName: string): string {
    return aclName(this.clusterName, `node:${nodeName}`);
  }

  policyAcl(p: PolicySpec, direction: PolicyDirection, variant: string): string {
    return aclName(this.clusterName, `policy:${p.uid}:${direction}${variant === '' ? '' : `:${variant}`}`);
  }

  groupAcl(groupId: string): string {
    return aclName(this.clusterName, `group:${groupId}`);
  }

  // ---- selection

  selects(p: PolicySpec, pod: V1Pod): boolean {
    return pod.metadata?.namespace === p.namespace && selectorMatches(p.podSelector, podLabels(pod));
  }

  inGroup(group: PodGroup, pod: V1Pod): boolean {
    const ns = pod.metadata?.namespace ?? '';
    if ('name' in group.namespaces) {
      if (group.namespaces.name !== ns) return false;
    } else {
      const labels = this.namespaceLabels(ns);
      if (labels === undefined || !selectorMatches(group.namespaces.selector, labels)) return false;
    }
    return selectorMatches(group.pods, podLabels(pod));
  }

  /** The named ports a policy's ingress rules use (resolved per target pod). */
  private ingressNamed(p: PolicySpec): NamedPort[] {
    const out = new Map<string, NamedPort>();
    for (const rule of p.rules.ingress ?? [])
      for (const x of rule.ports)
        if (typeof x.port === 'string')
          out.set(`${x.protocol}/${x.port}`, { protocol: x.protocol, name: x.port });
    return [...out.values()].sort((a, b) => namedPortId(a).localeCompare(namedPortId(b)));
  }

  /** The ingress variant of a policy for a pod: how the pod resolves the policy's named ports. */
  ingressVariant(p: PolicySpec, pod: V1Pod): string {
    return this.ingressNamed(p)
      .map((n) => `${namedPortId(n)}=${resolveNamedPort(pod, n) ?? '-'}`)
      .join(',');
  }

  /** The membership ACLs a pod is in. */
  groupsOf(pod: V1Pod): string[] {
    const out: string[] = [];
    for (const [id, group] of this.groups) if (this.inGroup(group, pod)) out.push(this.groupAcl(id));
    for (const [id, { group, ports }] of this.namedGroups) {
      if (!this.inGroup(group, pod)) continue;
      for (const n of ports) {
        const number = resolveNamedPort(pod, n);
        if (number !== undefined) out.push(this.groupAcl(namedGroupId(id, n, number)));
      }
    }
    return out;
  }

  /**
   * A pod's bindings, by pod object: a pod key may be reconciled many times while the ACLs it
   * awaits appear, and an index lives only as long as the policies and namespace labels it
   * was made from (the watcher makes a new one when they change), as does a pod object.
   */
  private readonly bound = new WeakMap<V1Pod, string[]>();

  /** The ACLs a pod is bound to, in a fixed order. */
  securityGroupsOf(pod: V1Pod): string[] {
    let groups = this.bound.get(pod);
    if (!groups) this.bound.set(pod, (groups = this.bindingsOf(pod)));
    return [...groups];
  }

  private bindingsOf(pod: V1Pod): string[] {
    const out: string[] = [];
    const isolated = new Set<PolicyDirection>();
    for (const p of this.policies) {
      if (!this.selects(p, pod)) continue;
      for (const dir of DIRECTIONS) {
        if (!p.rules[dir]) continue;
        isolated.add(dir);
        out.push(this.policyAcl(p, dir, dir === 'ingress' ? this.ingressVariant(p, pod) : ''));
      }
    }
    out.unshift(...DIRECTIONS.filter((d) => !isolated.has(d)).map((d) => this.allowAllAcl(d)));
    const node = pod.spec?.nodeName;
    if (node) out.push(this.nodeAcl(node));
    out.push(...this.groupsOf(pod));
    return [...new Set(out)];
  }

  /** A pod's port security: its ACLs and its own addresses (anti-spoofing lets only those out). */
  podSecurity(pod: V1Pod, families: readonly IpFamily[]): InterfaceAcl {
    const acl: InterfaceAcl = {
      portSecurityEnabled: true,
      securityGroups: this.securityGroupsOf(pod),
      allowedAddressPairs: addressPairs(pod, families),
    };
    if (this.profile !== 'sodium') acl.interfaceType = 'access-port';
    return acl;
  }

  // ---- ACLs

  /** Every ACL the cluster needs. `pods`: the pods on the network; `nodes`: with their gateway address. */
  acls(pods: readonly V1Pod[], nodes: readonly { node: V1Node; gateway?: string }[]): PolicyAcls {
    const out: PolicyAcls = { acls: new Map(), roles: new Map(), notes: new Map() };
    const add = (name: string, role: AclRole, aces: Ace[]) => {
      const unique = new Map(aces.map((a) => [a.ruleName, a]));
      out.acls.set(name, {
        name,
        type: ACL_TYPE_IPV4,
        aces: [...unique.values()].sort((a, b) => a.ruleName.localeCompare(b.ruleName)),
      });
      out.roles.set(name, role);
    };
    for (const dir of DIRECTIONS)
      add(
        this.allowAllAcl(dir),
        { role: 'allow-all', direction: dir },
        [4, 6].map((f) => ace(dir, ANY[f as 4 | 6])),
      );
    for (const { node, gateway } of nodes) {
      const name = node.metadata?.name;
      if (!name) continue;
      const addresses = (node.status?.addresses ?? [])
        .filter((a) => a.type === 'InternalIP' || a.type === 'ExternalIP')
        .map((a) => a.address);
      if (gateway) addresses.push(gateway);
      const hosts = [...new Set(addresses.filter((a) => isIP(a) !== 0).map(hostPrefix))].sort();
      add(
        this.nodeAcl(name),
        { role: 'node', node: name },
        DIRECTIONS.flatMap((dir) => hosts.map((h) => ace(dir, h))),
      );
    }
    // Every peer group has its ACL, whether or not a rule ends up naming it (a named port no
    // pod defines): its members are bound to it either way.
    const referenced = new Set<string>(this.groups.keys());
    for (const p of this.policies) {
      const notes = [...p.notes];
      const selected = pods.filter((pod) => this.selects(p, pod));
      for (const dir of DIRECTIONS) {
        const rules = p.rules[dir];
        if (!rules) continue;
        const variants =
          dir === 'ingress' && this.ingressNamed(p).length > 0
            ? new Map(selected.map((pod) => [this.ingressVariant(p, pod), pod]))
            : new Map([['', undefined]]);
        for (const [variant, sample] of variants) {
          const aces = rules.flatMap((rule, i) =>
            this.ruleAces(dir, rule, sample, pods, referenced, `spec.${dir}[${i}]`, notes),
          );
          add(
            this.policyAcl(p, dir, variant),
            { role: 'policy', namespace: p.namespace, name: p.name, direction: dir, variant },
            aces,
          );
        }
      }
      if (notes.length > 0) out.notes.set(`${p.namespace}/${p.name}`, [...new Set(notes)]);
    }
    for (const id of referenced) add(this.groupAcl(id), { role: 'group', group: id }, []);
    return out;
  }

  /** One rule's ACEs: ports × peers × families. */
  private ruleAces(
    dir: PolicyDirection,
    rule: PolicyRule,
    target: V1Pod | undefined,
    pods: readonly V1Pod[],
    referenced: Set<string>,
    where: string,
    notes: string[],
  ): Ace[] {
    const out: Ace[] = [];
    const ports: (PolicyPort | undefined)[] = rule.ports.length > 0 ? rule.ports : [undefined];
    const peers = rule.peers.length > 0 ? rule.peers : [{ kind: 'any' as const }];
    for (const port of ports) {
      const named = typeof port?.port === 'string' ? { protocol: port.protocol, name: port.port } : undefined;
      for (const peer of peers) {
        if (named && dir === 'egress') {
          // Resolved against each destination pod: the peer group split by number.
          if (peer.kind === 'ipBlock') {
            notes.push(
              `${where}: named port ${named.name} cannot be resolved for an ipBlock destination: it matches nothing there`,
            );
            continue;
          }
          const group = peer.kind === 'pods' ? peer.group : ALL_PODS;
          const numbers = new Set(
            pods.filter((pod) => this.inGroup(group, pod)).map((pod) => resolveNamedPort(pod, named)),
          );
          for (const n of [...numbers].filter((x): x is number => x !== undefined).sort((a, b) => a - b)) {
            const id = namedGroupId(group.id, named, n);
            referenced.add(id);
            for (const f of [4, 6] as const)
              out.push(
                ace(
                  dir,
                  ANY[f],
                  PROTOCOL_NUMBERS[lower(named.protocol)],
                  { lower: n, upper: n },
                  this.groupAcl(id),
                ),
              );
          }
          continue;
        }
        let range: { lower: number; upper: number } | undefined;
        if (named) {
          const n = target ? resolveNamedPort(target, named) : undefined;
          if (n === undefined) continue; // a named port the pod does not define matches nothing
          range = { lower: n, upper: n };
        } else if (typeof port?.port === 'number')
          range = { lower: port.port, upper: port.endPort ?? port.port };
        const protocol = port ? PROTOCOL_NUMBERS[lower(port.protocol)] : undefined;
        if (peer.kind === 'any') for (const f of [4, 6] as const) out.push(ace(dir, ANY[f], protocol, range));
        else if (peer.kind === 'ipBlock')
          for (const p of peer.prefixes) out.push(ace(dir, formatPrefix(p), protocol, range));
        else {
          referenced.add(peer.group.id);
          for (const f of [4, 6] as const)
            out.push(ace(dir, ANY[f], protocol, range, this.groupAcl(peer.group.id)));
        }
      }
    }
    return out;
  }
}

/** Every pod of every namespace: the destinations of an egress rule without peers. */
const ALL_PODS = podGroup({ selector: {} }, {});

const namedGroupId = (groupId: string, port: NamedPort, number: number) =>
  `${groupId};port=${namedPortId(port)}=${number}`;

const lower = (p: PolicyPort['protocol']) => p.toLowerCase() as 'tcp' | 'udp' | 'sctp';

const hostPrefix = (ip: string) => `${canonicalIp(ip)}/${isIP(ip) === 6 ? 128 : 32}`;

/** One permit ACE: the network on the far side, optional protocol, port range and remote group. */
function ace(
  direction: AceDirection,
  network: string,
  protocol?: number,
  range?: { lower: number; upper: number },
  remoteGroupId?: string,
): Ace {
  const v6 = network.includes(':');
  const side = direction === 'ingress' ? 'source' : 'destination';
  const matches = { [`${side}Ipv${v6 ? 6 : 4}Network`]: network } as Ace['matches'];
  if (protocol !== undefined) matches.protocol = protocol;
  if (range) matches.destinationPortRange = range;
  const content = {
    direction,
    action: 'permit' as const,
    matches,
    ...(remoteGroupId ? { remoteGroupId } : {}),
  };
  return { ...content, ruleName: aceRuleName(content), deleted: false };
}

/** The IPv6 link-local address a MAC gives (EUI-64), which NetVirt lets out like the pod's own. */
export function linkLocalOf(mac: string): string {
  const b = mac.split(':').map((x) => parseInt(x, 16));
  const eui = [b[0]! ^ 0x02, b[1]!, b[2]!, 0xff, 0xfe, b[3]!, b[4]!, b[5]!];
  const groups = [0, 2, 4, 6].map((i) => ((eui[i]! << 8) | eui[i + 1]!).toString(16));
  return canonicalIp(`fe80::${groups.join(':')}`);
}

/** The pod's addresses with its MAC, and the link-local address of that MAC. */
export function addressPairs(pod: V1Pod, families: readonly IpFamily[]): AllowedAddressPair[] {
  const routed = podAddress(pod, families);
  if (routed === undefined) return [];
  const macAddress = podMac(routed);
  const listed = (pod.status?.podIPs ?? []).map((p) => p.ip).filter((ip) => isIP(ip) !== 0);
  const ips = [...new Set([routed, ...listed].map(canonicalIp)), linkLocalOf(macAddress)];
  return ips.map((ipAddress) => ({ macAddress, ipAddress }));
}
