/**
 * A simulated Kubernetes node: a network namespace of its own, a private userspace Open
 * vSwitch running in it, and the real `odlcoe-agent` process running in it, as a DaemonSet pod
 * with hostNetwork would on a real node. The agent reaches the Kubernetes API and ODL through
 * loopback relays (relay.ts), so both stay on the sandbox's 127.0.0.1 and the agent uses the
 * very same kubeconfig and ODL URL as everything else; its metrics are relayed back to a port
 * on the sandbox's loopback.
 *
 * What a node has here that matters to odlcoe: its own interfaces (pod veths land in its
 * namespace and on its br-int), its own OVS, its own CNI socket, conflist and IPAM leases.
 * What it lacks: an underlay to other nodes (no tunnel can carry traffic; see docs), and ODL
 * programming its br-int: netvirt-l3.ts stands in for the L3 hop NetVirt gives its pods.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../common/log.js';
import { errorMessage } from '../common/log.js';
import { sleep } from '../common/backoff.js';
import { createNetns, type NamedNetns } from './netns.js';
import { startNetvirtL3 } from './netvirt-l3.js';
import { programCommand } from './programs.js';
import { startDaemon, type Daemon } from './processes.js';
import { checkUnixPath, relayTcp, relayUnix, type Relay } from './relay.js';
import { startUserspaceOvs, type UserspaceOvs } from './userspace-ovs.js';

export interface SimulatedNodeOptions {
  /** The Kubernetes node name (a DNS-1123 label of at most 40 characters here). */
  name: string;
  /** This node's directory (OVS files, agent config, CNI files, logs). */
  dir: string;
  /** A kubeconfig whose server is `http://127.0.0.1:<kubePort>`. */
  kubeconfigPath: string;
  kubePort: number;
  /** `http://127.0.0.1:<odlPort>`. */
  odlUrl: string;
  odlPort: number;
  odlUser: string;
  odlPasswordFile: string;
  odlDialect: 'bierman02' | 'rfc8040';
  /** Port on the sandbox's loopback for the agent's /metrics, /readyz; 0 picks a free one. */
  metricsPort: number;
  /** ODLCOE_LOG_LEVEL of the agent (its log goes to `<dir>/agent.log`). */
  logLevel: string;
  /** How long the agent may take to become ready. */
  readyTimeoutMs?: number;
  /** The agent's `services` settings (Service ranges on: the node gateway, docs/agent.md). */
  services?: { cidrs: string[]; clusterCidrs: string[] };
  logger: Logger;
}

export interface SimulatedNode {
  readonly name: string;
  readonly netns: NamedNetns;
  readonly dir: string;
  /** The agent's CNI socket (what the conflist's `socket` names). */
  readonly cniSocket: string;
  /** The conflist the agent writes (what a runtime reads). */
  readonly conflistPath: string;
  /** The agent's host-local lease directory (`<dataDir>/<network>`). */
  readonly leaseDir: string;
  readonly ovs: UserspaceOvs;
  readonly bridge: string;
  /** http://127.0.0.1:<port> on the sandbox's loopback: /metrics, /readyz, /healthz of the agent. */
  readonly agentUrl: string;
  readonly agentLog: string;
  /** The running agent's pid (another one after restartAgent). */
  readonly agentPid: number;
  /** Stops the agent (SIGTERM) and starts it again with the same configuration, until ready. */
  restartAgent(): Promise<void>;
  close(): Promise<void>;
}

/** The agent's metrics port inside the node's namespace (the agent's default). */
const AGENT_METRICS_PORT = 9102;
const NODE_NAME = /^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$/;
export const BRIDGE = 'br-int';
export const CNI_NETWORK = 'odlcoe';

export async function startSimulatedNode(opts: SimulatedNodeOptions): Promise<SimulatedNode> {
  if (!NODE_NAME.test(opts.name))
    throw new Error(
      `simulated node name ${JSON.stringify(opts.name)} must be a DNS-1123 label of at most 40 characters`,
    );
  const { dir, logger } = opts;
  const cleanups: (() => Promise<void>)[] = [];
  const cleanUp = async () => {
    for (const c of cleanups.splice(0).reverse()) {
      try {
        await c();
      } catch (err) {
        logger.warn('simulated node clean-up step failed', { node: opts.name, error: errorMessage(err) });
      }
    }
  };
  try {
    const relayDir = join(dir, 'relay');
    await mkdir(relayDir, { recursive: true, mode: 0o700 });
    const sockets = {
      kube: checkUnixPath(join(relayDir, 'kube.sock')),
      odl: checkUnixPath(join(relayDir, 'odl.sock')),
      metrics: checkUnixPath(join(relayDir, 'metrics.sock')),
      cni: checkUnixPath(join(dir, 'cni.sock')),
    };

    // First, so that a taken port fails before anything else exists (the caller then retries
    // on another port). The socket it forwards to is made later, by the node's relay.
    const metricsRelay = await relayTcp(
      { host: '127.0.0.1', port: opts.metricsPort },
      { kind: 'unix', path: sockets.metrics },
    );
    cleanups.push(() => metricsRelay.close());
    const agentUrl = `http://127.0.0.1:${metricsRelay.port}`;

    const netns = await createNetns(opts.name);
    cleanups.push(() => netns.remove());
    logger.info('simulated node: network namespace created', { node: opts.name, netns: netns.name });

    const ovs = await startUserspaceOvs({ dir: join(dir, 'ovs'), netns: netns.name });
    cleanups.push(() => ovs.stop());

    // The sandbox's ends: unix sockets the node's relay dials, forwarding to our loopback.
    const hostRelays: Relay[] = [
      await relayUnix(sockets.kube, { kind: 'tcp', host: '127.0.0.1', port: opts.kubePort }),
      await relayUnix(sockets.odl, { kind: 'tcp', host: '127.0.0.1', port: opts.odlPort }),
    ];
    cleanups.push(async () => {
      for (const r of hostRelays) await r.close();
    });

    const relay = programCommand('src/sandbox/relay-main', [
      '--tcp-to-unix',
      `127.0.0.1:${opts.kubePort}=${sockets.kube}`,
      '--tcp-to-unix',
      `127.0.0.1:${opts.odlPort}=${sockets.odl}`,
      '--unix-to-tcp',
      `${sockets.metrics}=127.0.0.1:${AGENT_METRICS_PORT}`,
    ]);
    const relayProcess = await startDaemon(
      'ip',
      ['netns', 'exec', netns.name, relay.command, ...relay.args],
      {
        cwd: relay.cwd,
        logFile: join(dir, 'relay.log'),
        readyLine: 'ready',
      },
    );
    cleanups.push(() => relayProcess.stop());

    const configPath = join(dir, 'agent.json');
    const ipamDir = join(dir, 'ipam');
    const config = {
      nodeName: opts.name,
      kubeconfig: opts.kubeconfigPath,
      // The agent stops by itself when the sandbox is gone, even after a SIGKILL of the sandbox.
      parentPid: process.pid,
      odl: {
        url: opts.odlUrl,
        dialect: opts.odlDialect,
        user: opts.odlUser,
        passwordFile: opts.odlPasswordFile,
        // The sandbox's ODL answers at once; a node should see its subnet soon after the watcher wrote it.
        subnetRefreshSeconds: 5,
      },
      ovs: { dbSocket: ovs.dbSocket, bridge: BRIDGE, datapathType: 'netdev', timeoutSeconds: 10 },
      cni: {
        confDir: join(dir, 'net.d'),
        networkName: CNI_NETWORK,
        cniVersion: '1.1.0',
        socket: sockets.cni,
        logFile: join(dir, 'cni-shim.log'),
        pendingDelDir: join(dir, 'pending-del'),
      },
      ipam: { dataDir: ipamDir },
      metrics: { host: '127.0.0.1', port: AGENT_METRICS_PORT },
      ...(opts.services ? { services: opts.services } : {}),
    };
    await writeFile(configPath, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });

    const agentLog = join(dir, 'agent.log');
    const agentCommand = programCommand('src/agent/main', ['--config', configPath]);
    let agent: Daemon | undefined;
    const startAgent = async () => {
      agent = await startDaemon(
        'ip',
        ['netns', 'exec', netns.name, agentCommand.command, ...agentCommand.args],
        {
          cwd: agentCommand.cwd,
          env: { ...process.env, ODLCOE_LOG_LEVEL: opts.logLevel },
          logFile: agentLog,
        },
      );
      // For whoever must clean up after a sandbox that was killed (docs/getting-started.md).
      await writeFile(join(dir, 'agent.pid'), `${agent.pid}\n`);
      logger.info('simulated node: agent started', { node: opts.name, pid: agent.pid, log: agentLog });
      await waitForAgentReady(agentUrl, agent, opts.readyTimeoutMs ?? 90_000, agentLog);
      return agent;
    };
    cleanups.push(async () => agent?.stop());
    await startAgent();

    // NetVirt's L3 hop for the node's own pods (netvirt-l3.ts): no ODL programs this bridge.
    const conflistPath = join(config.cni.confDir, '10-odlcoe.conflist');
    cleanups.push(startNetvirtL3(ovs, BRIDGE, conflistPath, logger));

    const node: SimulatedNode = {
      name: opts.name,
      netns,
      dir,
      cniSocket: sockets.cni,
      conflistPath,
      leaseDir: join(ipamDir, CNI_NETWORK),
      ovs,
      bridge: BRIDGE,
      agentUrl,
      agentLog,
      get agentPid() {
        return agent?.pid ?? 0;
      },
      async restartAgent() {
        await agent?.stop();
        await startAgent();
      },
      close: cleanUp,
    };
    return node;
  } catch (err) {
    await cleanUp();
    throw err;
  }
}

/** Polls the agent's /readyz (through the metrics relay) until it answers 200. */
async function waitForAgentReady(url: string, agent: Daemon, timeoutMs: number, log: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (!agent.isRunning()) throw new Error(`the agent exited during start-up; see ${log}`);
    try {
      const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) });
      const body = await res.text();
      if (res.status === 200) return;
      last = body.trim();
    } catch (err) {
      last = errorMessage(err);
    }
    await sleep(250);
  }
  throw new Error(`the agent was not ready within ${timeoutMs} ms (last /readyz: ${last}); see ${log}`);
}
