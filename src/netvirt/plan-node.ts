/**
 * A node's keys. `node/<uid>`: the node's k8s-node entry, where ODL has the COE models (both
 * backends write it there); `node-network/<name>`: its dhcp_allocation_pool network, the home
 * of its pod subnet on every release (node-network.ts). The subnet inputs say where it stands:
 * what the entries carry (an allocation, `spec.podCIDR`, or nothing when an ODL user owns it)
 * and what the node's pods are addressed from.
 */
import type { V1Node } from '@kubernetes/client-node';
import { ModelValidationError } from './errors.js';
import { translateNode } from './k8s-node.js';
import { nodeNetworkName, translateNodeNetwork } from './node-network.js';
import { absent, keep, present, type EntrySubnet, type KeyPlan } from './plan.js';
import type { TranslateSettings } from './translate-settings.js';

/** What still holds addresses of a gone node's subnet (undefined: nothing, or no allocation). */
type SubnetHeld = { subnet: string; holder: string } | undefined;

/** What a node's network carries: a subnet, nothing yet, or an ODL user's network (`odl`: never written). */
export type NetworkSubnet = EntrySubnet | { kind: 'user' };

export interface NodePlanInputs {
  settings: Pick<TranslateSettings, 'clusterName' | 'serviceCidrs'>;
  /** Whether ODL has the k8s-node model (Sodium with COE): only then does a node key plan an entry. */
  k8sNodeModel: boolean;
  nodeByUid(uid: string): V1Node | undefined;
  /** The subnet the node's pods are addressed from now (undefined: not known yet). */
  nodeSubnet(node: V1Node): string | undefined;
  /** The subnet the node's entry carries (may allocate: a stateful input). */
  nodeEntrySubnet(node: V1Node): EntrySubnet;
  /** A node that is gone: what still holds addresses of its subnet (undefined: nothing, or no allocation). */
  subnetHolder(uid: string): SubnetHeld;
}

/** What a node network's plan needs besides. */
export interface NodeNetworkPlanInputs extends NodePlanInputs {
  /** A node by name. */
  node(name: string): V1Node | undefined;
  /** What the node's network carries (may allocate, as `nodeEntrySubnet`). */
  nodeNetworkSubnet(node: V1Node): NetworkSubnet;
  /** A node (by name) that is gone: what still holds addresses of its network's subnet. */
  networkHolder(nodeName: string): SubnetHeld;
}

/**
 * A gone node's entry (none: ODL has no model for it): kept while addresses of its subnet are
 * still in use, else deleted.
 */
function goneNode(key: string, entry: { kind: string; name: string } | undefined, held: SubnetHeld): KeyPlan {
  if (held)
    return {
      key,
      entries: entry
        ? [keep(entry.kind, entry.name, `its subnet ${held.subnet} is still used by ${held.holder}`)]
        : [],
      facts: [{ fact: 'subnet-held', ...held }],
    };
  return { key, entries: entry ? [absent(entry.kind, entry.name, 'the node is gone')] : [], facts: [] };
}

/** A node's entry as translated, or kept as it is (and reported) when the node does not fit the model. */
function nodeEntry(
  base: Pick<KeyPlan, 'key' | 'involved' | 'facts'>,
  kind: string,
  name: string,
  translate: () => unknown,
): KeyPlan {
  try {
    return { ...base, entries: [present(kind, name, translate())] };
  } catch (err) {
    if (!(err instanceof ModelValidationError)) throw err;
    return {
      ...base,
      entries: [keep(kind, name, err.message)],
      facts: [...base.facts, { fact: 'untranslatable', message: err.message }],
    };
  }
}

export function planNode(key: string, uid: string, inputs: NodePlanInputs): KeyPlan {
  const node = inputs.nodeByUid(uid);
  const model = inputs.k8sNodeModel;
  if (!node)
    return goneNode(key, model ? { kind: 'k8sNode', name: uid } : undefined, inputs.subnetHolder(uid));
  const name = node.metadata?.name ?? uid;
  const involved = { kind: 'Node' as const, name, uid };
  const entry = inputs.nodeEntrySubnet(node);
  const facts: KeyPlan['facts'] = [{ fact: 'node-subnet', entry, pods: inputs.nodeSubnet(node) }];
  if (!model) return { key, involved, entries: [], facts };
  return nodeEntry({ key, involved, facts }, 'k8sNode', uid, () =>
    translateNode(node, entry.kind === 'subnet' ? entry.cidr : undefined, inputs.settings),
  );
}

/**
 * `node-network/<name>`: the node's dhcp_allocation_pool network. Written with the node's
 * subnet when the watcher knows it; an ODL user's network (`odl`) and a node without a subnet
 * keep whatever exists (a subnet never changes under running pods by odlcoe's doing). A gone
 * node's network goes, unless addresses of its subnet are still in use.
 */
export function planNodeNetwork(key: string, nodeName: string, inputs: NodeNetworkPlanInputs): KeyPlan {
  const name = nodeNetworkName(nodeName);
  const node = inputs.node(nodeName);
  if (!node) return goneNode(key, { kind: 'dhcpNetwork', name }, inputs.networkHolder(nodeName));
  const uid = node.metadata?.uid;
  const involved = { kind: 'Node' as const, name: nodeName, ...(uid ? { uid } : {}) };
  const subnet = inputs.nodeNetworkSubnet(node);
  switch (subnet.kind) {
    case 'subnet':
      return nodeEntry({ key, involved, facts: [] }, 'dhcpNetwork', name, () =>
        translateNodeNetwork(nodeName, [subnet.cidr], (inputs.settings.serviceCidrs?.length ?? 0) > 0),
      );
    case 'user':
      return {
        key,
        involved,
        entries: [
          keep('dhcpNetwork', name, 'an ODL user created this network: odlcoe reads it, never writes it'),
        ],
        facts: [],
      };
    case 'exhausted':
      return { key, involved, entries: [keep('dhcpNetwork', name, 'no free pod subnet left')], facts: [] };
    case 'none':
      return {
        key,
        involved,
        entries: [keep('dhcpNetwork', name, subnet.problem ?? 'the node has no pod subnet yet')],
        facts: [],
      };
  }
}
