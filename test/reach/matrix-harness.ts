/**
 * The policy matrix in the style of Kubernetes' network-policy e2e suite
 * (`test/e2e/network/netpol`): namespaces x, y, z (labels `ns: <name>` and
 * `kubernetes.io/metadata.name`), pods a, b, c in each (label `pod: <name>`, container ports
 * named `serve-80-tcp`, `serve-81-tcp`, `serve-80-udp`, `serve-81-udp`), every pod probing
 * every pod: 81 probes per port. a and b run on node-1, c on node-2, so probes cross ELANs,
 * VPNs and nodes.
 *
 * A case is a sequence of steps (policies created, updated, deleted; pod and namespace labels
 * changed); after each step ODL is programmed, `reach` computes every probe from what ODL
 * holds, and the result must equal the step's truth tables, which are written by hand (`.`
 * delivered, `X` dropped; rows are the client, columns the server).
 *
 * ODL is programmed by the `Programmer`: the watcher itself, with NetworkPolicy enforcement
 * on, over the Kubernetes simulator; `reach` never looks at the watcher or at the policies.
 */
import {
  NetworkingV1Api,
  type V1Namespace,
  type V1NetworkPolicy,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import { analyseReach, parseProbe, type HoldingsIndex } from '../../src/netvirt/reach/index.js';
import type { Profile } from '../../src/netvirt/index.js';
import type { Dialect } from '../../src/restconf/path.js';
import { sleep } from '../../src/common/backoff.js';
import { nodeInternalIp } from '../../src/netvirt/kube.js';
import { createNode, startEnv, startTestWatcher, writeCount, type Env } from '../watcher/testing.js';
import { readIndex } from './testing.js';

export const NAMESPACES = ['x', 'y', 'z'] as const;
export const POD_NAMES = ['a', 'b', 'c'] as const;
/** `x/a`, ... in table order. */
export const PODS = NAMESPACES.flatMap((ns) => POD_NAMES.map((p) => `${ns}/${p}`));
const SUBNETS = { 'node-1': '10.11.1.0/24', 'node-2': '10.11.2.0/24' } as const;

/** Each pod's address: a and b on node-1, c on node-2; the namespace picks the tens. */
export function podIp(ref: string): string {
  const [ns, pod] = ref.split('/') as [string, string];
  const tens = { x: 10, y: 20, z: 30 }[ns]!;
  const node = pod === 'c' ? 2 : 1;
  return `10.11.${node}.${tens + (pod === 'b' ? 1 : 0)}`;
}

/** What the steps of a case change. */
export interface ClusterState {
  policies: Map<string, V1NetworkPolicy>;
  namespaceLabels: Map<string, Record<string, string>>;
  podLabels: Map<string, Record<string, string>>;
}

export interface Expectation {
  /** Probes (`80/tcp`, ...) whose 81 results all follow `table`. */
  probes: string[];
  table: string;
}

export interface Step {
  /** What the step does, for the failure message. */
  does: string;
  change: (s: ClusterState) => void;
  expect: Expectation[];
}

export interface MatrixCase {
  /** The upstream test this follows. */
  name: string;
  steps: Step[];
}

export function initialState(): ClusterState {
  return {
    policies: new Map(),
    namespaceLabels: new Map(NAMESPACES.map((ns) => [ns, { ns, 'kubernetes.io/metadata.name': ns }])),
    podLabels: new Map(PODS.map((p) => [p, { pod: p.split('/')[1]! }])),
  };
}

/** A policy as a user writes it (`metadata.namespace`, `metadata.name`, `spec`). */
export function policy(namespace: string, name: string, spec: V1NetworkPolicy['spec']): V1NetworkPolicy {
  return {
    metadata: { namespace, name, uid: `00000000-0000-4000-8000-${hash12(`${namespace}/${name}`)}` },
    spec: spec!,
  };
}

const hash12 = (s: string) =>
  [...s]
    .reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 0xffffffffffff, 7)
    .toString(16)
    .padStart(12, '0');

export function addPolicy(s: ClusterState, p: V1NetworkPolicy): void {
  s.policies.set(`${p.metadata!.namespace}/${p.metadata!.name}`, p);
}

const NODES: V1Node[] = Object.entries(SUBNETS).map(([name, podCIDR], i) => ({
  metadata: { name, uid: `0000000${i + 1}-0000-4000-8000-00000000000${i + 1}` },
  spec: { podCIDR },
  status: { addresses: [{ type: 'InternalIP', address: `192.168.56.${101 + i}` }] },
}));

const PORTS = [80, 81].flatMap((n) =>
  (['TCP', 'UDP'] as const).map((protocol) => ({
    name: `serve-${n}-${protocol.toLowerCase()}`,
    containerPort: n,
    protocol,
  })),
);

/** The Kubernetes objects of a state. */
export function clusterOf(s: ClusterState): { nodes: V1Node[]; namespaces: V1Namespace[]; pods: V1Pod[] } {
  const namespaces = NAMESPACES.map((ns) => ({
    metadata: { name: ns, uid: `ns-${ns}`, labels: { ...s.namespaceLabels.get(ns) } },
  }));
  const pods = PODS.map((ref): V1Pod => {
    const [ns, name] = ref.split('/') as [string, string];
    const ip = podIp(ref);
    return {
      metadata: { namespace: ns, name, uid: `pod-${ns}-${name}`, labels: { ...s.podLabels.get(ref) } },
      spec: {
        nodeName: name === 'c' ? 'node-2' : 'node-1',
        containers: [{ name: 'serve', image: 'agnhost', ports: PORTS }],
      },
      status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] },
    };
  });
  return { nodes: NODES, namespaces, pods };
}

/** Makes ODL hold what the cluster state needs, and returns what `reach` reads from it. */
export interface Programmer {
  program(s: ClusterState): Promise<HoldingsIndex>;
  close(): Promise<void>;
}

/** The watcher's programmer, with the world it runs in (for tests that break ODL by hand). */
export interface WatcherProgrammer extends Programmer {
  env: Env;
  /** Stops the watcher (ODL stays as it wrote it, and is no longer repaired). */
  stopWatcher(): Promise<void>;
}

/**
 * The watcher, enforcing NetworkPolicy, over the Kubernetes simulator and the ODL emulator
 * (Genius' binding filled in): each `program` makes the simulator hold the state (policies
 * created, replaced or deleted; namespace and pod labels replaced), waits until the watcher is
 * idle and ODL has had no write for a while, and reads ODL whole through the kinds table.
 */
export async function watcherProgrammer(profile: Profile, dialect: Dialect): Promise<WatcherProgrammer> {
  const env = await startEnv({ profile, dialect, emulator: { fillParentInterface: true } });
  const net = env.kc.makeApiClient(NetworkingV1Api);
  const initial = initialState();
  const cluster = clusterOf(initial);
  for (const node of cluster.nodes)
    await createNode(env, node.metadata!.name!, nodeInternalIp(node)!, node.spec!.podCIDR!);
  for (const ns of cluster.namespaces)
    await env.core.createNamespace({
      body: { metadata: { name: ns.metadata!.name!, labels: ns.metadata!.labels! } },
    });
  for (const pod of cluster.pods) {
    const { uid: _, ...metadata } = pod.metadata!;
    await env.core.createNamespacedPod({ namespace: metadata.namespace!, body: { ...pod, metadata } });
  }
  const watcher = await startTestWatcher(env, { networkPolicyEnforcement: 'on' });
  await watcher.ready();
  const applied = {
    policies: new Map<string, string>(),
    namespaces: new Map<string, string>(),
    pods: new Map<string, string>(),
  };
  for (const ns of NAMESPACES) applied.namespaces.set(ns, JSON.stringify(initial.namespaceLabels.get(ns)));
  for (const p of PODS) applied.pods.set(p, JSON.stringify(initial.podLabels.get(p)));
  const world = { profile, emulator: env.emu, odl: env.odl, close: async () => undefined };

  async function settle(): Promise<void> {
    // idle() alone can answer before the informers have delivered the change: ODL quiet too.
    let last = -1;
    for (;;) {
      await watcher.idle();
      const writes = writeCount(env);
      if (writes === last) return;
      last = writes;
      await sleep(500);
    }
  }

  return {
    async program(s) {
      for (const [key, p] of s.policies) {
        const spec = JSON.stringify(p.spec);
        if (applied.policies.get(key) === spec) continue;
        const namespace = p.metadata!.namespace!;
        const body: V1NetworkPolicy = { metadata: { name: p.metadata!.name!, namespace }, spec: p.spec! };
        if (applied.policies.has(key))
          await net.replaceNamespacedNetworkPolicy({ name: p.metadata!.name!, namespace, body });
        else await net.createNamespacedNetworkPolicy({ namespace, body });
        applied.policies.set(key, spec);
      }
      for (const key of [...applied.policies.keys()])
        if (!s.policies.has(key)) {
          const [namespace, name] = key.split('/') as [string, string];
          await net.deleteNamespacedNetworkPolicy({ name, namespace });
          applied.policies.delete(key);
        }
      for (const [ns, labels] of s.namespaceLabels) {
        if (applied.namespaces.get(ns) === JSON.stringify(labels)) continue;
        const current = await env.core.readNamespace({ name: ns });
        await env.core.replaceNamespace({
          name: ns,
          body: { ...current, metadata: { ...current.metadata, labels } },
        });
        applied.namespaces.set(ns, JSON.stringify(labels));
      }
      for (const [ref, labels] of s.podLabels) {
        if (applied.pods.get(ref) === JSON.stringify(labels)) continue;
        const [namespace, name] = ref.split('/') as [string, string];
        const current = await env.core.readNamespacedPod({ name, namespace });
        await env.core.replaceNamespacedPod({
          name,
          namespace,
          body: { ...current, metadata: { ...current.metadata, labels } },
        });
        applied.pods.set(ref, JSON.stringify(labels));
      }
      await settle();
      return readIndex(world);
    },
    env,
    stopWatcher: () => watcher.close(),
    async close() {
      await watcher.close();
      await env.close();
    },
  };
}

/** Parses a hand-written table: a header of the 9 pods, then one row per client pod. */
export function parseTable(text: string): Map<string, boolean> {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const header = lines[0]!.split(/\s+/);
  if (header.join(' ') !== PODS.join(' ')) throw new Error(`table header must be ${PODS.join(' ')}`);
  const out = new Map<string, boolean>();
  const rows = lines.slice(1);
  if (rows.length !== PODS.length) throw new Error(`a table has ${PODS.length} rows, got ${rows.length}`);
  rows.forEach((row, i) => {
    const [from, ...cells] = row.split(/\s+/);
    if (from !== PODS[i]) throw new Error(`row ${i + 1} must be ${PODS[i]}, got ${from}`);
    if (cells.length !== PODS.length || cells.some((c) => c !== '.' && c !== 'X'))
      throw new Error(`row ${from}: ${PODS.length} cells of . or X`);
    cells.forEach((c, j) => out.set(`${from}>${PODS[j]}`, c === '.'));
  });
  return out;
}

/** A table in the same layout, for a readable diff. */
export function formatTable(cells: Map<string, boolean>): string {
  const rows = PODS.map((from) =>
    [from, ...PODS.map((to) => (cells.get(`${from}>${to}`) ? '.' : 'X'))].join(' '),
  );
  return [PODS.join(' '), ...rows].join('\n');
}

/** Every probe of one port, as `reach` computes it from ODL. */
export function probeAll(index: HoldingsIndex, profile: Profile, port: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const from of PODS)
    for (const to of PODS) {
      const iface = (ref: string) => ref.replace('/', ':');
      const r = analyseReach(index, profile, {
        from: { interface: iface(from), ip: podIp(from) },
        to: { interface: iface(to), ip: podIp(to) },
        probe: parseProbe(port),
      });
      out.set(`${from}>${to}`, r.verdict === 'delivered');
    }
  return out;
}
