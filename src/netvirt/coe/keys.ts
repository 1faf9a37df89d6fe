/**
 * Keys of the coe-northbound backend's plans.
 *
 * | key                      | owns in ODL                                                        |
 * |--------------------------|--------------------------------------------------------------------|
 * | `pod/<ns>/<pod>`         | the `pod:coe/pods` entries named `<ns>/<pod>` (the pod's own uid, and those of earlier pods of that name) |
 * | `node/<uid>`             | the `k8s-node` entry of a node                                     |
 * | `gateway/<node name>`    | the `pod:coe/pods` entry of the node's gateway (network-NS `odlcoe.node-gateways`, gateway.ts), when service ranges are configured |
 * | `service/<ns>/<svc>`     | the `services` and `endpoints` entries of a Service (both keyed by the Service's uid), and those of earlier Services of that name |
 * | `pod-uid/<uid>`          | a pods entry of this cluster that lacks `network-NS` or `name` (not written by odlcoe; found at load) |
 * | `service-uid/<uid>`      | the same for a services entry                                      |
 *
 * Keys are by name, not uid: ODL entries carry the name and namespace they were written for,
 * so every entry names the key that owns it (garbage collection after downtime), and a pod
 * re-created under the same name (a StatefulSet pod) is one key whose plan removes the old
 * entry before writing the new one; NetVirt names the pod's interface `<cluster-id>:<pod>`, so the two
 * must never overlap.
 */
export { gatewayKey, nodeKey, podKey } from '../keys.js';

export type CoeKey =
  | { kind: 'pod'; namespace: string; name: string }
  | { kind: 'node'; uid: string }
  | { kind: 'gateway'; nodeName: string }
  | { kind: 'service'; namespace: string; name: string }
  | { kind: 'pod-uid'; uid: string }
  | { kind: 'service-uid'; uid: string };

export const serviceKey = (namespace: string, name: string): string => `service/${namespace}/${name}`;
export const podUidKey = (uid: string): string => `pod-uid/${uid}`;
export const serviceUidKey = (uid: string): string => `service-uid/${uid}`;

export function parseCoeKey(key: string): CoeKey {
  const slash = key.indexOf('/');
  const kind = key.slice(0, slash);
  const rest = key.slice(slash + 1);
  if (slash > 0 && rest !== '') {
    switch (kind) {
      case 'pod':
      case 'service': {
        const [namespace, name, ...more] = rest.split('/');
        if (namespace && name && more.length === 0) return { kind, namespace, name };
        break;
      }
      case 'gateway':
        if (!rest.includes('/')) return { kind, nodeName: rest };
        break;
      case 'node':
      case 'pod-uid':
      case 'service-uid':
        if (!rest.includes('/')) return { kind, uid: rest };
        break;
    }
  }
  throw new Error(`not a coe-northbound key: ${JSON.stringify(key)}`);
}

/** `<network-NS>/<name>` of a pod or services entry, when it has both. */
export function namedKey(entry: { networkNs?: string; name?: string }): string | undefined {
  return entry.networkNs && entry.name ? `${entry.networkNs}/${entry.name}` : undefined;
}
