/**
 * The netvirt backend's plans (keys.ts): what ODL should hold for a pod, a node × namespace
 * ELAN, a namespace VPN or a node, from plain inputs. Pure: the inputs that carry state (node
 * subnets, namespace route distinguishers) are functions the caller provides: the watcher
 * from its caches and allocators, odlcoectl from what it read, the whole-cluster fold from maps.
 *
 * The instance rules (need, keep) are translate-instances.ts's, applied to one key; a pod's
 * objects are translate-pod.ts's.
 */
import type { V1Namespace, V1Pod } from '@kubernetes/client-node';
import { ModelValidationError } from './errors.js';
import { nodeInternalIp } from './kube.js';
import { parseNetvirtKey } from './keys.js';
import { interfaceName, vpnName } from './names.js';
import { planGateway, planGatewayVpn, planService, type GatewayPlanInputs } from './plan-gateway.js';
import { planNode, planNodeNetwork, type NodeNetworkPlanInputs } from './plan-node.js';
import { planAttachment, planNetwork, type NetworkPlanInputs } from './plan-network.js';
import { absent, keep, present, type KeyPlan, type KubeObjectRef } from './plan.js';
import {
  elanInstanceNeed,
  instanceUse,
  translateElanInstance,
  translateVpnInstance,
  vpnInstanceNeed,
  type InstanceUse,
} from './translate-instances.js';
import {
  placePod,
  translatePod,
  type PodContext,
  type PodPlacement,
  type PodTranslation,
} from './translate-pod.js';
import { families, type TranslateSettings } from './translate-settings.js';
import { planNetworkPolicy, planPolicyAcls, type PolicyPlanInputs } from './plan-policy.js';

export interface NetvirtPlanInputs
  extends NodeNetworkPlanInputs, GatewayPlanInputs, NetworkPlanInputs, PolicyPlanInputs {
  settings: TranslateSettings;
  pod(namespace: string, name: string): V1Pod | undefined;
  podsInNamespace(namespace: string): readonly V1Pod[];
  /**
   * The pods of `namespace` on nodes whose InternalIP is `nodeIp`, in `podsInNamespace`'s
   * order (an index; without it, ELAN plans filter `podsInNamespace`).
   */
  podsInNamespaceOnIp?(namespace: string, nodeIp: string): readonly V1Pod[];
  namespace(name: string): V1Namespace | undefined;
  /** Namespaces known, and those that have pods (whether or not the namespace object is known). */
  namespaceNames(): Iterable<string>;
  /** The namespace's RD: the one its VPN has, else a new one (a stateful input). */
  routeDistinguisher(namespace: string): { rd: string; reassigned: boolean };
}

const POD_KINDS = ['interface', 'elanInterface', 'vpnInterface'] as const;

/** What a pod's translation depends on, from the inputs. */
export function podContext(pod: V1Pod, inputs: NetvirtPlanInputs): PodContext {
  const ctx: PodContext = {};
  const nodeName = pod.spec?.nodeName;
  const node = nodeName ? inputs.node(nodeName) : undefined;
  const namespace = pod.metadata?.namespace ? inputs.namespace(pod.metadata.namespace) : undefined;
  if (node) {
    ctx.node = node;
    const subnet = inputs.nodeSubnet(node);
    if (subnet !== undefined) ctx.nodeSubnet = subnet;
  }
  if (namespace) ctx.namespace = namespace;
  return ctx;
}

/** A pod's translation; a value that does not validate defers it (whatever exists is kept). */
export function podTranslation(pod: V1Pod, inputs: NetvirtPlanInputs): PodTranslation {
  try {
    return translatePod(pod, podContext(pod, inputs), inputs.settings);
  } catch (err) {
    if (!(err instanceof ModelValidationError)) throw err;
    const ns = pod.metadata?.namespace;
    const name = pod.metadata?.name;
    return {
      state: 'deferred',
      deferral: { code: 'invalid-object', message: err.message },
      ...(ns && name ? { namespace: ns, interfaceName: interfaceName(ns, name) } : {}),
    };
  }
}

/**
 * Where a pod attaches. A pod whose values do not validate is deferred, as its own plan defers
 * it: whatever exists for it (its namespace's instances included) is kept.
 */
export function podPlacement(pod: V1Pod, inputs: NetvirtPlanInputs): PodPlacement {
  try {
    return placePod(pod, podContext(pod, inputs));
  } catch (err) {
    if (!(err instanceof ModelValidationError)) throw err;
    const namespace = pod.metadata?.namespace;
    return {
      state: 'deferred',
      deferral: { code: 'invalid-object', message: err.message },
      ...(namespace ? { namespace } : {}),
    };
  }
}

/**
 * `pod/<ns>/<name>`: the pod's ietf-interface, elan-interface and vpn-interface. A pod that is
 * gone or off the network has none; one whose objects cannot be computed yet keeps what exists.
 */
export function planPod(key: string, namespace: string, name: string, inputs: NetvirtPlanInputs): KeyPlan {
  const pod = inputs.pod(namespace, name);
  const ifName = interfaceName(namespace, name);
  const t: PodTranslation = pod
    ? podTranslation(pod, inputs)
    : { state: 'off-network', reason: 'pod deleted' };
  if (t.state === 'off-network')
    return { key, entries: POD_KINDS.map((k) => absent(k, ifName, t.reason)), facts: [] };
  if (t.state === 'deferred')
    return {
      key,
      entries: POD_KINDS.map((k) => keep(k, ifName, t.deferral.message)),
      facts: [{ fact: 'deferred', deferral: t.deferral }],
    };
  const n = t.network;
  const index = pod && inputs.policy?.();
  if (pod && index) n.interface.acl = index.podSecurity(pod, families(inputs.settings));
  const plan: KeyPlan = {
    key,
    involved: { kind: 'Pod', name, namespace, uid: n.podUid },
    entries: [present('interface', ifName, n.interface), present('elanInterface', ifName, n.elanInterface)],
    facts: [],
  };
  if (n.vpnInterface) plan.entries.push(present('vpnInterface', ifName, n.vpnInterface));
  else if (n.vpnInterfaceDeferred) {
    // The address is known but not its routing (node subnet unknown, address outside it): keep
    // an existing vpn-interface until it is.
    plan.entries.push(keep('vpnInterface', ifName, n.vpnInterfaceDeferred.message));
    plan.facts.push({ fact: 'partly-deferred', deferral: n.vpnInterfaceDeferred });
  } else
    plan.entries.push(
      absent('vpnInterface', ifName, 'pod has no IP address yet (no vpn-interface until it has one)'),
    );
  return plan;
}

/** Reports about a namespace's instances go to the namespace. */
function namespaceRef(name: string, namespace: V1Namespace): KubeObjectRef {
  const uid = namespace.metadata?.uid;
  return { kind: 'Namespace', name, ...(uid ? { uid } : {}) };
}

/** The pods of a namespace with what each means to its instances. */
function usesIn(ns: string, inputs: NetvirtPlanInputs): { pod: V1Pod; use: InstanceUse }[] {
  return inputs.podsInNamespace(ns).map((pod) => ({ pod, use: instanceUse(podPlacement(pod, inputs)) }));
}

/**
 * The first pod of the namespace attached to the ELAN, if any. Only a pod on a node with the
 * ELAN's InternalIP can be (placement names the ELAN after its node's InternalIP), so only those
 * are placed: a namespace's pods spread over many nodes, and planning every ELAN by placing
 * every pod of its namespace made a restart's plans quadratic in the pods per namespace. With
 * the inputs' index of pods by namespace and node IP, only those pods are even looked at
 * (filtering the namespace's pods was still the largest part of planning 10,000 ELANs).
 */
function attachedTo(elanName: string, ns: string, inputs: NetvirtPlanInputs): InstanceUse | undefined {
  const nodeIp = elanName.slice(0, elanName.length - ns.length - 1);
  const candidates = inputs.podsInNamespaceOnIp?.(ns, nodeIp) ?? inputs.podsInNamespace(ns);
  for (const pod of candidates) {
    const nodeName = pod.spec?.nodeName;
    const node = nodeName ? inputs.node(nodeName) : undefined;
    if (!node || nodeInternalIp(node) !== nodeIp) continue;
    const use = instanceUse(podPlacement(pod, inputs));
    if (use.use === 'attached' && use.elanInstanceName === elanName) return use;
  }
  return undefined;
}

/** `elan/<ip>:<ns>`: the ELAN of a namespace on one node, needed by the pods attached to it. */
export function planElan(key: string, elanName: string, ns: string, inputs: NetvirtPlanInputs): KeyPlan {
  // Desired as soon as one pod is attached to it; every pod of the namespace is placed only to
  // tell `keep` (one cannot be placed yet) from `unneeded`.
  const attached = attachedTo(elanName, ns, inputs);
  const uses = attached ? [attached] : usesIn(ns, inputs).map((p) => p.use);
  const need = elanInstanceNeed(elanName, ns, uses);
  if (need === 'keep')
    return {
      key,
      entries: [keep('elanInstance', elanName, `a pod of namespace ${ns} cannot be placed on a node yet`)],
      facts: [],
    };
  if (need === 'unneeded')
    return {
      key,
      grace: true,
      entries: [absent('elanInstance', elanName, `no pod of namespace ${ns} on that node needs it`)],
      facts: [],
    };
  const node = attached?.use === 'attached' ? inputs.node(attached.nodeName) : undefined;
  const namespace = inputs.namespace(ns);
  // Placed pods were placed against these very inputs: both are known.
  if (!node || !namespace)
    throw new Error(`ELAN ${elanName} is needed, but its node or namespace is not known`);
  const desired = translateElanInstance(node, namespace, inputs.settings);
  if (desired.name !== elanName) throw new Error(`ELAN key ${key} translates to ${desired.name}`);
  return {
    key,
    // Needed: a grace clock started while it was unneeded is forgotten (runPlan), or a later
    // unneeded spell would delete it at once, without a grace period of its own.
    grace: true,
    involved: namespaceRef(ns, namespace),
    entries: [present('elanInstance', elanName, desired)],
    facts: [],
  };
}

/**
 * The namespace whose VPN is `name`. Known namespaces come first: a shortened name (40
 * characters) is its own `vpnName`, so trying `name` first would take the VPN of a long
 * namespace for a namespace of that literal name, which has no pods, and retire it. `name`
 * itself is the fallback for a namespace that is gone.
 */
export function namespaceOfVpn(name: string, inputs: NetvirtPlanInputs): string | undefined {
  // A shortened name has a `.`, which no namespace name has: without one, the namespace can only
  // be `name` itself (the search below would find just that, at the cost of every namespace).
  if (!name.includes('.')) return vpnName(name) === name ? name : undefined;
  for (const ns of inputs.namespaceNames()) if (ns !== '' && vpnName(ns) === name) return ns;
  return vpnName(name) === name ? name : undefined;
}

/**
 * `vpn/<name>`: a namespace's VPN, needed while any pod of the namespace is on the network or
 * a network of the namespace is routed through it (`"routing": "namespace"`: its attachments'
 * vpn-interfaces join it, whichever namespace their pods are in).
 */
export function planVpn(key: string, name: string, inputs: NetvirtPlanInputs): KeyPlan {
  const ns = namespaceOfVpn(name, inputs);
  const pods = ns === undefined ? [] : usesIn(ns, inputs).filter((p) => p.use.use !== 'none');
  const networks = ns === undefined ? [] : (inputs.namespaceRoutedNetworks?.(ns) ?? []);
  const namespace = ns === undefined ? undefined : inputs.namespace(ns);
  const uses = pods.map((p) => p.use);
  // A routed network needs the VPN as a placed pod would.
  if (ns !== undefined && networks.length > 0) uses.push({ use: 'unplaced', namespace: ns });
  const need = ns === undefined ? 'unneeded' : vpnInstanceNeed(ns, namespace !== undefined, uses);
  if (need === 'keep')
    return {
      key,
      entries: [
        keep(
          'vpnInstance',
          name,
          `namespace ${ns ?? '?'} has ${pods.length > 0 ? 'pods' : `networks routed through its VPN (${networks.join(', ')})`} but is not known yet`,
        ),
      ],
      facts: [],
    };
  if (need === 'unneeded' || ns === undefined || !namespace)
    return {
      key,
      grace: true,
      entries: [
        absent(
          'vpnInstance',
          name,
          `no pod of namespace ${ns ?? name} is on the pod network and no network is routed through its VPN`,
        ),
      ],
      facts: [],
    };
  const { rd, reassigned } = inputs.routeDistinguisher(ns);
  const desired = translateVpnInstance(namespace, rd, inputs.settings);
  return {
    key,
    grace: true,
    involved: namespaceRef(ns, namespace),
    entries: [present('vpnInstance', name, desired)],
    facts: reassigned ? [{ fact: 'rd-reassigned', namespace: ns, vpn: name, rd }] : [],
  };
}

/** The plan of any netvirt key. */
export function planNetvirtKey(key: string, inputs: NetvirtPlanInputs): KeyPlan {
  const k = parseNetvirtKey(key);
  switch (k.kind) {
    case 'pod':
      return planPod(key, k.namespace, k.name, inputs);
    case 'elan':
      return planElan(key, k.elanName, k.namespace, inputs);
    case 'vpn':
      return planVpn(key, k.vpnName, inputs);
    case 'node':
      return planNode(key, k.uid, inputs);
    case 'node-network':
      return planNodeNetwork(key, k.nodeName, inputs);
    case 'gateway':
      return planGateway(key, k.nodeName, inputs);
    case 'gateway-vpn':
      return planGatewayVpn(key, inputs);
    case 'service':
      return planService(key, k.namespace, k.name, inputs);
    case 'network':
      return planNetwork(key, k.namespace, k.name, inputs);
    case 'attachment':
      return planAttachment(key, k.namespace, k.pod, k.ifname, inputs);
    case 'network-policy':
      return planNetworkPolicy(key, inputs, (pod) => podPlacement(pod, inputs).state === 'placed');
    case 'acl-policy':
      return planPolicyAcls(
        key,
        k.namespace,
        k.name,
        inputs,
        (pod) => podPlacement(pod, inputs).state === 'placed',
      );
  }
}
