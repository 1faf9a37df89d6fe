/**
 * The watcher's view of the cluster: the pod, namespace and node informers (kept running on
 * leader and standby alike, so a takeover starts from warm caches) and the indexes reconcilers
 * need to answer "which pods are on this node / in this namespace" without scanning every pod.
 *
 * Index updates run as the first informer handlers, so by the time a key-mapping handler (or
 * a reconcile triggered by it) looks, the indexes already reflect the event.
 */
import type { KubeConfig, KubernetesObject, V1Namespace, V1Node, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../common/log.js';
import type { Registry } from '../common/metrics.js';
import { Informer, waitForAllSynced } from '../k8s/informer.js';
import { nodeInternalIp } from '../netvirt/index.js';
import type { ClusterChange } from './backend.js';

export interface ClusterViewOptions {
  kubeConfig: KubeConfig;
  registry?: Registry;
  logger: Logger;
  /** Informer watch timeouts (tests shorten them); default the informer's own. */
  watchTimeoutSeconds?: [number, number];
}

/** A set-valued index: key → set of members. */
class SetIndex {
  private readonly map = new Map<string, Set<string>>();
  add(key: string, member: string): void {
    let set = this.map.get(key);
    if (!set) this.map.set(key, (set = new Set()));
    set.add(member);
  }
  remove(key: string, member: string): void {
    const set = this.map.get(key);
    if (!set) return;
    set.delete(member);
    if (set.size === 0) this.map.delete(key);
  }
  get(key: string): ReadonlySet<string> {
    return this.map.get(key) ?? new Set();
  }
  keys(): IterableIterator<string> {
    return this.map.keys();
  }
}

export class ClusterView {
  readonly pods: Informer<V1Pod>;
  readonly namespaces: Informer<V1Namespace>;
  readonly nodes: Informer<V1Node>;
  private readonly podsByNode = new SetIndex();
  private readonly podsByNamespace = new SetIndex();
  private readonly nodesByIp = new SetIndex();
  private readonly nodeNameByUid = new Map<string, string>();
  private readonly listeners: ((change: ClusterChange) => void)[] = [];

  constructor(options: ClusterViewOptions) {
    const common = {
      kubeConfig: options.kubeConfig,
      registry: options.registry,
      logger: options.logger,
      ...(options.watchTimeoutSeconds ? { watchTimeoutSeconds: options.watchTimeoutSeconds } : {}),
    };
    this.pods = new Informer<V1Pod>({ ...common, name: 'pods', path: '/api/v1/pods' });
    this.namespaces = new Informer<V1Namespace>({
      ...common,
      name: 'namespaces',
      path: '/api/v1/namespaces',
    });
    this.nodes = new Informer<V1Node>({ ...common, name: 'nodes', path: '/api/v1/nodes' });

    this.pods
      .on('add', (pod) => this.indexPod(pod, true))
      .on('update', (pod, old) => {
        this.indexPod(old, false);
        this.indexPod(pod, true);
      })
      .on('delete', (pod) => this.indexPod(pod, false));
    this.nodes
      .on('add', (node) => this.indexNode(node, true))
      .on('update', (node, old) => {
        this.indexNode(old, false);
        this.indexNode(node, true);
      })
      .on('delete', (node) => this.indexNode(node, false));

    // After the index handlers: listeners see indexes that include the change.
    this.pods
      .on('add', (obj) => this.emit({ kind: 'pod', obj }))
      .on('update', (obj, old) => this.emit({ kind: 'pod', obj, old }))
      .on('delete', (obj) => this.emit({ kind: 'pod', obj }));
    this.namespaces
      .on('add', (obj) => this.emit({ kind: 'namespace', obj }))
      .on('update', (obj, old) => this.emit({ kind: 'namespace', obj, old }))
      .on('delete', (obj) => this.emit({ kind: 'namespace', obj }));
    this.nodes
      .on('add', (obj) => this.emit({ kind: 'node', obj }))
      .on('update', (obj, old) => this.emit({ kind: 'node', obj, old }))
      .on('delete', (obj) => this.emit({ kind: 'node', obj }));
  }

  /** Every add, update and delete of a pod, namespace or node, after the indexes took it in. */
  onChange(listener: (change: ClusterChange) => void): void {
    this.listeners.push(listener);
  }

  start(): void {
    for (const informer of this.informers()) informer.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers().map((i) => i.stop()));
  }

  informers(): Informer<KubernetesObject>[] {
    return [this.pods, this.namespaces, this.nodes] as unknown as Informer<KubernetesObject>[];
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

  pod(namespace: string, name: string): V1Pod | undefined {
    return this.pods.get(`${namespace}/${name}`);
  }

  namespace(name: string): V1Namespace | undefined {
    return this.namespaces.get(name);
  }

  node(name: string): V1Node | undefined {
    return this.nodes.get(name);
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

  /** Namespaces that have pods in the cache (whether or not the namespace object is known). */
  namespacesWithPods(): string[] {
    return [...this.podsByNamespace.keys()];
  }

  private resolvePods(keys: ReadonlySet<string>): V1Pod[] {
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
    } else {
      this.podsByNamespace.remove(ns, key);
      if (node) this.podsByNode.remove(node, key);
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
