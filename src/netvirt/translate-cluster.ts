/**
 * What ODL should hold for the whole cluster: the netvirt plans (plan-netvirt.ts) folded over
 * every key the cluster needs (its pods, the ELANs and VPNs they attach to, its nodes), with
 * what must be kept because it cannot be decided yet. Used where a whole picture is wanted (the
 * tests' oracles, the sandbox); the inputs are plain maps, so the same fold serves anyone who
 * recovered route distinguishers and node subnets their own way.
 */
import type { V1Namespace, V1Node, V1Pod, V1Service } from '@kubernetes/client-node';
import type { DhcpNetwork } from './dhcp.js';
import type { ElanInstance, ElanInterface } from './elan.js';
import { ModelValidationError } from './errors.js';
import type { Interface } from './interfaces.js';
import type { K8sNode } from './k8s-node.js';
import { podNetworkEligibility } from './kube.js';
import { elanKey, GATEWAY_VPN_KEY, gatewayKey, nodeKey, nodeNetworkKey, podKey, vpnKey } from './keys.js';
import { vpnName } from './names.js';
import { planElan, planPod, planVpn, podTranslation, type NetvirtPlanInputs } from './plan-netvirt.js';
import { planGateway, planGatewayVpn } from './plan-gateway.js';
import { planNode, planNodeNetwork } from './plan-node.js';
import type { KeyPlan } from './plan.js';
import { instanceUse, keepsElansOf, type InstanceUse } from './translate-instances.js';
import type { Deferral, PodTranslation } from './translate-pod.js';
import { checkTranslateSettings, type TranslateSettings } from './translate-settings.js';
import type { VpnInstance, VpnInterface } from './vpn.js';

export interface ClusterObjects {
  nodes: readonly V1Node[];
  namespaces: readonly V1Namespace[];
  pods: readonly V1Pod[];
  /** namespace name → RD (from `allocateRouteDistinguishers`). */
  routeDistinguishers: ReadonlyMap<string, string>;
  /** node name → pod subnet CIDR. */
  nodeSubnets: ReadonlyMap<string, string>;
  /** Whether ODL has the k8s-node model (default: as the profile's release usually has: Sodium). */
  k8sNodeModel?: boolean;
  /**
   * Every Service, when they are known: node gateways and Service routes are planned (with the
   * settings' `serviceCidrs`). Absent: what exists of them is kept (not known here).
   */
  services?: readonly V1Service[];
}

/** Names whose desired state is unknown right now: garbage collection must leave them alone. */
export interface KeptNames {
  interfaces: Set<string>;
  elanInterfaces: Set<string>;
  vpnInterfaces: Set<string>;
  vpnInstances: Set<string>;
  /**
   * Namespaces with a pod whose ELAN cannot be named (its node is unknown or has no
   * InternalIP): keep every elan-instance of ours named `<ip>:<namespace>` for them.
   */
  elanNamespaces: Set<string>;
}

export interface DesiredState {
  interfaces: Map<string, Interface>;
  elanInterfaces: Map<string, ElanInterface>;
  vpnInterfaces: Map<string, VpnInterface>;
  elanInstances: Map<string, ElanInstance>;
  vpnInstances: Map<string, VpnInstance>;
  /** By node UID. */
  k8sNodes: Map<string, K8sNode>;
  /** Node networks, by network id (`odlcoe-node:<node>`). */
  nodeNetworks: Map<string, DhcpNetwork>;
  pods: Map<string, PodTranslation>;
  /** Pods (by `namespace/name`) and nodes whose state could not be fully computed, and why. */
  deferred: { object: string; deferral: Deferral }[];
  keep: KeptNames;
}

/** Namespaces that need a VPN: those with at least one pod on the pod network. */
export function namespacesNeedingVpn(pods: readonly V1Pod[]): Set<string> {
  const out = new Set<string>();
  for (const pod of pods) {
    const ns = pod.metadata?.namespace;
    if (ns && pod.metadata?.name && podNetworkEligibility(pod).onNetwork) out.add(ns);
  }
  return out;
}

function byName<T extends { metadata?: { name?: string } }>(items: readonly T[]): Map<string, T> {
  const m = new Map<string, T>();
  for (const item of items) if (item.metadata?.name) m.set(item.metadata.name, item);
  return m;
}

const nameOf = (o: { metadata?: { name?: string } }) => o.metadata?.name ?? '';

/**
 * Plan inputs over plain lists: route distinguishers and node subnets from the given maps (a
 * namespace that needs a VPN must have an RD: the caller allocates, never the fold).
 */
export function clusterPlanInputs(view: ClusterObjects, settings: TranslateSettings): NetvirtPlanInputs {
  const nodes = byName(view.nodes);
  const namespaces = byName(view.namespaces);
  const pods = new Map<string, V1Pod>();
  const byNamespace = new Map<string, V1Pod[]>();
  for (const pod of [...view.pods].sort((a, b) => podId(a).localeCompare(podId(b)))) {
    const ns = pod.metadata?.namespace;
    if (!ns || !pod.metadata?.name) continue;
    if (!pods.has(podId(pod))) pods.set(podId(pod), pod);
    const list = byNamespace.get(ns);
    if (list) list.push(pod);
    else byNamespace.set(ns, [pod]);
  }
  const subnetOf = (node: V1Node) => view.nodeSubnets.get(nameOf(node));
  const services = view.services;
  return {
    settings,
    ...(services
      ? {
          nodes: () => view.nodes,
          services: () => services,
          service: (ns: string, name: string) =>
            services.find((s) => s.metadata?.namespace === ns && s.metadata.name === name),
        }
      : {}),
    k8sNodeModel: view.k8sNodeModel ?? settings.profile === 'sodium',
    pod: (ns, name) => pods.get(`${ns}/${name}`),
    podsInNamespace: (ns) => byNamespace.get(ns) ?? [],
    namespace: (name) => namespaces.get(name),
    namespaceNames: () => [...byNamespace.keys(), ...namespaces.keys()],
    node: (name) => nodes.get(name),
    nodeByUid: (uid) => view.nodes.find((n) => n.metadata?.uid === uid),
    nodeSubnet: subnetOf,
    nodeEntrySubnet: (node) => {
      const cidr = subnetOf(node);
      return cidr === undefined ? { kind: 'none' } : { kind: 'subnet', cidr };
    },
    subnetHolder: () => undefined,
    nodeNetworkSubnet: (node) => {
      const cidr = subnetOf(node);
      return cidr === undefined ? { kind: 'none' } : { kind: 'subnet', cidr };
    },
    networkHolder: () => undefined,
    routeDistinguisher: (ns) => {
      const rd = view.routeDistinguishers.get(ns);
      if (rd === undefined)
        throw new ModelValidationError(
          `route distinguisher of namespace ${ns}`,
          'not allocated (allocate for namespacesNeedingVpn() before translating)',
        );
      return { rd, reassigned: false };
    },
  };
}

/** Adds a plan's entries to the desired state; `keep` entries to the kept names. */
function collect(out: DesiredState, plan: KeyPlan): void {
  const present: Record<string, Map<string, unknown>> = {
    interface: out.interfaces,
    elanInterface: out.elanInterfaces,
    vpnInterface: out.vpnInterfaces,
    elanInstance: out.elanInstances,
    vpnInstance: out.vpnInstances,
    k8sNode: out.k8sNodes,
    dhcpNetwork: out.nodeNetworks,
  };
  const kept: Record<string, Set<string> | undefined> = {
    interface: out.keep.interfaces,
    elanInterface: out.keep.elanInterfaces,
    vpnInterface: out.keep.vpnInterfaces,
    vpnInstance: out.keep.vpnInstances,
  };
  for (const e of plan.entries) {
    if (e.want === 'present') present[e.kind]?.set(e.name, e.desired);
    else if (e.want === 'keep') kept[e.kind]?.add(e.name);
  }
}

/**
 * Desired ODL state for the whole cluster. Throws (ModelValidationError) only for bad settings
 * or a missing RD of a namespace that needs a VPN (allocate first, with namespacesNeedingVpn);
 * a single odd Kubernetes object is reported in `deferred`, never allowed to block the rest.
 */
export function translateCluster(view: ClusterObjects, settings: TranslateSettings): DesiredState {
  checkTranslateSettings(settings);
  const inputs = clusterPlanInputs(view, settings);
  const out: DesiredState = {
    interfaces: new Map(),
    elanInterfaces: new Map(),
    vpnInterfaces: new Map(),
    elanInstances: new Map(),
    vpnInstances: new Map(),
    k8sNodes: new Map(),
    nodeNetworks: new Map(),
    pods: new Map(),
    deferred: [],
    keep: {
      interfaces: new Set(),
      elanInterfaces: new Set(),
      vpnInterfaces: new Set(),
      vpnInstances: new Set(),
      elanNamespaces: new Set(),
    },
  };
  const elans = new Map<string, string>();
  /** Instance uses of the pods, by namespace. */
  const uses = new Map<string, InstanceUse[]>();
  const planned = new Set<string>();
  for (const pod of [...view.pods].sort((a, b) => podId(a).localeCompare(podId(b)))) {
    const id = podId(pod);
    const t = podTranslation(pod, inputs);
    out.pods.set(id, t);
    const ns = pod.metadata?.namespace;
    const name = pod.metadata?.name;
    if (!ns || !name) {
      if (t.state === 'deferred') out.deferred.push({ object: `pod ${id}`, deferral: t.deferral });
      continue;
    }
    if (planned.has(id)) {
      // Cannot happen with a consistent cache (names are unique per namespace); never let one pod overwrite another.
      out.deferred.push({
        object: `pod ${id}`,
        deferral: { code: 'invalid-object', message: `interface name ${ns}:${name} already taken` },
      });
      continue;
    }
    planned.add(id);
    const plan = planPod(podKey(ns, name), ns, name, inputs);
    collect(out, plan);
    for (const f of plan.facts)
      if (f.fact === 'deferred' || f.fact === 'partly-deferred')
        out.deferred.push({ object: `pod ${id}`, deferral: f.deferral });
    const use = instanceUse(t);
    if (use.use === 'none') continue;
    const list = uses.get(use.namespace);
    if (list) list.push(use);
    else uses.set(use.namespace, [use]);
    if (use.use === 'attached' && t.state === 'on-network') elans.set(use.elanInstanceName, use.namespace);
  }
  for (const [elan, ns] of [...elans].sort(([a], [b]) => a.localeCompare(b)))
    collect(out, planElan(elanKey(elan), elan, ns, inputs));
  for (const ns of [...uses.keys()].sort()) {
    if (keepsElansOf(ns, uses.get(ns) ?? [])) out.keep.elanNamespaces.add(ns);
    collect(out, planVpn(vpnKey(vpnName(ns)), vpnName(ns), inputs));
  }
  for (const node of [...view.nodes].sort((a, b) => nameOf(a).localeCompare(nameOf(b)))) {
    const uid = node.metadata?.uid;
    const plan = uid ? planNode(nodeKey(uid), uid, inputs) : undefined;
    if (plan) collect(out, plan);
    if (nameOf(node)) collect(out, planNodeNetwork(nodeNetworkKey(nameOf(node)), nameOf(node), inputs));
    if (nameOf(node) && view.services)
      collect(out, planGateway(gatewayKey(nameOf(node)), nameOf(node), inputs));
    const problem = plan?.facts.find((f) => f.fact === 'untranslatable');
    if (!uid || problem)
      out.deferred.push({
        object: `node ${nameOf(node)}`,
        deferral: {
          code: 'invalid-object',
          message:
            problem?.fact === 'untranslatable'
              ? problem.message
              : `node ${nameOf(node) || '?'}: node without metadata.uid`,
        },
      });
  }
  if (view.services) collect(out, planGatewayVpn(GATEWAY_VPN_KEY, inputs));
  return out;
}

function podId(pod: V1Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}
