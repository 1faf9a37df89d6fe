/**
 * CNI ADD/DEL latency through the odlcoe shim (exec'd as a runtime does, agent on a private
 * userspace OVS) next to Debian's Go reference plugins (`bridge` + `host-local`) measured in
 * the same run on the same machine. Prints p50/p99 per verb, sequential and concurrent, the
 * shim's own cost (against a stub agent that answers at once, next to `node -e 0`), and the
 * agent's per-step breakdown read from its `odlcoe_agent_cni_step_duration_seconds`.
 *
 * odlcoe is measured twice per round on the same netdev bridge: as it runs there, turning TX
 * checksum offload off on every pod interface (one `nsenter ethtool` per ADD, step
 * `checksum_offload`), and with `other_config:userspace-tso-enable=true` set, where the agent
 * leaves offload alone: the difference is what that costs an ADD.
 *
 *   sudo node --import tsx bench/cni/main.ts [--pods 30] [--concurrency 30] [--rounds 1]
 *
 * With --rounds N the odlcoe and Go measurements alternate N times (the machine is shared:
 * compare numbers of the same round). Plugins are exec'd by a separate driver process
 * (driver.ts), as a runtime would: never by the process the agent runs in. Needs root,
 * openvswitch-switch and containernetworking-plugins (like the integration tests, whose
 * simulated node it reuses).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { run } from '../../src/common/exec.js';
import { createNetns, type TestNetns } from '../../test/helpers/netns.js';
import { cniEnv, ROOT, startTestNode, type TestNode } from '../../test/agent/testing.js';
import { compileNodeOnlyModule } from '../../test/helpers/compile.js';
import { percentile } from '../common/stats.js';
import type { DriverInput, DriverJob, DriverOutput } from './driver.js';
import { diff, label, quantile, scrapeHistogram, type Histograms } from './metrics-scrape.js';

const { values } = parseArgs({
  options: {
    pods: { type: 'string', default: '30' },
    concurrency: { type: 'string', default: '30' },
    rounds: { type: 'string', default: '1' },
  },
});
const PODS = positive('pods', values.pods);
const CONCURRENCY = positive('concurrency', values.concurrency);
const ROUNDS = positive('rounds', values.rounds);

function positive(name: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
  return n;
}

/** A program the driver execs. */
interface Program {
  name: string;
  cmd: string;
  args: string[];
}

/** A CNI plugin: how to exec it, and its CNI environment and stdin for one pod. */
interface Plugin extends Program {
  job(verb: 'ADD' | 'DEL', i: number, ns: TestNetns): DriverJob;
}

/** Execs `jobs` through the driver process, `width` at a time; the latency of each. */
async function drive(driver: string, plugin: Program, width: number, jobs: DriverJob[]): Promise<number[]> {
  const input: DriverInput = { cmd: plugin.cmd, args: plugin.args, width, jobs };
  const { stdout } = await run(process.execPath, [driver], {
    input: JSON.stringify(input),
    timeoutMs: 600_000,
  }).catch((err: unknown) => {
    const out = (err as { stdout?: string }).stdout ?? '';
    throw new Error(`${plugin.name}: ${out || String(err)}`);
  });
  const out = JSON.parse(stdout) as DriverOutput;
  if ('error' in out) throw new Error(`${plugin.name}: ${out.error}`);
  return out.latencies;
}

function row(plugin: string, mode: string, verb: string, ms: number[]): string {
  return `${plugin.padEnd(24)} ${mode.padEnd(14)} ${verb.padEnd(4)} n=${String(ms.length).padEnd(4)} p50 ${percentile(ms, 50).toFixed(1).padStart(7)} ms   p99 ${percentile(ms, 99).toFixed(1).padStart(7)} ms`;
}

/** The agent-side breakdown of one phase: the whole request, then each step, mean and p50. */
function breakdown(phase: string, verb: string, requests: Histograms, steps: Histograms): string[] {
  const ms = (s: number) => (s * 1000).toFixed(1).padStart(7);
  const lines = [`  agent, ${phase} ${verb}:             mean      p50 (ms)`];
  for (const [key, s] of requests) {
    if (label(key, 'command') !== verb) continue;
    lines.push(
      `    request (${label(key, 'result')}) n=${String(s.count).padEnd(4)}`.padEnd(32) +
        `${ms(s.sum / s.count)}  ${ms(quantile(s, 0.5))}`,
    );
  }
  for (const [key, s] of [...steps].sort(([, a], [, b]) => b.sum / b.count - a.sum / a.count)) {
    if (label(key, 'command') !== verb) continue;
    lines.push(
      `    ${label(key, 'step') ?? key}`.padEnd(32) + `${ms(s.sum / s.count)}  ${ms(quantile(s, 0.5))}`,
    );
  }
  return lines;
}

async function measure(
  driver: string,
  plugin: Plugin,
  namespaces: TestNetns[],
  metricsPort?: number,
): Promise<string[]> {
  const lines: string[] = [];
  const details: string[] = [];
  const phase = async (mode: string, width: number, verb: 'ADD' | 'DEL') => {
    const before = metricsPort ? await scrapeBoth(metricsPort) : undefined;
    const jobs = namespaces.map((ns, i) => plugin.job(verb, i, ns));
    lines.push(row(plugin.name, mode, verb, await drive(driver, plugin, width, jobs)));
    if (metricsPort && before) {
      const after = await scrapeBoth(metricsPort);
      details.push(
        ...breakdown(mode, verb, diff(after.requests, before.requests), diff(after.steps, before.steps)),
      );
    }
  };
  await phase('sequential', 1, 'ADD');
  await phase('sequential', 1, 'DEL');
  await phase(`${CONCURRENCY} concurrent`, CONCURRENCY, 'ADD');
  await phase(`${CONCURRENCY} concurrent`, CONCURRENCY, 'DEL');
  return [...lines, ...details];
}

async function scrapeBoth(port: number): Promise<{ requests: Histograms; steps: Histograms }> {
  return {
    requests: await scrapeHistogram(port, 'odlcoe_agent_cni_request_duration_seconds'),
    steps: await scrapeHistogram(port, 'odlcoe_agent_cni_step_duration_seconds'),
  };
}

/**
 * The shim's cost without the agent's work: the shim exec'd against a stub that answers a
 * DEL with `{}` at once, next to Node running an empty module (the floor of any Node
 * program), sequential and with all of them at once.
 */
async function shimFloor(driver: string, node: TestNode, dir: string): Promise<string[]> {
  const socket = join(dir, 'stub.sock');
  const empty = join(dir, 'empty.mjs');
  await writeFile(empty, '');
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 3 });
      res.end('{}\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  try {
    const conf = await node.pluginConfig('1.0.0', { socket });
    const stubJobs = Array.from({ length: PODS }, (_, i) => ({
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...cniEnv('DEL', `stub-${i}`, '/run/netns/none') },
      stdin: conf,
    }));
    const emptyJobs = stubJobs.map(() => ({ env: {}, stdin: '' }));
    const nodeOnly: Program = { name: 'node (empty module)', cmd: process.execPath, args: [empty] };
    const shim: Program = { name: 'shim + stub agent', cmd: process.execPath, args: [node.shim] };
    return [
      row(nodeOnly.name, 'sequential', '-', await drive(driver, nodeOnly, 1, emptyJobs)),
      row(shim.name, 'sequential', 'DEL', await drive(driver, shim, 1, stubJobs)),
      row(
        nodeOnly.name,
        `${CONCURRENCY} concurrent`,
        '-',
        await drive(driver, nodeOnly, CONCURRENCY, emptyJobs),
      ),
      row(shim.name, `${CONCURRENCY} concurrent`, 'DEL', await drive(driver, shim, CONCURRENCY, stubJobs)),
    ];
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('the benchmark needs root (network namespaces, veth, OVS)');
  const node = await startTestNode();
  const dir = await mkdtemp(join(tmpdir(), 'odlcoe-bench-'));
  const namespaces: TestNetns[] = [];
  const bridgeName = `cnib${process.pid % 10000}`;
  try {
    let agent = await node.startAgent();
    /** Restarts the agent with offload turned off during ADD (the netdev default) or left on. */
    const offloadFix = async (on: boolean) => {
      await node.ovs.vsctl(
        on
          ? ['remove', 'Open_vSwitch', '.', 'other_config', 'userspace-tso-enable']
          : ['set', 'Open_vSwitch', '.', 'other_config:userspace-tso-enable=true'],
      );
      await node.stopAgent();
      agent = await node.startAgent();
    };
    const driver = await compileNodeOnlyModule(join(ROOT, 'bench/cni/driver.ts'), join(dir, 'driver'));
    for (let i = 0; i < PODS; i++) namespaces.push(await createNetns('odlcoe-bench'));
    const path = process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin';
    const odlcoeConf = await node.pluginConfig('1.0.0');
    const odlcoe: Plugin = {
      name: 'odlcoe, offload off',
      cmd: process.execPath,
      args: [node.shim],
      job: (verb, i, ns) => ({
        env: { PATH: path, ...cniEnv(verb, `bench-${i}`, ns.path, { name: `bench-${i}` }) },
        stdin: odlcoeConf,
      }),
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
    const reference: Plugin = {
      name: 'Go bridge + host-local',
      cmd: '/usr/lib/cni/bridge',
      args: [],
      job: (verb, i, ns) => ({
        env: {
          PATH: path,
          CNI_COMMAND: verb,
          CNI_CONTAINERID: `gobench-${i}`,
          CNI_NETNS: ns.path,
          CNI_IFNAME: 'eth1',
          CNI_PATH: '/usr/lib/cni',
          CNI_ARGS: '',
        },
        stdin: bridgeConf,
      }),
    };

    process.stdout.write(`CNI latency, ${PODS} pods, ${new Date().toISOString()}\n`);
    for (let round = 1; round <= ROUNDS; round++) {
      if (ROUNDS > 1) process.stdout.write(`round ${round}/${ROUNDS}\n`);
      const lines = [
        ...(await shimFloor(driver, node, dir)),
        ...(await measure(driver, reference, namespaces)),
        ...(await measure(driver, odlcoe, namespaces, agent.metricsPort)),
      ];
      await offloadFix(false);
      lines.push(
        ...(await measure(
          driver,
          { ...odlcoe, name: 'odlcoe, offload left on' },
          namespaces,
          agent.metricsPort,
        )),
      );
      await offloadFix(true);
      process.stdout.write(`${lines.join('\n')}\n`);
    }
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
