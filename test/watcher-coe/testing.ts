/**
 * The coe-northbound backend's test environment: a real Kubernetes API simulator and a real
 * ODL emulator on 127.0.0.1 (ephemeral ports), the watcher core driving the backend, a
 * RESTCONF client of the test's own to read ODL back, and builders for cluster objects. Logs
 * are silent unless ODLCOE_LOG_LEVEL says otherwise.
 */
import {
  CoreV1Api,
  DiscoveryV1Api,
  KubeConfig,
  type V1EndpointSlice,
  type V1Service,
} from '@kubernetes/client-node';
import { createRegistry } from '../../src/common/metrics.js';
import type { EmulatorFeature } from '../../src/emulator/netvirt-schema.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { startKubeSim, type KubeSim } from '../../src/kubesim/server.js';
import { netvirtPaths, type Profile } from '../../src/netvirt/index.js';
import { RestconfClient } from '../../src/restconf/client.js';
import type { DataPath, Dialect } from '../../src/restconf/path.js';
import { CoeNorthboundBackend } from '../../src/watcher/coe-northbound/backend.js';
import { DEFAULT_SETTINGS, type WatcherSettings } from '../../src/config/watcher-settings.js';
import { startWatcher, type Watcher } from '../../src/watcher/watcher.js';
import type { BatchOptions } from '../../src/restconf/client.js';
import { testBatch } from '../helpers/batching.js';
import { waitFor } from '../helpers/wait.js';

export { waitFor };
// Cluster-object helpers and read-back counters shared with the netvirt watcher tests.
export {
  createNamespace,
  createPod,
  deletePod,
  logger,
  RecordedEvents,
  setPodIp,
  writeCount,
} from '../watcher/testing.js';
import { logger, RecordedEvents } from '../watcher/testing.js';

/**
 * The profile × dialect combinations every scenario runs on: both dialects of the one release
 * that has ODL's COE models (Sodium with COE; no later release ships them, main.test.ts checks
 * that the backend refuses one without them).
 */
export const TARGETS: readonly { profile: Profile; dialect: Dialect }[] = [
  { profile: 'sodium', dialect: 'bierman02' },
  { profile: 'sodium', dialect: 'rfc8040' },
];

export interface Env {
  sim: KubeSim;
  kc: KubeConfig;
  core: CoreV1Api;
  discovery: DiscoveryV1Api;
  emu: Emulator;
  /** Reads (and, for foreign entries, writes) ODL: the test's own client, not the watcher's. */
  odl: RestconfClient;
  profile: Profile;
  dialect: Dialect;
  close(): Promise<void>;
}

export async function startEnv(target: {
  profile: Profile;
  dialect: Dialect;
  features?: readonly EmulatorFeature[];
}): Promise<Env> {
  const sim = await startKubeSim({ port: 0, bookmarkIntervalMs: 500, logger: logger('kubesim') });
  const emu = await startEmulator({
    port: 0,
    profile: target.profile,
    ...(target.features ? { features: target.features } : {}),
    logger: logger('emulator'),
  });
  const kc = new KubeConfig();
  kc.loadFromString(sim.kubeconfig());
  const odl = new RestconfClient({
    baseUrl: emu.url,
    dialect: target.dialect,
    auth: { kind: 'basic', user: 'admin', password: 'admin' },
    retry: { maxAttempts: 20, initialMs: 100, maxMs: 500 },
  });
  return {
    sim,
    kc,
    core: kc.makeApiClient(CoreV1Api),
    discovery: kc.makeApiClient(DiscoveryV1Api),
    emu,
    odl,
    profile: target.profile,
    dialect: target.dialect,
    async close() {
      odl.close();
      await emu.close();
      await sim.close();
    },
  };
}

export const CLUSTER = 'test';

export function testSettings(env: Env, overrides: Partial<WatcherSettings> = {}): WatcherSettings {
  return {
    ...DEFAULT_SETTINGS,
    backend: 'coe-northbound',
    clusterName: CLUSTER,
    profile: env.profile,
    dialect: env.dialect,
    subnetSource: 'podCIDR',
    gracePeriodMs: 500,
    resyncPeriodMs: 0,
    subnetPollMs: 200,
    slowRetryMs: 1_000,
    waitRetryMs: 200,
    workers: 4,
    shutdownTimeoutMs: 5_000,
    ...overrides,
  };
}

export interface CoeWatcher {
  watcher: Watcher;
  backend: CoeNorthboundBackend;
  events: RecordedEvents;
  close(): Promise<void>;
}

/** `batch`: the watcher's batched writes (default: as `ODLCOE_TEST_BATCH` says, see testBatch). */
export async function startCoeWatcher(
  env: Env,
  overrides: Partial<WatcherSettings> = {},
  batch: BatchOptions | undefined = testBatch(),
): Promise<CoeWatcher> {
  const events = new RecordedEvents();
  const watcher = await startWatcher({
    settings: testSettings(env, overrides),
    kubeConfig: env.kc,
    odl: {
      baseUrl: env.emu.url,
      auth: { kind: 'basic', user: 'admin', password: 'admin' },
      retry: { maxAttempts: 3, initialMs: 50, maxMs: 200 },
      timeoutMs: 10_000,
      ...(batch ? { batch } : {}),
    },
    registry: createRegistry(),
    logger: logger('watcher'),
    events,
    informerWatchTimeoutSeconds: [30, 60],
  });
  const backend = watcher.backend;
  if (!(backend instanceof CoeNorthboundBackend)) {
    await watcher.close({ abrupt: true });
    throw new Error(`the watcher runs the ${backend.name} backend, not coe-northbound`);
  }
  return {
    watcher,
    backend,
    events,
    close: () => watcher.close(),
  };
}

/**
 * Waits until the watcher has nothing left to do for the current cluster state: its informers
 * have seen `check` hold (the objects the test just changed), then the queue is idle.
 */
export async function settle(w: CoeWatcher, check: () => boolean = () => true): Promise<void> {
  await waitFor(check, { what: 'the watcher caches to see the change' });
  await w.watcher.idle();
}

// ---------------------------------------------------------------------------------------------
// cluster objects

export async function createNode(
  env: Env,
  name: string,
  ip: string,
  opts: { podCIDR?: string; externalIp?: string } = {},
): Promise<string> {
  const addresses = [
    { type: 'InternalIP', address: ip },
    { type: 'Hostname', address: name },
    ...(opts.externalIp ? [{ type: 'ExternalIP', address: opts.externalIp }] : []),
  ];
  const node = await env.core.createNode({
    body: {
      metadata: { name },
      spec: opts.podCIDR ? { podCIDR: opts.podCIDR, podCIDRs: [opts.podCIDR] } : {},
      status: { addresses },
    },
  });
  return node.metadata?.uid ?? '';
}

export async function createService(env: Env, namespace: string, body: V1Service): Promise<string> {
  const svc = await env.core.createNamespacedService({ namespace, body });
  return svc.metadata?.uid ?? '';
}

/** An EndpointSlice of Service `service` with ready/not-ready IPv4 endpoints. */
export function slice(
  namespace: string,
  name: string,
  service: string,
  endpoints: { ip: string; ready?: boolean; node?: string; hostname?: string }[],
  ports: { name?: string; port: number }[],
): V1EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace, labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    endpoints: endpoints.map((e) => ({
      addresses: [e.ip],
      conditions: { ready: e.ready ?? true },
      ...(e.node ? { nodeName: e.node } : {}),
      ...(e.hostname ? { hostname: e.hostname } : {}),
    })),
    ports: ports.map((p) => ({ ...(p.name ? { name: p.name } : {}), port: p.port, protocol: 'TCP' })),
  };
}

export async function createSlice(env: Env, s: V1EndpointSlice): Promise<void> {
  await env.discovery.createNamespacedEndpointSlice({
    namespace: s.metadata?.namespace ?? 'default',
    body: s,
  });
}

export async function replaceSlice(env: Env, s: V1EndpointSlice): Promise<void> {
  const namespace = s.metadata?.namespace ?? 'default';
  const name = s.metadata?.name ?? '';
  const current = await env.discovery.readNamespacedEndpointSlice({ namespace, name });
  await env.discovery.replaceNamespacedEndpointSlice({
    namespace,
    name,
    body: { ...s, metadata: { ...s.metadata, resourceVersion: current.metadata?.resourceVersion } },
  });
}

// ---------------------------------------------------------------------------------------------
// ODL read-back

export type CoeList = 'pods' | 'services' | 'endpoints' | 'k8s-nodes';
export type CoeLists = Record<CoeList, Record<string, unknown>[]>;

export function listPaths(profile: Profile): Record<CoeList, DataPath> {
  const p = netvirtPaths(profile);
  return {
    pods: [...p.coePods(), { name: 'pods' }],
    services: [...p.coeServices(), { name: 'services' }],
    endpoints: [...p.coeEndpointsInfo(), { name: 'endpoints' }],
    'k8s-nodes': [...p.k8sNodesInfo(), { name: 'k8s-nodes' }],
  };
}

/** Every entry of the four COE lists, sorted by uid, as ODL returns them. */
export async function readCoe(env: Env): Promise<CoeLists> {
  const paths = listPaths(env.profile);
  const out = {} as CoeLists;
  for (const [list, path] of Object.entries(paths) as [CoeList, DataPath][]) {
    const entries = await env.odl.getEntries(path);
    out[list] = entries.sort((a, b) => String(a.uid).localeCompare(String(b.uid)));
  }
  return out;
}
