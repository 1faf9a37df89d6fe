/**
 * The default backend: Kubernetes → NetVirt/Genius objects (ietf-interfaces, ELAN and L3VPN
 * instances and interfaces) plus the node networks that carry node subnets (and the k8s-node
 * entries, where ODL has the COE models). Its keys are
 * src/netvirt/keys.ts, its plans src/netvirt/plan-netvirt.ts; this module provides the plans'
 * inputs from the cluster view, the ODL cache and the allocators (node subnets, route
 * distinguishers), and carries the plans out.
 */
import {
  gatewayKey,
  GATEWAY_VPN_KEY,
  keysOfPod,
  netvirtClusterKeys,
  networkKey,
  nodeNetworkKey,
  NETWORK_POLICY_KEY,
  aclPolicyKey,
  parseNetvirtKey,
  podKey,
  serviceKey,
  vpnKey,
} from '../netvirt/keys.js';
import {
  readNetworkDefinition,
  type NetworkAttachmentDefinition,
  type NetworkDefinition,
} from '../netvirt/network-config.js';
import { networkInstanceName } from '../netvirt/network-names.js';
import { namespaceRoutingConflictsOf, routedSubnet, type RoutedSubnet } from '../netvirt/network-routing.js';
import { ownershipMarker, vpnName } from '../netvirt/names.js';
import { subnetAllocation } from '../config/watcher-settings.js';
import { AttachmentAllocator } from './attachment-allocator.js';
import { networkSubnets, nodeOfNetwork } from '../netvirt/node-network.js';
import type { DhcpNetwork } from '../netvirt/dhcp.js';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Acl } from '../netvirt/acl.js';
import type { Interface } from '../netvirt/interfaces.js';
import type { VpnInstance } from '../netvirt/vpn.js';
import type { KindTable } from '../netvirt/kind.js';
import { NETVIRT_KINDS } from '../netvirt/kinds.js';
import { namespaceOfVpn, planNetvirtKey, type NetvirtPlanInputs } from '../netvirt/plan-netvirt.js';
import { allServiceRoutes } from '../netvirt/plan-gateway.js';
import { allocateRouteDistinguishers } from '../netvirt/route-distinguisher.js';
import {
  recoverRouteDistinguishers,
  vpnInstanceOwnership,
  vpnInterfaceOwnership,
  vpnRouteDistinguisher,
  vpnRouteDistinguishers,
} from '../netvirt/ownership.js';
import type { BackendContext } from './backend.js';
import type { ClusterChange, OptionalResource } from './cluster-view.js';
import type { EntryChange } from './entry-cache.js';
import { netvirtKeysFor, networksOfPod, type KeyLookup } from './netvirt-keys.js';
import { policyKeysFor, type PolicyKeyLookup } from './policy-keys.js';
import { NetworkPolicies } from './network-policies.js';
import { OdlBackend } from './odl-backend.js';
import type { PlanRun } from './plan-executor.js';
import { factOf, type KeyPlan } from '../netvirt/plan.js';
import { keyKind, type WriteGuard } from './reconcile.js';
import { ATTACHMENTS_ANNOTATION } from '../netvirt/attachments.js';
import { NETWORKS_ANNOTATION } from '../netvirt/network-selection.js';
import { subnetHoldsAddress } from './subnet-allocator.js';
import { gatewayVpnRouteDistinguishers } from '../netvirt/gateway.js';

const labelsChanged = (obj: KubernetesObject, old: KubernetesObject | undefined) =>
  !old || JSON.stringify(obj.metadata?.labels ?? {}) !== JSON.stringify(old.metadata?.labels ?? {});

export class NetvirtBackend extends OdlBackend {
  readonly name = 'netvirt';
  /**
   * NetworkAttachmentDefinitions (extra networks), where the API serves them; Services when
   * service ranges are configured (node gateways and Service routes).
   */
  override readonly resources: readonly OptionalResource[];
  private readonly attachments: AttachmentAllocator;
  /** NAD reads by uid and resourceVersion (every plan of a network or attachment asks). */
  private readonly definitions = new Map<string, NetworkDefinition>();
  /** Namespace-routed networks refused for overlaps (undefined: to be computed again). */
  private conflicts: Map<string, string> | undefined;
  private readonly gateways: boolean;
  /** Every Service route, shared by the gateway plans until a Service changes (plan-gateway.ts). */
  private routes: readonly string[] | undefined;
  private readonly lookup: KeyLookup;
  /** namespace → RD handed out but not yet visible in the ODL cache (allocation is synchronous). */
  private readonly rdReservations = new Map<string, string>();
  /**
   * RD → how many VPNs in the ODL cache carry it (each VPN once), for the namespaces whose VPN
   * keeps its RD; undefined: to be counted again (a VPN changed, or the lists were read).
   */
  private rdHolders: Map<string, number> | undefined;
  protected readonly inputs: NetvirtPlanInputs;
  /** NetworkPolicy enforcement (undefined: off). */
  private readonly policies: NetworkPolicies | undefined;
  private readonly policyLookup: PolicyKeyLookup | undefined;

  /** @param table NETVIRT_KINDS, or a table that extends it (a kind planned by a subclass). */
  constructor(ctx: BackendContext, table: KindTable = NETVIRT_KINDS) {
    super(ctx, table, ctx.settings.gracePeriodMs, true);
    const view = ctx.view;
    const serviceCidrs = ctx.settings.serviceCidrs ?? [];
    this.gateways = serviceCidrs.length > 0;
    this.policies = NetworkPolicies.forBackend(ctx);
    this.resources = [
      'networkattachmentdefinitions',
      ...(this.gateways ? ['services' as const] : []),
      ...(this.policies ? ['networkpolicies' as const] : []),
    ];
    this.lookup = {
      node: (name) => view.node(name),
      podsOnNode: (name) => view.podsOnNode(name),
      podsInNamespace: (ns) => view.podsInNamespace(ns),
      podsSelecting: (network) => view.pods.list().filter((p) => networksOfPod(p).includes(network)),
    };
    this.cache.onChange((change) => {
      if (change.ref.kind === 'vpnInstance') this.rdHolders = undefined;
    });
    this.attachments = new AttachmentAllocator({
      view,
      kube: ctx.kube,
      logger: ctx.logger,
      network: (ns, name) => this.networkDefinition(ns, name),
      odlHolds: (name, podUid) => this.odlHoldsAttachment(name, podUid),
    });
    this.inputs = {
      settings: { ...this.translate, serviceCidrs },
      k8sNodeModel: this.table.has('k8sNode'),
      pod: (ns, name) => view.pod(ns, name),
      podsInNamespace: (ns) => view.podsInNamespace(ns),
      podsInNamespaceOnIp: (ns, ip) => view.podsInNamespaceOnIp(ns, ip),
      namespace: (name) => view.namespace(name),
      namespaceNames: () => [
        ...view.namespacesWithPods(),
        ...view.namespaces.list().map((n) => n.metadata?.name ?? ''),
      ],
      node: (name) => view.node(name),
      nodeByUid: (uid) => view.nodeByUid(uid),
      nodeSubnet: (node) => this.subnets.subnetFor(node),
      nodeEntrySubnet: (node) => this.subnets.entrySubnet(node),
      subnetHolder: (uid) => this.subnetHolder(uid),
      nodeNetworkSubnet: (node) => this.subnets.nodeNetworkSubnet(node),
      networkHolder: (nodeName) => this.networkHolder(nodeName),
      routeDistinguisher: (ns) => this.routeDistinguisher(ns),
      nodes: () => view.nodes.list(),
      services: () => view.services?.list() ?? [],
      service: (ns, name) => view.service(ns, name),
      serviceRoutes: () => (this.routes ??= allServiceRoutes(this.inputs, serviceCidrs)),
      policy: () => this.policies?.index(),
      acls: () => this.cache.values('acl') as Iterable<Acl>,
      ...(this.policies ? { aclTagReservations: this.policies.tagReservations } : {}),
      interfaceAcl: (name) => (this.cache.get('interface', name) as Interface | undefined)?.acl,
    };
    const policies = this.policies;
    // The owner context is shared with the writer: the ACL kind's ownerKey asks it (kinds.ts).
    if (policies) this.owner.aclKey = (name) => policies.aclKey(name);
    this.policyLookup = policies && {
      ...this.lookup,
      clusterName: this.translate.clusterName,
      profile: this.translate.profile,
      index: () => policies.index(),
      namespaceLabels: (ns) => view.namespace(ns)?.metadata?.labels,
      namespacesWithPods: () => view.namespacesWithPods(),
    };
    // Known only where the view watches NADs (a cluster without the CRD: keep what exists).
    Object.defineProperty(this.inputs, 'networkDefinition', {
      get: () =>
        view.includes('networkattachmentdefinitions')
          ? (ns: string, name: string) => this.networkDefinition(ns, name)
          : undefined,
    });
    Object.defineProperty(this.inputs, 'namespaceRoutedNetworks', {
      get: () =>
        view.includes('networkattachmentdefinitions')
          ? (ns: string) => this.namespaceRoutedNetworks(ns)
          : undefined,
    });
  }

  /**
   * A NAD as plans and allocation see it: read (once per resourceVersion), and a network on an
   * ELAN made in ODL is invalid while that ELAN does not exist.
   */
  private networkDefinition(namespace: string, name: string): NetworkDefinition | undefined {
    const nad = this.ctx.view.networkAttachmentDefinition(namespace, name);
    if (!nad) return undefined;
    const def = this.readDefinition(nad);
    const elan = def.state === 'odlcoe' ? def.network.elan : undefined;
    if (elan !== undefined && !this.cache.get('elanInstance', elan))
      return {
        state: 'invalid',
        message: `spec.config/elan: no ELAN ${JSON.stringify(elan)} exists in ODL (create it there first)`,
      };
    if (def.state === 'odlcoe' && def.network.routing === 'namespace') {
      const conflict = this.routingConflicts().get(`${namespace}/${name}`);
      if (conflict !== undefined) return { state: 'invalid', message: conflict };
    }
    return def;
  }

  /**
   * The namespace-routed networks refused for sharing addresses with the pod network or with
   * an older such network (network-routing.ts), computed once until a NAD or a node subnet
   * changes.
   */
  private routingConflicts(): Map<string, string> {
    this.conflicts ??= namespaceRoutingConflictsOf(
      this.ctx.view.networkAttachmentDefinitions(),
      (nad) => this.readDefinition(nad),
      () => {
        const routed: (RoutedSubnet | undefined)[] = [];
        const allocation = subnetAllocation(this.ctx.settings);
        if (allocation) routed.push(routedSubnet(allocation.clusterCidr, 'the cluster CIDR'));
        for (const node of this.ctx.view.nodes.list()) {
          const subnet = this.subnets.subnetFor(node);
          if (subnet) routed.push(routedSubnet(subnet, `node ${node.metadata?.name ?? '?'}'s pod subnet`));
        }
        for (const cidr of this.ctx.settings.serviceCidrs ?? [])
          routed.push(routedSubnet(cidr, 'the Service range'));
        return routed.filter((r): r is RoutedSubnet => r !== undefined);
      },
    );
    return this.conflicts;
  }

  /** `<ns>/<name>` of the valid networks of `namespace` routed through its VPN. */
  private namespaceRoutedNetworks(namespace: string): string[] {
    return this.ctx.view.networkAttachmentDefinitions().flatMap((nad) => {
      const name = nad.metadata?.name;
      if (nad.metadata?.namespace !== namespace || !name) return [];
      const def = this.networkDefinition(namespace, name);
      return def?.state === 'odlcoe' && def.network.routing === 'namespace' ? [`${namespace}/${name}`] : [];
    });
  }

  /**
   * The keys of every namespace-routed network and of the pods selecting one: whether each is
   * refused depends on the others and on the pod subnets (network-routing.ts).
   */
  private namespaceRoutedKeys(): string[] {
    this.conflicts = undefined;
    const keys = new Set<string>();
    for (const nad of this.ctx.view.networkAttachmentDefinitions()) {
      const def = this.readDefinition(nad);
      const ns = nad.metadata?.namespace;
      const name = nad.metadata?.name;
      if (def.state !== 'odlcoe' || def.network.routing !== 'namespace' || !ns || !name) continue;
      keys.add(networkKey(ns, name));
      keys.add(vpnKey(vpnName(ns)));
      for (const pod of this.lookup.podsSelecting(`${ns}/${name}`))
        for (const key of keysOfPod(pod, (n) => this.ctx.view.node(n))) keys.add(key);
    }
    return [...keys];
  }

  private readDefinition(nad: NetworkAttachmentDefinition): NetworkDefinition {
    const id = `${nad.metadata?.uid ?? ''}/${nad.metadata?.resourceVersion ?? ''}`;
    let def = this.definitions.get(id);
    if (!def) {
      if (this.definitions.size > 4096) this.definitions.clear();
      def = readNetworkDefinition(nad);
      this.definitions.set(id, def);
    }
    return def;
  }

  /** Whether the cache holds an interface of the attachment interface `name` made for pod `podUid`. */
  private odlHoldsAttachment(name: string, podUid: string): boolean {
    const marker = ownershipMarker(this.translate.clusterName, 'pod', podUid);
    const ietf = this.cache.get('interface', name) as Interface | undefined;
    const elan = this.cache.get('elanInterface', name) as { description?: string } | undefined;
    // A vpn-interface has no marker: it is the old pod's unless its ietf-interface is another's.
    const vpn = this.cache.get('vpnInterface', name) !== undefined;
    return (
      ietf?.description === marker ||
      elan?.description === marker ||
      (vpn && (ietf === undefined || ietf.description === marker))
    );
  }

  /** The NADs (`<ns>/<name>`) on an ELAN made in ODL named `elan`. */
  private networksOnElan(elan: string): string[] {
    return this.ctx.view.networkAttachmentDefinitions().flatMap((nad) => {
      const def = this.readDefinition(nad);
      const on = def.state === 'odlcoe' && def.network.elan === elan;
      return on ? [`${nad.metadata?.namespace ?? ''}/${nad.metadata?.name ?? ''}`] : [];
    });
  }

  keysFor(change: ClusterChange): string[] {
    // Runs for every change, after the view took it in: the routes are computed again on demand.
    if (change.kind === 'service') this.routes = undefined;
    const routedKeys = this.routingKeysFor(change);
    if (change.kind === 'pod')
      this.attachments.podChanged(change.obj.metadata?.namespace ?? '', change.obj.metadata?.name ?? '');
    if (
      change.kind === 'networkpolicy' ||
      (change.kind === 'namespace' && labelsChanged(change.obj, change.old))
    )
      this.policies?.changed();
    const keys = netvirtKeysFor(change, this.lookup);
    keys.push(...routedKeys);
    if (this.policyLookup) keys.push(...policyKeysFor(change, this.policyLookup));
    if (!this.gateways) return keys;
    return [...keys, ...this.gatewayKeysFor(change)];
  }

  /**
   * A change to what namespace-routed networks may not overlap: such a NAD (old or new
   * state), or a node's pod subnet (a node came, went or changed its podCIDR).
   */
  private routingKeysFor(change: ClusterChange): string[] {
    if (change.kind === 'network') {
      const routed = (nad: NetworkAttachmentDefinition | undefined) => {
        const def = nad && this.readDefinition(nad);
        return def?.state === 'odlcoe' && def.network.routing === 'namespace';
      };
      if (change.old?.spec?.config === change.obj.spec?.config && change.old) return [];
      return routed(change.obj) || routed(change.old) ? this.namespaceRoutedKeys() : [];
    }
    if (change.kind === 'node' && change.old?.spec?.podCIDR !== change.obj.spec?.podCIDR)
      return this.namespaceRoutedKeys();
    return [];
  }

  /**
   * A Service change: every gateway (each carries the Service's routes) and the Service's own
   * key; a node change: its gateway (old and new name) and the gateway VPN (one RD per node).
   */
  private gatewayKeysFor(change: ClusterChange): string[] {
    const view = this.ctx.view;
    switch (change.kind) {
      case 'service': {
        const routesOf = (s: typeof change.obj | undefined) =>
          JSON.stringify([
            s?.spec?.type,
            s?.spec?.clusterIPs ?? s?.spec?.clusterIP,
            s?.spec?.externalIPs,
            s?.status?.loadBalancer?.ingress,
          ]);
        const ns = change.obj.metadata?.namespace ?? '';
        const name = change.obj.metadata?.name ?? '';
        const own = ns && name ? [serviceKey(ns, name)] : [];
        if (change.old && routesOf(change.old) === routesOf(change.obj)) return own;
        return [
          ...own,
          ...view.nodes.list().flatMap((n) => (n.metadata?.name ? [gatewayKey(n.metadata.name)] : [])),
        ];
      }
      case 'node': {
        const names = new Set([change.obj.metadata?.name, change.old?.metadata?.name]);
        return [GATEWAY_VPN_KEY, ...[...names].flatMap((n) => (n ? [gatewayKey(n)] : []))];
      }
      default:
        return [];
    }
  }

  /**
   * A node's subnet changed in ODL (allocated, or set by an ODL user): its pods' vpn-interfaces
   * name its gateway, and its node gateway sits at the subnet's second address. A k8s-node
   * entry's pod-cidr may also have to be carried into the node's network (`odl`).
   */
  override keysForEntry(change: EntryChange): string[] {
    const kind = change.ref.kind;
    if (kind === 'interface' || kind === 'elanInterface' || kind === 'vpnInterface')
      this.attachments.interfaceChanged(change.ref.name);
    if (
      change.ref.kind === 'elanInstance' &&
      (change.before === undefined) !== (change.after === undefined)
    ) {
      // An ELAN made in ODL appeared or went: the networks on it become valid or invalid.
      const keys = new Set<string>();
      for (const ref of this.networksOnElan(change.ref.name)) {
        const [ns = '', name = ''] = ref.split('/');
        keys.add(networkKey(ns, name));
        for (const pod of this.lookup.podsSelecting(ref))
          for (const key of keysOfPod(pod, (n) => this.ctx.view.node(n))) keys.add(key);
      }
      if (keys.size > 0) return [...keys];
    }
    let nodeName: string | undefined;
    const extra: string[] = [];
    if (change.ref.kind === 'k8sNode') {
      const podCidr = (e: unknown) => (e as { podCidr?: string } | undefined)?.podCidr?.trim();
      if (podCidr(change.before) === podCidr(change.after)) return [];
      nodeName = this.ctx.view.nodeByUid(change.ref.name)?.metadata?.name;
      if (nodeName) extra.push(nodeNetworkKey(nodeName));
    } else if (change.ref.kind === 'dhcpNetwork') {
      const subnets = (e: unknown) => networkSubnets(e as DhcpNetwork | undefined).join(',');
      if (subnets(change.before) === subnets(change.after)) return [];
      nodeName = nodeOfNetwork(change.ref.name);
    }
    if (!nodeName) return [];
    // The node's pod subnet changed: namespace-routed networks may overlap it now, or no longer.
    extra.push(...this.namespaceRoutedKeys());
    if (this.gateways) extra.push(gatewayKey(nodeName));
    // The node's ACL carries its gateway's address, the second of its subnet.
    if (this.policies && this.gateways) extra.push(NETWORK_POLICY_KEY);
    return [
      ...extra,
      ...this.ctx.view
        .podsOnNode(nodeName)
        .filter((p) => p.metadata?.namespace && p.metadata.name)
        .map((p) => podKey(p.metadata?.namespace ?? '', p.metadata?.name ?? '')),
    ];
  }

  /**
   * Pods (and their attachments) after every other key: what they need (their ELAN and VPN,
   * node entries, networks, ACLs) is then written or under way when they run. A pod that finds
   * an instance missing writes what it can, waits for it and runs again; in the order the
   * cluster's objects name their keys (a node's pods before the namespaces' VPNs), converging
   * 10,000 pods ran every pod key twice.
   *
   * Not a set over `keysFor`: a change's keys include those of every pod of a node or namespace
   * that changed, so going over every object that way went over each pod three times.
   */
  protected *clusterKeys(): Iterable<string> {
    const pods = new Set<string>();
    for (const key of this.objectKeys()) {
      const kind = keyKind(key);
      if (kind === 'pod' || kind === 'attachment') pods.add(key);
      else yield key;
    }
    yield* pods;
  }

  /**
   * The keys the cluster's objects name, as the CLI's plans see them (keys.ts
   * `netvirtClusterKeys`: each object's own keys, once), then the policy keys. What a pass over
   * every key is for (computed afresh), it starts afresh: the routing conflicts and the policy
   * index.
   */
  private *objectKeys(): Iterable<string> {
    const view = this.ctx.view;
    this.conflicts = undefined;
    this.policies?.changed();
    yield* netvirtClusterKeys({
      nodes: view.nodes.list(),
      namespaces: view.namespaces.list(),
      pods: view.pods.list(),
      ...(this.gateways ? { services: view.services?.list() ?? [] } : {}),
      ...(view.includes('networkattachmentdefinitions')
        ? { networkAttachmentDefinitions: view.networkAttachmentDefinitions() }
        : {}),
    });
    if (this.policies) {
      yield NETWORK_POLICY_KEY;
      for (const p of view.networkPolicies?.list() ?? [])
        if (p.metadata?.namespace && p.metadata.name)
          yield aclPolicyKey(p.metadata.namespace, p.metadata.name);
    }
  }

  protected parseKey(key: string): void {
    parseNetvirtKey(key);
  }

  /** The lists were read: the VPNs' RDs are counted again when next asked. */
  protected override loaded(fresh: boolean): void {
    this.rdHolders = undefined;
    super.loaded(fresh);
  }

  protected override freshTerm(): void {
    super.freshTerm();
    this.rdReservations.clear();
    this.attachments.reset();
    this.policies?.reset();
  }

  /** The plan of a key, as the watcher sees the cluster and ODL now. */
  plan(key: string) {
    return planNetvirtKey(key, this.inputs);
  }

  protected nodeOfKey(key: string): string | undefined {
    const k = parseNetvirtKey(key);
    return k.kind === 'node' ? k.uid : undefined;
  }

  protected override async runKeyPlan(key: string, guard: WriteGuard): Promise<PlanRun> {
    const k = parseNetvirtKey(key);
    // A pod's attachments are allocated and recorded first: its attachment keys plan from the record.
    if (k.kind === 'pod' && this.ctx.view.includes('networkattachmentdefinitions'))
      await this.attachments.sync(k.namespace, k.name, guard.signal);
    return super.runKeyPlan(key, guard);
  }

  /**
   * A pod that requests networks, or has attachments recorded, has its record made right
   * (a write to Kubernetes) before its plan: it is always reconciled.
   */
  protected override runsPlanOnly(key: string): boolean {
    if (!super.runsPlanOnly(key)) return false;
    const k = parseNetvirtKey(key);
    if (k.kind !== 'pod' || !this.ctx.view.includes('networkattachmentdefinitions')) return true;
    const annotations = this.ctx.view.pod(k.namespace, k.name)?.metadata?.annotations;
    return (
      annotations?.[NETWORKS_ANNOTATION] === undefined && annotations?.[ATTACHMENTS_ANNOTATION] === undefined
    );
  }

  protected override planned(plan: KeyPlan): void {
    this.policies?.report(plan);
    for (const f of plan.facts)
      if (f.fact === 'rd-reassigned')
        this.ctx.logger.warn(
          'VPN route distinguisher is shared with another namespace; giving this one a new RD',
          {
            namespace: f.namespace,
            vpn: f.vpn,
            rd: f.rd,
          },
        );
  }

  protected override afterPlan(key: string, plan: KeyPlan, run: PlanRun): PlanRun {
    const k = parseNetvirtKey(key);
    if (k.kind === 'network' && run.outcome.result === 'synced') {
      const vpn = networkInstanceName(k.namespace, k.name);
      if (!this.cache.get('vpnInstance', vpn)) this.rdReservations.delete(vpn);
    }
    const pending = factOf(plan, 'memberships-pending');
    if (pending && run.outcome.result === 'synced')
      // Woken when one of these interfaces changes in the cache; the old rules go after them.
      return {
        ...run,
        outcome: {
          result: 'waiting',
          retryAfterMs: this.ctx.settings.waitRetryMs,
          on: pending.interfaces.map((name) => ({ kind: 'interface', name })),
        },
      };
    if (k.kind === 'node-network') return this.afterNodeNetwork(k.nodeName, plan, run);
    if (k.kind === 'vpn' && run.outcome.result === 'synced' && !this.cache.get('vpnInstance', k.vpnName)) {
      // Gone (or never made): its reservation is free again.
      const ns = namespaceOfVpn(k.vpnName, this.inputs);
      if (ns !== undefined) this.rdReservations.delete(ns);
    }
    return run;
  }

  /**
   * A node network's plan ran: a gone node's network held by addresses in use is looked at
   * again later (pods and interfaces going away do not enqueue it); once it is gone, a subnet
   * recovered from it alone is free again.
   */
  private afterNodeNetwork(nodeName: string, plan: KeyPlan, run: PlanRun): PlanRun {
    if (run.outcome.result !== 'synced' && run.outcome.result !== 'deferred') return run;
    if (factOf(plan, 'subnet-held'))
      return { ...run, outcome: { result: 'polling', retryAfterMs: this.ctx.settings.subnetPollMs } };
    if (!this.ctx.view.node(nodeName) && this.subnets.network(nodeName) === undefined)
      if (this.subnets.releaseNetwork(nodeName))
        this.ctx.logger.info('node gone; the subnet recorded in its network is free again', {
          node: nodeName,
        });
    return run;
  }

  /**
   * `allocate`: what still holds addresses of a gone node's network: a pod bound to the node,
   * or one of this cluster's vpn-interfaces with a primary adjacency in its subnet.
   */
  private networkHolder(nodeName: string): { subnet: string; holder: string } | undefined {
    if (this.ctx.settings.subnetSource !== 'allocate') return undefined;
    for (const subnet of networkSubnets(this.subnets.network(nodeName))) {
      const holder = this.addressHolder(subnet, nodeName);
      if (holder) return { subnet, holder };
    }
    return undefined;
  }

  /**
   * What still holds addresses of a gone node's subnet, or undefined when nothing does: a pod
   * bound to the node (the node name is the one the watcher saw, or its entry's), or
   * one of this cluster's vpn-interfaces with a primary adjacency in the subnet (a pod already
   * deleted whose interface is not removed yet, or one on an unknown node kept on purpose).
   */
  private subnetHolder(uid: string): { subnet: string; holder: string } | undefined {
    const subnet = this.subnets.allocated(uid);
    if (subnet === undefined) return undefined;
    const holder = this.addressHolder(subnet, this.subnets.nodeName(uid));
    return holder === undefined ? undefined : { subnet, holder };
  }

  private addressHolder(subnet: string, nodeName: string | undefined): string | undefined {
    if (nodeName) {
      const pod = this.ctx.view.podsOnNode(nodeName)[0];
      if (pod) return `pod ${pod.metadata?.namespace ?? '?'}/${pod.metadata?.name ?? '?'}`;
    }
    for (const vif of this.cache.values('vpnInterface')) {
      const primary = vif.adjacencies.filter((a) => a.adjacencyType === 'primary-adjacency');
      if (!primary.some((a) => subnetHoldsAddress(subnet, a.ipAddress))) continue;
      if (vpnInterfaceOwnership(vif, this.cache.get('interface', vif.name), this.owner).owner === 'ours')
        return `vpn-interface ${vif.name}`;
    }
    return undefined;
  }

  /**
   * The RD of the namespace's VPN when it is ours and holds it alone (no other VPN in the cache
   * carries it, no other namespace reserved it): what the allocation below keeps for it, found
   * without going over every VPN (every VPN key asks, so that was quadratic in namespaces).
   * Undefined: the allocation decides.
   */
  private keptRouteDistinguisher(ns: string): string | undefined {
    const own = this.cache.get('vpnInstance', vpnName(ns)) as VpnInstance | undefined;
    if (!own || vpnInstanceOwnership(own, this.owner).owner !== 'ours') return undefined;
    const rd = vpnRouteDistinguisher(own);
    if (rd === undefined || this.countRdHolders().get(rd) !== 1) return undefined;
    for (const [reservedNs, reserved] of this.rdReservations)
      if (reserved === rd && reservedNs !== ns) return undefined;
    return rd;
  }

  private countRdHolders(): Map<string, number> {
    if (this.rdHolders) return this.rdHolders;
    const holders = new Map<string, number>();
    for (const vpn of this.cache.values('vpnInstance'))
      for (const rd of new Set(vpnRouteDistinguishers(vpn))) holders.set(rd, (holders.get(rd) ?? 0) + 1);
    this.rdHolders = holders;
    return holders;
  }

  /**
   * The namespace's RD: the one its VPN has in ODL, else one reserved earlier in this term, else
   * the lowest free one. Synchronous, so two VPN reconciles running at once cannot pick the same.
   */
  private routeDistinguisher(ns: string): { rd: string; reassigned: boolean } {
    const kept = this.keptRouteDistinguisher(ns);
    if (kept !== undefined) {
      this.rdReservations.set(ns, kept);
      return { rd: kept, reassigned: false };
    }
    const existing = recoverRouteDistinguishers(this.cache.values('vpnInstance'), [ns], this.owner);
    // RDs of VPNs that are not ours are taken too: ODL keys VPN state by RD, whoever wrote it.
    const known = new Set(existing.values());
    for (const vpn of this.cache.values('vpnInstance')) {
      const rd = vpnRouteDistinguisher(vpn);
      if (rd !== undefined && !known.has(rd)) existing.set(`foreign-vpn:${vpn.name}`, rd);
    }
    // Every RD of every VPN is taken, not only the first (the gateway VPN has one per node),
    // and so are the gateway VPN's RDs for all nodes known now.
    const taken = new Set(existing.values());
    const extra = [...this.cache.values('vpnInstance')].flatMap(vpnRouteDistinguishers);
    if (this.gateways)
      extra.push(
        ...gatewayVpnRouteDistinguishers(
          this.ctx.settings.rdAdministrator,
          this.ctx.view.nodes.list().length,
        ),
      );
    for (const rd of extra) {
      if (taken.has(rd)) continue;
      taken.add(rd);
      existing.set(`rd-taken:${rd}`, rd);
    }
    for (const [reservedNs, rd] of this.rdReservations)
      if (!existing.has(reservedNs)) existing.set(reservedNs, rd);
    const { byNamespace, reassigned } = allocateRouteDistinguishers([ns], existing, {
      administrator: this.ctx.settings.rdAdministrator,
    });
    const rd = byNamespace.get(ns);
    if (rd === undefined) throw new Error(`no route distinguisher allocated for namespace ${ns}`);
    this.rdReservations.set(ns, rd);
    return { rd, reassigned: reassigned.includes(ns) };
  }
}
