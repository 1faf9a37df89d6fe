/**
 * `node/<uid>`: carrying out a node's plan (src/netvirt/plan-node.ts) for either backend, with
 * the subnet policies around it: where the node subnet comes from (node-subnets.ts), a used-up
 * pool reported, an `odl` subnet polled until an ODL user has set it, a gone node's subnet kept
 * allocated while addresses from it are in use.
 *
 * Where a backend's pods use their node's subnet (netvirt: a vpn-interface's adjacency names
 * its gateway), the entry is re-read before planning while the subnet is unknown (an ODL user
 * may have set it), and the pods follow the entry's changes through the backend's
 * `keysForEntry`. The coe-northbound backend's pod entries do not carry the subnet, so it does
 * neither.
 */
import type { V1Node } from '@kubernetes/client-node';
import { factOf, type KeyPlan } from '../netvirt/plan.js';
import type { BackendContext } from './backend.js';
import type { NodeSubnets } from './node-subnets.js';
import { runPlan, type PlanContext } from './plan-executor.js';
import type { ReconcileOutcome, WriteGuard } from './reconcile.js';

export interface NodeKeyContext extends PlanContext, Pick<BackendContext, 'view'> {
  subnets: NodeSubnets;
}

function reportExhausted(c: NodeKeyContext, node: V1Node, uid: string): void {
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
  c: NodeKeyContext,
  uid: string,
  guard: WriteGuard,
  plan: () => KeyPlan,
  options: { podsUseSubnet: boolean },
): Promise<ReconcileOutcome> {
  const node = c.view.nodeByUid(uid);
  if (!node) {
    c.metrics.nodeSubnet(uid, true);
    const p = plan();
    const held = factOf(p, 'subnet-held');
    if (held) {
      // `allocate`: a subnet never changes under running pods. Until nothing holds an address
      // of the gone node's subnet any more, the allocation stays (so no new node can take it
      // and have host-local hand out the same addresses again), and so does the entry: it is
      // the allocation's only durable record, recovered when a leader term starts. Polled,
      // since pods and interfaces going away do not enqueue the node; `polling` rather than
      // `waiting` because the key is settled (pods on a deleted node may linger for minutes).
      c.logger.debug('node gone; its subnet stays allocated while addresses from it are in use', {
        node: uid,
        subnet: held.subnet,
        holder: held.holder,
      });
      return { result: 'polling', retryAfterMs: c.settings.subnetPollMs };
    }
    const run = await runPlan(c, p, guard, plan);
    const entry = run.results.get(`k8sNode/${uid}`);
    if (entry?.state !== 'foreign' && entry?.state !== 'blocked' && c.subnets.release(uid))
      c.logger.info('node gone; its subnet is free again', { node: uid });
    return run.outcome;
  }
  const name = node.metadata?.name ?? uid;
  const before = c.subnets.subnetFor(node);
  if (options.podsUseSubnet && before === undefined) await c.subnets.refreshNode(node);
  const p = plan();
  const subnet = factOf(p, 'node-subnet');
  if (subnet?.entry.kind === 'exhausted') reportExhausted(c, node, uid);
  else {
    c.metrics.nodeSubnet(uid, true);
    if (subnet?.entry.kind === 'none' && subnet.entry.problem)
      c.logger.debug('node has no usable pod subnet yet', { node: name, problem: subnet.entry.problem });
  }
  const run = await runPlan(c, p, guard, plan);
  if (run.outcome.result !== 'synced') return run.outcome;
  if (options.podsUseSubnet) {
    const after = c.subnets.subnetFor(node);
    if (after !== before && after !== undefined)
      c.logger.info('node pod subnet known', { node: name, subnet: after });
    if (subnet?.entry.kind !== 'exhausted' && c.subnets.source === 'odl' && after === undefined)
      return { result: 'polling', retryAfterMs: c.settings.subnetPollMs };
  }
  if (subnet?.entry.kind === 'exhausted')
    return { result: 'exhausted', retryAfterMs: c.settings.slowRetryMs };
  return { result: 'synced' };
}
