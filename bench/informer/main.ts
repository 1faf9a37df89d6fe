/**
 * Informer and work-queue benchmark. Run: `node --import tsx bench/informer/main.ts`
 * (`--pods N`, `--runs N`, `--keys N` to change the sizes).
 *
 * The Kubernetes simulator runs in a child process so that the figures for the informer
 * (sync time, memory, event throughput) are this process's alone. Numbers depend on the
 * machine and on the simulator's own speed; they are for comparing changes, not promises.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
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
import { waitFor } from '../../test/helpers/wait.js';
import { startListening, stopChild, type ListeningChild } from '../common/child.js';
import { formatMiB } from '../common/memory.js';
import { percentile } from '../common/stats.js';
import { formatTable } from '../common/table.js';

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

interface Sim extends ListeningChild {
  kubeConfig: KubeConfig;
}

/** Starts `odlcoe-kubesim` on an ephemeral port, with history for every event the bench causes. */
async function startSim(dir: string): Promise<Sim> {
  const kubeconfigPath = join(dir, 'kubeconfig');
  const started = await startListening(
    [
      'src/kubesim/main.ts',
      '--port',
      '0',
      '--history-limit',
      String(4 * PODS + UPDATES + 1000),
      '--kubeconfig-out',
      kubeconfigPath,
    ],
    'kubesim listening',
  );
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  return { ...started, kubeConfig };
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

function table(title: string, header: string[], rows: string[][]): void {
  console.log(`\n${title}\n${formatTable(header, rows)}`);
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

/** Polls every 2 ms, so that a burst's time is not rounded up to a coarse poll. */
const waitUntil = (condition: () => boolean, what: string) =>
  waitFor(condition, { what, intervalMs: 2, timeoutMs: 600_000 });

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
  /** Times `action` until the informer has handled `events` more events of what `count` counts. */
  const burst = async (
    label: string,
    events: number,
    count: () => number,
    action: () => Promise<unknown>,
  ) => {
    const before = count();
    const t0 = performance.now();
    await action();
    await waitUntil(() => count() - before >= events, `the burst "${label}"`);
    const ms = performance.now() - t0;
    bursts.push([label, String(events), `${Math.round(ms)} ms`, `${Math.round((events / ms) * 1000)}`]);
  };

  // ADDED burst: one bulk seed request creates PODS pods; the watch streams them back-to-back.
  const burstNs = 'bench-burst';
  await burst(
    'ADDED (one bulk create)',
    PODS,
    () => counts.add,
    () =>
      seed(api, [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: burstNs } },
        ...Array.from({ length: PODS }, (_, i) => podObject(burstNs, i)),
      ]),
  );

  // MODIFIED burst: UPDATES merge patches, 32 in flight, from this process.
  await burst(
    `MODIFIED (${UPDATES} PATCH, 32 in flight)`,
    UPDATES,
    () => counts.update,
    () => {
      const patches = new PQueue({ concurrency: 32 });
      for (let i = 0; i < UPDATES; i++) {
        const p = podObject(namespaces[i % NAMESPACES]!, i);
        void patches.add(() =>
          api.request('PATCH', `/api/v1/namespaces/${p.metadata!.namespace}/pods/${p.metadata!.name}`, {
            body: { metadata: { labels: { ...p.metadata!.labels, revision: '2' } } },
            contentType: 'application/merge-patch+json',
          }),
        );
      }
      return patches.onIdle();
    },
  );

  // DELETED burst: one delete-collection request removes the burst namespace's pods. Grace 0,
  // as the pods are bound to nodes: a graceful delete would only mark them Terminating (the
  // server sends each pod's mark as MODIFIED, then its DELETED).
  await burst(
    'DELETED (one delete-collection)',
    PODS,
    () => counts.delete,
    () =>
      api.request('DELETE', `/api/v1/namespaces/${burstNs}/pods`, {
        query: { gracePeriodSeconds: 0 },
        timeoutMs: 300_000,
      }),
  );
  await live.stop();

  table(
    `Informer: initial sync of ${PODS} pods (pages of ${Informer.DEFAULT_PAGE_SIZE}), ${SYNC_RUNS} runs`,
    ['measure', 'value'],
    [
      ['sync p50', `${Math.round(percentile(syncMs, 50))} ms`],
      ['sync min / max', `${Math.round(Math.min(...syncMs))} / ${Math.round(Math.max(...syncMs))} ms`],
      ['heap retained by the synced cache', formatMiB(synced.heapUsed - heapBefore)],
      ['heap used after sync (process)', formatMiB(synced.heapUsed)],
      ['RSS after sync (process)', formatMiB(synced.rss)],
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
    console.log(`node ${process.version}, kubesim at ${sim.url} (child process ${sim.child.pid})`);
    await informerBench(sim);
  } finally {
    if (sim) await stopChild(sim.child);
    rmSync(dir, { recursive: true, force: true });
  }
  await queueBench();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
