#!/usr/bin/env node
/**
 * `npm start`: the odlcoe sandbox (see docs/getting-started.md). Starts the Kubernetes API
 * simulator, the ODL emulator and the watcher on 127.0.0.1, loads a sample cluster, and, as
 * root with Open vSwitch, two simulated nodes with real agents whose pods are wired through
 * the real CNI shim. Shows convergence live, then what ODL holds and where to look next, and
 * runs until Ctrl-C. `--once` exits after the summary: 0 when converged (and the data path
 * works), 1 when not within `--timeout`, 2 for bad flags.
 */
import { resolve } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { errorMessage } from '../common/log.js';
import { PROFILES, type Profile } from '../netvirt/profile.js';
import { DIALECTS, type Dialect } from '../restconf/path.js';
import { compactProgress, describeGaps, renderProgress, type Progress } from './convergence.js';
import { parsePort, type PortChoice } from './ports.js';
import { startSandbox, type Sandbox } from './sandbox.js';
import {
  gatewayProblems,
  renderDataPath,
  renderGateways,
  renderNextSteps,
  renderOdlSummary,
  type NodeDataPath,
} from './summary.js';
import { LiveBlock, type Output } from './terminal.js';

interface Flags {
  once?: boolean;
  timeout: string;
  output: 'human' | 'json';
  workDir?: string;
  nodes: boolean;
  kubePort?: string;
  odlPort?: string;
  metricsPort?: string;
  agentMetricsPort?: string;
  gracePeriod: string;
  profile: Profile;
  dialect: Dialect;
}

const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;

/** A flag value commander accepted but the sandbox cannot use. */
class UsageError extends Error {}

function seconds(value: string, flag: string, min: number, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw new UsageError(`${flag} must be a whole number of seconds in ${min}..${max}`);
  return Number(value);
}

function portChoice(value: string | undefined, flag: string): PortChoice | undefined {
  if (value === undefined) return undefined;
  try {
    return { port: parsePort(value, flag), explicit: true };
  } catch (err) {
    throw new UsageError(errorMessage(err));
  }
}

function program(): Command {
  return new Command('odlcoe-sandbox')
    .description(
      'odlcoe end to end on this machine: Kubernetes API simulator, ODL emulator, watcher, sample cluster, and (as root with Open vSwitch) two nodes with real agents',
    )
    .option(
      '--once',
      'exit after convergence and the summary (0 when converged, 1 when not within --timeout)',
    )
    .option('--timeout <seconds>', 'convergence deadline', '120')
    .addOption(
      new Option(
        '-o, --output <format>',
        'with --once: json prints exactly `odlcoectl dump -o json` on stdout (the rest goes to stderr)',
      )
        .choices(['human', 'json'])
        .default('human'),
    )
    .option(
      '--work-dir <dir>',
      'use and keep this directory (must be empty or absent); default: a fresh temp dir, removed on exit',
    )
    .option('--no-nodes', 'do not start simulated nodes, even as root')
    .option('--kube-port <port>', 'Kubernetes API simulator port (default 16443, or a free one when taken)')
    .option('--odl-port <port>', 'ODL emulator port (default 18181, or a free one when taken)')
    .option('--metrics-port <port>', "watcher's /metrics port (default 19090, or a free one when taken)")
    .option(
      '--agent-metrics-port <port>',
      "first simulated node's agent /metrics port, the next nodes' follow (default 19102, or free ones when taken)",
    )
    .option('--grace-period <seconds>', 'how long an unneeded VPN/ELAN instance stays in ODL', '10')
    .addOption(
      new Option('--profile <profile>', 'NetVirt model release the emulator and watcher speak')
        .choices([...PROFILES])
        .default('sodium'),
    )
    .addOption(
      new Option('--dialect <dialect>', 'RESTCONF dialect of the watcher, agents and odlcoectl')
        .choices([...DIALECTS])
        .default('bierman02'),
    )
    .showHelpAfterError();
}

async function main(): Promise<number> {
  const cmd = program();
  cmd.exitOverride();
  let flags: Flags;
  let timeoutS: number;
  let graceS: number;
  let ports: { kube?: PortChoice; odl?: PortChoice; watcherMetrics?: PortChoice; agentMetrics?: PortChoice };
  try {
    cmd.parse(process.argv);
    flags = cmd.opts<Flags>();
    timeoutS = seconds(flags.timeout, '--timeout', 1, 3600);
    graceS = seconds(flags.gracePeriod, '--grace-period', 0, 3600);
    if (flags.output === 'json' && !flags.once) throw new UsageError('-o json needs --once');
    const kube = portChoice(flags.kubePort, '--kube-port');
    const odl = portChoice(flags.odlPort, '--odl-port');
    const watcherMetrics = portChoice(flags.metricsPort, '--metrics-port');
    const agentMetrics = portChoice(flags.agentMetricsPort, '--agent-metrics-port');
    ports = {
      ...(kube ? { kube } : {}),
      ...(odl ? { odl } : {}),
      ...(watcherMetrics ? { watcherMetrics } : {}),
      ...(agentMetrics ? { agentMetrics } : {}),
    };
  } catch (err) {
    // commander has printed its own message (or the help).
    if (err instanceof CommanderError)
      return err.code === 'commander.helpDisplayed' || err.code === 'commander.version'
        ? EXIT.ok
        : EXIT.usage;
    process.stderr.write(`odlcoe-sandbox: ${errorMessage(err)}\n`);
    return EXIT.usage;
  }

  // Human text goes to stdout, unless stdout carries the JSON.
  const human: Output = flags.output === 'json' ? process.stderr : process.stdout;
  const say = (line = '') => human.write(`${line}\n`);

  const stop = new AbortController();
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals === 1) {
      say(`\n${signal}: stopping (processes, network namespaces, temp files) ...`);
      stop.abort();
    } else {
      say(`${signal}: still cleaning up; it finishes on its own (every step has a deadline).`);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  say('odlcoe sandbox: Kubernetes API simulator, ODL emulator and watcher on 127.0.0.1');
  let sandbox: Sandbox;
  try {
    sandbox = await startSandbox({
      ...(flags.workDir !== undefined ? { workDir: resolve(flags.workDir) } : {}),
      ports,
      simulatedNodes: flags.nodes ? 'auto' : 0,
      gracePeriodMs: graceS * 1000,
      profile: flags.profile,
      dialect: flags.dialect,
      onStep: (message) => say(`  - ${message}`),
    });
  } catch (err) {
    process.stderr.write(`odlcoe-sandbox: cannot start: ${errorMessage(err)}\n`);
    return EXIT.failed;
  }

  let code: number = EXIT.ok;
  try {
    code = await run(sandbox, flags, timeoutS, stop.signal, say, human);
  } catch (err) {
    process.stderr.write(`odlcoe-sandbox: ${errorMessage(err)}\n  log: ${sandbox.logFile}\n`);
    code = EXIT.failed;
  }
  say('Stopping ...');
  try {
    await sandbox.close();
    say(
      flags.workDir !== undefined
        ? `Stopped. Work dir kept: ${sandbox.workDir}`
        : 'Stopped; everything removed.',
    );
  } catch (err) {
    process.stderr.write(`odlcoe-sandbox: ${errorMessage(err)}\n`);
    code = EXIT.failed;
  }
  return code;
}

async function run(
  sandbox: Sandbox,
  flags: Flags,
  timeoutS: number,
  signal: AbortSignal,
  say: (line?: string) => void,
  human: Output,
): Promise<number> {
  const e = sandbox.endpoints;
  say();
  say(`  work dir  ${e.workDir}${flags.workDir !== undefined ? '' : ' (removed on exit)'}`);
  say(`  log       ${e.logFile}`);
  say(`  kube API  ${e.kubeUrl}   kubeconfig ${e.kubeconfig}`);
  say(`  ODL       ${e.odlUrl}   emulator (${flags.profile}), user ${e.odlUser}, password ${e.odlPassword}`);
  say(`  watcher   ${e.watcherUrl}/metrics`);
  for (const n of sandbox.nodes)
    say(
      `  ${n.name.padEnd(8)}  odlcoe-agent (pid ${n.agentPid}) in network namespace ${n.netns.name}, its own userspace OVS; ${n.agentUrl}/metrics`,
    );
  const others = sandbox.cluster.nodes
    .filter((n) => !sandbox.nodes.some((s) => s.name === n.name))
    .map((n) => n.name);
  if (others.length > 0)
    say(
      `  ${others.join(', ')}: no agent; the sandbox gives their pods IPs from the node's pod CIDR, as a kubelet would`,
    );
  if (sandbox.dataPathSkipped) say(`  data path not shown: ${sandbox.dataPathSkipped}`);
  say();
  say('Converging (objects owned by this cluster in ODL / desired):');

  const block = new LiveBlock(human);
  const result = await sandbox.waitForConvergence({
    timeoutMs: timeoutS * 1000,
    signal,
    onProgress: (p: Progress | undefined, error?: string) => {
      const lines = p ? renderProgress(p) : [];
      const note = error ? `  (cannot measure right now: ${error})` : '';
      block.update(note ? [...lines, note] : lines, `  ${p ? compactProgress(p) : ''}${note}`);
    },
  });
  block.finish();
  // Interrupted: a script running --once must not mistake that for success.
  if (signal.aborted) return flags.once ? EXIT.interrupted : EXIT.ok;
  if (!result.converged) {
    const gaps = result.progress ? describeGaps(result.progress) : [];
    const failures = [...sandbox.kubelets.values()].flatMap((k) =>
      k.failuresNow().map((f) => `${f.pod} on ${k.nodeName}: ${f.error}`),
    );
    process.stderr.write(
      [
        `odlcoe-sandbox: not converged within ${timeoutS} s.`,
        ...gaps.map((g) => `  ${g}`),
        ...failures.slice(0, 5).map((f) => `  sandbox not up: ${f}`),
        ...(result.lastError ? [`  last error: ${result.lastError}`] : []),
        `  logs: ${sandbox.logFile}${sandbox.nodes.map((n) => `, ${n.agentLog}`).join('')}`,
        '',
      ].join('\n'),
    );
    if (flags.once) return EXIT.failed;
    say('Still running: the state above is live; look around with the commands below.');
  } else {
    say(`Converged in ${(result.elapsedMs / 1000).toFixed(1)} s.`);
  }
  say();

  const dump = await sandbox.dump();
  for (const line of renderOdlSummary(dump)) say(line);
  const gatewaysFailed = sandbox.cluster.services
    ? gatewayProblems(
        dump,
        sandbox.cluster.nodes.map((n) => n.name),
        sandbox.shownService,
      )
    : [];
  if (sandbox.cluster.services) for (const line of renderGateways(dump, sandbox.shownService)) say(line);
  say();
  let dataPath: NodeDataPath[] = [];
  if (sandbox.nodes.length > 0) dataPath = await sandbox.dataPath();
  for (const line of renderDataPath(dataPath, sandbox.dataPathSkipped)) say(line);
  say();
  const pingsFailed = dataPath.flatMap((n) => n.pings).filter((p) => !p.ok);
  const trafficFailed = dataPath.flatMap((n) => n.traffic).filter((t) => !t.tcp.ok || !t.udp.ok);
  const hostFailed = dataPath.flatMap((n) => [
    ...(n.host?.pings ?? [])
      .filter((p) => !p.ok)
      .map((p) => `${n.node}: host ping to ${p.to.pod} ${p.to.ip}`),
    ...(n.host && !n.host.http?.tcp.ok
      ? [`${n.node}: host HTTP GET to ${n.host.http?.to.pod ?? 'a pod'}`]
      : []),
  ]);

  if (flags.once) {
    if (flags.output === 'json') process.stdout.write(`${JSON.stringify(dump, null, 2)}\n`);
    if (pingsFailed.length > 0) {
      process.stderr.write(
        `odlcoe-sandbox: ${pingsFailed.length} ping(s) between pods of one node failed (see above and ${sandbox.logFile}).\n`,
      );
      return EXIT.failed;
    }
    if (trafficFailed.length > 0) {
      process.stderr.write(
        `odlcoe-sandbox: TCP or UDP failed between ${trafficFailed.length} pair(s) of pods of one node (see above and ${sandbox.logFile}).\n`,
      );
      return EXIT.failed;
    }
    if (gatewaysFailed.length > 0 || hostFailed.length > 0) {
      process.stderr.write(
        [
          'odlcoe-sandbox: the node gateways are not complete:',
          ...[...gatewaysFailed, ...hostFailed].map((p) => `  ${p}`),
          `  (see above and ${sandbox.logFile})`,
          '',
        ].join('\n'),
      );
      return EXIT.failed;
    }
    return result.converged ? EXIT.ok : EXIT.failed;
  }
  for (const line of renderNextSteps(e)) say(line);
  say();
  say('Running. Press Ctrl-C to stop and clean up.');
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  return EXIT.ok;
}

main().then(
  (code) => {
    process.exitCode = code;
    // Whatever handle a library left open must not keep a finished sandbox alive.
    setTimeout(() => process.exit(code), 1_000).unref();
  },
  (err: unknown) => {
    process.stderr.write(`odlcoe-sandbox: ${errorMessage(err)}\n`);
    process.exit(EXIT.failed);
  },
);
