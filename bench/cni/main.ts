/**
 * CNI ADD/DEL latency through the odlcoe shim (exec'd as a runtime does, agent on a private
 * userspace OVS) next to Debian's Go reference plugins (`bridge` + `host-local`) measured in
 * the same run on the same machine. Prints p50/p99 per verb, sequential and concurrent.
 *
 *   sudo node --import tsx bench/cni/main.ts [--pods 30] [--concurrency 30]
 *
 * Needs root, openvswitch-switch and containernetworking-plugins (like the integration tests,
 * whose simulated node it reuses).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { run } from '../../src/agent/exec.js';
import { createNetns, type TestNetns } from '../../test/helpers/netns.js';
import { cniEnv, execShim, startTestNode } from '../../test/agent/harness.js';

const { values } = parseArgs({
  options: { pods: { type: 'string', default: '30' }, concurrency: { type: 'string', default: '30' } },
});
const PODS = Number(values.pods);
const CONCURRENCY = Number(values.concurrency);

interface Plugin {
  name: string;
  add(i: number, ns: TestNetns): Promise<void>;
  del(i: number, ns: TestNetns): Promise<void>;
}

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? NaN;
}

async function timed(fn: () => Promise<void>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** Runs `count` jobs with at most `width` in flight; returns each job's latency. */
async function pool(count: number, width: number, job: (i: number) => Promise<void>): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, count) }, async () => {
      while (next < count) {
        const i = next++;
        latencies.push(await timed(() => job(i)));
      }
    }),
  );
  return latencies;
}

function row(plugin: string, mode: string, verb: string, ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b);
  return `${plugin.padEnd(24)} ${mode.padEnd(14)} ${verb.padEnd(4)} n=${String(sorted.length).padEnd(4)} p50 ${percentile(sorted, 50).toFixed(1).padStart(7)} ms   p99 ${percentile(sorted, 99).toFixed(1).padStart(7)} ms`;
}

async function measure(plugin: Plugin, namespaces: TestNetns[]): Promise<string[]> {
  const lines: string[] = [];
  const seqAdd = await pool(PODS, 1, (i) => plugin.add(i, namespaces[i] as TestNetns));
  const seqDel = await pool(PODS, 1, (i) => plugin.del(i, namespaces[i] as TestNetns));
  lines.push(row(plugin.name, 'sequential', 'ADD', seqAdd), row(plugin.name, 'sequential', 'DEL', seqDel));
  const parAdd = await pool(PODS, CONCURRENCY, (i) => plugin.add(i, namespaces[i] as TestNetns));
  const parDel = await pool(PODS, CONCURRENCY, (i) => plugin.del(i, namespaces[i] as TestNetns));
  lines.push(
    row(plugin.name, `${CONCURRENCY} concurrent`, 'ADD', parAdd),
    row(plugin.name, `${CONCURRENCY} concurrent`, 'DEL', parDel),
  );
  return lines;
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('the benchmark needs root (network namespaces, veth, OVS)');
  const node = await startTestNode();
  const dir = await mkdtemp(join(tmpdir(), 'odlcoe-bench-'));
  const namespaces: TestNetns[] = [];
  const bridgeName = `cnib${process.pid % 10000}`;
  try {
    await node.startAgent();
    for (let i = 0; i < PODS; i++) namespaces.push(await createNetns('odlcoe-bench'));
    const odlcoeConf = await node.pluginConfig('1.0.0');
    const odlcoe: Plugin = {
      name: 'odlcoe (shim+agent)',
      add: async (i, ns) => {
        const out = await execShim(
          node.shim,
          cniEnv('ADD', `bench-${i}`, ns.path, { name: `bench-${i}` }),
          odlcoeConf,
        );
        if (out.code !== 0) throw new Error(`odlcoe ADD ${i}: ${out.stdout}`);
      },
      del: async (i, ns) => {
        const out = await execShim(
          node.shim,
          cniEnv('DEL', `bench-${i}`, ns.path, { name: `bench-${i}` }),
          odlcoeConf,
        );
        if (out.code !== 0) throw new Error(`odlcoe DEL ${i}: ${out.stdout}`);
      },
    };
    const bridgeConf = JSON.stringify({
      cniVersion: '1.0.0',
      name: 'odlcoe-bench-bridge',
      type: 'bridge',
      bridge: bridgeName,
      isGateway: true,
      mtu: 1450,
      ipam: {
        type: 'host-local',
        ranges: [[{ subnet: '10.99.0.0/24' }]],
        routes: [{ dst: '0.0.0.0/0' }],
        dataDir: join(dir, 'ipam'),
      },
    });
    const goBridge = (command: string) => async (i: number, ns: TestNetns) => {
      await run('/usr/lib/cni/bridge', [], {
        input: bridgeConf,
        env: {
          PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
          CNI_COMMAND: command,
          CNI_CONTAINERID: `gobench-${i}`,
          CNI_NETNS: ns.path,
          CNI_IFNAME: 'eth1',
          CNI_PATH: '/usr/lib/cni',
          CNI_ARGS: '',
        },
      });
    };
    const reference: Plugin = { name: 'Go bridge + host-local', add: goBridge('ADD'), del: goBridge('DEL') };

    const lines = [...(await measure(odlcoe, namespaces)), ...(await measure(reference, namespaces))];
    process.stdout.write(`CNI latency, ${PODS} pods, ${new Date().toISOString()}\n${lines.join('\n')}\n`);
  } finally {
    for (const ns of namespaces) await ns.remove().catch(() => undefined);
    await run('ip', ['link', 'del', 'dev', bridgeName]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    await node.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
