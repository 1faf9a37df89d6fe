/**
 * Extra-network allocation benchmark: N pods, each attached to a routed (`vpn`) and an L2
 * network (two /16 subnets), seeded at once into an in-process Kubernetes API simulator with an
 * empty ODL emulator; the watcher allocates and records every attachment and makes the ODL
 * objects. For each N it prints:
 *
 * - allocation alone: the watcher's allocation step (netvirt/attachment-allocation.ts over the
 *   holdings index, netvirt/attachment-holdings.ts) for N pods one after the other, no I/O:
 *   pods/s and the per-pod latency p50/p95/max;
 * - watcher: from start until every pod's record is written (pods/s), and until idle (every
 *   ODL object written), with the writes.
 *
 *   node --import tsx bench/watcher/networks.ts [--pods 500,5000] [--profile sodium]
 *     [--timeout 900] [--skip-watcher]
 *
 * Everything shares the machine: figures are relative, not absolute (print `uptime` with them).
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { allocateAttachments } from '../../src/netvirt/attachment-allocation.js';
import { AttachmentHoldings } from '../../src/netvirt/attachment-holdings.js';
import { readNetworkDefinition, type NetworkDefinition } from '../../src/netvirt/network-config.js';
import { NETWORKS_ANNOTATION } from '../../src/netvirt/network-selection.js';
import type { Profile } from '../../src/netvirt/profile.js';
import { seconds, startWatcherRun } from '../common/watcher-run.js';
import { percentile } from '../common/stats.js';

const { values } = parseArgs({
  options: {
    pods: { type: 'string', default: '500,5000' },
    profile: { type: 'string', default: 'sodium' },
    timeout: { type: 'string', default: '900' },
    'skip-watcher': { type: 'boolean', default: false },
  },
});
const o = {
  pods: String(values.pods)
    .split(',')
    .map((x) => Number(x.trim())),
  profile: String(values.profile) as Profile,
  timeoutMs: Number(values.timeout) * 1000,
  skipWatcher: values['skip-watcher'] === true,
};
for (const n of o.pods)
  if (!Number.isInteger(n) || n < 1 || n > 60_000) throw new Error(`--pods: ${n} is not a count of 1..60000`);

const NODES = 10;
const NS = 'tenant';
const CONFIGS = {
  blue: { cniVersion: '1.0.0', type: 'odlcoe', routing: 'vpn', subnets: [{ cidr: '10.80.0.0/16' }] },
  green: { cniVersion: '1.0.0', type: 'odlcoe', subnets: [{ cidr: '10.81.0.0/16' }] },
};
const SELECTION = 'blue,green';

const nads = () =>
  Object.entries(CONFIGS).map(([name, config]) => ({
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name, namespace: NS },
    spec: { config: JSON.stringify(config) },
  }));

function cluster(pods: number): unknown[] {
  const items: unknown[] = [];
  for (let n = 0; n < NODES; n++)
    items.push({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: `node-${n}` },
      spec: { podCIDR: `10.${100 + n}.0.0/16` },
      status: { addresses: [{ type: 'InternalIP', address: `192.168.0.${n + 1}` }] },
    });
  items.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }, ...nads());
  for (let i = 0; i < pods; i++) {
    const n = i % NODES;
    const ip = `10.${100 + n}.${Math.floor(i / NODES / 250)}.${(Math.floor(i / NODES) % 250) + 2}`;
    items.push({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `pod-${i}`, namespace: NS, annotations: { [NETWORKS_ANNOTATION]: SELECTION } },
      spec: { nodeName: `node-${n}`, containers: [{ name: 'c', image: 'pause' }] },
      status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] },
    });
  }
  return items;
}

const micros = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;

/** The allocation step alone, N pods one after the other, as the allocator runs it. */
function allocationAlone(pods: number): void {
  const defs = new Map<string, NetworkDefinition>(
    Object.entries(CONFIGS).map(([name, config]) => [
      name,
      readNetworkDefinition({
        metadata: { namespace: NS, name, uid: `uid-${name}` },
        spec: { config: JSON.stringify(config) },
      }),
    ]),
  );
  const holdings = new AttachmentHoldings();
  const latencies: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < pods; i++) {
    const name = `pod-${i}`;
    const start = performance.now();
    const records = allocateAttachments({ namespace: NS, name }, SELECTION, new Map(), {
      network: (ns, n) => (ns === NS ? defs.get(n) : undefined),
      usage: (network) => holdings.holdings(network, `${NS}/${name}`),
    });
    holdings.set(`${NS}/${name}`, records);
    latencies.push(performance.now() - start);
  }
  const total = performance.now() - t0;
  if (holdings.size !== pods) throw new Error(`allocated ${holdings.size} pods of ${pods}`);
  latencies.sort((a, b) => a - b);
  console.log(
    `  allocation alone: ${(pods / (total / 1000)).toFixed(0)} pods/s (${seconds(total)}); per pod p50 ${micros(percentile(latencies, 50))}, p95 ${micros(percentile(latencies, 95))}, max ${micros(latencies[latencies.length - 1] ?? 0)}`,
  );
}

/** The watcher from an empty ODL: records on every pod, then idle. */
async function watcherRun(pods: number): Promise<void> {
  const run = await startWatcherRun({ profile: o.profile, items: cluster(pods), timeoutMs: o.timeoutMs });
  const { sim, emu, watcher, started } = run;
  const patches = () =>
    Object.entries(sim.stats().requests)
      .filter(([k]) => /^patch pods\b/.test(k))
      .reduce((n, [, v]) => n + v, 0);
  try {
    await watcher.ready();
    while (patches() < pods) await new Promise((r) => setTimeout(r, 50));
    const recorded = performance.now() - started;
    await watcher.idle();
    const idle = performance.now() - started;
    const w = emu.counters().writes;
    console.log(
      `  watcher: records on all ${pods} pods in ${seconds(recorded)} (${(pods / (recorded / 1000)).toFixed(0)} pods/s), idle in ${seconds(idle)}; pod patches ${patches()}, ODL writes ${Object.values(w).reduce((a, b) => a + b, 0)}`,
    );
  } finally {
    await run.close();
  }
}

async function main(): Promise<void> {
  for (const pods of o.pods) {
    console.log(`${pods} pods, each on 2 networks (routed /16 and L2 /16), ${NODES} nodes, ${o.profile}:`);
    allocationAlone(pods);
    if (!o.skipWatcher) await watcherRun(pods);
  }
}

await main();
