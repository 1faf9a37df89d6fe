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

/**
 * The pods ACLs are computed over, by namespace (the watcher's view indexes them so): a policy
 * selects pods of its own namespace only, and a peer group names namespaces, so no computation
 * scans every pod of the cluster per policy.
 */
export interface PodSource {
  inNamespace(namespace: string): readonly V1Pod[];
  namespaces(): Iterable<string>;
}

/** A pod list as a `PodSource`. */
export function podSourceOf(pods: readonly V1Pod[]): PodSource {
  const byNamespace = new Map<string, V1Pod[]>();
  for (const pod of pods) {
    const ns = pod.metadata?.namespace ?? '';
    const list = byNamespace.get(ns);
    if (list) list.push(pod);
    else byNamespace.set(ns, [pod]);
  }
  return { inNamespace: (ns) => byNamespace.get(ns) ?? [], namespaces: () => byNamespace.keys() };
}

/** One computation's view of the pods: members of a group are looked up once per group. */
class Pods {
  private readonly members = new Map<string, V1Pod[]>();
  constructor(
    readonly source: PodSource,
    private readonly index: PolicyIndex,
  ) {}

  of(group: PodGroup): V1Pod[] {
    let out = this.members.get(group.id);
    if (!out) this.members.set(group.id, (out = this.index.members(group, this.source)));
    return out;
  }
}

const asSource = (pods: readonly V1Pod[] | PodSource): PodSource =>
  Array.isArray(pods) ? podSourceOf(pods) : (pods as PodSource);

export class PolicyIndex {
  readonly policies: readonly PolicySpec[];
  /** The policies of each namespace (a policy selects pods of its own namespace only). */
  private readonly byNamespace = new Map<string, PolicySpec[]>();
  /** ACL names by what they stand for: a name is a hash, and pods ask for theirs often. */
  private readonly names = new Map<string, string>();
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
    for (const p of this.policies) {
      const list = this.byNamespace.get(p.namespace);
      if (list) list.push(p);
      else this.byNamespace.set(p.namespace, [p]);
    }
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

  /** The policies of a namespace, in the index's order. */
  policiesIn(namespace: string): readonly PolicySpec[] {
    return this.byNamespace.get(namespace) ?? [];
  }

  /** A policy by namespace and name. */
  policy(namespace: string, name: string): PolicySpec | undefined {
    return this.policiesIn(namespace).find((p) => p.name === name);
  }

  /** Whether a policy's ingress rules use named ports (its ingress ACLs depend on its pods' ports). */
  hasIngressNamedPorts(p: PolicySpec): boolean {
    return this.ingressNamed(p).length > 0;
  }

  /** The policies whose egress rules resolve named ports against `group`'s members. */
  policiesNamingGroup(groupId: string): PolicySpec[] {
    if (!this.namedGroups.has(groupId)) return [];
    return this.policies.filter((p) =>
      (p.rules.egress ?? []).some(
        (r) =>
          r.ports.some((x) => typeof x.port === 'string') &&
          (r.peers.length === 0
            ? groupId === ALL_PODS.id
            : r.peers.some((x) => x.kind === 'pods' && x.group.id === groupId)),
      ),
    );
  }

  /** The peer groups an egress named port splits by number, with the named ports. */
  namedPortGroups(): { group: PodGroup; ports: readonly NamedPort[] }[] {
    return [...this.namedGroups.values()];
  }

  // ---- names

  private name(stable: string): string {
    let name = this.names.get(stable);
    if (name === undefined) this.names.set(stable, (name = aclName(this.clusterName, stable)));
    return name;
  }

  allowAllAcl(direction: PolicyDirection): string {
    return this.name(`allow-all:${direction}`);
  }

  nodeAcl(nodeName: string): string {
    return this.name(`node:${nodeName}`);
  }

  policyAcl(p: PolicySpec, direction: PolicyDirection, variant: string): string {
    return this.name(`policy:${p.uid}:${direction}${variant === '' ? '' : `:${variant}`}`);
  }

  groupAcl(groupId: string): string {
    return this.name(`group:${groupId}`);
  }

  // ---- selection

  selects(p: PolicySpec, pod: V1Pod): boolean {
    return pod.metadata?.namespace === p.namespace && selectorMatches(p.podSelector, podLabels(pod));
  }

  /** The members of a group among `pods`, looking only at the namespaces it names. */
  members(group: PodGroup, pods: PodSource): V1Pod[] {
    const by = group.namespaces;
    const namespaces =
      'name' in by
        ? [by.name]
        : [...pods.namespaces()].filter((ns) => {
            const labels = this.namespaceLabels(ns);
            return labels !== undefined && selectorMatches(by.selector, labels);
          });
    return namespaces.flatMap((ns) =>
      pods.inNamespace(ns).filter((pod) => selectorMatches(group.pods, podLabels(pod))),
    );
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
    for (const p of this.policiesIn(pod.metadata?.namespace ?? '')) {
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
  //
  // The ACLs fall in two parts, planned by different keys (plan-policy.ts): each policy's own
  // (`policyAcls`), and the shared ones (`sharedAcls`: allow-all, per node, the membership ACL
  // of every peer group). `aclNames` gives every desired name without computing a rule.

  /** Every ACL the cluster needs. `pods`: the pods on the network; `nodes`: with their gateway address. */
  acls(pods: readonly V1Pod[] | PodSource, nodes: readonly NodeGateway[]): PolicyAcls {
    const view = new Pods(asSource(pods), this);
    const out = this.sharedAcls(view.source, nodes);
    for (const p of this.policies) {
      const own = this.policyAclsOver(p, view);
      for (const [name, acl] of own.acls) out.acls.set(name, acl);
      for (const [name, role] of own.roles) out.roles.set(name, role);
      for (const [id, notes] of own.notes) out.notes.set(id, notes);
    }
    return out;
  }

  /** The ACLs every pod may be bound to whatever the policies say: allow-all, per node, per peer group. */
  sharedAcls(pods: PodSource, nodes: readonly NodeGateway[]): PolicyAcls {
    const out = emptyAcls();
    for (const dir of DIRECTIONS)
      addAcl(
        out,
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
      addAcl(
        out,
        this.nodeAcl(name),
        { role: 'node', node: name },
        DIRECTIONS.flatMap((dir) => hosts.map((h) => ace(dir, h))),
      );
    }
    for (const id of this.groupIds(new Pods(pods, this)))
      addAcl(out, this.groupAcl(id), { role: 'group', group: id }, []);
    return out;
  }

  /**
   * Every peer group's id, the splits of egress named ports included (one per number a member
   * gives the name). Every peer group has its ACL, whether or not a rule ends up naming it (a
   * named port no pod defines): its members are bound to it either way.
   */
  private groupIds(pods: Pods): string[] {
    const out = new Set<string>(this.groups.keys());
    for (const [id, { group, ports }] of this.namedGroups)
      for (const n of ports)
        for (const number of numbersOf(pods.of(group), n)) out.add(namedGroupId(id, n, number));
    return [...out];
  }

  /** One policy's ACLs: per direction it isolates, and for ingress per named-port resolution. */
  policyAcls(p: PolicySpec, pods: PodSource): PolicyAcls {
    return this.policyAclsOver(p, new Pods(pods, this));
  }

  private policyAclsOver(p: PolicySpec, view: Pods): PolicyAcls {
    const out = emptyAcls();
    const notes = [...p.notes];
    for (const [dir, variant, sample] of this.variants(p, view.source)) {
      const aces = (p.rules[dir] ?? []).flatMap((rule, i) =>
        this.ruleAces(dir, rule, sample, view, `spec.${dir}[${i}]`, notes),
      );
      addAcl(
        out,
        this.policyAcl(p, dir, variant),
        { role: 'policy', namespace: p.namespace, name: p.name, direction: dir, variant },
        aces,
      );
    }
    if (notes.length > 0) out.notes.set(`${p.namespace}/${p.name}`, [...new Set(notes)]);
    return out;
  }

  /** A policy's ACLs as (direction, variant, a pod that resolves its named ports so). */
  private variants(p: PolicySpec, pods: PodSource): [PolicyDirection, string, V1Pod | undefined][] {
    const out: [PolicyDirection, string, V1Pod | undefined][] = [];
    for (const dir of DIRECTIONS) {
      if (!p.rules[dir]) continue;
      if (dir !== 'ingress' || this.ingressNamed(p).length === 0) {
        out.push([dir, '', undefined]);
        continue;
      }
      const selected = pods.inNamespace(p.namespace).filter((pod) => this.selects(p, pod));
      for (const [variant, pod] of new Map(selected.map((pod) => [this.ingressVariant(p, pod), pod])))
        out.push([dir, variant, pod]);
    }
    return out;
  }

  /** The names of one policy's ACLs (no rule computed). */
  policyAclNames(p: PolicySpec, pods: PodSource): string[] {
    return this.variants(p, pods).map(([dir, variant]) => this.policyAcl(p, dir, variant));
  }

  /**
   * Every ACL name the cluster needs (no rule computed), each with the policy whose ACL it is
   * (undefined: a shared ACL). An ACL of this cluster not among them is for nothing.
   */
  aclNames(pods: PodSource, nodes: readonly NodeGateway[]): Map<string, PolicySpec | undefined> {
    const out = new Map<string, PolicySpec | undefined>(
      DIRECTIONS.map((d) => [this.allowAllAcl(d), undefined]),
    );
    for (const { node } of nodes)
      if (node.metadata?.name) out.set(this.nodeAcl(node.metadata.name), undefined);
    for (const id of this.groupIds(new Pods(pods, this))) out.set(this.groupAcl(id), undefined);
    for (const p of this.policies) for (const name of this.policyAclNames(p, pods)) out.set(name, p);
    return out;
  }

  /**
   * The members of the membership ACLs `names` among `pods`, each with the ones of `names` it
   * belongs to (make-before-break waits for them to be bound).
   */
  membersOfGroupAcls(names: ReadonlySet<string>, source: PodSource): Map<V1Pod, string[]> {
    const pods = new Pods(source, this);
    const out = new Map<V1Pod, string[]>();
    const add = (pod: V1Pod, name: string) => {
      const list = out.get(pod);
      if (list) list.push(name);
      else out.set(pod, [name]);
    };
    for (const [id, group] of this.groups) {
      const name = this.groupAcl(id);
      if (names.has(name)) for (const pod of pods.of(group)) add(pod, name);
    }
    for (const [id, { group, ports }] of this.namedGroups)
      for (const pod of pods.of(group))
        for (const n of ports) {
          const number = resolveNamedPort(pod, n);
          if (number === undefined) continue;
          const name = this.groupAcl(namedGroupId(id, n, number));
          if (names.has(name)) add(pod, name);
        }
    return out;
  }

  /** One rule's ACEs: ports × peers × families. */
  private ruleAces(
    dir: PolicyDirection,
    rule: PolicyRule,
    target: V1Pod | undefined,
    pods: Pods,
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
          for (const n of numbersOf(pods.of(group), named)) {
            const id = namedGroupId(group.id, named, n);
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

/** A node with its gateway address (when node gateways are on). */
export interface NodeGateway {
  node: V1Node;
  gateway?: string;
}

const emptyAcls = (): PolicyAcls => ({ acls: new Map(), roles: new Map(), notes: new Map() });

/** An ACL into `out`, its ACEs unique by rule name and in rule-name order. */
function addAcl(out: PolicyAcls, name: string, role: AclRole, aces: Ace[]): void {
  const unique = new Map(aces.map((a) => [a.ruleName, a]));
  out.acls.set(name, {
    name,
    type: ACL_TYPE_IPV4,
    aces: [...unique.values()].sort((a, b) => a.ruleName.localeCompare(b.ruleName)),
  });
  out.roles.set(name, role);
}

/** The numbers `pods` give a named port, ascending. */
function numbersOf(pods: readonly V1Pod[], port: NamedPort): number[] {
  const numbers = new Set<number>();
  for (const pod of pods) {
    const n = resolveNamedPort(pod, port);
    if (n !== undefined) numbers.add(n);
  }
  return [...numbers].sort((a, b) => a - b);
}

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
