/**
 * The world odlcoectl's tests look at: the ODL emulator and the Kubernetes simulator on
 * 127.0.0.1 (port 0), a small cluster created through client-node, and ODL programmed with
 * exactly what the watcher would write for it (the pure translation of src/netvirt, written
 * through the RESTCONF client in dependency order, node subnets set as an ODL user would).
 * odlcoectl runs either in-process (`runCli`) or as a child process, as an operator runs it.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  type V1Namespace,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import { runCli } from '../../src/cli/program.js';
import { silentLogger } from '../../src/common/log.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/server.js';
import { startKubeSim, type KubeSim } from '../../src/kubesim/server.js';
import {
  allocateRouteDistinguishers,
  namespacesNeedingVpn,
  translateCluster,
  type DesiredState,
  type Profile,
  type TranslateSettings,
  type WriteOp,
} from '../../src/netvirt/index.js';
import type { KubeClient } from '../../src/k8s/kube-client.js';
import { RestconfClient } from '../../src/restconf/client.js';
import type { Dialect } from '../../src/restconf/path.js';
import { desiredWrites } from '../helpers/desired-writes.js';
import { kubeApiOf } from '../helpers/kube-api.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLUSTER = 'prod';
export const RD_ADMINISTRATOR = '64512';
export const ROUTE_TARGET = '64512:1';

export const NODES = [
  { name: 'node-a', ip: '192.168.56.101', subnet: '10.11.1.0/24' },
  { name: 'node-b', ip: '192.168.56.102', subnet: '10.11.2.0/24' },
] as const;

/** Pods on the pod network (plus one host-network pod that must be ignored everywhere). */
export const PODS = [
  { namespace: 'default', name: 'web-0', node: 'node-a', ip: '10.11.1.5' },
  { namespace: 'default', name: 'web-1', node: 'node-b', ip: '10.11.2.5' },
  { namespace: 'team-a', name: 'api-0', node: 'node-a', ip: '10.11.1.6' },
] as const;

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliHarness {
  profile: Profile;
  dialect: Dialect;
  emulator: Emulator;
  sim: KubeSim;
  core: CoreV1Api;
  coordination: CoordinationV1Api;
  /** odlcoe's own Kubernetes client (what odlcoectl reads with). */
  kube: KubeClient;
  odl: RestconfClient;
  dir: string;
  kubeconfig: string;
  settings: TranslateSettings;
  /** Global flags pointing odlcoectl at this world (`profile`: the one told; null: none, detected). */
  flags(profile?: string | null): string[];
  /** odlcoectl in this process (`profile` as for `flags`). */
  run(args: string[], profile?: string | null): Promise<CliRun>;
  /** odlcoectl as a child process (`node --import tsx src/cli/main.ts ...`). */
  spawn(args: string[]): Promise<CliRun>;
  close(): Promise<void>;
}

export async function startHarness(
  profile: Profile,
  dialect: Dialect,
  emulatorOptions: Pick<EmulatorOptions, 'fillParentInterface'> = {},
): Promise<CliHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'odlcoectl-'));
  const emulator = await startEmulator({ port: 0, profile, logger: silentLogger(), ...emulatorOptions });
  const sim = await startKubeSim({ port: 0 });
  const kubeconfig = join(dir, 'kubeconfig');
  sim.writeKubeconfig(kubeconfig);
  const passwordFile = join(dir, 'odl-password');
  await writeFile(passwordFile, 'admin\n', { mode: 0o600 });
  const kc = new KubeConfig();
  kc.loadFromString(sim.kubeconfig());
  const odl = new RestconfClient({
    baseUrl: emulator.url,
    dialect,
    auth: { kind: 'basic', user: 'admin', password: 'admin' },
    retry: { maxAttempts: 1 },
  });
  const flags = (told: string | null = profile) => [
    '--odl-url',
    emulator.url,
    '--odl-user',
    'admin',
    '--odl-password-file',
    passwordFile,
    ...(told === null ? [] : ['--profile', told]),
    '--dialect',
    dialect,
    '--cluster-name',
    CLUSTER,
    '--kubeconfig',
    kubeconfig,
    '--timeout',
    '20',
  ];
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ODLCOE_LOG_LEVEL: 'silent' };
  return {
    profile,
    dialect,
    emulator,
    sim,
    core: kc.makeApiClient(CoreV1Api),
    coordination: kc.makeApiClient(CoordinationV1Api),
    kube: kubeApiOf(sim).api,
    odl,
    dir,
    kubeconfig,
    settings: { clusterName: CLUSTER, profile, routeTarget: ROUTE_TARGET, segmentType: 'vxlan' },
    flags,
    async run(args, told) {
      let stdout = '';
      let stderr = '';
      const code = await runCli([...flags(told), ...args], {
        stdout: (t) => (stdout += t),
        stderr: (t) => (stderr += t),
        env,
      });
      return { code, stdout, stderr };
    },
    spawn: (args) => spawnCli([...flags(), ...args], env),
    async close() {
      odl.close();
      await emulator.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function spawnCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

/** Creates a pod through client-node, scheduled on `node`, with the status a kubelet reports. */
export async function createPod(
  h: CliHarness,
  p: { namespace: string; name: string; node: string; phase: string; ip?: string; hostNetwork?: boolean },
): Promise<void> {
  await h.core.createNamespacedPod({
    namespace: p.namespace,
    body: {
      metadata: { name: p.name, namespace: p.namespace },
      spec: {
        nodeName: p.node,
        ...(p.hostNetwork ? { hostNetwork: true } : {}),
        containers: [{ name: 'c', image: 'busybox' }],
      },
      status: { phase: p.phase, ...(p.ip ? { podIP: p.ip, podIPs: [{ ip: p.ip }] } : {}) },
    },
  });
}

/** Creates the cluster's nodes, namespace and pods through client-node; returns them as stored. */
export async function createCluster(
  h: CliHarness,
): Promise<{ nodes: V1Node[]; namespaces: V1Namespace[]; pods: V1Pod[] }> {
  for (const n of NODES) {
    await h.core.createNode({
      body: {
        metadata: { name: n.name },
        spec: { podCIDR: n.subnet },
        status: {
          addresses: [
            { type: 'InternalIP', address: n.ip },
            { type: 'Hostname', address: n.name },
          ],
        },
      },
    });
  }
  await h.core.createNamespace({ body: { metadata: { name: 'team-a' } } });
  for (const p of PODS) await createPod(h, { ...p, phase: 'Running' });
  await createPod(h, {
    namespace: 'kube-system',
    name: 'host-agent',
    node: 'node-a',
    phase: 'Running',
    ip: NODES[0].ip,
    hostNetwork: true,
  });
  const nodes = (await h.core.listNode()).items;
  const namespaces = (await h.core.listNamespace()).items;
  const pods = (await h.core.listPodForAllNamespaces()).items;
  return { nodes, namespaces, pods };
}

/** What the watcher would want for the cluster (RDs allocated from scratch, subnets from NODES). */
export function desiredFor(
  h: CliHarness,
  cluster: { nodes: V1Node[]; namespaces: V1Namespace[]; pods: V1Pod[] },
): DesiredState {
  const rds = allocateRouteDistinguishers(namespacesNeedingVpn(cluster.pods), new Map(), {
    administrator: RD_ADMINISTRATOR,
  }).byNamespace;
  return translateCluster(
    {
      ...cluster,
      routeDistinguishers: rds,
      nodeSubnets: new Map(NODES.map((n) => [n.name, n.subnet])),
    },
    h.settings,
  );
}

export async function apply(h: CliHarness, ops: WriteOp[]): Promise<void> {
  for (const op of ops) {
    if (op.op === 'put') await h.odl.put(op.path, op.body);
    else await h.odl.delete(op.path);
  }
}

/**
 * Writes the desired state in dependency order, as the watcher does, with each node's
 * pod-cidr in its k8s-node entry (the `odl` subnet source: an ODL user sets it).
 */
export async function programOdl(
  h: CliHarness,
  cluster: { nodes: V1Node[]; namespaces: V1Namespace[]; pods: V1Pod[] },
): Promise<DesiredState> {
  const d = desiredFor(h, cluster);
  await apply(
    h,
    desiredWrites(h.profile, d).map((w) => w.op),
  );
  return d;
}

export function uidOf(
  objects: { metadata?: { name?: string; namespace?: string; uid?: string } }[],
  name: string,
  namespace?: string,
): string {
  const o = objects.find(
    (x) => x.metadata?.name === name && (namespace === undefined || x.metadata?.namespace === namespace),
  );
  const uid = o?.metadata?.uid;
  if (!uid) throw new Error(`no uid for ${namespace ? `${namespace}/` : ''}${name}`);
  return uid;
}
