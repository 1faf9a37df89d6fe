/**
 * Informer and work-queue benchmark. Run: `node --import tsx bench/informer/main.ts`
 * (`--pods N`, `--runs N`, `--keys N` to change the sizes).
 *
 * The Kubernetes simulator runs in a child process so that the figures for the informer
 * (sync time, memory, event throughput) are this process's alone. Numbers depend on the
 * machine and on the simulator's own speed; they are for comparing changes, not promises.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { KubeConfig } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import PQueue from 'p-queue';
import { silentLogger } from '../../src/common/log.js';
import { Registry } from '../../src/common/metrics.js';
import { Informer } from '../../src/k8s/informer.js';
import { KubeClient } from '../../src/k8s/kube-client.js';
import { WorkQueue } from '../../src/queue/work-queue.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  if (index < 0) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} needs a positive whole number`);
  return value;
}

const PODS = option('pods', 10_000);
const SYNC_RUNS = option('runs', 5);
const QUEUE_KEYS = option('keys', 100_000);
const UPDATES = Math.min(PODS, 2_000);
const NAMESPACES = 10;

// A full GC before each memory reading, without asking the user for --expose-gc.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

interface Sim {
  url: string;
  kubeConfig: KubeConfig;
  process: ChildProcess;
}

/** Starts `odlcoe-kubesim` on an ephemeral port and waits for its "listening" log line. */
async function startSim(dir: string): Promise<Sim> {
  const kubeconfigPath = join(dir, 'kubeconfig');
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(root, 'src/kubesim/main.ts'),
      '--port',
      '0',
      '--history-limit',
      String(4 * PODS + UPDATES + 1000),
      '--kubeconfig-out',
      kubeconfigPath,
    ],
    { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ODLCOE_LOG_LEVEL: 'info' } },
  );
  const lines = createInterface({ input: child.stderr! });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('kubesim did not start within 60 s')), 60_000);
    child.once('exit', (code) => reject(new Error(`kubesim exited with ${code} before listening`)));
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { message?: string; url?: string };
        if (entry.message === 'kubesim listening' && entry.url) {
          clearTimeout(timer);
          resolve(entry.url);
        }
      } catch {
        // not a log line of interest
      }
    });
  });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  return { url, kubeConfig, process: child };
}

function podObject(namespace: string, i: number): V1Pod {
  const name = `app-${i.toString().padStart(6, '0')}`;
  const node = `node-${i % 50}`;
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels: { app: `app-${i % 100}`, 'pod-template-hash': '5d8f7c9b4', tier: 'web' },
      annotations: { 'odlcoe.io/bench': 'true', 'kubernetes.io/config.seen': '2024-01-01T00:00:00Z' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `app-${i % 100}-5d8f7c9b4`,
          uid: `rs-${i % 100}`,
          controller: true,
        },
      ],
    },
    spec: {
      nodeName: node,
      containers: [
        {
          name: 'app',
          image: 'registry.example.com/team/app:1.2.3',
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
          env: [{ name: 'MODE', value: 'production' }],
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
        },
      ],
    },
    status: {
      phase: 'Running',
      hostIP: `192.168.0.${i % 50}`,
      podIP: ip,
      podIPs: [{ ip }],
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'ContainersReady', status: 'True' },
      ],
    },
  };
}

async function seed(api: KubeClient, items: unknown[]): Promise<void> {
  await api.request('POST', '/_sim/seed', { body: { items }, timeoutMs: 300_000 });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function table(title: string, header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`\n${title}`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
}

function newInformer(kubeConfig: KubeConfig, name: string, labelSelector?: string): Informer<V1Pod> {
  return new Informer<V1Pod>({
    name,
    kubeConfig,
    path: '/api/v1/pods',
    ...(labelSelector ? { labelSelector } : {}),
    registry: new Registry(),
    logger: silentLogger(),
  });
}

async function waitUntil(condition: () => boolean, what: string, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

async function informerBench(sim: Sim): Promise<void> {
  const api = new KubeClient(sim.kubeConfig);
  const namespaces = Array.from({ length: NAMESPACES }, (_, n) => `bench-${n}`);
  const seeded = performance.now();
  await seed(api, [
    ...namespaces.map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })),
    ...Array.from({ length: PODS }, (_, i) => podObject(namespaces[i % NAMESPACES]!, i)),
  ]);
  console.log(
    `seeded ${PODS} pods in ${NAMESPACES} namespaces in ${Math.round(performance.now() - seeded)} ms (bulk /_sim/seed)`,
  );

  // Initial sync, several runs: list (pages of 500) + delivery of every add.
  const syncMs: number[] = [];
  for (let run = 0; run < SYNC_RUNS; run++) {
    const informer = newInformer(sim.kubeConfig, `sync-${run}`);
    let adds = 0;
    informer.on('add', () => (adds += 1));
    const started = performance.now();
    informer.start();
    await informer.waitForSync();
    syncMs.push(performance.now() - started);
    if (adds !== PODS) throw new Error(`sync run ${run} delivered ${adds} adds, expected ${PODS}`);
    await informer.stop();
  }

  // Memory: the heap an informer holding PODS pods retains (GC before each reading).
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  let informer: Informer<V1Pod> | undefined = newInformer(sim.kubeConfig, 'memory');
  informer.start();
  await informer.waitForSync();
  gc();
  const synced = process.memoryUsage();
  await informer.stop();
  informer = undefined;
  gc();

  // Event throughput: bursts of watch events delivered to a synced informer's handlers.
  const live = newInformer(sim.kubeConfig, 'live', 'tier=web');
  const counts = { add: 0, update: 0, delete: 0 };
  live.on('add', () => (counts.add += 1));
  live.on('update', () => (counts.update += 1));
  live.on('delete', () => (counts.delete += 1));
  live.start();
  await live.waitForSync();
  const bursts: string[][] = [];

  // ADDED burst: one bulk seed request creates PODS pods; the watch streams them back-to-back.
  const burstNs = 'bench-burst';
  const addsBefore = counts.add;
  let t0 = performance.now();
  await seed(api, [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: burstNs } },
    ...Array.from({ length: PODS }, (_, i) => podObject(burstNs, i)),
  ]);
  await waitUntil(() => counts.add - addsBefore >= PODS, 'the ADDED burst');
  let ms = performance.now() - t0;
  bursts.push([
    'ADDED (one bulk create)',
    String(PODS),
    `${Math.round(ms)} ms`,
    `${Math.round((PODS / ms) * 1000)}`,
  ]);

  // MODIFIED burst: UPDATES merge patches, 32 in flight, from this process.
  const patches = new PQueue({ concurrency: 32 });
  const updatesBefore = counts.update;
  t0 = performance.now();
  for (let i = 0; i < UPDATES; i++) {
    const p = podObject(namespaces[i % NAMESPACES]!, i);
    void patches.add(() =>
      api.request('PATCH', `/api/v1/namespaces/${p.metadata!.namespace}/pods/${p.metadata!.name}`, {
        body: { metadata: { labels: { ...p.metadata!.labels, revision: '2' } } },
        contentType: 'application/merge-patch+json',
      }),
    );
  }
  await patches.onIdle();
  await waitUntil(() => counts.update - updatesBefore >= UPDATES, 'the MODIFIED burst');
  ms = performance.now() - t0;
  bursts.push([
    `MODIFIED (${UPDATES} PATCH, 32 in flight)`,
    String(UPDATES),
    `${Math.round(ms)} ms`,
    `${Math.round((UPDATES / ms) * 1000)}`,
  ]);

  // DELETED burst: one delete-collection request removes the burst namespace's pods.
  const deletesBefore = counts.delete;
  t0 = performance.now();
  await api.request('DELETE', `/api/v1/namespaces/${burstNs}/pods`, { timeoutMs: 300_000 });
  await waitUntil(() => counts.delete - deletesBefore >= PODS, 'the DELETED burst');
  ms = performance.now() - t0;
  bursts.push([
    'DELETED (one delete-collection)',
    String(PODS),
    `${Math.round(ms)} ms`,
    `${Math.round((PODS / ms) * 1000)}`,
  ]);
  await live.stop();

  table(
    `Informer: initial sync of ${PODS} pods (pages of ${Informer.DEFAULT_PAGE_SIZE}), ${SYNC_RUNS} runs`,
    ['measure', 'value'],
    [
      ['sync p50', `${Math.round(percentile(syncMs, 50))} ms`],
      ['sync min / max', `${Math.round(Math.min(...syncMs))} / ${Math.round(Math.max(...syncMs))} ms`],
      ['heap retained by the synced cache', mib(synced.heapUsed - heapBefore)],
      ['heap used after sync (process)', mib(synced.heapUsed)],
      ['RSS after sync (process)', mib(synced.rss)],
    ],
  );
  table(
    'Informer: watch event throughput (sent by the server, decoded, cached, handled)',
    ['burst', 'events', 'time', 'events/s'],
    bursts,
  );
}

async function workQueueRun(
  workers: number,
  keys: number,
  addsPerKey: number,
): Promise<{ ms: number; reconciles: number }> {
  let reconciles = 0;
  const queue = new WorkQueue({
    name: `bench-${workers}`,
    workers,
    reconcile: async () => {
      reconciles += 1;
    },
    registry: new Registry(),
    logger: silentLogger(),
  });
  const t0 = performance.now();
  queue.start();
  for (let round = 0; round < addsPerKey; round++) {
    for (let k = 0; k < keys; k++) queue.add(`ns/pod-${k}`);
  }
  await queue.idle();
  const ms = performance.now() - t0;
  await queue.shutdown();
  return { ms, reconciles };
}

async function pQueueRun(
  workers: number,
  keys: number,
  addsPerKey: number,
): Promise<{ ms: number; reconciles: number }> {
  let reconciles = 0;
  const queue = new PQueue({ concurrency: workers });
  const t0 = performance.now();
  for (let round = 0; round < addsPerKey; round++) {
    for (let k = 0; k < keys; k++) {
      void queue.add(async () => {
        reconciles += 1;
      });
    }
  }
  await queue.onIdle();
  return { ms: performance.now() - t0, reconciles };
}

async function queueBench(): Promise<void> {
  const rows: string[][] = [];
  for (const addsPerKey of [1, 3]) {
    for (const workers of [1, 8]) {
      for (const [impl, run] of [
        ['WorkQueue (dedup)', workQueueRun],
        ['p-queue (no dedup)', pQueueRun],
      ] as const) {
        await run(workers, Math.min(QUEUE_KEYS, 5_000), 1); // warm-up
        const { ms, reconciles } = await run(workers, QUEUE_KEYS, addsPerKey);
        const adds = QUEUE_KEYS * addsPerKey;
        rows.push([
          impl,
          String(workers),
          String(adds),
          String(reconciles),
          `${Math.round(ms)} ms`,
          String(Math.round((adds / ms) * 1000)),
          String(Math.round((reconciles / ms) * 1000)),
        ]);
      }
    }
  }
  table(
    `Work queue: ${QUEUE_KEYS} distinct keys, trivial async reconcile (each key added 1x, then 3x before the workers drain)`,
    ['queue', 'workers', 'adds', 'reconciles', 'time', 'adds/s', 'reconciles/s'],
    rows,
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'odlcoe-bench-informer-'));
  let sim: Sim | undefined;
  try {
    sim = await startSim(dir);
    console.log(`node ${process.version}, kubesim at ${sim.url} (child process ${sim.process.pid})`);
    await informerBench(sim);
  } finally {
    if (sim && sim.process.exitCode === null) {
      const exited = new Promise((resolve) => sim!.process.once('exit', resolve));
      sim.process.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
  await queueBench();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
