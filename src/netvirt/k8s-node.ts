/**
 * `k8s-node:k8s-nodes-info/k8s-nodes`: COE's record of a node (host name, addresses, pod
 * subnet), keyed by node UID. Both backends write it where the release has the model (Sodium
 * with odl-netvirt-coe installed); ODL users and tools read it. Model, ownership, owned-leaf
 * diff and translation of the one kind, together.
 *
 * Ownership: `cluster-id` = clusterUuid(cluster name) (the model has no description leaf).
 */
import type { V1Node } from '@kubernetes/client-node';
import { ip } from './canonical.js';
import { carry, decide, decisionName, type Decision, type DiffOptions } from './decision.js';
import { ModelValidationError } from './errors.js';
import { assign, parseList, withPreserved, type EntryReader, type JsonObject } from './json.js';
import { nodeExternalIp, nodeHostName, nodeInternalIp } from './kube.js';
import { clusterUuid, parseCidr } from './names.js';
import type { Ownership } from './ownership.js';
import { netvirtPaths } from './paths.js';
import type { Profile } from './profile.js';
import { checkIpAddress, checkUuid } from './validate.js';
import { putOp, type WriteOp } from './write.js';

export interface K8sNode {
  uid: string;
  clusterId?: string;
  hostName?: string;
  externalIpAddress?: string;
  internalIpAddress?: string;
  /** Free text in the model; odlcoe writes a canonical CIDR. */
  podCidr?: string;
  preserved?: JsonObject;
}

export function k8sNodeEntry(n: K8sNode): JsonObject {
  const where = `k8s-nodes[${n.uid}]`;
  checkUuid(n.uid, `${where}/uid`);
  const j: JsonObject = { uid: n.uid };
  if (n.clusterId !== undefined) {
    checkUuid(n.clusterId, `${where}/cluster-id`);
    j['cluster-id'] = n.clusterId;
  }
  if (n.hostName !== undefined) j['host-name'] = n.hostName;
  for (const [leaf, value] of [
    ['external-ip-address', n.externalIpAddress],
    ['internal-ip-address', n.internalIpAddress],
  ] as const) {
    if (value === undefined) continue;
    checkIpAddress(value, `${where}/${leaf}`);
    j[leaf] = value;
  }
  if (n.podCidr !== undefined) j['pod-cidr'] = n.podCidr;
  return withPreserved(j, n.preserved);
}

export function putK8sNode(profile: Profile, n: K8sNode): WriteOp {
  return putOp(netvirtPaths(profile).k8sNode(n.uid), k8sNodeEntry(n));
}

export function readK8sNode(r: EntryReader): K8sNode {
  const n: K8sNode = { uid: r.requiredString('uid') };
  assign(n, 'clusterId', r.string('cluster-id'));
  assign(n, 'hostName', r.string('host-name'));
  assign(n, 'externalIpAddress', r.string('external-ip-address'));
  assign(n, 'internalIpAddress', r.string('internal-ip-address'));
  assign(n, 'podCidr', r.string('pod-cidr'));
  assign(n, 'preserved', r.rest());
  return n;
}

/** k8s-nodes entries; the container's own `id` leaf is not an entry and is ignored. */
export function parseK8sNodes(body: unknown): K8sNode[] {
  return parseList(body, 'k8s-nodes-info', 'k8s-nodes', readK8sNode);
}

export function k8sNodeOwnership(n: K8sNode, ctx: { clusterName: string }): Ownership {
  const expected = clusterUuid(ctx.clusterName);
  return n.clusterId?.toLowerCase() === expected
    ? { owner: 'ours' }
    : { owner: 'foreign', reason: `cluster-id ${n.clusterId ?? '(absent)'} is not ${expected}` };
}

/**
 * The owned-leaf diff. `pod-cidr` is owned only when the desired entry has one: in the `odl`
 * subnet mode an ODL user writes it, and a watcher that does not know the subnet must not
 * erase it. Writes are whole-entry PUTs carrying every other member forward.
 */
export function diffK8sNode(
  desired: K8sNode | undefined,
  actual: K8sNode | undefined,
  ctx: { clusterName: string; profile: Profile },
  opts: DiffOptions = {},
): Decision {
  const paths = netvirtPaths(ctx.profile);
  const podCidrOwned = desired?.podCidr !== undefined;
  const owned = [
    'clusterId',
    'hostName',
    'externalIpAddress',
    'internalIpAddress',
    ...(podCidrOwned ? (['podCidr'] as const) : []),
  ] as const;
  return decide<K8sNode>(
    {
      path: paths.k8sNode,
      ownership: (x) => k8sNodeOwnership(x, ctx),
      owned: (e) => ({
        'cluster-id': e.clusterId?.toLowerCase(),
        'host-name': e.hostName,
        'external-ip-address': ip(e.externalIpAddress),
        'internal-ip-address': ip(e.internalIpAddress),
        'pod-cidr': podCidrOwned ? e.podCidr : undefined,
      }),
      create: (x) => [putOp(paths.k8sNode(x.uid), k8sNodeEntry(x))],
      update: (x, y) => ({
        action: 'update',
        writes: [putOp(paths.k8sNode(x.uid), k8sNodeEntry(carry(x, y, owned)))],
      }),
    },
    decisionName(desired, actual, (n) => n.uid, opts),
    desired,
    actual,
    opts.keep === true,
  );
}

/** The k8s-node entry of a node (keyed by node UID); `pod-cidr` once the node has a subnet. */
export function translateNode(
  node: V1Node,
  nodeSubnet: string | undefined,
  settings: { clusterName: string },
): K8sNode {
  const uid = node.metadata?.uid;
  if (!uid) throw new ModelValidationError(`node ${node.metadata?.name ?? '?'}`, 'node without metadata.uid');
  const n: K8sNode = { uid, clusterId: clusterUuid(settings.clusterName) };
  const hostName = nodeHostName(node);
  if (hostName) n.hostName = hostName;
  const internal = nodeInternalIp(node);
  if (internal) n.internalIpAddress = internal;
  const external = nodeExternalIp(node);
  if (external) n.externalIpAddress = external;
  if (nodeSubnet !== undefined) {
    const { network, prefixLength } = parseCidr(nodeSubnet);
    n.podCidr = `${network}/${prefixLength}`;
  }
  return n;
}
