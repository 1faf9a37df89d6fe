/**
 * Watcher benchmark: a cluster of N nodes / M namespaces / P pods (all scheduled, all with IPs)
 * is seeded into the Kubernetes API simulator, and the watcher converges an empty ODL emulator
 * to it, per backend and per injected RESTCONF latency. Per run it reports:
 *
 * - converge: from start until the watcher's queue is idle AND ODL holds the expected number of
 *   entries in every list the backend writes (read back from ODL, not from the watcher): the
 *   moment it went idle when the read right after finds them all, else the read that does;
 * - per write mode (`single`: one request per write; `batched`: YANG Patch, `--batch-edits`
 *   edits at most, `--batch-window` ms, with `--batched-workers` workers, since a batch can
 *   only hold writes that are in flight together), and per condition: each `--latency`, and
 *   `cost` (0 ms latency, the emulator's commit cost model `--cost <tx ms>,<edit ms>` on);
 * - requests: data write requests the emulator served (PUT/POST/PATCH/DELETE), and edits: the
 *   writes they carried (one per single write, one per YANG-Patch edit), total and per pod;
 * - peak RSS of this process while the watcher converged (the watcher runs in-process; kubesim
 *   and the emulator are child processes), next to the RSS before the watcher started;
 * - restart: a second watcher started on the converged ODL, in a process of its own (the compiled
 *   script in restart mode, as a real restart is: none of the first watcher's heap): time until
 *   idle, its writes (expected 0), and that process's peak RSS;
 * - raw PUT capacity of the same emulator at the same concurrency, measured in the same run by
 *   a minimal node:http keep-alive client (the ceiling for any client at that latency);
 * - with Services (`--services`, netvirt backend: service range 10.96.0.0/12, so every node gets
 *   its gateway and every Service IP an extra route on every gateway): the converge time and
 *   writes next to the same cluster without Services (`--services 0,2000`), and a churn phase
 *   after converging: `--service-churn` more Services created one after another, with the
 *   writes each one costs (one route per node gateway, whatever the number of namespaces: run
 *   `--namespaces 50,200` to see it) and the time until every gateway carries its route.
 *
 * `--namespaces` and `--services` take lists: each combination is its own cluster shape (kubesim
 * seeded afresh), measured under every condition.
 *
 *   node --import tsx bench/watcher/main.ts [--pods 10000] [--nodes 100] [--namespaces 200]
 *     [--latency 0,5] [--backends coe-northbound,netvirt] [--workers 8] [--concurrency 16]
 *     [--dialect rfc8040] [--profile sodium] [--timeout 240] [--cpu-prof <dir>] [--max-old-space <MB>]
 *     [--services 0,2000] [--service-churn 100]
 *
 * The emulator runs as a child process (`--latency-ms N`, URL read from its `emulator listening`
 * line), one per run; kubesim runs as one child for the whole benchmark. Both are stopped by
 * pid at the end. Everything shares the machine, so figures are relative, not absolute.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { CoreV1Api, KubeConfig, type V1Service } from '@kubernetes/client-node';
import { createLogger } from '../../src/common/log.js';
import { createRegistry } from '../../src/common/metrics.js';
import { elanInstanceName, netvirtPaths, vpnName, type Profile } from '../../src/netvirt/index.js';
import { vpnInterfaceKind } from '../../src/netvirt/kinds.js';
import { PROFILES } from '../../src/netvirt/profile.js';
import { authorizationHeader } from '../../src/restconf/auth.js';
import { DEFAULT_CONCURRENCY, RestconfClient } from '../../src/restconf/client.js';
import { DIALECTS, encodePath, type DataPath, type Dialect } from '../../src/restconf/path.js';
import type { EventRecorder } from '../../src/watcher/events.js';
import { DEFAULT_SETTINGS, type WatcherSettings } from '../../src/config/watcher-settings.js';
import { startWatcher, type Watcher } from '../../src/watcher/watcher.js';
import { REPO_ROOT, startListening, stopChild } from '../common/child.js';
import { canCollect, componentHeap, liveHeap, type ComponentHeap } from '../common/heap.js';
import { MIB } from '../common/memory.js';
import { startGcClock, type GcTime } from '../common/gc-clock.js';
import { percentile } from '../common/stats.js';
import { rawRequest, requestJson, restconfData } from '../common/raw-http.js';

const AUTH = { kind: 'basic' as const, user: 'admin', password: 'admin' };
const BACKENDS = ['coe-northbound', 'netvirt'] as const;
type BackendName = (typeof BACKENDS)[number];
/** PUTs of the raw-capacity probe per run. */
const RAW_PUTS = 4_000;
const RSS_SAMPLE_MS = 100;

/** One cluster: its namespaces and Services (nodes and pods are the same for every shape). */
interface Shape {
  namespaces: number;
  services: number;
}

/** The Service range of the bench's Services (the watcher's and kube-apiserver's). */
const SERVICE_CIDR = '10.96.0.0/12';

interface Options {
  pods: number;
  nodes: number;
  shapes: Shape[];
  /** Services created one by one after converging (only in shapes with Services). */
  serviceChurn: number;
  latencies: number[];
  backends: BackendName[];
  workers: number;
  concurrency: number;
  dialect: Dialect;
  profile: Profile;
  timeoutMs: number;
  modes: Mode[];
  batchEdits: number;
  batchWindowMs: number;
  batchedWorkers: number;
  /** The cost model of the `cost` condition; undefined: no such condition. */
  cost: { transactionMs: number; editMs: number } | undefined;
  /** Write a V8 CPU profile of each measuring process (the watcher's) into this directory. */
  cpuProfDir: string | undefined;
  /** The V8 heap limits to measure each condition under (every combination of the two flags). */
  heaps: HeapLimits[];
  /** Write a heap snapshot of each measuring process at steady state to this path (suffixed per run). */
  heapSnapshot: string | undefined;
  /** Internal: run one measurement in this process against `kubeconfig`. */
  run?: { condition: Condition; kubeconfig: string; shape: Shape };
  /**
   * Internal, with `run`: only the restart, a watcher of its own process started on the
   * converged ODL at this URL.
   */
  restartOn: string | undefined;
}

/** V8 heap flags of a measuring process, as a deployment would set them for its memory limit. */
interface HeapLimits {
  /** `--max-old-space-size` in MB; undefined: V8's default (sized from the machine's memory). */
  oldSpaceMb: number | undefined;
  /**
   * `--max-semi-space-size` in MB (the young generation is two semi-spaces and a third space for
   * promotion: larger means fewer scavenges and more RSS); undefined: V8's default (16 MB).
   */
  semiSpaceMb: number | undefined;
}

type Mode = 'single' | 'batched';
const MODES: readonly Mode[] = ['single', 'batched'];

/** One measurement: a backend, a write mode, a latency, with or without the cost model. */
interface Condition {
  backend: BackendName;
  mode: Mode;
  latencyMs: number;
  cost: boolean;
}

const conditionName = (c: Condition) => `${c.backend}@${c.latencyMs}@${c.mode}@${c.cost ? 'cost' : 'free'}`;

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      pods: { type: 'string', default: '10000' },
      nodes: { type: 'string', default: '100' },
      namespaces: { type: 'string', default: '200' },
      latency: { type: 'string', default: '0,5' },
      backends: { type: 'string', default: BACKENDS.join(',') },
      workers: { type: 'string', default: String(DEFAULT_SETTINGS.workers) },
      concurrency: { type: 'string', default: String(DEFAULT_CONCURRENCY) },
      dialect: { type: 'string', default: 'rfc8040' },
      profile: { type: 'string', default: 'sodium' },
      timeout: { type: 'string', default: '240' },
      modes: { type: 'string', default: MODES.join(',') },
      'batch-edits': { type: 'string', default: '200' },
      'batch-window': { type: 'string', default: '5' },
      'batched-workers': { type: 'string', default: '256' },
      cost: { type: 'string', default: '2,0.1' },
      services: { type: 'string', default: '0' },
      'service-churn': { type: 'string', default: '100' },
      'cpu-prof': { type: 'string' },
      'max-old-space': { type: 'string', default: 'default' },
      'max-semi-space': { type: 'string', default: 'default' },
      'heap-snapshot': { type: 'string' },
      run: { type: 'string' },
      kubeconfig: { type: 'string' },
      'restart-on': { type: 'string' },
    },
    strict: true,
  });
  const int = (name: string, value: string | undefined, min: number, max: number): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new Error(`--${name} must be an integer in ${min}..${max}`);
    return n;
  };
  const nodes = int('nodes', values.nodes, 1, 60_000);
  const list = (value: string | undefined) =>
    String(value)
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const backends = list(values.backends);
  for (const b of backends)
    if (!(BACKENDS as readonly string[]).includes(b))
      throw new Error(`--backends: ${b} is not one of ${BACKENDS.join(', ')}`);
  const dialect = values.dialect as Dialect;
  if (!DIALECTS.includes(dialect)) throw new Error(`--dialect must be one of ${DIALECTS.join(', ')}`);
  const profile = values.profile as Profile;
  if (!PROFILES.includes(profile)) throw new Error(`--profile must be one of ${PROFILES.join(', ')}`);
  const pods = int('pods', values.pods, 1, 1_000_000);
  if (pods > nodes * 250)
    throw new Error(`--pods: at most 250 pods per node (a /24 each), so at most ${nodes * 250}`);
  const namespaceCounts = list(values.namespaces).map((n) => int('namespaces', n, 1, 100_000));
  const serviceCounts = list(values.services).map((n) => int('services', n, 0, 60_000));
  if (serviceCounts.some((n) => n > 0) && backends.includes('coe-northbound'))
    throw new Error('--services: Service routes are the netvirt backend’s; run them with --backends netvirt');
  const shapes = namespaceCounts.flatMap((namespaces) =>
    serviceCounts.map((services) => ({ namespaces, services })),
  );
  let run: Options['run'];
  if (values.run !== undefined) {
    const [backend, latency, mode, cost] = values.run.split('@');
    if (
      !(BACKENDS as readonly string[]).includes(backend ?? '') ||
      !(MODES as readonly string[]).includes(mode ?? '') ||
      values.kubeconfig === undefined
    )
      throw new Error(
        '--run <backend>@<latency>@<mode>@<cost|free> needs a known backend and mode, and --kubeconfig',
      );
    run = {
      condition: {
        backend: backend as BackendName,
        latencyMs: int('run', latency, 0, 10_000),
        mode: mode as Mode,
        cost: cost === 'cost',
      },
      kubeconfig: values.kubeconfig,
      shape: shapes[0] ?? { namespaces: 1, services: 0 },
    };
  }
  const modes = list(values.modes);
  for (const m of modes)
    if (!(MODES as readonly string[]).includes(m))
      throw new Error(`--modes: ${m} is not one of ${MODES.join(', ')}`);
  let cost: Options['cost'];
  if (values.cost !== 'none') {
    const [tx, edit] = String(values.cost).split(',').map(Number);
    if (!(tx !== undefined && edit !== undefined && tx >= 0 && edit >= 0))
      throw new Error('--cost must be <transaction ms>,<edit ms> (e.g. 2,0.1) or none');
    cost = { transactionMs: tx, editMs: edit };
  }
  if (values['restart-on'] !== undefined && run === undefined)
    throw new Error('--restart-on <emulator URL> is a measurement’s restart: it needs --run');
  return {
    run,
    restartOn: values['restart-on'],
    pods,
    nodes,
    shapes,
    serviceChurn: int('service-churn', values['service-churn'], 0, 10_000),
    latencies: list(values.latency).map((l) => int('latency', l, 0, 10_000)),
    backends: backends as BackendName[],
    workers: int('workers', values.workers, 1, 1024),
    concurrency: int('concurrency', values.concurrency, 1, 1024),
    dialect,
    profile,
    timeoutMs: int('timeout', values.timeout, 10, 3600) * 1000,
    modes: modes as Mode[],
    batchEdits: int('batch-edits', values['batch-edits'], 2, 10_000),
    batchWindowMs: int('batch-window', values['batch-window'], 0, 10_000),
    batchedWorkers: int('batched-workers', values['batched-workers'], 1, 4096),
    cost,
    cpuProfDir: values['cpu-prof'],
    heaps: list(values['max-old-space']).flatMap((old) =>
      list(values['max-semi-space']).map((semi) => ({
        oldSpaceMb: old === 'default' ? undefined : int('max-old-space', old, 64, 65_536),
        semiSpaceMb: semi === 'default' ? undefined : int('max-semi-space', semi, 1, 1024),
      })),
    ),
    heapSnapshot: values['heap-snapshot'],
  };
}

// ---------------------------------------------------------------------------------------------
// the cluster

interface Cluster {
  items: unknown[];
  /** Entries each backend must end up with, per ODL list. */
  expected: Record<BackendName, Record<string, number>>;
}

/** A deterministic spread of pods over nodes (a multiplicative hash, not a pattern). */
function nodeOf(pod: number, nodes: number): number {
  return Math.floor((((pod * 2654435761) % 2 ** 32) / 2 ** 32) * nodes);
}

/** The i-th Service's ClusterIP: from the range's 17th address on (the first ones are kube-apiserver's). */
function serviceIp(i: number): string {
  const n = (10 << 24) + (96 << 16) + 16 + i;
  return [24, 16, 8, 0].map((shift) => (n >>> shift) & 255).join('.');
}

function buildCluster(o: Options, shape: Shape, withItems: boolean): Cluster {
  const nodeIp = (n: number) => `172.16.${Math.floor(n / 250)}.${(n % 250) + 1}`;
  const podCidr = (n: number) => `10.${100 + Math.floor(n / 250)}.${n % 250}.0/24`;
  const items: unknown[] = [];
  for (let n = 0; n < o.nodes; n += 1) {
    if (withItems)
      items.push({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: `node-${n}` },
        spec: { podCIDR: podCidr(n), podCIDRs: [podCidr(n)] },
        status: {
          addresses: [
            { type: 'InternalIP', address: nodeIp(n) },
            { type: 'Hostname', address: `node-${n}` },
          ],
        },
      });
  }
  for (let s = 0; s < shape.namespaces && withItems; s += 1)
    items.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns-${s}` } });
  const perNode = new Array<number>(o.nodes).fill(0);
  const elans = new Set<string>();
  const vpns = new Set<string>();
  for (let p = 0; p < o.pods; p += 1) {
    const n = nodeOf(p, o.nodes);
    const ns = `ns-${p % shape.namespaces}`;
    perNode[n] = (perNode[n] ?? 0) + 1;
    const host = (perNode[n] ?? 0) + 1;
    if (host > 254) throw new Error(`node-${n} would hold more than 253 pods; use more nodes`);
    const ip = podCidr(n).replace(/0\/24$/, String(host));
    elans.add(elanInstanceName(nodeIp(n), ns));
    vpns.add(vpnName(ns));
    if (withItems)
      items.push({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `pod-${p}`, namespace: ns },
        spec: { nodeName: `node-${n}`, containers: [{ name: 'c', image: 'pause' }] },
        status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] },
      });
  }
  for (let i = 0; i < shape.services && withItems; i += 1) items.push(serviceObject(i, shape));
  // With Services, every node has a gateway: its ietf-, elan- and vpn-interface and its ELAN,
  // all in the one gateway VPN, and every gateway carries one extra route per Service IP.
  const gateways = shape.services > 0 ? o.nodes : 0;
  return {
    items,
    expected: {
      'coe-northbound': { pods: o.pods, 'k8s-nodes': o.nodes },
      netvirt: {
        interface: o.pods + gateways,
        'elan-interface': o.pods + gateways,
        'vpn-interface': o.pods + gateways,
        'elan-instance': elans.size + gateways,
        'vpn-instance': vpns.size + (gateways > 0 ? 1 : 0),
        'k8s-nodes': o.nodes,
        ...(shape.services > 0 ? { [SERVICE_ROUTES]: shape.services * o.nodes } : {}),
      },
    },
  };
}

/** The i-th Service of a shape: a ClusterIP Service in the i-th namespace (round robin). */
function serviceObject(i: number, shape: Shape): unknown {
  const ip = serviceIp(i);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `svc-${i}`, namespace: `ns-${i % shape.namespaces}` },
    spec: {
      type: 'ClusterIP',
      clusterIP: ip,
      clusterIPs: [ip],
      ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
    },
  };
}

/** The count of extra-route adjacencies over all vpn-interfaces (the Service routes). */
const SERVICE_ROUTES = 'service routes';

function listPaths(backend: BackendName, profile: Profile): Record<string, DataPath> {
  const p = netvirtPaths(profile);
  const list = (container: DataPath, name: string): DataPath => [...container, { name }];
  if (backend === 'coe-northbound')
    return { pods: list(p.coePods(), 'pods'), 'k8s-nodes': list(p.k8sNodesInfo(), 'k8s-nodes') };
  return {
    interface: list(p.interfaces(), 'interface'),
    'elan-interface': list(p.elanInterfaces(), 'elan-interface'),
    'vpn-interface': list(p.vpnInterfaces(), 'vpn-interface'),
    'elan-instance': list(p.elanInstances(), 'elan-instance'),
    'vpn-instance': list(p.vpnInstances(), 'vpn-instance'),
    'k8s-nodes': list(p.k8sNodesInfo(), 'k8s-nodes'),
  };
}

// ---------------------------------------------------------------------------------------------
// the emulator

/** Data write requests (anything but GET) the emulator has served, and the edits they applied. */
async function emulatorWrites(url: string): Promise<{ requests: number; edits: number }> {
  const counters = (await requestJson(`${url}/odlcoe-emulator/counters`, 'GET', undefined, {
    Authorization: authorizationHeader(AUTH),
  })) as { requests: Record<string, number>; edits: number };
  const requests = Object.entries(counters.requests)
    .filter(([key]) => !key.startsWith('GET '))
    .reduce((sum, [, n]) => sum + n, 0);
  return { requests, edits: counters.edits };
}

// ---------------------------------------------------------------------------------------------
// one run

/** The churn phase: Services created one at a time on a converged cluster. */
interface ChurnResult {
  services: number;
  requestsPerService: number;
  editsPerService: number;
  /** Create → the watcher's view holds it → its queue idle again (every route written). */
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  /** Whether ODL held every route afterwards (read back). */
  complete: boolean;
}

interface RunResult {
  condition: Condition;
  shape: Shape;
  churn: ChurnResult | undefined;
  convergeMs: number | undefined;
  /**
   * CPU time (user + system) of the measuring process from the watcher's start until its queue
   * was idle: what the watcher spent, whatever else ran on the machine (wall times are not).
   */
  convergeCpuMs: number | undefined;
  /** Reconciles the watcher ran until idle, by key kind (a key runs again while it waits). */
  reconciles: Record<string, number>;
  counts: Record<string, number>;
  requests: number;
  edits: number;
  /** The measuring process (compiled, no TypeScript loader): before the watcher, after a forced GC. */
  rssBaselineMb: number;
  rssPeakMb: number;
  /** V8's heap (all spaces, used or not) at the RSS peak: what of the peak is the JavaScript heap. */
  heapTotalAtPeakMb: number;
  /** V8's heap limit of the measuring process (its flags' or V8's default). */
  heapLimitMb: number;
  /** The V8 heap flags it ran with (set by the parent). */
  heap?: HeapLimits;
  /** GC pauses while converging. */
  gc: GcTime;
  /** After converging, after a forced GC; undefined when the run did not converge. */
  rssSteadyMb: number | undefined;
  heapBaselineMb: number | undefined;
  heapSteadyMb: number | undefined;
  /** The watcher's main stores at steady state (bench/common/heap.ts says how they are estimated). */
  components: ComponentHeap[];
  restartMs: number | undefined;
  /** The same for the restart. */
  restartCpuMs: number | undefined;
  restartRequests: number;
  restartEdits: number;
  /** The restart's own process: its peak RSS while the watcher started and went idle. */
  restartRssPeakMb: number | undefined;
  rawPutsPerSecond: number;
  watcherPutsPerSecond: number;
}

/** `odlcoe_watcher_reconciles_total` summed by key kind. */
async function reconcilesByKind(watcher: Watcher): Promise<Record<string, number>> {
  const metric = watcher.registry.getSingleMetric('odlcoe_watcher_reconciles_total');
  const out: Record<string, number> = {};
  for (const v of (await metric?.get())?.values ?? []) {
    const kind = String(v.labels.kind);
    out[kind] = (out[kind] ?? 0) + v.value;
  }
  return out;
}

/** CPU time (user + system) of this process since `since`, in ms. */
function cpuMsSince(since: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(since);
  return (user + system) / 1000;
}

const silentEvents: EventRecorder = { warning: () => undefined };

type BenchWatcher = Awaited<ReturnType<typeof startBenchWatcher>>;

async function startBenchWatcher(
  o: Options,
  { backend, mode }: Condition,
  shape: Shape,
  kc: KubeConfig,
  emulatorUrl: string,
): Promise<{ watcher: Watcher; close(): Promise<void> }> {
  const registry = createRegistry();
  const settings: WatcherSettings = {
    ...DEFAULT_SETTINGS,
    backend,
    clusterName: 'bench',
    profile: o.profile,
    dialect: o.dialect,
    subnetSource: 'podCIDR',
    resyncPeriodMs: 0,
    workers: mode === 'batched' ? o.batchedWorkers : o.workers,
    serviceCidrs: shape.services > 0 ? [SERVICE_CIDR] : [],
    // Policies have their own benchmark (policies.ts): these figures stay comparable.
    networkPolicyEnforcement: 'off',
  };
  const watcher = await startWatcher({
    settings,
    kubeConfig: kc,
    odl: {
      baseUrl: emulatorUrl,
      auth: AUTH,
      concurrency: o.concurrency,
      ...(mode === 'batched' ? { batch: { maxEdits: o.batchEdits, windowMs: o.batchWindowMs } } : {}),
    },
    registry,
    logger: createLogger('watcher', process.env.ODLCOE_LOG_LEVEL ?? 'silent'),
    events: silentEvents,
  });
  return {
    watcher,
    close: () => watcher.close(),
  };
}

async function countEntries(
  client: RestconfClient,
  paths: Record<string, DataPath>,
  profile: Profile,
  withRoutes: boolean,
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, path] of Object.entries(paths)) {
    const entries = await client.getEntries(path);
    out[name] = entries.length;
    if (name === 'vpn-interface' && withRoutes)
      out[SERVICE_ROUTES] = entries.reduce(
        (sum, raw) =>
          sum +
          vpnInterfaceKind
            .parse(profile, raw)
            .adjacencies.filter((a: { adjacencyType?: string }) => a.adjacencyType === 'extra-route').length,
        0,
      );
  }
  return out;
}

const equalCounts = (a: Record<string, number>, b: Record<string, number>) =>
  Object.keys(b).every((k) => a[k] === b[k]);

/** Resolves with the time `promise` settled, or undefined if `deadline` (performance.now()) passes first. */
async function within<T>(promise: Promise<T>, deadline: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - performance.now()));
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function run(
  o: Options,
  condition: Condition,
  shape: Shape,
  kc: KubeConfig,
  cluster: Cluster,
): Promise<RunResult> {
  const { backend, latencyMs } = condition;
  const costFlags =
    condition.cost && o.cost
      ? ['--tx-cost-ms', String(o.cost.transactionMs), '--edit-cost-ms', String(o.cost.editMs)]
      : [];
  const emulator = await startListening(
    [
      'src/emulator/main.ts',
      ...['--port', '0', '--profile', o.profile, '--latency-ms', String(latencyMs)],
      ...costFlags,
    ],
    'emulator listening',
    'warn', // its listening line is written whatever the level
  );
  if (o.run) process.stdout.write(`${HELPER} ${emulator.child.pid}\n`);
  const reader = new RestconfClient({
    baseUrl: emulator.url,
    dialect: o.dialect,
    auth: AUTH,
    timeoutMs: 120_000,
  });
  const paths = listPaths(backend, o.profile);
  const expected = cluster.expected[backend];
  const count = () => countEntries(reader, paths, o.profile, shape.services > 0);
  try {
    // 1. converge from an empty ODL
    const heapBaseline = liveHeap();
    const rssBaseline = process.memoryUsage().rss;
    let rssPeak = rssBaseline;
    let heapTotalAtPeak = process.memoryUsage().heapTotal;
    const sample = () => {
      const { rss, heapTotal } = process.memoryUsage();
      if (rss <= rssPeak) return;
      rssPeak = rss;
      heapTotalAtPeak = heapTotal;
    };
    const sampler = setInterval(sample, RSS_SAMPLE_MS);
    const gcClock = startGcClock();
    const started = performance.now();
    const cpuStarted = process.cpuUsage();
    const deadline = started + o.timeoutMs;
    let first: BenchWatcher | undefined = await startBenchWatcher(o, condition, shape, kc, emulator.url);
    let convergeMs: number | undefined;
    let convergeCpuMs: number | undefined;
    let reconciles: Record<string, number> = {};
    let counts: Record<string, number> = {};
    try {
      if (
        (await within(
          first.watcher.idle().then(() => true),
          deadline,
        )) === true
      ) {
        convergeCpuMs = cpuMsSince(cpuStarted);
        // Converged at idle when ODL holds everything then: the emulator applies a write before
        // it answers, so what the first read finds it held at idle already (reading 40,000
        // entries back is the benchmark's check, not the watcher's time). Else: when a later
        // read finds it.
        const idleMs = performance.now() - started;
        reconciles = await reconcilesByKind(first.watcher);
        for (let check = 0; ; check += 1) {
          counts = await count();
          if (equalCounts(counts, expected)) {
            convergeMs = check === 0 ? idleMs : performance.now() - started;
            break;
          }
          if (performance.now() > deadline) break;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      } else {
        counts = await count();
      }
    } finally {
      clearInterval(sampler);
      sample();
    }
    const gc = gcClock.stop();
    let rssSteady: number | undefined;
    let heapSteady: number | undefined;
    let components: ComponentHeap[] = [];
    if (convergeMs !== undefined) {
      components = watcherComponents(first.watcher);
      heapSteady = liveHeap();
      rssSteady = process.memoryUsage().rss;
      if (o.heapSnapshot) {
        const written = v8.writeHeapSnapshot(o.heapSnapshot);
        process.stderr.write(`heap snapshot at steady state: ${written}\n`);
      }
    }
    const writes = await emulatorWrites(emulator.url);
    // Said now as well: a run whose restart dies (out of heap under a cap) still shows its converge.
    process.stderr.write(
      `converged: ${seconds(convergeMs)}, RSS ${mb(rssBaseline / MIB)} → ${mb(rssPeak / MIB)} → ${mb(rssSteady === undefined ? undefined : rssSteady / MIB)} MB, ` +
        `heap total at the RSS peak ${mb(heapTotalAtPeak / MIB)} MB, live heap ${mb(heapSteady === undefined ? undefined : heapSteady / MIB)} MB, ` +
        `GC ${(gc.ms / 1000).toFixed(1)} s (${gc.majors} major)\n`,
    );
    let restartBase = writes;
    let churn: ChurnResult | undefined;
    try {
      if (convergeMs !== undefined && shape.services > 0 && o.serviceChurn > 0) {
        churn = await serviceChurn(o, shape, kc, first.watcher, emulator.url, async () => {
          const c = await count();
          return c[SERVICE_ROUTES] === (shape.services + o.serviceChurn) * o.nodes;
        });
        // The restart below starts from the cluster with the churned Services.
        restartBase = await emulatorWrites(emulator.url);
      }
    } finally {
      await first.close();
    }
    // What stays reachable of a closed watcher (it matters to in-process users: tests, the
    // sandbox); the restart below is a process of its own, as a real restart is.
    first = undefined;
    // Its connections and their callbacks are let go over a few turns of the event loop.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const heapAfterClose = liveHeap();
    if (heapAfterClose !== undefined)
      process.stderr.write(`live heap after the watcher closed: ${(heapAfterClose / MIB).toFixed(0)} MB\n`);

    // 2. restart on the converged ODL
    let restart: RestartResult | undefined;
    let restartWrites = { requests: 0, edits: 0 };
    if (convergeMs !== undefined && o.run) {
      // The heap flags this measurement runs with (one set in a measuring process).
      const heap = o.heaps[0] ?? { oldSpaceMb: undefined, semiSpaceMb: undefined };
      restart = await restartInChild(o, condition, shape, o.run.kubeconfig, emulator.url, heap);
      const after = await emulatorWrites(emulator.url);
      restartWrites = {
        requests: after.requests - restartBase.requests,
        edits: after.edits - restartBase.edits,
      };
    }

    // The next condition runs on the same kubesim: the churned Services go.
    if (churn) await removeChurnedServices(o, shape, kc);

    // 3. the emulator's raw PUT capacity at the same concurrency
    const rawPutsPerSecond = await rawPutCapacity(emulator.url, o.dialect, o.concurrency);
    return {
      condition,
      shape,
      churn,
      convergeMs,
      convergeCpuMs,
      reconciles,
      counts,
      requests: writes.requests,
      edits: writes.edits,
      rssBaselineMb: rssBaseline / MIB,
      rssPeakMb: rssPeak / MIB,
      heapTotalAtPeakMb: heapTotalAtPeak / MIB,
      heapLimitMb: v8.getHeapStatistics().heap_size_limit / MIB,
      gc,
      rssSteadyMb: rssSteady === undefined ? undefined : rssSteady / MIB,
      heapBaselineMb: heapBaseline === undefined ? undefined : heapBaseline / MIB,
      heapSteadyMb: heapSteady === undefined ? undefined : heapSteady / MIB,
      components,
      restartMs: restart?.restartMs,
      restartCpuMs: restart?.cpuMs,
      restartRequests: restartWrites.requests,
      restartEdits: restartWrites.edits,
      restartRssPeakMb: restart?.rssPeakMb,
      rawPutsPerSecond,
      watcherPutsPerSecond: convergeMs === undefined ? 0 : writes.edits / (convergeMs / 1000),
    };
  } finally {
    reader.close();
    await stopChild(emulator.child);
  }
}

/**
 * The heap of the watcher's main stores: each informer's cache, and ODL's entries per kind in
 * the backend's cache (what a converged watcher keeps; its queue and batcher are empty then).
 */
function watcherComponents(watcher: Watcher): ComponentHeap[] {
  const out: ComponentHeap[] = [];
  for (const informer of watcher.view.informers()) {
    const objects = informer.list();
    out.push(componentHeap(`informer ${informer.name}`, objects.length, objects));
  }
  const cache = watcher.backend.cache;
  for (const kind of cache.table.kinds)
    out.push(componentHeap(`ODL ${kind}`, cache.size(kind), cache.values(kind)));
  // The indexes and per-object bookkeeping beside the caches, each measured whole.
  for (const [name, index] of Object.entries(watcher.view.indexes()))
    out.push(componentHeap(`view: ${name}`, 1, [index]));
  for (const [name, index] of Object.entries(cache.indexes()))
    out.push(componentHeap(`ODL ${name}`, 1, [index]));
  out.push(componentHeap('metrics: object states', 1, [watcher.metrics.objectStates]));
  return out;
}

/**
 * Creates `o.serviceChurn` Services, one at a time, on a converged cluster: each one's time from
 * the create until the watcher has seen it and gone idle (every gateway's route written), and
 * the write requests and edits they cost together.
 */
async function serviceChurn(
  o: Options,
  shape: Shape,
  kc: KubeConfig,
  watcher: Watcher,
  emulatorUrl: string,
  allRoutes: () => Promise<boolean>,
): Promise<ChurnResult> {
  const core = kc.makeApiClient(CoreV1Api);
  const before = await emulatorWrites(emulatorUrl);
  const times: number[] = [];
  for (let k = 0; k < o.serviceChurn; k += 1) {
    const i = shape.services + k;
    const body = serviceObject(i, shape) as V1Service;
    const namespace = body.metadata?.namespace ?? '';
    const started = performance.now();
    await core.createNamespacedService({ namespace, body });
    while (!watcher.view.service(namespace, `svc-${i}`)) await new Promise((r) => setTimeout(r, 1));
    // Bounded: a key that keeps failing would keep the queue busy for ever.
    if (
      (await within(
        watcher.idle().then(() => true),
        started + o.timeoutMs,
      )) !== true
    ) {
      process.stderr.write(`service churn: the watcher did not go idle after svc-${i} within the timeout\n`);
      break;
    }
    times.push(performance.now() - started);
  }
  if (times.length === 0) throw new Error('service churn: not one Service settled');
  const after = await emulatorWrites(emulatorUrl);
  return {
    services: times.length,
    requestsPerService: (after.requests - before.requests) / times.length,
    editsPerService: (after.edits - before.edits) / times.length,
    p50Ms: percentile(times, 50),
    p95Ms: percentile(times, 95),
    maxMs: Math.max(...times),
    complete: await allRoutes(),
  };
}

async function removeChurnedServices(o: Options, shape: Shape, kc: KubeConfig): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  for (let k = 0; k < o.serviceChurn; k += 1) {
    const i = shape.services + k;
    await core.deleteNamespacedService({ name: `svc-${i}`, namespace: `ns-${i % shape.namespaces}` });
  }
}

/**
 * PUTs per second the emulator serves to a minimal keep-alive node:http client with
 * `concurrency` requests in flight: entries of a list no backend reads
 * (dhcp_allocation_pool networks), created fresh, so every answer is a create.
 */
async function rawPutCapacity(baseUrl: string, dialect: Dialect, concurrency: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
  const { root, contentType } = restconfData(baseUrl, dialect);
  const headers = { 'Content-Type': contentType, Authorization: authorizationHeader(AUTH) };
  const put = async (i: number) => {
    const id = `raw-${i}`;
    const path: DataPath = [
      { module: 'dhcp_allocation_pool', name: 'dhcp_allocation_pool' },
      { name: 'network', keys: [id] },
    ];
    const body = JSON.stringify({ 'dhcp_allocation_pool:network': [{ 'network-id': id }] });
    const status = await rawRequest(
      root + encodePath(path, dialect),
      { method: 'PUT', agent, headers },
      body,
    );
    if (status >= 300) throw new Error(`PUT ${id}: ${status}`);
  };
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < RAW_PUTS) await put(next++);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return RAW_PUTS / seconds;
}

// ---------------------------------------------------------------------------------------------
// report

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const line = (r: string[]) => `| ${r.map((cell, c) => cell.padEnd(widths[c]!)).join(' | ')} |`;
  return [
    line(rows[0]!),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...rows.slice(1).map(line),
  ].join('\n');
}

const seconds = (ms: number | undefined) => (ms === undefined ? 'timeout' : `${(ms / 1000).toFixed(1)} s`);

/** Child mode: one measurement, its result as the last stdout line (`RESULT <json>`). */
async function runOne(o: Options, one: NonNullable<Options['run']>): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(one.kubeconfig);
  if (o.restartOn !== undefined) {
    const restart = await runRestart(o, one.condition, one.shape, kc, o.restartOn);
    process.stdout.write(`RESULT ${JSON.stringify(restart)}\n`);
    return;
  }
  const result = await run(o, one.condition, one.shape, kc, buildCluster(o, one.shape, false));
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
}

/** A restart's figures, measured in its own process. */
interface RestartResult {
  /** From starting the watcher until it is idle; undefined: not within the timeout. */
  restartMs: number | undefined;
  /** The process's CPU time (user + system) over the same span. */
  cpuMs: number | undefined;
  rssPeakMb: number;
}

/** Restart mode: a watcher started on the converged ODL at `emulatorUrl`, until it is idle. */
async function runRestart(
  o: Options,
  condition: Condition,
  shape: Shape,
  kc: KubeConfig,
  emulatorUrl: string,
): Promise<RestartResult> {
  let rssPeak = process.memoryUsage().rss;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), RSS_SAMPLE_MS);
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  const restarted = await startBenchWatcher(o, condition, shape, kc, emulatorUrl);
  let restartMs: number | undefined;
  let cpuMs: number | undefined;
  try {
    const idle = await within(
      restarted.watcher.idle().then(() => true),
      started + o.timeoutMs,
    );
    if (idle === true) {
      restartMs = performance.now() - started;
      cpuMs = cpuMsSince(cpuStarted);
    }
  } finally {
    clearInterval(sampler);
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    await restarted.close();
  }
  return { restartMs, cpuMs, rssPeakMb: rssPeak / MIB };
}

/**
 * The restart of a measurement: the compiled script in restart mode (`--restart-on`), a
 * process of its own as a real restart is (none of the first watcher's heap, a cold JIT).
 */
async function restartInChild(
  o: Options,
  condition: Condition,
  shape: Shape,
  kubeconfig: string,
  emulatorUrl: string,
  heap: HeapLimits,
): Promise<RestartResult> {
  return childResult<RestartResult>(
    [...childArgs(o, condition, shape, kubeconfig, heap), '--restart-on', emulatorUrl],
    `the restart of ${runName(condition, heap)}`,
  );
}

/** This script compiled (`tsconfig.bench.json`), which each measurement runs. */
const COMPILED_BENCH = join(REPO_ROOT, 'dist', 'bench', 'watcher', 'main.js');

/**
 * Compiles the benchmark with the sources it imports into `dist/`, so that measurements run
 * without the TypeScript loader: tsx, its esbuild and their caches took about 220 MB of every
 * measuring process's RSS before the watcher started.
 */
function compileBench(): void {
  const started = performance.now();
  const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const out = spawnSync(process.execPath, [tsc, '-p', join(REPO_ROOT, 'tsconfig.bench.json')], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  if (out.status !== 0)
    throw new Error(
      `compiling the benchmark (tsc -p tsconfig.bench.json) failed:\n${out.stdout}${out.stderr}`,
    );
  process.stdout.write(
    `compiled the benchmark into dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
}

/** A measuring child's stdout line naming a process it started (`<HELPER> <pid>`). */
const HELPER = 'HELPER-PID';

/** Stops by pid a helper process that outlived the child that started it. */
function stopOrphan(pid: number): void {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    // Already gone: the child stopped it.
  }
}

/** The heap flags each measuring process runs with, as a deployment would set them. */
const v8Flags = (h: HeapLimits): string[] => [
  ...(h.oldSpaceMb ? [`--max-old-space-size=${h.oldSpaceMb}`] : []),
  ...(h.semiSpaceMb ? [`--max-semi-space-size=${h.semiSpaceMb}`] : []),
];
const runName = (c: Condition, h: HeapLimits) =>
  `${conditionName(c)}@old-${h.oldSpaceMb ?? 'default'}@semi-${h.semiSpaceMb ?? 'default'}`;
const heapLabel = (h: HeapLimits) => `old ${h.oldSpaceMb ?? 'default'}, semi ${h.semiSpaceMb ?? 'default'}`;

/**
 * Runs one measurement in a fresh process of the compiled script, so that its RSS is the
 * watcher's alone (no TypeScript loader, no earlier run's garbage, no seed objects) and every
 * run starts with a cold JIT.
 */
async function runInChild(
  o: Options,
  condition: Condition,
  shape: Shape,
  kubeconfig: string,
  heap: HeapLimits,
): Promise<RunResult> {
  const result = await childResult<RunResult>(
    childArgs(o, condition, shape, kubeconfig, heap),
    `the ${runName(condition, heap)} run`,
  );
  return { ...result, heap };
}

/** The node arguments of a measuring process of the compiled script (a run, or its restart). */
function childArgs(
  o: Options,
  condition: Condition,
  shape: Shape,
  kubeconfig: string,
  heap: HeapLimits,
): string[] {
  return [
    ...(o.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', o.cpuProfDir] : []),
    ...v8Flags(heap),
    '--expose-gc',
    COMPILED_BENCH,
    ...['--pods', String(o.pods), '--nodes', String(o.nodes), '--namespaces', String(shape.namespaces)],
    ...['--services', String(shape.services), '--service-churn', String(o.serviceChurn)],
    ...['--backends', condition.backend],
    ...['--workers', String(o.workers), '--concurrency', String(o.concurrency)],
    ...['--dialect', o.dialect, '--profile', o.profile, '--timeout', String(o.timeoutMs / 1000)],
    ...['--batch-edits', String(o.batchEdits), '--batch-window', String(o.batchWindowMs)],
    ...['--batched-workers', String(o.batchedWorkers)],
    ...['--cost', o.cost ? `${o.cost.transactionMs},${o.cost.editMs}` : 'none'],
    ...['--run', conditionName(condition), '--kubeconfig', kubeconfig],
    ...(o.heapSnapshot
      ? ['--heap-snapshot', `${o.heapSnapshot}.${runName(condition, heap)}.heapsnapshot`]
      : []),
    // Again for the script: a measurement starts its restart with the same node flags.
    ...(o.cpuProfDir ? ['--cpu-prof', o.cpuProfDir] : []),
    ...['--max-old-space', String(heap.oldSpaceMb ?? 'default')],
    ...['--max-semi-space', String(heap.semiSpaceMb ?? 'default')],
  ];
}

/** Runs `args` under node and resolves with its result line (`RESULT <json>`). */
async function childResult<T>(args: readonly string[], what: string): Promise<T> {
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let result: T | undefined;
  const helpers: number[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('RESULT ')) result = JSON.parse(line.slice('RESULT '.length)) as T;
    if (line.startsWith(`${HELPER} `)) helpers.push(Number(line.slice(HELPER.length + 1)));
  });
  const exit = await new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? `exit code ${code}`)),
  );
  // A child that died (out of heap) could not stop its emulator (one that ended well did).
  if (!result) for (const pid of helpers) stopOrphan(pid);
  if (!result) throw new Error(`${what} (pid ${child.pid}) ended (${exit}) without a result`);
  return result;
}

async function main(): Promise<void> {
  const o = parseOptions();
  if (o.run) {
    if (!canCollect) throw new Error('a measurement runs with node --expose-gc (it forces collections)');
    return runOne(o, o.run);
  }
  compileBench();
  const dir = mkdtempSync(join(tmpdir(), 'odlcoe-bench-watcher-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const results: RunResult[] = [];
  const failures: { condition: Condition; shape: Shape; heap: HeapLimits; reason: string }[] = [];
  const expected = new Map<Shape, Cluster['expected']>();
  const conditions: Condition[] = [];
  const settings = [
    ...o.latencies.map((latencyMs) => ({ latencyMs, cost: false })),
    ...(o.cost ? [{ latencyMs: 0, cost: true }] : []),
  ];
  for (const { latencyMs, cost } of settings)
    for (const backend of o.backends)
      for (const mode of o.modes) conditions.push({ backend, mode, latencyMs, cost });
  try {
    // One kubesim per cluster shape, seeded afresh, so no shape sees another's objects.
    for (const shape of o.shapes) {
      const kubesim = await startListening(
        [
          'src/kubesim/main.ts',
          '--port',
          '0',
          '--history-limit',
          '100000',
          '--kubeconfig-out',
          kubeconfigPath,
        ],
        'kubesim listening',
        'info',
      );
      try {
        const seeded = performance.now();
        const cluster = buildCluster(o, shape, true);
        expected.set(shape, cluster.expected);
        await requestJson(`${kubesim.url}/_sim/seed`, 'POST', { items: cluster.items });
        process.stdout.write(
          `seeded ${o.nodes} nodes, ${shape.namespaces} namespaces, ${o.pods} pods, ${shape.services} Services in ${((performance.now() - seeded) / 1000).toFixed(1)} s; ` +
            `profile ${o.profile}, dialect ${o.dialect}, workers ${o.workers}, RESTCONF client concurrency ${o.concurrency}\n`,
        );
        for (const condition of conditions)
          for (const heap of o.heaps) {
            process.stdout.write(`running ${conditionName(condition)} (V8 heap: ${heapLabel(heap)}) ...\n`);
            let r: RunResult;
            try {
              r = await runInChild(o, condition, shape, kubeconfigPath, heap);
            } catch (err) {
              // A heap cap too low ends the process (out of memory): that is a figure too.
              const reason = err instanceof Error ? err.message : String(err);
              failures.push({ condition, shape, heap, reason });
              process.stdout.write(`  FAILED: ${reason}\n`);
              continue;
            }
            results.push(r);
            process.stdout.write(
              `  converge ${seconds(r.convergeMs)} (CPU ${seconds(r.convergeCpuMs)}), ${r.requests} requests / ${r.edits} edits, ` +
                `restart ${seconds(r.restartMs)} (CPU ${seconds(r.restartCpuMs)}) with ${r.restartRequests} requests / ${r.restartEdits} edits, peak RSS ${mb(r.restartRssPeakMb)} MB\n` +
                `  reconciles until idle: ${Object.entries(r.reconciles)
                  .map(([kind, n]) => `${kind} ${n}`)
                  .join(', ')}\n`,
            );
            if (r.convergeMs === undefined)
              process.stdout.write(
                `  reached ${JSON.stringify(r.counts)} of ${JSON.stringify(cluster.expected[condition.backend])}\n`,
              );
          }
      } finally {
        await stopChild(kubesim.child);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  report(o, results);
  for (const f of failures)
    process.stdout.write(
      `\nFAILED: ${conditionName(f.condition)}, ${f.shape.namespaces} namespaces, ${f.shape.services} Services, V8 heap ${heapLabel(f.heap)}: ${f.reason}\n`,
    );
  if (failures.length > 0) process.exitCode = 1;
}

function report(o: Options, results: RunResult[]): void {
  const rows = [
    [
      'backend',
      'namespaces',
      'Services',
      'condition',
      'mode',
      'V8 heap',
      'converge',
      'CPU',
      'ODL entries',
      'requests',
      'requests/pod',
      'edits',
      'edits/pod',
      'edits/s',
      'raw PUT/s',
      'RSS before→peak→steady',
      'restart',
      'restart requests/edits',
      'restart RSS peak',
    ],
    ...results.map((r) => [
      r.condition.backend,
      String(r.shape.namespaces),
      String(r.shape.services),
      conditionLabel(o, r.condition),
      r.condition.mode,
      r.heap ? heapLabel(r.heap) : '-',
      seconds(r.convergeMs),
      seconds(r.convergeCpuMs),
      String(
        Object.entries(r.counts)
          .filter(([k]) => k !== SERVICE_ROUTES)
          .reduce((a, [, b]) => a + b, 0),
      ),
      String(r.requests),
      (r.requests / o.pods).toFixed(3),
      String(r.edits),
      (r.edits / o.pods).toFixed(2),
      r.convergeMs === undefined ? '-' : r.watcherPutsPerSecond.toFixed(0),
      r.rawPutsPerSecond.toFixed(0),
      `${r.rssBaselineMb.toFixed(0)}→${r.rssPeakMb.toFixed(0)}→${mb(r.rssSteadyMb)} MB`,
      seconds(r.restartMs),
      `${r.restartRequests}/${r.restartEdits}`,
      `${mb(r.restartRssPeakMb)} MB`,
    ]),
  ];
  process.stdout.write(
    `\n${o.nodes} nodes / ${o.pods} pods; workers ${o.workers} (batched: ${o.batchedWorkers}), ` +
      `RESTCONF client concurrency ${o.concurrency}, batches of ≤ ${o.batchEdits} edits / ${o.batchWindowMs} ms, ` +
      `${o.profile}/${o.dialect}` +
      `; V8 heap flags per row (old: --max-old-space-size, semi: --max-semi-space-size, MB)\n${table(rows)}\n` +
      'converge: start until the queue is idle and ODL holds every expected entry (and, with Services, every route);\n' +
      'CPU: the measuring process’s CPU time (user + system) from start until its queue was idle (load-independent);\n' +
      'requests: write requests the emulator served (PUT/POST/PATCH/DELETE); edits: the writes they carried (a YANG\n' +
      'Patch carries many); raw PUT/s: the same emulator, a bare node:http keep-alive client at the same concurrency;\n' +
      'RSS: the measuring process, compiled JavaScript without the TypeScript loader (before the watcher started,\n' +
      'after a forced GC → peak while converging → steady state after converging, after a forced GC); restart: a\n' +
      'second watcher on the converged ODL, a process of its own: from its start until idle, the writes the\n' +
      'emulator served meanwhile, and the peak RSS of that process.\n',
  );
  heapReport(results);
  const withServices = results.filter((r) => r.shape.services > 0);
  if (withServices.length === 0) return;
  const same = (a: RunResult, b: RunResult) =>
    conditionName(a.condition) === conditionName(b.condition) && a.shape.namespaces === b.shape.namespaces;
  const serviceRows = [
    [
      'namespaces',
      'Services',
      'condition',
      'mode',
      'converge',
      'without Services',
      'Services add',
      'edits added',
      'churn: Services',
      'requests/Service',
      'edits/Service',
      'per Service p50',
      'p95',
      'max',
      'routes complete',
    ],
    ...withServices.map((r) => {
      const base = results.find((b) => b.shape.services === 0 && same(b, r));
      const added =
        base?.convergeMs !== undefined && r.convergeMs !== undefined
          ? r.convergeMs - base.convergeMs
          : undefined;
      const c = r.churn;
      return [
        String(r.shape.namespaces),
        String(r.shape.services),
        conditionLabel(o, r.condition),
        r.condition.mode,
        seconds(r.convergeMs),
        base ? seconds(base.convergeMs) : '-',
        added === undefined ? '-' : seconds(added),
        base ? String(r.edits - base.edits) : '-',
        c ? String(c.services) : '-',
        c ? c.requestsPerService.toFixed(1) : '-',
        c ? c.editsPerService.toFixed(1) : '-',
        c ? `${c.p50Ms.toFixed(0)} ms` : '-',
        c ? `${c.p95Ms.toFixed(0)} ms` : '-',
        c ? `${c.maxMs.toFixed(0)} ms` : '-',
        c ? (c.complete ? 'yes' : 'NO') : '-',
      ];
    }),
  ];
  process.stdout.write(
    `\nServices (netvirt: range ${SERVICE_CIDR}, ${o.nodes} node gateways)\n${table(serviceRows)}\n` +
      'Services add: converge time over the same cluster without Services; edits added: the converge writes they\n' +
      'added (routes ride in each gateway vpn-interface when it is created). churn: Services created one at a time on\n' +
      'the converged cluster, each timed from its create until the watcher saw it and went idle; edits/Service: one\n' +
      'route per node gateway, independent of the number of namespaces (the gateways share one VPN).\n',
  );
}

const mb = (value: number | undefined) => (value === undefined ? '-' : value.toFixed(0));

/**
 * Per run: V8's limits and collections, live heap before the watcher and at steady state; then
 * one row per component (store, index, bookkeeping) with a column per run.
 */
function heapReport(results: RunResult[]): void {
  const grownOf = (r: RunResult) =>
    r.heapSteadyMb === undefined || r.heapBaselineMb === undefined
      ? undefined
      : r.heapSteadyMb - r.heapBaselineMb;
  const runLabel = (r: RunResult, i: number) =>
    `#${i + 1} ${r.condition.backend} ${r.condition.latencyMs} ms${r.condition.cost ? ' cost' : ''} ${r.condition.mode}`;
  const summary = [
    [
      'run',
      'V8 heap',
      'heap limit',
      'GC while converging',
      'heap total at RSS peak',
      'heap before→steady',
      'watcher heap',
    ],
    ...results.map((r, i) => [
      runLabel(r, i),
      r.heap ? heapLabel(r.heap) : '-',
      `${mb(r.heapLimitMb)} MB`,
      `${(r.gc.ms / 1000).toFixed(1)} s, ${r.gc.count} (${r.gc.majors} major, ${(r.gc.majorMs / 1000).toFixed(1)} s)`,
      `${mb(r.heapTotalAtPeakMb)} MB`,
      `${mb(r.heapBaselineMb)}→${mb(r.heapSteadyMb)} MB`,
      `${mb(grownOf(r))} MB`,
    ]),
  ];
  const names = [...new Set(results.flatMap((r) => r.components.map((c) => c.name)))];
  const cell = (c: ComponentHeap | undefined) =>
    c === undefined
      ? '-'
      : `${c.records === 1 ? '' : `${c.records} / `}${(c.bytes === undefined ? NaN : c.bytes / MIB).toFixed(1)} MB`;
  const byComponent = [
    ['component', ...results.map(runLabel)],
    ...names.map((n) => [n, ...results.map((r) => cell(r.components.find((x) => x.name === n)))]),
    [
      'rest',
      ...results.map((r) => {
        const grown = grownOf(r);
        const accounted = r.components.reduce((sum, c) => sum + (c.bytes ?? 0), 0) / MIB;
        return grown === undefined ? '-' : `${(grown - accounted).toFixed(1)} MB`;
      }),
    ],
  ];
  process.stdout.write(
    `\nHeap at steady state (after converging, forced GC)\n${table(summary)}\n` +
      "heap limit: V8's (its flags' or default); GC while converging: pause time and collections (major:\n" +
      "mark-compact); heap total at RSS peak: V8's heap, used or not, when the RSS peaked; watcher heap: live\n" +
      'heap at steady state minus before the watcher started.\n' +
      `\nWatcher heap by component\n${table(byComponent)}\n` +
      'informer / ODL <kind>: records / MB, the records times the heap of a deep copy of up to 1,000 of them;\n' +
      'indexes and bookkeeping (view:, ODL <index>, metrics:): a deep copy of the whole structure. Copies own\n' +
      'their strings, so each figure is an upper bound where strings are shared (names are, between the\n' +
      'caches and the indexes); rest: the watcher heap minus all of these (queue, clients, module state).\n',
  );
}

const conditionLabel = (o: Options, c: Condition) =>
  c.cost && o.cost ? `cost ${o.cost.transactionMs}+${o.cost.editMs}/edit ms` : `${c.latencyMs} ms`;

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
