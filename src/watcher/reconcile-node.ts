/**
 * `node/<uid>`: the node's k8s-node entry in ODL (host name, internal and external IP, pod
 * subnet), which is how the node agent learns its subnet, whichever backend runs; both write it
 * through this module. See node-subnets.ts for where the subnet comes from.
 *
 * Where a backend's pods use their node's subnet (netvirt: a vpn-interface's adjacency names
 * its gateway), the node's pods are enqueued when the subnet they see changes (allocated, or
 * set by an ODL user), and under the `odl` source the entry is polled until an ODL user has set
 * it. The coe-northbound backend's pod entries do not carry the subnet, so it does neither.
 */
import type { V1Node } from '@kubernetes/client-node';
import {
  translateNode,
  vpnInterfaceOwnership,
  type Interface,
  type K8sNode,
  type OwnerContext,
  type TranslateSettings,
  type VpnInterface,
} from '../netvirt/index.js';
import type { BackendContext, ReconcileOutcome, WriteGuard } from './backend.js';
import type { NodeSubnets } from './node-subnets.js';
import { nodeKey, podKey } from './object-keys.js';
import type { ConvergeOptions, ObjectResult } from './object-writer.js';
import { reportCollision, reportUntranslatable } from './reports.js';
import { cidrContains } from './subnet-allocator.js';

/** A backend's writer, as far as k8s-node entries go. */
export interface K8sNodeWriter {
  converge(
    kind: 'k8sNode',
    uid: string,
    desired: K8sNode | undefined,
    guard: WriteGuard,
    options?: ConvergeOptions,
  ): Promise<ObjectResult>;
}

/** A backend's cached pod interfaces (netvirt's ODL state), as far as a gone node's subnet needs them. */
export interface PodInterfaceCache {
  values(kind: 'vpnInterface'): Iterable<VpnInterface>;
  get(kind: 'interface', name: string): Interface | undefined;
}

export interface NodeEntryContext extends BackendContext {
  writer: K8sNodeWriter;
  translate: TranslateSettings;
  subnets: NodeSubnets;
  owner: OwnerContext;
  /**
   * Where the backend keeps vpn-interfaces (netvirt), its ODL cache: their primary adjacencies
   * hold pod addresses, which keep a gone node's subnet allocated (see `subnetHolder`).
   */
  state?: PodInterfaceCache;
}

export interface NodeEntryOptions {
  /** The backend's pods use their node's subnet (see above). */
  podsUseSubnet: boolean;
}

function enqueuePodsOn(c: NodeEntryContext, node: V1Node): void {
  const name = node.metadata?.name;
  if (!name) return;
  for (const pod of c.view.podsOnNode(name)) {
    if (pod.metadata?.namespace && pod.metadata.name)
      c.enqueue(podKey(pod.metadata.namespace, pod.metadata.name));
  }
}

/**
 * What still holds addresses of a gone node's subnet, or undefined when nothing does: a pod
 * bound to the node (the node name comes from the node's entry: the Node object is gone), or
 * one of this cluster's vpn-interfaces with a primary adjacency in the subnet (a pod already
 * deleted whose interface is not removed yet, or one on an unknown node kept on purpose).
 */
function subnetHolder(c: NodeEntryContext, uid: string, cidr: string): string | undefined {
  const nodeName = c.subnets.entry(uid)?.hostName;
  if (nodeName) {
    const pod = c.view.podsOnNode(nodeName)[0];
    if (pod) return `pod ${pod.metadata?.namespace ?? '?'}/${pod.metadata?.name ?? '?'}`;
  }
  const state = c.state;
  if (!state) return undefined;
  for (const vif of state.values('vpnInterface')) {
    const primary = vif.adjacencies.filter((a) => a.adjacencyType === 'primary-adjacency');
    if (!primary.some((a) => cidrContains(cidr, a.ipAddress))) continue;
    if (vpnInterfaceOwnership(vif, state.get('interface', vif.name), c.owner).owner === 'ours')
      return `vpn-interface ${vif.name}`;
  }
  return undefined;
}

/** The node and its entry are gone: its subnet is free again, and nodes that found the pool used up may fit now. */
function releaseSubnet(c: NodeEntryContext, uid: string): void {
  if (c.subnets.release(uid)) {
    c.logger.info('node gone; its subnet is free again', { node: uid });
    for (const other of c.view.nodes.list()) {
      const otherUid = other.metadata?.uid;
      if (otherUid && c.subnets.subnetFor(other) === undefined) c.enqueue(nodeKey(otherUid));
    }
  }
}

function reportExhausted(c: NodeEntryContext, node: V1Node, uid: string): void {
  const name = node.metadata?.name ?? uid;
  c.metrics.subnetExhausted.inc();
  c.metrics.nodeSubnet(uid, false);
  const cidr = c.settings.clusterCidr ?? '?';
  c.logger.error('no free pod subnet left for node: the cluster CIDR is used up', {
    node: name,
    clusterCidr: cidr,
    nodePrefixLength: c.settings.nodePrefixLength,
  });
  c.events.warning(
    { kind: 'Node', name, uid },
    'PodSubnetExhausted',
    `no free /${c.settings.nodePrefixLength ?? '?'} pod subnet left in cluster CIDR ${cidr}; pods on this node get no network until a node is removed or the CIDR is widened`,
  );
}

export async function reconcileNode(
  c: NodeEntryContext,
  uid: string,
  guard: WriteGuard,
  options: NodeEntryOptions,
): Promise<ReconcileOutcome> {
  const node = c.view.nodeByUid(uid);
  if (!node) {
    c.metrics.nodeSubnet(uid, true);
    // `allocate`: a subnet never changes under running pods. Until nothing holds an address of
    // the gone node's subnet any more, the allocation stays (so no new node can take it and
    // have host-local hand out the same addresses again), and so does the entry: it is the
    // allocation's only durable record, recovered when a leader term starts, and deleting it
    // now would free the subnet at the next restart while its pods remain. The entry is no
    // longer written (there is no Node to translate); the agent of a new node reads its own
    // entry by uid, so the stale one misleads nobody. Polled, since pods and interfaces going
    // away do not enqueue the node; `polling` rather than `waiting` because the key is settled
    // (nothing to converge meanwhile): pods on a deleted node may linger for minutes, and
    // `waiting` would hold `idle()` that long.
    const cidr = c.subnets.allocated(uid);
    const holder = cidr === undefined ? undefined : subnetHolder(c, uid, cidr);
    if (holder) {
      c.logger.debug('node gone; its subnet stays allocated while addresses from it are in use', {
        node: uid,
        subnet: cidr,
        holder,
      });
      return { result: 'polling', retryAfterMs: c.settings.subnetPollMs };
    }
    const result = await c.writer.converge('k8sNode', uid, undefined, guard, { deleteAllowed: true });
    if (result.state !== 'foreign') releaseSubnet(c, uid);
    return { result: 'synced' };
  }
  const name = node.metadata?.name ?? uid;
  const before = c.subnets.subnetFor(node);
  if (options.podsUseSubnet && before === undefined) await c.subnets.refreshEntry(uid);

  const entry = c.subnets.entrySubnet(node);
  if (entry.kind === 'exhausted') {
    reportExhausted(c, node, uid);
  } else {
    c.metrics.nodeSubnet(uid, true);
    if (entry.kind === 'none' && entry.problem)
      c.logger.debug('node has no usable pod subnet yet', { node: name, problem: entry.problem });
  }

  let desired;
  try {
    desired = translateNode(node, entry.kind === 'subnet' ? entry.cidr : undefined, c.translate);
  } catch (err) {
    return reportUntranslatable(c, err, { kind: 'Node', name, uid });
  }
  const result = await c.writer.converge('k8sNode', uid, desired, guard);
  if (result.state === 'foreign')
    return reportCollision(c, 'k8sNode', uid, result.reason, { kind: 'Node', name, uid });
  if (options.podsUseSubnet) {
    const after = c.subnets.subnetFor(node);
    // A written entry may carry a new pod-cidr (the allocation of an earlier, failed attempt).
    if (after !== before || (result.state === 'written' && after !== undefined)) {
      if (after !== before) c.logger.info('node pod subnet known', { node: name, subnet: after });
      enqueuePodsOn(c, node);
    }
    if (entry.kind !== 'exhausted' && c.subnets.source === 'odl' && after === undefined)
      return { result: 'polling', retryAfterMs: c.settings.subnetPollMs };
  }
  if (entry.kind === 'exhausted') return { result: 'exhausted', retryAfterMs: c.settings.slowRetryMs };
  return { result: 'synced' };
}
