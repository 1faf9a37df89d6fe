/**
 * `node/<uid>`: the node's k8s-node entry in ODL (host name, internal and external IP, pod
 * subnet), which is how the node agent learns its subnet. See node-subnets.ts for where the
 * subnet comes from. When the subnet pods use changes (allocated, or set by an ODL user), the
 * node's pods are enqueued: their vpn-interface adjacency names its gateway.
 */
import type { V1Node } from '@kubernetes/client-node';
import { errorMessage } from '../common/log.js';
import { translateNode } from '../netvirt/index.js';
import type { ReconcileOutcome, WriteGuard } from './backend.js';
import { reportCollision, type NetvirtContext } from './netvirt-context.js';
import { nodeKey, podKey } from './netvirt-keys.js';

function enqueuePodsOn(c: NetvirtContext, node: V1Node): void {
  const name = node.metadata?.name;
  if (!name) return;
  for (const pod of c.view.podsOnNode(name)) {
    if (pod.metadata?.namespace && pod.metadata.name)
      c.enqueue(podKey(pod.metadata.namespace, pod.metadata.name));
  }
}

export async function reconcileNode(
  c: NetvirtContext,
  uid: string,
  guard: WriteGuard,
): Promise<ReconcileOutcome> {
  const node = c.view.nodeByUid(uid);
  if (!node) {
    const result = await c.writer.converge('k8sNode', uid, undefined, guard, { deleteAllowed: true });
    if (result.state !== 'foreign' && c.subnets.release(uid)) {
      c.logger.info('node gone; its subnet is free again', { node: uid });
      // Nodes that found the pool used up may fit now.
      for (const other of c.view.nodes.list()) {
        const otherUid = other.metadata?.uid;
        if (otherUid && c.subnets.subnetFor(other) === undefined) c.enqueue(nodeKey(otherUid));
      }
    }
    c.metrics.nodeSubnet(uid, true);
    return { result: 'synced' };
  }
  const name = node.metadata?.name ?? uid;
  const before = c.subnets.subnetFor(node);
  if (c.subnets.source === 'odl' && before === undefined && c.state.get('k8sNode', uid)) {
    // An ODL user may have set the pod-cidr since it was read.
    await c.state.refresh('k8sNode', uid);
  }

  const entry = c.subnets.entrySubnet(node);
  if (entry.kind === 'exhausted') {
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
  } else {
    c.metrics.nodeSubnet(uid, true);
    if (entry.kind === 'none' && entry.problem)
      c.logger.debug('node has no usable pod subnet yet', { node: name, problem: entry.problem });
  }

  let desired;
  try {
    desired = translateNode(node, entry.kind === 'subnet' ? entry.cidr : undefined, c.translate);
  } catch (err) {
    // A node object odlcoe cannot describe (no uid): nothing to write, nothing to retry.
    c.logger.warn('cannot translate node', { node: name, error: errorMessage(err) });
    return { result: 'deferred' };
  }
  const result = await c.writer.converge('k8sNode', uid, desired, guard);
  if (result.state === 'foreign') {
    reportCollision(c, 'k8sNode', uid, result.reason, { kind: 'Node', name, uid });
    return { result: 'foreign', retryAfterMs: c.settings.slowRetryMs };
  }
  const after = c.subnets.subnetFor(node);
  // A written entry may carry a new pod-cidr (the allocation of an earlier, failed attempt).
  if (after !== before || (result.state === 'written' && after !== undefined)) {
    if (after !== before) c.logger.info('node pod subnet known', { node: name, subnet: after });
    enqueuePodsOn(c, node);
  }
  if (entry.kind === 'exhausted') return { result: 'exhausted', retryAfterMs: c.settings.slowRetryMs };
  if (c.subnets.source === 'odl' && after === undefined)
    return { result: 'polling', retryAfterMs: c.settings.subnetPollMs };
  return { result: 'synced' };
}
