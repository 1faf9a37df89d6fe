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
import { silentLogger } from '../../src/common/log.js';
import { createRegistry } from '../../src/common/metrics.js';
import { Agent } from '../../src/agent/agent.js';
import { buildAgentConfig, type AgentConfig } from '../../src/agent/config.js';
import { run } from '../../src/agent/exec.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { KubeClient } from '../../src/k8s/kube-client.js';
import { startKubeSim, type KubeSim } from '../../src/kubesim/server.js';
import { startOvsSandbox, type OvsSandbox } from '../helpers/ovs-sandbox.js';
import { waitFor } from '../helpers/wait.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const NODE_NAME = 'n1';
export const NODE_IP = '192.168.56.101';
export const NODE_UID = '3c9a3b4e-6a53-4bb5-9a6e-0f2f8d1b0001';
export const SUBNET = '10.11.1.0/24';

/**
 * Compiles the shim alone with the project's compiler settings into a temp dir (the shim has
 * no imports but node: built-ins, so this is exactly dist/cni/odlcoe.js, without depending on
 * the rest of the tree building). Returns the path of the .js file.
 */
export async function compileShim(dir: string): Promise<string> {
  const out = join(dir, 'shim');
  await run(
    process.execPath,
    [
      join(ROOT, 'node_modules/typescript/bin/tsc'),
      '--outDir',
      out,
      '--rootDir',
      join(ROOT, 'cni'),
      '--module',
      'NodeNext',
      '--moduleResolution',
      'NodeNext',
      '--target',
      'ES2022',
      '--strict',
      '--types',
      'node',
      '--skipLibCheck',
      join(ROOT, 'cni/odlcoe.ts'),
    ],
    { timeoutMs: 120_000, env: { ...process.env } },
  );
  // The compiled file is ESM; outside the package it needs its own package.json to say so.
  await writeFile(join(out, 'package.json'), '{"type":"module"}\n');
  return join(out, 'odlcoe.js');
}

export interface ShimRun {
  code: number | null;
  stdout: string;
  stderr: string;
  json: Record<string, unknown> | undefined;
}

/** Execs the shim as a runtime does: CNI_* in a clean environment, config on stdin. */
export function execShim(shim: string, cniEnv: Record<string, string>, stdin: string): Promise<ShimRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [shim], {
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
  deletePod(name: string, namespace?: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestNode(): Promise<TestNode> {
  const dir = await mkdtemp(join(tmpdir(), 'odlcoe-agent-it-'));
  const cleanups: (() => Promise<void>)[] = [() => rm(dir, { recursive: true, force: true })];
  const stop = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  };
  try {
    const shim = await compileShim(dir);
    const ovs = await startOvsSandbox();
    cleanups.push(() => ovs.stop());
    const sim = await startKubeSim({ port: 0, logger: silentLogger() });
    cleanups.push(() => sim.close());
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
    const kubeconfigPath = join(dir, 'kubeconfig');
    sim.writeKubeconfig(kubeconfigPath);
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    const kube = new KubeClient(kc);
    const odl = await startEmulator({ port: 0, profile: 'sodium', logger: silentLogger() });
    cleanups.push(() => odl.close());
    await putNodeSubnet(odl.url, SUBNET);
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
          registry: createRegistry('odlcoe_agent_'),
          logger: silentLogger(),
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
        await kube.request('DELETE', `/api/v1/namespaces/${namespace}/pods/${name}`);
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
