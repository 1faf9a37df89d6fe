/**
 * A simulated node for the agent's integration tests: a private userspace OVS, the Kubernetes
 * API simulator with this node and its pods, the ODL emulator with the node's subnet, temp
 * directories for every file the agent writes, the agent itself (in-process) and the shim
 * compiled exactly as the build does, exec'd the way a container runtime execs it.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { silentLogger, type Logger } from '../../src/common/log.js';
import { createRegistry } from '../../src/common/metrics.js';
import { Agent } from '../../src/agent/agent.js';
import { buildAgentConfig, type AgentConfig } from '../../src/agent/config.js';
import type { EmulatorFeature } from '../../src/emulator/netvirt-schema.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/server.js';
import { dhcpNetworkEntry } from '../../src/netvirt/dhcp.js';
import { translateNodeNetwork } from '../../src/netvirt/node-network.js';
import type { Profile } from '../../src/netvirt/profile.js';
import { KubeClient } from '../../src/k8s/kube-client.js';
import { startKubeSim, type KubeSim } from '../../src/kubesim/server.js';
import { compileNodeOnlyModule } from '../helpers/compile.js';
import { startNetvirtL3 } from '../../src/sandbox/netvirt-l3.js';
import { startOvsSandbox, type OvsSandbox } from '../helpers/ovs-sandbox.js';
import { deletePodAsKubelet, finishPodDeletion, terminatePod } from '../helpers/pod-deletion.js';
import { waitFor } from '../helpers/wait.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const NODE_NAME = 'n1';
export const NODE_IP = '192.168.56.101';
export const NODE_UID = '3c9a3b4e-6a53-4bb5-9a6e-0f2f8d1b0001';
export const SUBNET = '10.11.1.0/24';

/** The shim compiled exactly as the build does (it has no imports but node: built-ins). */
export function compileShim(dir: string): Promise<string> {
  return compileNodeOnlyModule(join(ROOT, 'cni/odlcoe.ts'), join(dir, 'shim'));
}

export interface ShimRun {
  code: number | null;
  stdout: string;
  stderr: string;
  json: Record<string, unknown> | undefined;
}

/** Execs the shim as a runtime does: CNI_* in a clean environment, config on stdin. */
export function execShim(shim: string, cniEnv: Record<string, string>, stdin: string): Promise<ShimRun> {
  return execPlugin(process.execPath, [shim], cniEnv, stdin);
}

/** Execs a CNI plugin (`program` with `args`) as a runtime does: CNI_* in a clean environment, config on stdin. */
export function execPlugin(
  program: string,
  args: string[],
  cniEnv: Record<string, string>,
  stdin: string,
): Promise<ShimRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...cniEnv },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      let json: Record<string, unknown> | undefined;
      try {
        json = stdout.trim() ? (JSON.parse(stdout) as Record<string, unknown>) : undefined;
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
    child.stdin.end(stdin);
  });
}

/**
 * What the agent needs around it, OVS aside: the simulator with this node, the emulator, and a
 * temp dir for the kubeconfig, password file, CNI socket, conflist and leases. Enough for the
 * agent binary where OVS does not matter (the subnet, the process' own life); startTestNode()
 * adds OVS and the shim.
 */
export interface AgentSurroundings {
  dir: string;
  sim: KubeSim;
  odl: Emulator;
  /** A kubeconfig for the simulator. */
  kubeconfig: string;
  /** The CNI socket the agent serves (removed when it stops cleanly). */
  socket: string;
  /** `node` arguments that run the agent binary here, flags only, with `extra` flags last. */
  agentArgs(extra?: string[]): string[];
  close(): Promise<void>;
}

/** The emulator's ODL behaviour a test can choose (Genius write-backs and their timing). */
export type EmulatorWriteBacks = Pick<EmulatorOptions, 'fillParentInterface' | 'operDelayMs' | 'operStatus'>;

export async function startAgentSurroundings(
  opts: { profile?: Profile; features?: readonly EmulatorFeature[]; emulator?: EmulatorWriteBacks } = {},
): Promise<AgentSurroundings> {
  const dir = await mkdtemp(join(tmpdir(), 'odlcoe-agent-it-'));
  const closers: (() => Promise<void>)[] = [() => rm(dir, { recursive: true, force: true })];
  const close = async () => {
    for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
  };
  try {
    const sim = await startKubeSim({ port: 0, logger: silentLogger() });
    closers.push(() => sim.close());
    sim.seed([
      {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: NODE_NAME },
        status: {
          addresses: [
            { type: 'InternalIP', address: NODE_IP },
            { type: 'Hostname', address: NODE_NAME },
          ],
        },
      },
    ]);
    const kubeconfig = join(dir, 'kubeconfig');
    sim.writeKubeconfig(kubeconfig);
    const odl = await startEmulator({
      port: 0,
      profile: opts.profile ?? 'sodium',
      ...(opts.features ? { features: opts.features } : {}),
      ...opts.emulator,
      logger: silentLogger(),
    });
    closers.push(() => odl.close());
    const passwordFile = join(dir, 'odl-password');
    await writeFile(passwordFile, 'admin\n', { mode: 0o600 });
    const socket = join(dir, 'cni.sock');
    const agentArgs = (extra: string[] = []) => [
      '--import',
      'tsx',
      join(ROOT, 'src/agent/main.ts'),
      '--node-name',
      NODE_NAME,
      '--kubeconfig',
      kubeconfig,
      '--odl-url',
      odl.url,
      '--odl-user',
      'admin',
      '--odl-password-file',
      passwordFile,
      '--ovs-db',
      join(dir, 'no-ovs.sock'),
      '--cni-conf-dir',
      join(dir, 'net.d'),
      '--socket',
      socket,
      '--ipam-data-dir',
      join(dir, 'ipam'),
      '--metrics-port',
      '0',
      ...extra,
    ];
    return { dir, sim, odl, kubeconfig, socket, agentArgs, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** PUTs this node's k8s-node entry into the emulator as an ODL user would. */
export async function putNodeSubnet(odlUrl: string, podCidr: string | undefined): Promise<void> {
  const entry: Record<string, string> = {
    uid: NODE_UID,
    'host-name': NODE_NAME,
    'internal-ip-address': NODE_IP,
  };
  if (podCidr) entry['pod-cidr'] = podCidr;
  const res = await fetch(`${odlUrl}/restconf/config/k8s-node:k8s-nodes-info/k8s-nodes/${NODE_UID}`, {
    method: 'PUT',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}`,
    },
    body: JSON.stringify({ 'k8s-node:k8s-nodes': [entry] }),
  });
  if (res.status !== 200 && res.status !== 201 && res.status !== 204)
    throw new Error(`PUT k8s-node: ${res.status} ${await res.text()}`);
}

/**
 * PUTs this node's network `odlcoe-node:<node>` into the emulator as an ODL user (or the
 * watcher) would: where the agent reads its subnet on every release.
 */
export async function putNodeNetwork(odlUrl: string, podCidr: string, nodeName = NODE_NAME): Promise<void> {
  const network = translateNodeNetwork(nodeName, [podCidr]);
  const res = await fetch(
    `${odlUrl}/restconf/config/dhcp_allocation_pool:dhcp_allocation_pool/network/${network.networkId}`,
    {
      method: 'PUT',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}`,
      },
      body: JSON.stringify({ 'dhcp_allocation_pool:network': [dhcpNetworkEntry(network)] }),
    },
  );
  if (res.status !== 200 && res.status !== 201 && res.status !== 204)
    throw new Error(`PUT node network: ${res.status} ${await res.text()}`);
}

export interface TestNode {
  dir: string;
  ovs: OvsSandbox;
  sim: KubeSim;
  kube: KubeClient;
  odl: Emulator;
  bridge: string;
  config: AgentConfig;
  shim: string;
  agent: Agent | undefined;
  startAgent(): Promise<Agent>;
  stopAgent(): Promise<void>;
  /** The plugin config a runtime would send (from the conflist the agent wrote). */
  pluginConfig(cniVersion?: string, extra?: Record<string, unknown>): Promise<string>;
  createPod(name: string, namespace?: string): Promise<string>;
  /** Deletes a pod as a cluster does: marked Terminating, then removed by kubelet's grace-0 DELETE. */
  deletePod(name: string, namespace?: string): Promise<void>;
  /** `kubectl delete pod`: the pod (bound to this node) stays, Terminating, until `finishPodDeletion`. */
  terminatePod(name: string, namespace?: string): Promise<void>;
  /** Kubelet's last DELETE of a Terminating pod (grace 0, UID precondition). */
  finishPodDeletion(name: string, namespace?: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * One node with real OVS and the shim. Sodium (default): the subnet in the node's k8s-node
 * entry (a cluster converged before node networks); Aluminium: in its node network only.
 */
export async function startTestNode(
  opts: { profile?: Profile; emulator?: EmulatorWriteBacks; logger?: Logger } = {},
): Promise<TestNode> {
  const world = await startAgentSurroundings(opts);
  const { dir, sim, odl } = world;
  const cleanups: (() => Promise<void>)[] = [() => world.close()];
  const stop = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  };
  try {
    const shim = await compileShim(dir);
    const ovs = await startOvsSandbox();
    cleanups.push(() => ovs.stop());
    const kubeconfigPath = world.kubeconfig;
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    const kube = new KubeClient(kc);
    if ((opts.profile ?? 'sodium') === 'sodium') await putNodeSubnet(odl.url, SUBNET);
    else await putNodeNetwork(odl.url, SUBNET);
    const bridge = `brodl${randomBytes(3).toString('hex')}`;
    const config = buildAgentConfig({
      flags: {
        nodeName: NODE_NAME,
        kubeconfig: kubeconfigPath,
        odlUrl: odl.url,
        ovsDb: ovs.dbSocket,
        bridge,
        datapathType: 'netdev',
        cniConfDir: join(dir, 'net.d'),
        socket: join(dir, 'run', 'cni.sock'),
        ipamDataDir: join(dir, 'ipam'),
        metricsPort: '0',
        cniVersion: '1.1.0',
      },
    });
    config.metrics.host = '127.0.0.1';
    config.cni.pendingDelDir = join(dir, 'pending-del');
    config.cni.logFile = join(dir, 'cni.log');
    config.ovs.timeoutSeconds = 3;
    await mkdir(join(dir, 'run'), { recursive: true });
    // NetVirt's L3 hop between the node's pods, which hold /32 addresses (src/sandbox/netvirt-l3.ts).
    cleanups.push(startNetvirtL3(ovs, bridge, join(config.cni.confDir, config.cni.confFile), silentLogger()));

    const node: TestNode = {
      dir,
      ovs,
      sim,
      kube,
      odl,
      bridge,
      config,
      shim,
      agent: undefined,
      async startAgent() {
        const agent = new Agent(config, {
          kubeConfig: kc,
          // What `cni.binDir` gets, when a test sets it (the agent runs from source here).
          shimSource: shim,
          registry: createRegistry('odlcoe_agent_'),
          logger: opts.logger ?? silentLogger(),
          odlAuth: { kind: 'basic', user: 'admin', password: 'admin' },
        });
        await agent.start();
        node.agent = agent;
        await waitFor(() => agent.notReadyReason() === undefined, {
          timeoutMs: 60_000,
          what: 'the agent to be ready',
        });
        return agent;
      },
      async stopAgent() {
        await node.agent?.stop();
        node.agent = undefined;
      },
      async pluginConfig(cniVersion = '1.0.0', extra = {}) {
        const conflist = JSON.parse(
          await readFile(join(config.cni.confDir, config.cni.confFile), 'utf8'),
        ) as { name: string; plugins: Record<string, unknown>[] };
        return JSON.stringify({ cniVersion, name: conflist.name, ...conflist.plugins[0], ...extra });
      },
      async createPod(name, namespace = 'default') {
        const pod = await kube.request<{ metadata: { uid: string } }>(
          'POST',
          `/api/v1/namespaces/${namespace}/pods`,
          {
            body: {
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: { name, namespace },
              spec: { nodeName: NODE_NAME, containers: [{ name: 'c', image: 'pause' }] },
            },
          },
        );
        return pod.metadata.uid;
      },
      async deletePod(name, namespace = 'default') {
        await deletePodAsKubelet(kube, namespace, name);
      },
      async terminatePod(name, namespace = 'default') {
        await terminatePod(kube, namespace, name);
      },
      async finishPodDeletion(name, namespace = 'default') {
        await finishPodDeletion(kube, namespace, name);
      },
      async stop() {
        await node.stopAgent().catch(() => undefined);
        await stop();
      },
    };
    cleanups.push(() => node.stopAgent());
    return node;
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The CNI environment of one attachment (Kubernetes style CNI_ARGS). */
export function cniEnv(
  command: string,
  containerId: string,
  netns: string,
  pod?: { name: string; uid?: string; namespace?: string },
): Record<string, string> {
  const args = pod
    ? [
        'IgnoreUnknown=1',
        `K8S_POD_NAMESPACE=${pod.namespace ?? 'default'}`,
        `K8S_POD_NAME=${pod.name}`,
        `K8S_POD_INFRA_CONTAINER_ID=${containerId}`,
        ...(pod.uid ? [`K8S_POD_UID=${pod.uid}`] : []),
      ].join(';')
    : '';
  return {
    CNI_COMMAND: command,
    CNI_CONTAINERID: containerId,
    CNI_NETNS: netns,
    CNI_IFNAME: 'eth0',
    CNI_ARGS: args,
    CNI_PATH: '/usr/lib/cni',
  };
}

/** The lease files host-local holds in the agent's data dir. */
export async function leaseIps(node: TestNode): Promise<string[]> {
  try {
    return (await readdir(join(node.config.ipam.dataDir, node.config.cni.networkName)))
      .filter((n) => /^\d+\.\d+\.\d+\.\d+$/.test(n))
      .sort();
  } catch {
    return [];
  }
}
