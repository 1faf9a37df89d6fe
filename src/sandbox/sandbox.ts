/**
 * The whole system on one machine: the Kubernetes API simulator, the ODL emulator and the
 * watcher, all on 127.0.0.1, a cluster loaded into the simulator, a kubelet stand-in per node,
 * and (as root, with Open vSwitch) simulated nodes running the real agent, whose pods get their
 * network through the real CNI shim. `npm start` (main.ts) and the end-to-end test both run it.
 *
 * Everything lives in one work directory (kubeconfig, ODL state and write log, agent configs,
 * OVS databases, logs); nothing is written elsewhere except the network namespaces, all named
 * `odlcoe-sbx-*`. `close()` takes it all down, by pid and by name, in reverse order.
 */
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import winston from 'winston';
import { connectKube, connectOdl } from '../cli/connect.js';
import { buildDump, type DumpTree } from '../cli/dump.js';
import { resolveSettings, withModels, type CliSettings } from '../cli/settings.js';
import { readOdl } from '../cli/snapshot.js';
import { sleep } from '../common/backoff.js';
import { createLogger, errorMessage, type Logger } from '../common/log.js';
import { createRegistry } from '../common/metrics.js';
import { startEmulator, type Emulator } from '../emulator/server.js';
import type { KubeClient } from '../k8s/kube-client.js';
import { startKubeSim, type KubeSim } from '../kubesim/server.js';
import { gatewayAddress } from '../netvirt/gateway.js';
import { netvirtPaths } from '../netvirt/index.js';
import type { Profile } from '../netvirt/profile.js';
import { ownerContextOf } from '../netvirt/translate-settings.js';
import type { RestconfClient } from '../restconf/client.js';
import type { Dialect } from '../restconf/path.js';
import { loadWatcherConfig } from '../config/watcher-config.js';
import { startWatcher, type Watcher } from '../watcher/watcher.js';
import { measureProgress, type Progress } from './convergence.js';
import { bridgePorts, pingExtraWithinNode, pingFromHost, pingWithinNode } from './datapath.js';
import { exchangeTraffic, podOffloadSummary, trafficWithinNode, type TrafficResult } from './pod-traffic.js';
import { Kubelet } from './kubelet.js';
import { AddressPodRuntime, CniPodRuntime, type PodSandbox } from './pod-runtime.js';
import { PROJECT_ROOT } from './programs.js';
import { DEFAULT_PORTS, startOnPort, type PortChoice } from './ports.js';
import {
  clusterObjects,
  SAMPLE_CLUSTER,
  serviceRoutePrefixes,
  WATCHER_LEASE,
  WATCHER_NAMESPACE,
  type SampleCluster,
} from './sample-cluster.js';
import { startSimulatedNode, type SimulatedNode } from './simulated-node.js';
import type { NodeDataPath, SandboxEndpoints, ShownService } from './summary.js';
import { ovsUnavailableReason } from './userspace-ovs.js';

export const CLUSTER_NAME = 'sandbox';
export const ODL_USER = 'admin';
export const ODL_PASSWORD = 'admin';

export interface SandboxOptions {
  /** Use (and keep) this directory; default: a fresh one under the OS temp dir, removed by close(). */
  workDir?: string;
  /** Preferred ports (default: DEFAULT_PORTS with a fallback to free ports). */
  ports?: Partial<Record<keyof typeof DEFAULT_PORTS, PortChoice>>;
  cluster?: SampleCluster;
  /**
   * How many nodes (the cluster's first ones) run a real agent in a network namespace:
   * 'auto' (default) = two when root with Open vSwitch installed, else none. A number asks for
   * exactly that many, and start-up fails when it cannot.
   */
  simulatedNodes?: number | 'auto';
  /** Grace period of unneeded VPN/ELAN instances (default 10 s). */
  gracePeriodMs?: number;
  profile?: Profile;
  dialect?: Dialect;
  /** Log level of the sandbox's log file and the agents' logs (default ODLCOE_LOG_LEVEL, else info). */
  logLevel?: string;
  /** Told about each start-up step (for a terminal). */
  onStep?: (message: string) => void;
}

export interface ConvergenceResult {
  converged: boolean;
  progress: Progress | undefined;
  elapsedMs: number;
  /** Why progress could not be measured last time, if it could not. */
  lastError?: string;
}

export interface Sandbox {
  readonly workDir: string;
  readonly logFile: string;
  readonly kubeconfigPath: string;
  readonly sim: KubeSim;
  readonly odl: Emulator;
  readonly watcher: Watcher;
  readonly watcherUrl: string;
  readonly cluster: SampleCluster;
  /** Nodes with a real agent, in cluster order. */
  readonly nodes: readonly SimulatedNode[];
  /** Why no (or fewer) simulated nodes run, when the data path is not shown. */
  readonly dataPathSkipped: string | undefined;
  /** One per node of the cluster. */
  readonly kubelets: ReadonlyMap<string, Kubelet>;
  /** odlcoectl's settings for this sandbox (what `--config <cliConfig>` resolves to). */
  readonly cliSettings: CliSettings;
  readonly kube: KubeClient;
  readonly restconf: RestconfClient;
  readonly endpoints: SandboxEndpoints;
  readonly logger: Logger;
  progress(): Promise<Progress>;
  /** Polls progress until converged (and the watcher idle), the deadline, or the signal. */
  waitForConvergence(opts: {
    timeoutMs: number;
    signal?: AbortSignal;
    onProgress?: (p: Progress | undefined, error?: string) => void;
  }): Promise<ConvergenceResult>;
  /** What `odlcoectl dump -o json` reports now. */
  dump(): Promise<DumpTree>;
  /**
   * Ports and same-node pings of every simulated node; with Services on also its host side to
   * its pods through the gateway port.
   */
  dataPath(): Promise<NodeDataPath[]>;
  /** With Services on: the Service whose routes the summary shows (the first one routed). */
  readonly shownService: ShownService | undefined;
  close(): Promise<void>;
}

/** Why simulated nodes cannot run here, or undefined when they can. */
export async function dataPathUnavailableReason(): Promise<string | undefined> {
  if (process.getuid?.() !== 0)
    return 'not running as root: simulated nodes need network namespaces, veth pairs and Open vSwitch.';
  return ovsUnavailableReason();
}

/** A logger writing JSON lines to `file` (the terminal stays for humans). */
function fileLogger(file: string, level: string): Logger {
  const logger = createLogger('sandbox', level);
  logger.clear();
  logger.add(new winston.transports.File({ filename: file, options: { flags: 'a', mode: 0o600 } }));
  return logger;
}

async function flushLogger(logger: Logger): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 2_000);
    logger.on('finish', () => {
      clearTimeout(timer);
      resolve();
    });
    logger.end();
  });
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const cluster = withWatcherNamespace(options.cluster ?? SAMPLE_CLUSTER);
  const profile = options.profile ?? 'sodium';
  const dialect = options.dialect ?? 'bierman02';
  const gracePeriodMs = options.gracePeriodMs ?? 10_000;
  const logLevel = options.logLevel ?? process.env.ODLCOE_LOG_LEVEL ?? 'info';
  const step = options.onStep ?? (() => undefined);

  // Decide about the data path before anything starts, so a wrong request fails fast.
  const unavailable = await dataPathUnavailableReason();
  let simulatedCount = 0;
  if (options.simulatedNodes === 'auto' || options.simulatedNodes === undefined) {
    simulatedCount = unavailable ? 0 : Math.min(2, cluster.nodes.length);
  } else {
    simulatedCount = options.simulatedNodes;
    if (!Number.isInteger(simulatedCount) || simulatedCount < 0 || simulatedCount > cluster.nodes.length)
      throw new Error(
        `simulatedNodes must be 0..${cluster.nodes.length} (the cluster's nodes), not ${simulatedCount}`,
      );
    if (simulatedCount > 0 && unavailable) throw new Error(`cannot start simulated nodes: ${unavailable}`);
  }

  const ownsWorkDir = options.workDir === undefined;
  if (options.workDir !== undefined) await checkWorkDir(options.workDir);
  const workDir = options.workDir ?? (await mkdtemp(join(tmpdir(), 'odlcoe-sandbox-')));
  await mkdir(workDir, { recursive: true, mode: 0o700 });
  await chmod(workDir, 0o700);
  const logFile = join(workDir, 'sandbox.log');
  const logger = fileLogger(logFile, logLevel);
  const cleanups: { what: string; run: () => Promise<void> }[] = [];
  let closed = false;
  const close = async (opts: { keepWorkDir?: boolean } = {}) => {
    if (closed) return;
    closed = true;
    const errors: string[] = [];
    for (const c of cleanups.splice(0).reverse()) {
      try {
        await c.run();
      } catch (err) {
        errors.push(`${c.what}: ${errorMessage(err)}`);
        logger.warn('teardown step failed', { step: c.what, error: errorMessage(err) });
      }
    }
    logger.info('sandbox stopped');
    await flushLogger(logger);
    if (ownsWorkDir && !opts.keepWorkDir)
      await rm(workDir, { recursive: true, force: true }).catch((err: unknown) =>
        errors.push(`work dir: ${errorMessage(err)}`),
      );
    if (errors.length > 0) throw new Error(`teardown was incomplete:\n  ${errors.join('\n  ')}`);
  };

  try {
    const port = (key: keyof typeof DEFAULT_PORTS): PortChoice =>
      options.ports?.[key] ?? { port: DEFAULT_PORTS[key], explicit: false };
    const fallback = (what: string) => (taken: number) => {
      logger.info('port taken; using a free one', { what, port: taken });
      step(`port ${taken} for the ${what} is taken; using a free one`);
    };
    const passwordFile = join(workDir, 'odl-password');
    await writeFile(passwordFile, `${ODL_PASSWORD}\n`, { mode: 0o600 });

    step('starting the Kubernetes API simulator');
    const sim = await startOnPort(
      'kube API simulator',
      port('kube'),
      (p) =>
        startKubeSim({
          host: '127.0.0.1',
          port: p,
          bookmarkIntervalMs: 3_000,
          logger: logger.child({ component: 'kubesim' }),
        }),
      fallback('kube API simulator'),
    );
    cleanups.push({ what: 'kube API simulator', run: () => sim.close() });
    const kubeconfigPath = join(workDir, 'kubeconfig');
    sim.writeKubeconfig(kubeconfigPath);
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(kubeconfigPath);

    step('starting the ODL emulator');
    const odlWriteLog = join(workDir, 'odl-writes.jsonl');
    const odl = await startOnPort(
      'ODL emulator',
      port('odl'),
      (p) =>
        startEmulator({
          host: '127.0.0.1',
          port: p,
          profile,
          user: ODL_USER,
          password: ODL_PASSWORD,
          // As Genius does once a pod's OVS port shows up.
          fillParentInterface: true,
          stateFile: join(workDir, 'odl-state.json'),
          recordFile: odlWriteLog,
          logger: logger.child({ component: 'emulator' }),
        }),
      fallback('ODL emulator'),
    );
    cleanups.push({ what: 'ODL emulator', run: () => odl.close() });
    const odlPort = Number(new URL(odl.url).port);

    step(
      `loading the cluster: ${cluster.nodes.length} nodes, ${cluster.namespaces.length} namespaces, ${cluster.pods.length} pods`,
    );
    sim.seed(clusterObjects(cluster));

    // One settings file in the watcher's format: the watcher here runs on it, and odlcoectl
    // (`--config`) reads it the way it reads a deployed watcher's.
    const configFile = join(workDir, 'odlcoe.json');
    await writeFile(
      configFile,
      `${JSON.stringify(
        {
          clusterName: CLUSTER_NAME,
          kubeconfig: kubeconfigPath,
          odl: { url: odl.url, user: ODL_USER, passwordFile, profile, dialect, timeout: '10s' },
          // The nodes carry spec.podCIDR, as with kube-controller-manager's --allocate-node-cidrs.
          subnets: { source: 'podCIDR', odlPollInterval: '2s' },
          // Services on: every node gets its gateway, every Service IP a route through them.
          ...(cluster.services ? { services: { cidrs: cluster.services.cidrs } } : {}),
          gracePeriod: `${gracePeriodMs}ms`,
          shutdownTimeout: '5s',
          leaderElection: {
            enabled: true,
            namespace: WATCHER_NAMESPACE,
            name: WATCHER_LEASE,
            identity: `sandbox-${process.pid}`,
          },
        },
        null,
        2,
      )}\n`,
      { mode: 0o600 },
    );
    const watcherConfig = loadWatcherConfig({
      flags: { config: configFile },
      env: {},
      defaultIdentity: () => `sandbox-${process.pid}`,
    });
    const le = watcherConfig.leaderElection;

    step('starting the watcher');
    const watcher = await startOnPort(
      'watcher metrics',
      port('watcherMetrics'),
      (p) =>
        startWatcher({
          // A sandbox is small and local: look again at waiting keys sooner than in a cluster.
          settings: { ...watcherConfig.settings, waitRetryMs: 500, slowRetryMs: 10_000 },
          kubeConfig,
          odl: {
            baseUrl: odl.url,
            auth: { kind: 'basic', user: ODL_USER, password: ODL_PASSWORD },
            timeoutMs: watcherConfig.odl.timeout ?? 10_000,
          },
          leaderElection: le.enabled ? le : false,
          ops: { host: '127.0.0.1', port: p },
          registry: createRegistry('odlcoe_watcher_'),
          logger: logger.child({ component: 'watcher' }),
        }),
      fallback('watcher metrics'),
    );
    cleanups.push({ what: 'watcher', run: () => watcher.close() });
    const watcherUrl = `http://127.0.0.1:${watcher.opsPort ?? 0}`;

    // Exactly what `odlcoectl --config <file>` resolves (nothing from this process's environment).
    // The models are what the watcher read from the emulator at start-up.
    const cliSettings = withModels(
      resolveSettings({ config: configFile, output: 'json' }, {}),
      watcher.models,
    );
    const restconf = connectOdl(cliSettings);
    cleanups.push({ what: 'RESTCONF client', run: async () => restconf.close() });
    const kube = connectKube(cliSettings);

    const nodes: SimulatedNode[] = [];
    if (simulatedCount > 0) {
      const chosen = cluster.nodes.slice(0, simulatedCount);
      step(
        `starting ${chosen.map((n) => n.name).join(' and ')}: network namespace, userspace Open vSwitch, odlcoe-agent`,
      );
      const results = await Promise.allSettled(
        chosen.map(async (n, i) => {
          const metrics = port('agentMetrics');
          const node = await startOnPort(
            `agent metrics of ${n.name}`,
            { ...metrics, port: metrics.port === 0 ? 0 : metrics.port + i },
            (p) =>
              startSimulatedNode({
                name: n.name,
                dir: join(workDir, 'nodes', n.name),
                kubeconfigPath,
                kubePort: sim.port,
                odlUrl: odl.url,
                odlPort,
                odlUser: ODL_USER,
                odlPasswordFile: passwordFile,
                odlDialect: dialect,
                metricsPort: p,
                logLevel,
                ...(cluster.services
                  ? {
                      services: {
                        cidrs: cluster.services.cidrs,
                        clusterCidrs: cluster.services.clusterCidrs,
                      },
                    }
                  : {}),
                logger: logger.child({ component: 'node', node: n.name }),
              }),
            fallback(`agent metrics of ${n.name}`),
          );
          cleanups.push({ what: `simulated node ${n.name}`, run: () => node.close() });
          return node;
        }),
      );
      for (const r of results) if (r.status === 'fulfilled') nodes.push(r.value);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      nodes.sort((a, b) => a.name.localeCompare(b.name));
    }

    step('starting a kubelet stand-in per node');
    const kubelets = new Map<string, Kubelet>();
    for (const n of cluster.nodes) {
      const simulated = nodes.find((s) => s.name === n.name);
      const kubelet = new Kubelet({
        nodeName: n.name,
        nodeIp: n.internalIp,
        kubeConfig,
        runtime: simulated
          ? new CniPodRuntime({ conflistPath: simulated.conflistPath, label: n.name })
          : new AddressPodRuntime(n.podCidr),
        logger: logger.child({ component: 'kubelet', node: n.name }),
      });
      kubelet.start();
      kubelets.set(n.name, kubelet);
      // Before the nodes go: CNI DEL of every pod while its agent still runs.
      cleanups.push({ what: `kubelet of ${n.name}`, run: () => kubelet.close({ teardown: true }) });
    }

    const paths = netvirtPaths(profile);
    const examplePod = pickExamplePod(cluster, nodes);
    const endpoints: SandboxEndpoints = {
      workDir,
      logFile,
      kubeconfig: kubeconfigPath,
      kubeUrl: sim.url,
      odlUrl: odl.url,
      odlUser: ODL_USER,
      odlPassword: ODL_PASSWORD,
      odlListUrls: [
        {
          label: 'ELAN instances (one per node and namespace)',
          url: restconf.dataUrl(paths.elanInstances(), 'config', 'GET'),
        },
        { label: 'pod interfaces', url: restconf.dataUrl(paths.interfaces(), 'config', 'GET') },
        {
          label: 'VPN interfaces (pod IP adjacencies)',
          url: restconf.dataUrl(paths.vpnInterfaces(), 'config', 'GET'),
        },
      ],
      cliConfig: configFile,
      cliCommand: `node ${join(PROJECT_ROOT, 'dist/src/cli/main.js')}`,
      watcherUrl,
      agents: nodes.map((n) => ({ node: n.name, url: n.agentUrl, log: n.agentLog, ovsDb: n.ovs.dbSocket })),
      odlWriteLog,
      gracePeriodSeconds: Math.round(gracePeriodMs / 1000),
      ...(examplePod ? { examplePod } : {}),
    };

    const progress = () => measureProgress(restconf, kube, cliSettings);

    const sandbox: Sandbox = {
      workDir,
      logFile,
      kubeconfigPath,
      sim,
      odl,
      watcher,
      watcherUrl,
      cluster,
      nodes,
      dataPathSkipped: simulatedCount === 0 ? (unavailable ?? 'no simulated node was asked for.') : undefined,
      kubelets,
      cliSettings,
      kube,
      restconf,
      endpoints,
      logger,
      progress,
      async waitForConvergence({ timeoutMs, signal, onProgress }) {
        const started = Date.now();
        const deadline = started + timeoutMs;
        let last: Progress | undefined;
        let lastError: string | undefined;
        const result = (converged: boolean): ConvergenceResult => ({
          converged,
          progress: last,
          elapsedMs: Date.now() - started,
          ...(lastError !== undefined ? { lastError } : {}),
        });
        while (Date.now() < deadline && !signal?.aborted) {
          try {
            last = await progress();
            lastError = undefined;
            onProgress?.(last);
          } catch (err) {
            lastError = errorMessage(err);
            onProgress?.(last, lastError);
          }
          if (last?.converged && lastError === undefined) {
            // Counts match; let the watcher finish what it is doing, then look once more.
            const giveUp = new AbortController();
            const settled = await Promise.race([
              watcher.idle().then(() => true),
              sleep(Math.max(0, deadline - Date.now()), anySignal(giveUp.signal, signal)).then(
                () => false,
                () => false,
              ),
            ]);
            giveUp.abort();
            if (settled) {
              last = await progress();
              onProgress?.(last);
              if (last.converged) return result(true);
            }
          }
          await sleep(Math.min(300, Math.max(0, deadline - Date.now())), signal).catch(() => undefined);
        }
        return result(false);
      },
      async dump() {
        const { state, unparsed } = await readOdl(restconf, cliSettings);
        return buildDump(state, ownerContextOf(cliSettings), unparsed);
      },
      async dataPath() {
        const out: NodeDataPath[] = [];
        const trafficLog = join(workDir, 'pod-traffic.log');
        for (const node of nodes) {
          const sandboxes = kubelets.get(node.name)?.list() ?? [];
          const podCidr = cluster.nodes.find((n) => n.name === node.name)?.podCidr;
          out.push({
            ...(cluster.services && podCidr
              ? { host: await hostSide(node, gatewayAddress(podCidr), sandboxes, trafficLog) }
              : {}),
            node: node.name,
            ports: await bridgePorts(node.ovs.dbSocket, node.bridge),
            pings: await pingWithinNode(node.name, sandboxes),
            extraPings: await pingExtraWithinNode(node.name, sandboxes),
            traffic: await trafficWithinNode(node.name, sandboxes, { logFile: trafficLog }),
            checksumOffload: await podOffloadSummary(node.ovs.dbSocket, node.bridge),
          });
        }
        return out;
      },
      shownService: shownServiceOf(cluster),
      close: () => close(),
    };
    logger.info('sandbox started', {
      workDir,
      kube: sim.url,
      odl: odl.url,
      watcher: watcherUrl,
      simulatedNodes: nodes.map((n) => ({ node: n.name, netns: n.netns.name, agent: n.agentUrl })),
    });
    return sandbox;
  } catch (err) {
    logger.error('sandbox failed to start', { error: errorMessage(err) });
    // The logs say why: keep them.
    await close({ keepWorkDir: true }).catch(() => undefined);
    if (!ownsWorkDir) throw err;
    throw new Error(`${errorMessage(err)}\n  (work dir kept for its logs: ${workDir})`, { cause: err });
  }
}

/** The node's host side to its pods: a ping to each, an HTTP GET to the first. */
async function hostSide(
  node: SimulatedNode,
  gatewayIp: string,
  sandboxes: readonly PodSandbox[],
  logFile: string,
): Promise<NonNullable<NodeDataPath['host']>> {
  const pings = await pingFromHost({ name: node.name, netnsPath: node.netns.path, gatewayIp }, sandboxes);
  const target = pings[0] && sandboxes.find((s) => s.ips[0] === pings[0]?.to.ip);
  let http: TrafficResult | undefined;
  if (target?.netns && target.ips[0]) {
    const ip = target.ips[0];
    const traffic = await exchangeTraffic(node.netns.path, target.netns.path, ip, { logFile });
    http = {
      node: node.name,
      from: { pod: `${node.name} (host)`, ip: gatewayIp },
      to: { pod: `${target.pod.namespace}/${target.pod.name}`, ip },
      ...traffic,
    };
  }
  return { pings, http };
}

/** The first Service of the cluster that gets routes. */
function shownServiceOf(cluster: SampleCluster): ShownService | undefined {
  for (const s of cluster.services?.services ?? []) {
    const prefixes = serviceRoutePrefixes(s);
    if (prefixes.length > 0) return { ref: `${s.namespace}/${s.name}`, prefixes };
  }
  return undefined;
}

function anySignal(a: AbortSignal, b: AbortSignal | undefined): AbortSignal {
  return b ? AbortSignal.any([a, b]) : a;
}

/**
 * A given work dir must be absolute and empty (or absent): the sandbox keeps ODL's state there
 * and must not start from an earlier run's, nor mix its files with anything else.
 */
async function checkWorkDir(dir: string): Promise<void> {
  if (!isAbsolute(dir)) throw new Error(`the work dir ${JSON.stringify(dir)} must be an absolute path`);
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new Error(`cannot use work dir ${dir}: ${errorMessage(err)}`);
  }
  if (entries.length > 0) throw new Error(`the work dir ${dir} is not empty; give an empty or new directory`);
}

/** The watcher's Lease namespace must exist in every cluster the sandbox loads. */
function withWatcherNamespace(cluster: SampleCluster): SampleCluster {
  return cluster.namespaces.includes(WATCHER_NAMESPACE)
    ? cluster
    : { ...cluster, namespaces: [...cluster.namespaces, WATCHER_NAMESPACE] };
}

/** A pod on the pod network, preferably on the first simulated node (so `trace` can see OVS). */
function pickExamplePod(
  cluster: SampleCluster,
  nodes: readonly SimulatedNode[],
): { namespace: string; name: string } | undefined {
  const onNetwork = cluster.pods.filter((p) => !p.hostNetwork);
  const first = nodes[0];
  const pod = (first ? onNetwork.find((p) => p.node === first.name) : undefined) ?? onNetwork[0];
  return pod ? { namespace: pod.namespace, name: pod.name } : undefined;
}
