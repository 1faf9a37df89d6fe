/**
 * What odlcoectl reads from Kubernetes: complete, paged lists (a decision such as garbage
 * collection must never rest on a truncated list), single objects, the watcher's Events and
 * its leader Lease. Everything through the project's KubeClient, which honours the whole
 * kubeconfig and bounds every request by a deadline.
 */
import type { CoreV1Event, V1Namespace, V1Node, V1Pod, V1Service } from '@kubernetes/client-node';
import { isGone, KubeApiError, type KubeClient } from '../k8s/kube-client.js';
import { LeaseLock } from '../k8s/lease-lock.js';
import { WATCHER_EVENT_COMPONENT } from '../config/watcher-settings.js';
import { NAD_API_VERSION, NAD_PLURAL, type NetworkAttachmentDefinition } from '../netvirt/network-config.js';

export const PAGE_SIZE = 500;
/** A list restarted this often because its continue token expired (410) is given up on. */
const MAX_LIST_RESTARTS = 3;

interface ListPage<T> {
  metadata?: { continue?: string; resourceVersion?: string };
  items?: T[];
}

export interface ReadOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Items per page of a list (default PAGE_SIZE). */
  pageSize?: number;
}

/**
 * Every item of a collection, page by page (`limit` + `continue`). When a continue token has
 * expired (410) the list starts over: pages of two different snapshots must not be mixed.
 */
export async function listAll<T>(kube: KubeClient, path: string, opts: ReadOptions): Promise<T[]> {
  for (let restart = 0; ; restart += 1) {
    const items: T[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await kube.request<ListPage<T>>('GET', path, {
          query: { limit: opts.pageSize ?? PAGE_SIZE, continue: token },
          timeoutMs: opts.timeoutMs,
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
        items.push(...(page.items ?? []));
        token = page.metadata?.continue || undefined;
      } while (token !== undefined);
      return items;
    } catch (err) {
      if (token !== undefined && isGone(err) && restart < MAX_LIST_RESTARTS) continue;
      throw err;
    }
  }
}

export interface KubeSnapshot {
  nodes: V1Node[];
  namespaces: V1Namespace[];
  pods: V1Pod[];
  /** Read only when Services are routed (`services.cidrs` set): node gateways are planned then. */
  services?: V1Service[];
  /**
   * Every NetworkAttachmentDefinition, where the API server serves the CRD (undefined where it
   * does not: extra networks are off, as for the watcher, and what ODL holds of them is kept).
   */
  networkAttachmentDefinitions?: NetworkAttachmentDefinition[];
}

/**
 * Nodes, namespaces, pods and (where the CRD is served) NetworkAttachmentDefinitions, each list
 * complete; with `serviceCidrs` non-empty also every Service (the node gateways carry their
 * routes).
 */
export async function readCluster(
  kube: KubeClient,
  opts: ReadOptions,
  serviceCidrs: readonly string[] = [],
): Promise<KubeSnapshot> {
  const [nodes, namespaces, pods, services, nads] = await Promise.all([
    listAll<V1Node>(kube, '/api/v1/nodes', opts),
    listAll<V1Namespace>(kube, '/api/v1/namespaces', opts),
    listAll<V1Pod>(kube, '/api/v1/pods', opts),
    serviceCidrs.length > 0 ? listAll<V1Service>(kube, '/api/v1/services', opts) : undefined,
    listAll<NetworkAttachmentDefinition>(kube, `/apis/${NAD_API_VERSION}/${NAD_PLURAL}`, opts).catch(
      (err: unknown) => {
        // The CRD is not served: no extra networks.
        if (err instanceof KubeApiError && err.status === 404) return undefined;
        throw err;
      },
    ),
  ]);
  return {
    nodes,
    namespaces,
    pods,
    ...(services ? { services } : {}),
    ...(nads ? { networkAttachmentDefinitions: nads } : {}),
  };
}

/** One object by path; undefined on 404. */
export async function readObject<T>(
  kube: KubeClient,
  path: string,
  opts: ReadOptions,
): Promise<T | undefined> {
  try {
    return await kube.request<T>('GET', path, {
      timeoutMs: opts.timeoutMs,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  } catch (err) {
    if (err instanceof KubeApiError && err.status === 404) return undefined;
    throw err;
  }
}

const seg = encodeURIComponent;

export const kubePaths = {
  pod: (namespace: string, name: string) => `/api/v1/namespaces/${seg(namespace)}/pods/${seg(name)}`,
  namespace: (name: string) => `/api/v1/namespaces/${seg(name)}`,
  node: (name: string) => `/api/v1/nodes/${seg(name)}`,
};

/** A Warning the watcher recorded (see src/watcher/events.ts). */
export interface WatcherEvent {
  /** `Pod ns/name`, `Namespace name`, `Node name`. */
  object: string;
  reason: string;
  message: string;
  count: number;
  /** RFC 3339, when the Event carries one. */
  lastSeen?: string;
}

/** Events whose source (or reporting component) is the watcher, newest first. */
export async function readWatcherEvents(kube: KubeClient, opts: ReadOptions): Promise<WatcherEvent[]> {
  const events = await listAll<CoreV1Event>(kube, '/api/v1/events', opts);
  return events
    .filter(
      (e) =>
        e.source?.component === WATCHER_EVENT_COMPONENT || e.reportingComponent === WATCHER_EVENT_COMPONENT,
    )
    .map((e) => {
      const o = e.involvedObject;
      const name = o.namespace ? `${o.namespace}/${o.name ?? '?'}` : (o.name ?? '?');
      const out: WatcherEvent = {
        object: `${o.kind ?? 'Object'} ${name}`,
        reason: e.reason ?? '',
        message: e.message ?? '',
        count: e.count ?? 1,
      };
      const last = timestamp(e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp);
      if (last !== undefined) out.lastSeen = last;
      return out;
    })
    .sort((a, b) => (b.lastSeen ?? '').localeCompare(a.lastSeen ?? '') || a.object.localeCompare(b.object));
}

/** client-node types timestamps as Date; raw JSON (what KubeClient returns) has strings. */
function timestamp(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (value instanceof Date) return value.toISOString();
  return undefined;
}

export interface LeaderInfo {
  lease: string;
  /** False when the Lease does not exist (no watcher has ever led with these settings). */
  exists: boolean;
  holder?: string;
  renewTime?: string;
  leaseDurationSeconds?: number;
  /** The holder has not renewed within its lease duration: nobody leads right now. */
  expired?: boolean;
}

export async function readLeader(
  kube: KubeClient,
  lease: { namespace: string; name: string },
  opts: ReadOptions,
  now: number = Date.now(),
): Promise<LeaderInfo> {
  const lock = new LeaseLock(kube, lease.namespace, lease.name);
  const signal = opts.signal ?? AbortSignal.timeout(opts.timeoutMs);
  const observed = await lock.get(signal);
  if (!observed) return { lease: lock.describe(), exists: false };
  const { holderIdentity, renewTime, leaseDurationSeconds } = observed.record;
  const info: LeaderInfo = { lease: lock.describe(), exists: true };
  if (holderIdentity !== '') info.holder = holderIdentity;
  if (renewTime !== '') info.renewTime = renewTime;
  if (leaseDurationSeconds > 0) info.leaseDurationSeconds = leaseDurationSeconds;
  const renewed = Date.parse(renewTime);
  info.expired =
    holderIdentity === '' || !Number.isFinite(renewed) || now > renewed + leaseDurationSeconds * 1000;
  return info;
}
