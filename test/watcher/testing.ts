/**
 * The watcher's test environment: a real Kubernetes API simulator and a real ODL emulator on
 * 127.0.0.1 (ephemeral ports), client-node talking to the simulator, a RESTCONF client reading
 * ODL back, and helpers to build cluster objects. Logs are silent unless ODLCOE_LOG_LEVEL says
 * otherwise.
 */
import {
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod,
} from '@kubernetes/client-node';
import { createLogger, type Logger } from '../../src/common/log.js';
import { createRegistry } from '../../src/common/metrics.js';
import { defaultFeatures } from '../../src/emulator/netvirt-schema.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/server.js';
import { KubeClient } from '../../src/k8s/kube-client.js';
import { startKubeSim, type KubeSim } from '../../src/kubesim/server.js';
import type { Profile } from '../../src/netvirt/profile.js';
import { RestconfClient } from '../../src/restconf/client.js';
import type { DataPath, Dialect } from '../../src/restconf/path.js';
import type { EventRecorder, InvolvedObject } from '../../src/watcher/events.js';
import { DEFAULT_SETTINGS, type WatcherSettings } from '../../src/config/watcher-settings.js';
import { startWatcher, type Watcher, type WatcherOptions } from '../../src/watcher/watcher.js';
import type { BatchOptions } from '../../src/restconf/client.js';
import { testBatch } from '../helpers/batching.js';
import {
  deletePodAsKubelet,
  finishPodDeletion,
  terminatePod as terminatePodAs,
} from '../helpers/pod-deletion.js';
import { waitFor } from '../helpers/wait.js';

export { waitFor };

export const logger = (component: string): Logger =>
  createLogger(component, process.env.ODLCOE_LOG_LEVEL ?? 'silent');

export interface Env {
  sim: KubeSim;
  kc: KubeConfig;
  core: CoreV1Api;
  coordination: CoordinationV1Api;
  emu: Emulator;
  /** Reads ODL back (the test's own client, not the watcher's). */
  odl: RestconfClient;
  profile: Profile;
  dialect: Dialect;
  /** Whether the emulator serves the COE models (Sodium's default). */
  coe: boolean;
  close(): Promise<void>;
}

export async function startEnv(
  opts: {
    profile?: Profile;
    dialect?: Dialect;
    emulator?: Partial<EmulatorOptions>;
  } = {},
): Promise<Env> {
  const profile = opts.profile ?? 'sodium';
  const dialect = opts.dialect ?? 'rfc8040';
  const sim = await startKubeSim({ port: 0, bookmarkIntervalMs: 500, logger: logger('kubesim') });
  const emu = await startEmulator({ port: 0, profile, logger: logger('emulator'), ...opts.emulator });
  const kc = new KubeConfig();
  kc.loadFromString(sim.kubeconfig());
  const odl = new RestconfClient({
    baseUrl: emu.url,
    dialect,
    auth: { kind: 'basic', user: 'admin', password: 'admin' },
    retry: { maxAttempts: 20, initialMs: 100, maxMs: 500 },
  });
  return {
    sim,
    kc,
    core: kc.makeApiClient(CoreV1Api),
    coordination: kc.makeApiClient(CoordinationV1Api),
    emu,
    odl,
    profile,
    dialect,
    coe: (opts.emulator?.features ?? defaultFeatures(profile)).includes('coe'),
    async close() {
      odl.close();
      await emu.close();
      await sim.close();
    },
  };
}

export function testSettings(env: Env, overrides: Partial<WatcherSettings> = {}): WatcherSettings {
  return {
    ...DEFAULT_SETTINGS,
    clusterName: 'test',
    profile: env.profile,
    dialect: env.dialect,
    routeTarget: '64512:1',
    rdAdministrator: '64512',
    subnetSource: 'podCIDR',
    gracePeriodMs: 500,
    resyncPeriodMs: 0,
    subnetPollMs: 200,
    slowRetryMs: 1_000,
    waitRetryMs: 200,
    workers: 4,
    shutdownTimeoutMs: 5_000,
    // The scenario oracles (the whole-cluster fold) leave NetworkPolicy out; the policy tests
    // turn enforcement on.
    networkPolicyEnforcement: 'off',
    ...overrides,
  };
}

/** Events the watcher would record, kept in memory. */
export class RecordedEvents implements EventRecorder {
  readonly events: { object: InvolvedObject; reason: string; message: string }[] = [];
  warning(object: InvolvedObject, reason: string, message: string): void {
    this.events.push({ object, reason, message });
  }
}

/** `batch`: the watcher's batched writes (default: as `ODLCOE_TEST_BATCH` says, see testBatch). */
export async function startTestWatcher(
  env: Env,
  overrides: Partial<WatcherSettings> = {},
  extra: Partial<WatcherOptions> = {},
  batch: BatchOptions | undefined = testBatch(),
): Promise<Watcher> {
  return startWatcher({
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
    informerWatchTimeoutSeconds: [30, 60],
    ...extra,
  });
}

// ---------------------------------------------------------------------------------------------
// cluster objects

export async function createNode(
  env: Env,
  name: string,
  ip: string,
  podCIDR?: string,
  externalIp?: string,
): Promise<string> {
  const addresses = [
    { type: 'InternalIP', address: ip },
    { type: 'Hostname', address: name },
    ...(externalIp ? [{ type: 'ExternalIP', address: externalIp }] : []),
  ];
  const node = await env.core.createNode({
    body: {
      metadata: { name },
      spec: podCIDR ? { podCIDR, podCIDRs: [podCIDR] } : {},
      status: { addresses },
    },
  });
  return node.metadata?.uid ?? '';
}

export async function createNamespace(env: Pick<Env, 'core'>, name: string): Promise<string> {
  const ns = await env.core.createNamespace({ body: { metadata: { name } } });
  return ns.metadata?.uid ?? '';
}

export async function createPod(
  env: Pick<Env, 'core'>,
  namespace: string,
  name: string,
  nodeName: string,
  opts: { ip?: string; hostNetwork?: boolean } = {},
): Promise<string> {
  const body: V1Pod = {
    metadata: { name, namespace },
    spec: {
      nodeName,
      containers: [{ name: 'c', image: 'pause' }],
      ...(opts.hostNetwork ? { hostNetwork: true } : {}),
    },
    status: opts.ip ? { phase: 'Running', podIP: opts.ip, podIPs: [{ ip: opts.ip }] } : { phase: 'Pending' },
  };
  const pod = await env.core.createNamespacedPod({ namespace, body });
  return pod.metadata?.uid ?? '';
}

export async function setPodIp(
  env: Pick<Env, 'core'>,
  namespace: string,
  name: string,
  ip: string,
): Promise<void> {
  await env.core.patchNamespacedPodStatus(
    { name, namespace, body: { status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

/** Deletes a pod as a cluster does: marked Terminating, then removed by its kubelet (grace 0). */
export async function deletePod(env: Pick<Env, 'kc'>, namespace: string, name: string): Promise<void> {
  await deletePodAsKubelet(new KubeClient(env.kc), namespace, name);
}

/** `kubectl delete pod`: a pod bound to a node stays, Terminating, until `finishDeletion`. */
export async function terminatePod(env: Pick<Env, 'kc'>, namespace: string, name: string): Promise<V1Pod> {
  return terminatePodAs(new KubeClient(env.kc), namespace, name);
}

/**
 * Deletes a namespace as a cluster does: it turns Terminating, the namespace controller deletes
 * its pods (those bound to nodes stay Terminating), their kubelets finish them, then it goes.
 */
export async function deleteNamespace(env: Pick<Env, 'kc' | 'core'>, name: string): Promise<void> {
  await env.core.deleteNamespace({ name });
  const left = await env.core.listNamespacedPod({ namespace: name });
  for (const p of left.items) await finishDeletion(env, name, p.metadata?.name ?? '');
}

/** Kubelet's last DELETE (grace 0, UID precondition) of a Terminating pod. */
export async function finishDeletion(env: Pick<Env, 'kc'>, namespace: string, name: string): Promise<void> {
  await finishPodDeletion(new KubeClient(env.kc), namespace, name);
}

// ---------------------------------------------------------------------------------------------
// ODL read-back

export interface OdlLists {
  interface: Record<string, unknown>[];
  'elan-instance': Record<string, unknown>[];
  'elan-interface': Record<string, unknown>[];
  'vpn-instance': Record<string, unknown>[];
  'vpn-interface': Record<string, unknown>[];
  /** Empty where ODL has no COE models (no release after Sodium, nor Sodium without COE). */
  'k8s-nodes': Record<string, unknown>[];
  /** dhcp_allocation_pool networks (node subnets `odlcoe-node:<node>`). */
  'dhcp-network': Record<string, unknown>[];
}

export function listPaths(profile: Profile): Record<keyof OdlLists, DataPath> {
  const vpn = profile === 'sodium' ? 'l3vpn' : 'l3vpn-instances-interfaces';
  return {
    interface: [{ module: 'ietf-interfaces', name: 'interfaces' }, { name: 'interface' }],
    'elan-instance': [{ module: 'elan', name: 'elan-instances' }, { name: 'elan-instance' }],
    'elan-interface': [{ module: 'elan', name: 'elan-interfaces' }, { name: 'elan-interface' }],
    'vpn-instance': [{ module: vpn, name: 'vpn-instances' }, { name: 'vpn-instance' }],
    'vpn-interface': [{ module: vpn, name: 'vpn-interfaces' }, { name: 'vpn-interface' }],
    'k8s-nodes': [{ module: 'k8s-node', name: 'k8s-nodes-info' }, { name: 'k8s-nodes' }],
    'dhcp-network': [{ module: 'dhcp_allocation_pool', name: 'dhcp_allocation_pool' }, { name: 'network' }],
  };
}

/** Every entry of every list the watcher writes, sorted by key, as ODL returns them. */
export async function readOdl(env: Env): Promise<OdlLists> {
  const paths = listPaths(env.profile);
  const out = {} as OdlLists;
  for (const [list, path] of Object.entries(paths) as [keyof OdlLists, DataPath][]) {
    // Never asked of an ODL without the model (it would answer 400 unknown-element).
    const entries = list === 'k8s-nodes' && !env.coe ? [] : await env.odl.getEntries(path);
    out[list] = entries.sort((a, b) => entryKey(a).localeCompare(entryKey(b)));
  }
  return out;
}

export function entryKey(e: Record<string, unknown>): string {
  for (const k of ['name', 'elan-instance-name', 'vpn-instance-name', 'uid', 'network-id'])
    if (typeof e[k] === 'string') return e[k];
  return JSON.stringify(e);
}

/** Requests the emulator got into a COE module, by module (none on a release without them). */
export const coeRequests = (env: Pick<Env, 'emu'>): Record<string, number> =>
  Object.fromEntries(
    Object.entries(env.emu.counters().modules).filter(([m]) =>
      ['k8s-node', 'pod', 'service', 'k8s-cluster'].includes(m),
    ),
  );

/** Data writes the emulator accepted or refused so far, each edit of a YANG Patch once (GETs excluded). */
export function writeCount(env: Pick<Env, 'emu'>): number {
  // By module: a YANG Patch counts once per edit, so batched and single writes compare.
  return Object.values(env.emu.counters().writes).reduce((sum, n) => sum + n, 0);
}

/** The value of one sample of a metric in a Prometheus registry dump. */
export async function metricValue(
  registry: {
    getSingleMetric(
      name: string,
    ): { get(): Promise<{ values: { labels: Record<string, unknown>; value: number }[] }> } | undefined;
  },
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const m = registry.getSingleMetric(name);
  if (!m) return 0;
  const { values } = await m.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, x]) => String(v.labels[k]) === x))
    .reduce((sum, v) => sum + v.value, 0);
}
