/**
 * The coe-northbound backend's plans (keys.ts here): what ODL should hold for a pod, a
 * Service or a node, from plain inputs. `node/<uid>` is ../plan-node.ts, shared with the netvirt
 * backend. Pure, as every planner: the watcher executes these, odlcoectl reads them.
 */
import type { V1EndpointSlice, V1Node, V1Pod, V1Service } from '@kubernetes/client-node';
import { ModelValidationError } from '../errors.js';
import { podNetworkEligibility } from '../kube.js';
import { planNode, type NodePlanInputs } from '../plan-node.js';
import { absent, keep, present, type EntryPlan, type KeyPlan, type KubeObjectRef } from '../plan.js';
import { COE_GATEWAY_NAMESPACE, translateCoeGateway } from './gateway.js';
import { gatewayName } from '../names.js';
import { parseCoeKey } from './keys.js';
import type { CoeEndpoints, CoeService } from './model.js';
import {
  translateCoeEndpoints,
  translateCoePod,
  translateCoeService,
  type CoePodTranslation,
} from './translate.js';

export interface CoePlanInputs extends NodePlanInputs {
  pod(namespace: string, name: string): V1Pod | undefined;
  podByUid(uid: string): V1Pod | undefined;
  node(name: string): V1Node | undefined;
  service(namespace: string, name: string): V1Service | undefined;
  serviceByUid(uid: string): V1Service | undefined;
  slicesOf(namespace: string, service: string): V1EndpointSlice[];
  /** Uids of the pods entries ODL holds named `<namespace>/<name>`. */
  coePodsNamed(namespace: string, name: string): string[];
  /** Uids of the services entries ODL holds named `<namespace>/<name>`. */
  coeServicesNamed(namespace: string, name: string): string[];
  hasCoePod(uid: string): boolean;
  /** Every pod of this name, in any namespace (the renderer's interface names ignore namespaces). */
  podsNamed(name: string): V1Pod[];
  hasCoeService(uid: string): boolean;
}

const untranslatable = (key: string, involved: KubeObjectRef, err: unknown): KeyPlan => {
  if (!(err instanceof ModelValidationError)) throw err;
  return { key, involved, entries: [], facts: [{ fact: 'untranslatable', message: err.message }] };
};

/** A Service's two entries (endpoints first when removing: the services entry owns them). */
const serviceGone = (uid: string, why: string): EntryPlan[] => [
  absent('coeEndpoints', uid, why),
  absent('coeService', uid, why),
];

/**
 * Which of the pods named `name` may be on the network: NetVirt Sodium's COE renderer names a
 * pod's interface `<cluster-id>:<pod name>`, so pods of one name in several namespaces would share
 * one interface (and one OVS iface-id). The one created first holds the name (ties: the first
 * namespace in name order); undefined when none is on the pod network.
 */
export function podNameHolder(pods: readonly V1Pod[]): V1Pod | undefined {
  const on = pods.filter((p) => podNetworkEligibility(p).onNetwork);
  const created = (p: V1Pod) => new Date(p.metadata?.creationTimestamp ?? 0).getTime();
  return on.sort(
    (a, b) =>
      created(a) - created(b) || (a.metadata?.namespace ?? '').localeCompare(b.metadata?.namespace ?? ''),
  )[0];
}

/**
 * `pod/<ns>/<name>`: entries of earlier pods of this name go (NetVirt derives the interface name
 * `<cluster-id>:<pod>` from both, and a removal processed after the new pod's addition would delete the
 * new interface); then the pod's own entry is present, absent, or (no IP or node yet) kept.
 */
export function planCoePod(key: string, namespace: string, name: string, inputs: CoePlanInputs): KeyPlan {
  const pod = inputs.pod(namespace, name);
  const current = pod?.metadata?.uid;
  const involved: KubeObjectRef = { kind: 'Pod', namespace, name, ...(current ? { uid: current } : {}) };
  if (pod && podNetworkEligibility(pod).onNetwork) {
    const holder = podNameHolder(inputs.podsNamed(name));
    if (holder && holder !== pod && holder.metadata?.namespace !== namespace)
      return {
        key,
        involved,
        entries: [],
        facts: [
          {
            fact: 'untranslatable',
            message: `pod name ${name} is already on the network in namespace ${holder.metadata?.namespace ?? '?'}: NetVirt Sodium's COE renderer names a pod's interface <cluster-id>:<pod name>, so under the coe-northbound backend only one pod of a name can be on the network (the netvirt backend has no such limit)`,
          },
        ],
      };
  }
  let t: CoePodTranslation;
  if (!pod) t = { state: 'absent', reason: 'pod is gone' };
  else {
    const nodeName = pod.spec?.nodeName;
    try {
      t = translateCoePod(pod, nodeName ? inputs.node(nodeName) : undefined, inputs.settings.clusterName);
    } catch (err) {
      return untranslatable(key, involved, err);
    }
  }
  const uids = new Set(inputs.coePodsNamed(namespace, name));
  // The pod's own entry, even if it lacks the name or namespace it should carry.
  if (current !== undefined && inputs.hasCoePod(current)) uids.add(current);
  const entries: EntryPlan[] = [];
  for (const uid of [...uids].sort()) {
    if (uid === current && t.state !== 'absent') continue;
    entries.push(
      absent(
        'coePod',
        uid,
        uid === current && t.state === 'absent' ? t.reason : 'an earlier pod of this name',
      ),
    );
  }
  if (t.state === 'unknown') {
    if (current !== undefined) entries.push(keep('coePod', current, t.reason));
    return {
      key,
      involved,
      entries,
      facts: [{ fact: 'deferred', deferral: { code: t.code, message: t.reason } }],
    };
  }
  if (t.state === 'desired') entries.push(present('coePod', t.entry.uid, t.entry));
  return { key, involved, entries, facts: [] };
}

/**
 * `service/<ns>/<name>`: the services and endpoints entries of the Service (both under its
 * uid). Earlier Services of this name go first.
 */
export function planCoeService(key: string, namespace: string, name: string, inputs: CoePlanInputs): KeyPlan {
  const service = inputs.service(namespace, name);
  const current = service?.metadata?.uid;
  const involved: KubeObjectRef = { kind: 'Service', namespace, name, ...(current ? { uid: current } : {}) };
  let desired: { service: CoeService; endpoints: CoeEndpoints } | undefined;
  if (service) {
    try {
      desired = {
        service: translateCoeService(service, inputs.settings.clusterName),
        endpoints: translateCoeEndpoints(service, inputs.slicesOf(namespace, name)),
      };
    } catch (err) {
      return untranslatable(key, involved, err);
    }
  }
  const uids = new Set(inputs.coeServicesNamed(namespace, name));
  if (current !== undefined && inputs.hasCoeService(current)) uids.add(current);
  const entries: EntryPlan[] = [];
  for (const uid of [...uids].sort()) {
    if (uid === current && desired) continue;
    entries.push(
      ...serviceGone(uid, uid === current ? 'the Service is gone' : 'an earlier Service of this name'),
    );
  }
  if (desired) {
    entries.push(present('coeService', desired.service.uid, desired.service));
    entries.push(present('coeEndpoints', desired.endpoints.uid, desired.endpoints));
  }
  return { key, involved, entries, facts: [] };
}

/**
 * `pod-uid/<uid>`: a pods entry of this cluster without the name or namespace that would tie
 * it to a pod key. If a pod with that uid exists, its own key owns the entry (it finds it by
 * uid); otherwise the entry is garbage.
 */
export function planCoePodUid(key: string, uid: string, inputs: CoePlanInputs): KeyPlan {
  if (!inputs.hasCoePod(uid) || inputs.podByUid(uid)) return { key, entries: [], facts: [] };
  return { key, entries: [absent('coePod', uid, 'no pod has this uid')], facts: [] };
}

/** `service-uid/<uid>`: as `pod-uid`, for a services entry (and its endpoints entry). */
export function planCoeServiceUid(key: string, uid: string, inputs: CoePlanInputs): KeyPlan {
  if (!inputs.hasCoeService(uid) || inputs.serviceByUid(uid)) return { key, entries: [], facts: [] };
  return { key, entries: serviceGone(uid, 'no Service has this uid'), facts: [] };
}

/**
 * `gateway/<node>`: the pod entry of the node's gateway (gateway.ts), while service ranges are
 * configured and the node exists; kept while its subnet is not known yet. Entries of an earlier
 * node of the same name (another uid) go.
 */
export function planCoeGateway(key: string, nodeName: string, inputs: CoePlanInputs): KeyPlan {
  const node = inputs.node(nodeName);
  const uid = node?.metadata?.uid;
  const involved: KubeObjectRef = { kind: 'Node', name: nodeName, ...(uid ? { uid } : {}) };
  const existing = inputs.coePodsNamed(COE_GATEWAY_NAMESPACE, gatewayName(nodeName)).sort();
  const gone = (why: string): KeyPlan => ({
    key,
    involved,
    entries: existing.map((u) => absent('coePod', u, why)),
    facts: [],
  });
  if ((inputs.settings.serviceCidrs ?? []).length === 0)
    return gone('no service range is configured (no node gateways)');
  if (!node) return gone('the node is gone');
  const subnet = inputs.nodeSubnet(node);
  if (subnet === undefined)
    return {
      key,
      involved,
      entries: existing.map((u) => keep('coePod', u, 'the node subnet is not known yet')),
      facts: [
        {
          fact: 'deferred',
          deferral: {
            code: 'node-subnet-unknown',
            message: `pod subnet of node ${nodeName} is not known yet`,
          },
        },
      ],
    };
  let entry;
  try {
    entry = translateCoeGateway(node, subnet, inputs.settings.clusterName);
  } catch (err) {
    return untranslatable(key, involved, err);
  }
  return {
    key,
    involved,
    entries: [
      ...existing
        .filter((u) => u !== entry.uid)
        .map((u) => absent('coePod', u, 'an earlier node of this name')),
      present('coePod', entry.uid, entry),
    ],
    facts: [],
  };
}

/** The plan of any coe-northbound key. */
export function planCoeKey(key: string, inputs: CoePlanInputs): KeyPlan {
  const k = parseCoeKey(key);
  switch (k.kind) {
    case 'pod':
      return planCoePod(key, k.namespace, k.name, inputs);
    case 'service':
      return planCoeService(key, k.namespace, k.name, inputs);
    case 'node':
      return planNode(key, k.uid, inputs);
    case 'gateway':
      return planCoeGateway(key, k.nodeName, inputs);
    case 'pod-uid':
      return planCoePodUid(key, k.uid, inputs);
    case 'service-uid':
      return planCoeServiceUid(key, k.uid, inputs);
  }
}
