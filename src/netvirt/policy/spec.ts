/**
 * A `networking.k8s.io/v1` NetworkPolicy read into what its translation needs, with the
 * API's defaults applied (policyTypes implied, protocol TCP) and every part odlcoe cannot
 * express exactly noted as it is read.
 */
import type {
  V1LabelSelector,
  V1NetworkPolicy,
  V1NetworkPolicyIngressRule,
  V1NetworkPolicyPeer,
  V1NetworkPolicyPort,
} from '@kubernetes/client-node';
import { parsePrefix, subtractPrefixes, type Prefix } from './cidr.js';
import { canonicalSelector, checkSelector, SelectorError } from './selector.js';

export type PolicyProtocol = 'TCP' | 'UDP' | 'SCTP';
export type PolicyDirection = 'ingress' | 'egress';

export interface PolicyPort {
  protocol: PolicyProtocol;
  /** Undefined: every port of the protocol. */
  port?: number | string;
  endPort?: number;
}

/** Pods a peer names: in one namespace (the policy's), or in the namespaces a selector picks. */
export interface PodGroup {
  namespaces: { name: string } | { selector: V1LabelSelector };
  pods: V1LabelSelector;
  /** One spelling per meaning: what the group's ACL name is made from. */
  id: string;
}

export type Peer =
  { kind: 'any' } | { kind: 'ipBlock'; prefixes: Prefix[] } | { kind: 'pods'; group: PodGroup };

export interface PolicyRule {
  /** Empty: every port and protocol. */
  ports: PolicyPort[];
  /** Empty: every peer. */
  peers: Peer[];
}

export interface PolicySpec {
  namespace: string;
  name: string;
  uid: string;
  podSelector: V1LabelSelector;
  /** Rules per direction the policy isolates (a direction absent: it does not isolate it). */
  rules: Partial<Record<PolicyDirection, PolicyRule[]>>;
  /** What could not be expressed exactly, and what odlcoe does instead. */
  notes: string[];
}

export function podGroup(namespaces: PodGroup['namespaces'], pods: V1LabelSelector): PodGroup {
  const ns =
    'name' in namespaces ? `ns=${namespaces.name}` : `nsSel=${canonicalSelector(namespaces.selector)}`;
  return { namespaces, pods, id: `${ns};pods=${canonicalSelector(pods)}` };
}

/** The policy, or why it cannot be read at all (a selector the API would not have taken). */
export function readPolicy(policy: V1NetworkPolicy): PolicySpec | { error: string } {
  const namespace = policy.metadata?.namespace;
  const name = policy.metadata?.name;
  const uid = policy.metadata?.uid;
  if (!namespace || !name || !uid) return { error: 'NetworkPolicy without metadata.name, namespace or uid' };
  const spec = policy.spec;
  const notes: string[] = [];
  try {
    const podSelector = spec?.podSelector ?? {};
    checkSelector(podSelector, 'spec.podSelector');
    const types = spec?.policyTypes ?? ['Ingress', ...((spec?.egress ?? []).length > 0 ? ['Egress'] : [])];
    const rules: PolicySpec['rules'] = {};
    if (types.includes('Ingress'))
      rules.ingress = (spec?.ingress ?? []).map((r, i) =>
        readRule(r.ports, peersFrom(r), namespace, `spec.ingress[${i}]`, 'ingress', notes),
      );
    if (types.includes('Egress'))
      rules.egress = (spec?.egress ?? []).map((r, i) =>
        readRule(r.ports, r.to, namespace, `spec.egress[${i}]`, 'egress', notes),
      );
    return { namespace, name, uid, podSelector, rules, notes };
  } catch (err) {
    if (err instanceof SelectorError) return { error: err.message };
    throw err;
  }
}

/**
 * An ingress rule's `from`: the typed client names it `_from`, an informer's plain JSON
 * object `from`.
 */
function peersFrom(rule: V1NetworkPolicyIngressRule): V1NetworkPolicyPeer[] | undefined {
  return rule._from ?? (rule as { from?: V1NetworkPolicyPeer[] }).from;
}

function readRule(
  ports: V1NetworkPolicyPort[] | undefined,
  peers: V1NetworkPolicyPeer[] | undefined,
  namespace: string,
  where: string,
  direction: PolicyDirection,
  notes: string[],
): PolicyRule {
  const out: PolicyRule = { ports: [], peers: [] };
  for (const [i, p] of (ports ?? []).entries()) {
    const read = readPort(p, `${where}.ports[${i}]`, notes);
    if (read) out.ports.push(read);
  }
  // Every port of the rule was dropped as inexpressible: the rule allows nothing (a rule with
  // no ports would allow everything).
  if ((ports ?? []).length > 0 && out.ports.length === 0)
    return { ports: [], peers: [{ kind: 'ipBlock', prefixes: [] }] };
  for (const [i, peer] of (peers ?? []).entries()) {
    const at = `${where}.${direction === 'ingress' ? 'from' : 'to'}[${i}]`;
    if (peer.ipBlock) {
      const block = parsePrefix(peer.ipBlock.cidr);
      if (!block) {
        notes.push(
          `${at}.ipBlock.cidr ${JSON.stringify(peer.ipBlock.cidr)} is not a CIDR: the peer matches nothing`,
        );
        continue;
      }
      const holes: Prefix[] = [];
      for (const e of peer.ipBlock.except ?? []) {
        const hole = parsePrefix(e);
        if (hole) holes.push(hole);
        else
          notes.push(`${at}.ipBlock.except ${JSON.stringify(e)} is not a CIDR: the whole block is left out`);
      }
      const bad = (peer.ipBlock.except ?? []).length !== holes.length;
      out.peers.push({ kind: 'ipBlock', prefixes: bad ? [] : subtractPrefixes(block, holes) });
      continue;
    }
    if (peer.podSelector) checkSelector(peer.podSelector, `${at}.podSelector`);
    if (peer.namespaceSelector) checkSelector(peer.namespaceSelector, `${at}.namespaceSelector`);
    const namespaces = peer.namespaceSelector ? { selector: peer.namespaceSelector } : { name: namespace };
    out.peers.push({ kind: 'pods', group: podGroup(namespaces, peer.podSelector ?? {}) });
  }
  return out;
}

function readPort(p: V1NetworkPolicyPort, where: string, notes: string[]): PolicyPort | undefined {
  const protocol = (p.protocol ?? 'TCP') as PolicyProtocol;
  if (!['TCP', 'UDP', 'SCTP'].includes(protocol)) {
    notes.push(
      `${where}: protocol ${JSON.stringify(protocol)} is not one NetworkPolicy defines: this port allows nothing`,
    );
    return undefined;
  }
  if (p.port === undefined) return { protocol };
  if (protocol === 'SCTP') {
    // aclservice ignores ports for any protocol but TCP, UDP and ICMP: an SCTP port rule would
    // open every SCTP port. Leaving it out keeps the pod closer than asked, never more open.
    notes.push(
      `${where}: NetVirt cannot restrict SCTP to port ${String(p.port)} (it ignores SCTP ports): SCTP to that port is not allowed`,
    );
    return undefined;
  }
  const port = typeof p.port === 'number' || /^\d+$/.test(String(p.port)) ? Number(p.port) : String(p.port);
  if (typeof port === 'number' && (port < 1 || port > 65535)) {
    notes.push(`${where}: port ${port} is out of range: this port allows nothing`);
    return undefined;
  }
  if (p.endPort !== undefined) {
    if (typeof port !== 'number' || p.endPort < port || p.endPort > 65535) {
      notes.push(`${where}: endPort ${p.endPort} needs a numeric port at most it: this port allows nothing`);
      return undefined;
    }
    return { protocol, port, endPort: p.endPort };
  }
  return { protocol, port };
}
