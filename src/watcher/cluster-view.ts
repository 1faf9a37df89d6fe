/**
 * The watcher's view of the cluster: the pod, namespace and node informers, and those of the
 * optional resources the selected backend declares (`services`, `endpointslices`,
 * `networkpolicies`), all kept
 * running on leader and standby alike, so a takeover starts from warm caches; and the indexes
 * reconcilers need to answer "which pods are on this node / in this namespace" without
 * scanning every pod.
 *
 * Every informer of the view is part of its sync gate (`hasSynced`, `waitForSync`: nothing is
 * planned from, or deleted in, ODL before all have synced) and of its health (`stalledMs`, which the
 * core's `/readyz` and `/healthz` report).
 *
 * Index updates run as the first informer handlers, so by the time a change listener (or a
 * reconcile triggered by it) looks, the indexes already reflect the event.
 */
import type {
  KubeConfig,
  KubernetesObject,
  V1EndpointSlice,
  V1Namespace,
  V1NetworkPolicy,
  V1Node,
  V1Pod,
  V1Service,
} from '@kubernetes/client-node';
import type { Logger } from '../common/log.js';
import type { Registry } from '../common/metrics.js';
import { SetIndex } from '../common/set-index.js';
import { Informer, waitForAllSynced, type InformerOptions } from '../k8s/informer.js';
import { nodeInternalIp } from '../netvirt/kube.js';
import type { NetworkAttachmentDefinition } from '../netvirt/network-config.js';
import { slimNode, slimObject, slimPod } from './slim-objects.js';

/**
 * A change of one Kubernetes object, as an informer handler saw it. Services and
 * EndpointSlices change only when a backend declared them (`include`).
 */
export type ClusterChange =
  | { kind: 'pod'; obj: V1Pod; old?: V1Pod }
  | { kind: 'namespace'; obj: V1Namespace; old?: V1Namespace }
  | { kind: 'node'; obj: V1Node; old?: V1Node }
  | { kind: 'service'; obj: V1Service; old?: V1Service }
  | { kind: 'endpointslice'; obj: V1EndpointSlice; old?: V1EndpointSlice }
  | { kind: 'network'; obj: NetworkAttachmentDefinition; old?: NetworkAttachmentDefinition }
  | { kind: 'networkpolicy'; obj: V1NetworkPolicy; old?: V1NetworkPolicy };

/**
 * Resources the view watches only for a backend that needs them. `networkattachmentdefinitions`
 * is a CRD: the watcher includes it only when the API server serves it (watcher.ts).
 */
export type OptionalResource =
  'services' | 'endpointslices' | 'networkpolicies' | 'networkattachmentdefinitions';

/** Where each optional resource is listed, its informer's name, and the change kind it makes. */
const OPTIONAL_RESOURCES = {
  services: { path: '/api/v1/services', name: 'services', kind: 'service' },
  endpointslices: {
    path: '/apis/discovery.k8s.io/v1/endpointslices',
    name: 'endpointslices',
    kind: 'endpointslice',
  },
  networkpolicies: {
    path: '/apis/networking.k8s.io/v1/networkpolicies',
    name: 'networkpolicies',
    kind: 'networkpolicy',
  },
  networkattachmentdefinitions: {
    path: '/apis/k8s.cni.cncf.io/v1/network-attachment-definitions',
    name: 'network-attachment-definitions',
    kind: 'network',
  },
} as const satisfies Record<OptionalResource, { path: string; name: string; kind: ClusterChange['kind'] }>;

export interface ClusterViewOptions {
  kubeConfig: KubeConfig;
  registry?: Registry;
  logger: Logger;
  /** Informer watch timeouts (tests shorten them); default the informer's own. */
  watchTimeoutSeconds?: [number, number];
}

type ChangeOf<K extends ClusterChange['kind']> = Extract<ClusterChange, { kind: K }>;

/** Keeps an index current: `index(obj, true)` on add, `index(obj, false)` on delete, both on update. */
function indexWith<T extends KubernetesObject>(
  informer: Informer<T>,
  index: (obj: T, add: boolean) => void,
): void {
  informer
    .on('add', (obj) => index(obj, true))
    .on('update', (obj, old) => {
      index(old, false);
      index(obj, true);
    })
    .on('delete', (obj) => index(obj, false));
}

export class ClusterView {
  readonly pods: Informer<V1Pod>;
  readonly namespaces: Informer<V1Namespace>;
  readonly nodes: Informer<V1Node>;
  private readonly optionalInformers = new Map<OptionalResource, Informer<KubernetesObject>>();
  private readonly podsByNode = new SetIndex();
  private readonly podsByNamespace = new SetIndex();
  /** `<namespace>/<node name>` → pods: the pods one node × namespace ELAN can serve. */
  private readonly podsByNamespaceNode = new SetIndex();
  private readonly nodesByIp = new SetIndex();
  private readonly nodeNameByUid = new Map<string, string>();
  private readonly listeners: ((change: ClusterChange) => void)[] = [];
  private readonly informerOptions: Omit<InformerOptions, 'name' | 'path' | 'transform'>;
  private started = false;

  /** The indexes beside the informers' caches, by name (the watcher benchmark measures their heap). */
  indexes(): Record<string, unknown> {
    return {
      'pods by node': this.podsByNode,
      'pods by namespace': this.podsByNamespace,
      'pods by namespace × node': this.podsByNamespaceNode,
      'nodes by IP': this.nodesByIp,
      'node names by UID': this.nodeNameByUid,
    };
  }

  constructor(options: ClusterViewOptions) {
    this.informerOptions = {
      kubeConfig: options.kubeConfig,
      registry: options.registry,
      logger: options.logger,
      ...(options.watchTimeoutSeconds ? { watchTimeoutSeconds: options.watchTimeoutSeconds } : {}),
    };
    // The caches keep what reconciles read, not what the API server sent (slim-objects.ts).
    this.pods = this.newInformer<V1Pod>({ name: 'pods', path: '/api/v1/pods', transform: slimPod });
    this.namespaces = this.newInformer<V1Namespace>({ name: 'namespaces', path: '/api/v1/namespaces' });
    this.nodes = this.newInformer<V1Node>({ name: 'nodes', path: '/api/v1/nodes', transform: slimNode });

    indexWith(this.pods, (pod, add) => this.indexPod(pod, add));
    indexWith(this.nodes, (node, add) => this.indexNode(node, add));

    // After the index handlers: listeners see indexes that include the change.
    this.forward(this.pods, 'pod');
    this.forward(this.namespaces, 'namespace');
    this.forward(this.nodes, 'node');
  }

  /**
   * Watches optional resources as well (a backend's `resources`). Only before `start()`:
   * what the view watches is fixed for the life of the process, so the sync gate means the
   * same thing in every leader term.
   */
  include(resources: Iterable<OptionalResource>): void {
    const wanted = [...resources];
    if (this.started && wanted.some((r) => !this.includes(r)))
      throw new Error('optional resources must be included before the cluster view starts');
    for (const resource of wanted) {
      const { path, name, kind } = OPTIONAL_RESOURCES[resource];
      if (this.optionalInformers.has(resource)) continue;
      const informer = this.newInformer<KubernetesObject>({ name, path });
      this.forward(informer as Informer<ChangeOf<typeof kind>['obj']>, kind);
      this.optionalInformers.set(resource, informer);
    }
  }

  includes(resource: OptionalResource): boolean {
    return this.optionalInformers.has(resource);
  }

  /**
   * Every add, update and delete of a watched object, after the view's indexes took it in.
   * Listeners run in the order they were added.
   */
  onChange(listener: (change: ClusterChange) => void): void {
    this.listeners.push(listener);
  }

  start(): void {
    this.started = true;
    for (const informer of this.informers()) informer.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers().map((i) => i.stop()));
  }

  informers(): Informer<KubernetesObject>[] {
    return [
      this.pods,
      this.namespaces,
      this.nodes,
      ...this.optionalInformers.values(),
    ] as unknown as Informer<KubernetesObject>[];
  }

  hasSynced(): boolean {
    return this.informers().every((i) => i.hasSynced());
  }

  waitForSync(signal?: AbortSignal): Promise<void> {
    return waitForAllSynced(this.informers(), signal);
  }

  /** The longest time any informer has been failing to list/watch, in ms. */
  stalledMs(): number {
    return Math.max(...this.informers().map((i) => i.stalledMs()));
  }

  /** The Service informer, when a backend included `services`. */
  get services(): Informer<V1Service> | undefined {
    return this.optionalInformers.get('services') as Informer<V1Service> | undefined;
  }

  /** The EndpointSlice informer, when a backend included `endpointslices`. */
  get endpointSlices(): Informer<V1EndpointSlice> | undefined {
    return this.optionalInformers.get('endpointslices') as Informer<V1EndpointSlice> | undefined;
  }

  /** The NetworkPolicy informer, when a backend included `networkpolicies`. */
  get networkPolicies(): Informer<V1NetworkPolicy> | undefined {
    return this.optionalInformers.get('networkpolicies') as Informer<V1NetworkPolicy> | undefined;
  }

  /** The NetworkAttachmentDefinition informer, when a backend included it (and the API serves the CRD). */
  private get nads(): Informer<NetworkAttachmentDefinition & KubernetesObject> | undefined {
    return this.optionalInformers.get('networkattachmentdefinitions') as
      Informer<NetworkAttachmentDefinition & KubernetesObject> | undefined;
  }

  pod(namespace: string, name: string): V1Pod | undefined {
    return this.pods.get(`${namespace}/${name}`);
  }

  namespace(name: string): V1Namespace | undefined {
    return this.namespaces.get(name);
  }

  node(name: string): V1Node | undefined {
    return this.nodes.get(name);
  }

  service(namespace: string, name: string): V1Service | undefined {
    return this.services?.get(`${namespace}/${name}`);
  }

  endpointSlice(namespace: string, name: string): V1EndpointSlice | undefined {
    return this.endpointSlices?.get(`${namespace}/${name}`);
  }

  /** A NetworkAttachmentDefinition, when the view watches them. */
  networkAttachmentDefinition(namespace: string, name: string): NetworkAttachmentDefinition | undefined {
    return this.nads?.get(`${namespace}/${name}`);
  }

  /** Every NetworkAttachmentDefinition known (none when the view does not watch them). */
  networkAttachmentDefinitions(): NetworkAttachmentDefinition[] {
    return this.nads?.list() ?? [];
  }

  nodeByUid(uid: string): V1Node | undefined {
    const name = this.nodeNameByUid.get(uid);
    const node = name === undefined ? undefined : this.nodes.get(name);
    return node?.metadata?.uid === uid ? node : undefined;
  }

  /** Nodes whose InternalIP (as odlcoe picks it) is `ip`, by name. */
  nodesWithIp(ip: string): V1Node[] {
    return [...this.nodesByIp.get(ip)]
      .sort()
      .map((name) => this.nodes.get(name))
      .filter((n): n is V1Node => n !== undefined);
  }

  podsOnNode(nodeName: string): V1Pod[] {
    return this.resolvePods(this.podsByNode.get(nodeName));
  }

  podsInNamespace(namespace: string): V1Pod[] {
    return this.resolvePods(this.podsByNamespace.get(namespace));
  }

  /**
   * The pods of a namespace on the nodes whose InternalIP is `ip`, in the order of
   * `podsInNamespace`: those an ELAN named for that IP and namespace can serve. An ELAN plan
   * asks this for every ELAN, so it must not cost every pod of the namespace.
   */
  podsInNamespaceOnIp(namespace: string, ip: string): V1Pod[] {
    const keys: string[] = [];
    for (const node of this.nodesByIp.get(ip))
      for (const key of this.podsByNamespaceNode.get(`${namespace}/${node}`)) keys.push(key);
    return this.resolvePods(keys);
  }

  /** Namespaces that have pods in the cache (whether or not the namespace object is known). */
  namespacesWithPods(): string[] {
    return [...this.podsByNamespace.keys()];
  }

  private newInformer<T extends KubernetesObject>(what: {
    name: string;
    path: string;
    transform?: (obj: T) => T;
  }): Informer<T> {
    return new Informer<T>({ transform: slimObject, ...this.informerOptions, ...what });
  }

  /** Emits every change of `informer` to the listeners as a `kind` change. */
  private forward<K extends ClusterChange['kind'], T extends ChangeOf<K>['obj']>(
    informer: Informer<T>,
    kind: K,
  ): void {
    const emit = (obj: T, old?: T) =>
      this.emit({ kind, obj, ...(old ? { old } : {}) } as unknown as ChangeOf<K>);
    informer
      .on('add', (obj) => emit(obj))
      .on('update', (obj, old) => emit(obj, old))
      .on('delete', (obj) => emit(obj));
  }

  private resolvePods(keys: Iterable<string>): V1Pod[] {
    return [...keys]
      .sort()
      .map((k) => this.pods.get(k))
      .filter((p): p is V1Pod => p !== undefined);
  }

  private indexPod(pod: V1Pod, add: boolean): void {
    const ns = pod.metadata?.namespace;
    const name = pod.metadata?.name;
    if (!ns || !name) return;
    const key = `${ns}/${name}`;
    const node = pod.spec?.nodeName;
    if (add) {
      this.podsByNamespace.add(ns, key);
      if (node) this.podsByNode.add(node, key);
      if (node) this.podsByNamespaceNode.add(`${ns}/${node}`, key);
    } else {
      this.podsByNamespace.remove(ns, key);
      if (node) this.podsByNode.remove(node, key);
      if (node) this.podsByNamespaceNode.remove(`${ns}/${node}`, key);
    }
  }

  private indexNode(node: V1Node, add: boolean): void {
    const name = node.metadata?.name;
    const uid = node.metadata?.uid;
    if (!name) return;
    const ip = nodeInternalIp(node);
    if (add) {
      if (uid) this.nodeNameByUid.set(uid, name);
      if (ip) this.nodesByIp.add(ip, name);
    } else {
      if (uid && this.nodeNameByUid.get(uid) === name) this.nodeNameByUid.delete(uid);
      if (ip) this.nodesByIp.remove(ip, name);
    }
  }

  private emit(change: ClusterChange): void {
    for (const listener of this.listeners) listener(change);
  }
}
