/**
 * Watcher benchmark: a cluster of N nodes / M namespaces / P pods (all scheduled, all with IPs)
 * is seeded into the Kubernetes API simulator, and the watcher converges an empty ODL emulator
 * to it, per backend and per injected RESTCONF latency. Per run it reports:
 *
 * - converge: from start until the watcher's queue is idle AND ODL holds the expected number of
 *   entries in every list the backend writes (read back from ODL, not from the watcher);
 * - per write mode (`single`: one request per write; `batched`: YANG Patch, `--batch-edits`
 *   edits at most, `--batch-window` ms, with `--batched-workers` workers, since a batch can
 *   only hold writes that are in flight together), and per condition: each `--latency`, and
 *   `cost` (0 ms latency, the emulator's commit cost model `--cost <tx ms>,<edit ms>` on);
 * - requests: data write requests the emulator served (PUT/POST/PATCH/DELETE), and edits: the
 *   writes they carried (one per single write, one per YANG-Patch edit), total and per pod;
 * - peak RSS of this process while the watcher converged (the watcher runs in-process; kubesim
 *   and the emulator are child processes), next to the RSS before the watcher started;
 * - restart: a second watcher started on the converged ODL: time until idle, and its writes
 *   (expected 0);
 * - raw PUT capacity of the same emulator at the same concurrency, measured in the same run by
 *   a minimal node:http keep-alive client (the ceiling for any client at that latency).
 *
 *   node --import tsx bench/watcher/main.ts [--pods 10000] [--nodes 100] [--namespaces 200]
 *     [--latency 0,5] [--backends coe-northbound,netvirt] [--workers 8] [--concurrency 16]
 *     [--dialect rfc8040] [--profile sodium] [--timeout 240] [--cpu-prof <dir>]
 *
 * The emulator runs as a child process (`--latency-ms N`, URL read from its `emulator listening`
 * line), one per run; kubesim runs as one child for the whole benchmark. Both are stopped by
 * pid at the end. Everything shares the machine, so figures are relative, not absolute.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../../src/common/log.js';
import { createRegistry } from '../../src/common/metrics.js';
import { elanInstanceName, netvirtPaths, vpnName, type Profile } from '../../src/netvirt/index.js';
import { PROFILES } from '../../src/netvirt/profile.js';
import { authorizationHeader } from '../../src/restconf/auth.js';
import { DEFAULT_CONCURRENCY, RestconfClient } from '../../src/restconf/client.js';
import { DIALECTS, encodePath, type DataPath, type Dialect } from '../../src/restconf/path.js';
import type { EventRecorder } from '../../src/watcher/events.js';
import { DEFAULT_SETTINGS, type WatcherSettings } from '../../src/config/watcher-settings.js';
import { startWatcher, type Watcher } from '../../src/watcher/watcher.js';
import { REPO_ROOT, startListening, stopChild, type ListeningChild } from '../common/child.js';
import { MIB } from '../common/memory.js';
import { rawRequest, requestJson, restconfData } from '../common/raw-http.js';

const AUTH = { kind: 'basic' as const, user: 'admin', password: 'admin' };
const BACKENDS = ['coe-northbound', 'netvirt'] as const;
type BackendName = (typeof BACKENDS)[number];
/** PUTs of the raw-capacity probe per run. */
const RAW_PUTS = 4_000;
const RSS_SAMPLE_MS = 100;

interface Options {
  pods: number;
  nodes: number;
  namespaces: number;
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
  /** Internal: run one measurement in this process against `kubeconfig`. */
  run?: { condition: Condition; kubeconfig: string };
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
      'cpu-prof': { type: 'string' },
      run: { type: 'string' },
      kubeconfig: { type: 'string' },
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
  return {
    run,
    pods,
    nodes,
    namespaces: int('namespaces', values.namespaces, 1, 100_000),
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

function buildCluster(o: Options, withItems: boolean): Cluster {
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
  for (let s = 0; s < o.namespaces && withItems; s += 1)
    items.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns-${s}` } });
  const perNode = new Array<number>(o.nodes).fill(0);
  const elans = new Set<string>();
  const vpns = new Set<string>();
  for (let p = 0; p < o.pods; p += 1) {
    const n = nodeOf(p, o.nodes);
    const ns = `ns-${p % o.namespaces}`;
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
  return {
    items,
    expected: {
      'coe-northbound': { pods: o.pods, 'k8s-nodes': o.nodes },
      netvirt: {
        interface: o.pods,
        'elan-interface': o.pods,
        'vpn-interface': o.pods,
        'elan-instance': elans.size,
        'vpn-instance': vpns.size,
        'k8s-nodes': o.nodes,
      },
    },
  };
}

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

interface RunResult {
  condition: Condition;
  convergeMs: number | undefined;
  counts: Record<string, number>;
  requests: number;
  edits: number;
  rssBaselineMb: number;
  rssPeakMb: number;
  restartMs: number | undefined;
  restartRequests: number;
  restartEdits: number;
  rawPutsPerSecond: number;
  watcherPutsPerSecond: number;
}

const silentEvents: EventRecorder = { warning: () => undefined };

async function startBenchWatcher(
  o: Options,
  { backend, mode }: Condition,
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
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, path] of Object.entries(paths)) out[name] = (await client.getEntries(path)).length;
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

async function run(o: Options, condition: Condition, kc: KubeConfig, cluster: Cluster): Promise<RunResult> {
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
  const reader = new RestconfClient({
    baseUrl: emulator.url,
    dialect: o.dialect,
    auth: AUTH,
    timeoutMs: 120_000,
  });
  const paths = listPaths(backend, o.profile);
  const expected = cluster.expected[backend];
  try {
    // 1. converge from an empty ODL
    const rssBaseline = process.memoryUsage().rss;
    let rssPeak = rssBaseline;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }, RSS_SAMPLE_MS);
    const started = performance.now();
    const deadline = started + o.timeoutMs;
    const first = await startBenchWatcher(o, condition, kc, emulator.url);
    let convergeMs: number | undefined;
    let counts: Record<string, number> = {};
    try {
      if (
        (await within(
          first.watcher.idle().then(() => true),
          deadline,
        )) === true
      ) {
        for (;;) {
          counts = await countEntries(reader, paths);
          if (equalCounts(counts, expected)) {
            convergeMs = performance.now() - started;
            break;
          }
          if (performance.now() > deadline) break;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      } else {
        counts = await countEntries(reader, paths);
      }
    } finally {
      clearInterval(sampler);
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
      await first.close();
    }
    const writes = await emulatorWrites(emulator.url);

    // 2. restart on the converged ODL
    let restartMs: number | undefined;
    let restartWrites = { requests: 0, edits: 0 };
    if (convergeMs !== undefined) {
      const restartStarted = performance.now();
      const second = await startBenchWatcher(o, condition, kc, emulator.url);
      try {
        if (
          (await within(
            second.watcher.idle().then(() => true),
            restartStarted + o.timeoutMs,
          )) === true
        )
          restartMs = performance.now() - restartStarted;
      } finally {
        await second.close();
      }
      const after = await emulatorWrites(emulator.url);
      restartWrites = { requests: after.requests - writes.requests, edits: after.edits - writes.edits };
    }

    // 3. the emulator's raw PUT capacity at the same concurrency
    const rawPutsPerSecond = await rawPutCapacity(emulator.url, o.dialect, o.concurrency);
    return {
      condition,
      convergeMs,
      counts,
      requests: writes.requests,
      edits: writes.edits,
      rssBaselineMb: rssBaseline / MIB,
      rssPeakMb: rssPeak / MIB,
      restartMs,
      restartRequests: restartWrites.requests,
      restartEdits: restartWrites.edits,
      rawPutsPerSecond,
      watcherPutsPerSecond: convergeMs === undefined ? 0 : writes.edits / (convergeMs / 1000),
    };
  } finally {
    reader.close();
    await stopChild(emulator.child);
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
  const result = await run(o, one.condition, kc, buildCluster(o, false));
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
}

/**
 * Runs one measurement in a fresh process of this script, so that its RSS is the watcher's
 * alone (no earlier run's garbage, no seed objects) and every run starts with a cold JIT.
 */
async function runInChild(o: Options, condition: Condition, kubeconfig: string): Promise<RunResult> {
  const args = [
    ...(o.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', o.cpuProfDir] : []),
    '--import',
    'tsx',
    fileURLToPath(import.meta.url),
    ...['--pods', String(o.pods), '--nodes', String(o.nodes), '--namespaces', String(o.namespaces)],
    ...['--workers', String(o.workers), '--concurrency', String(o.concurrency)],
    ...['--dialect', o.dialect, '--profile', o.profile, '--timeout', String(o.timeoutMs / 1000)],
    ...['--batch-edits', String(o.batchEdits), '--batch-window', String(o.batchWindowMs)],
    ...['--batched-workers', String(o.batchedWorkers)],
    ...['--cost', o.cost ? `${o.cost.transactionMs},${o.cost.editMs}` : 'none'],
    ...['--run', conditionName(condition), '--kubeconfig', kubeconfig],
  ];
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let result: RunResult | undefined;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('RESULT ')) result = JSON.parse(line.slice('RESULT '.length)) as RunResult;
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  if (!result)
    throw new Error(
      `the ${conditionName(condition)} run (pid ${child.pid}) ended (${code}) without a result`,
    );
  return result;
}

async function main(): Promise<void> {
  const o = parseOptions();
  if (o.run) return runOne(o, o.run);
  const dir = mkdtempSync(join(tmpdir(), 'odlcoe-bench-watcher-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  let kubesim: ListeningChild | undefined;
  const results: RunResult[] = [];
  let expected: Cluster['expected'];
  try {
    kubesim = await startListening(
      ['src/kubesim/main.ts', '--port', '0', '--history-limit', '100000', '--kubeconfig-out', kubeconfigPath],
      'kubesim listening',
      'info',
    );
    const seeded = performance.now();
    const cluster = buildCluster(o, true);
    expected = cluster.expected;
    await requestJson(`${kubesim.url}/_sim/seed`, 'POST', { items: cluster.items });
    process.stdout.write(
      `seeded ${o.nodes} nodes, ${o.namespaces} namespaces, ${o.pods} pods in ${((performance.now() - seeded) / 1000).toFixed(1)} s; ` +
        `profile ${o.profile}, dialect ${o.dialect}, workers ${o.workers}, RESTCONF client concurrency ${o.concurrency}\n`,
    );
    const conditions: Condition[] = [];
    const settings = [
      ...o.latencies.map((latencyMs) => ({ latencyMs, cost: false })),
      ...(o.cost ? [{ latencyMs: 0, cost: true }] : []),
    ];
    for (const { latencyMs, cost } of settings)
      for (const backend of o.backends)
        for (const mode of o.modes) conditions.push({ backend, mode, latencyMs, cost });
    for (const condition of conditions) {
      process.stdout.write(`running ${conditionName(condition)} ...\n`);
      const r = await runInChild(o, condition, kubeconfigPath);
      results.push(r);
      process.stdout.write(
        `  converge ${seconds(r.convergeMs)}, ${r.requests} requests / ${r.edits} edits, restart ${seconds(r.restartMs)} with ${r.restartEdits} edits\n`,
      );
      if (r.convergeMs === undefined)
        process.stdout.write(
          `  reached ${JSON.stringify(r.counts)} of ${JSON.stringify(expected[condition.backend])}\n`,
        );
    }
  } finally {
    if (kubesim) await stopChild(kubesim.child);
    rmSync(dir, { recursive: true, force: true });
  }

  const rows = [
    [
      'backend',
      'condition',
      'mode',
      'converge',
      'ODL entries',
      'requests',
      'requests/pod',
      'edits',
      'edits/pod',
      'edits/s',
      'raw PUT/s',
      'RSS before→peak',
      'restart',
      'restart requests/edits',
    ],
    ...results.map((r) => [
      r.condition.backend,
      r.condition.cost && o.cost
        ? `cost ${o.cost.transactionMs}+${o.cost.editMs}/edit ms`
        : `${r.condition.latencyMs} ms`,
      r.condition.mode,
      seconds(r.convergeMs),
      String(Object.values(r.counts).reduce((a, b) => a + b, 0)),
      String(r.requests),
      (r.requests / o.pods).toFixed(3),
      String(r.edits),
      (r.edits / o.pods).toFixed(2),
      r.convergeMs === undefined ? '-' : r.watcherPutsPerSecond.toFixed(0),
      r.rawPutsPerSecond.toFixed(0),
      `${r.rssBaselineMb.toFixed(0)}→${r.rssPeakMb.toFixed(0)} MB`,
      seconds(r.restartMs),
      `${r.restartRequests}/${r.restartEdits}`,
    ]),
  ];
  process.stdout.write(
    `\n${o.nodes} nodes / ${o.namespaces} namespaces / ${o.pods} pods; workers ${o.workers} (batched: ${o.batchedWorkers}), ` +
      `RESTCONF client concurrency ${o.concurrency}, batches of ≤ ${o.batchEdits} edits / ${o.batchWindowMs} ms, ` +
      `${o.profile}/${o.dialect}\n${table(rows)}\n` +
      'converge: start until the queue is idle and ODL holds every expected entry; requests: write requests the emulator\n' +
      'served (PUT/POST/PATCH/DELETE); edits: the writes they carried (a YANG Patch carries many);\n' +
      'raw PUT/s: the same emulator, a bare node:http keep-alive client at the same concurrency; RSS: the watcher process\n' +
      '(before the watcher started → peak while converging); restart: a second watcher on the converged ODL.\n',
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
