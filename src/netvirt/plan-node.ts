/**
 * `node/<uid>`: the node's k8s-node entry (both backends write it where the model exists).
 * The subnet inputs say where it stands: what the entry carries (an allocation, `spec.podCIDR`,
 * or nothing when an ODL user owns the leaf) and what the node's pods are addressed from.
 */
import type { V1Node } from '@kubernetes/client-node';
import { ModelValidationError } from './errors.js';
import { translateNode } from './k8s-node.js';
import { absent, keep, present, type EntrySubnet, type KeyPlan } from './plan.js';
import type { TranslateSettings } from './translate-settings.js';

export interface NodePlanInputs {
  settings: Pick<TranslateSettings, 'clusterName'>;
  nodeByUid(uid: string): V1Node | undefined;
  /** The subnet the node's pods are addressed from now (undefined: not known yet). */
  nodeSubnet(node: V1Node): string | undefined;
  /** The subnet the node's entry carries (may allocate: a stateful input). */
  nodeEntrySubnet(node: V1Node): EntrySubnet;
  /** A node that is gone: what still holds addresses of its subnet (undefined: nothing, or no allocation). */
  subnetHolder(uid: string): { subnet: string; holder: string } | undefined;
}

export function planNode(key: string, uid: string, inputs: NodePlanInputs): KeyPlan {
  const node = inputs.nodeByUid(uid);
  if (!node) {
    const held = inputs.subnetHolder(uid);
    if (held)
      return {
        key,
        entries: [keep('k8sNode', uid, `its subnet ${held.subnet} is still used by ${held.holder}`)],
        facts: [{ fact: 'subnet-held', ...held }],
      };
    return { key, entries: [absent('k8sNode', uid, 'the node is gone')], facts: [] };
  }
  const name = node.metadata?.name ?? uid;
  const involved = { kind: 'Node' as const, name, uid };
  const entry = inputs.nodeEntrySubnet(node);
  const facts: KeyPlan['facts'] = [{ fact: 'node-subnet', entry, pods: inputs.nodeSubnet(node) }];
  try {
    const desired = translateNode(node, entry.kind === 'subnet' ? entry.cidr : undefined, inputs.settings);
    return { key, involved, entries: [present('k8sNode', uid, desired)], facts };
  } catch (err) {
    if (!(err instanceof ModelValidationError)) throw err;
    return {
      key,
      involved,
      entries: [keep('k8sNode', uid, err.message)],
      facts: [...facts, { fact: 'untranslatable', message: err.message }],
    };
  }
}
