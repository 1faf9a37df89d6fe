/**
 * NetworkPolicy benchmark: P pods on N nodes in M namespaces, with Q NetworkPolicies of mixed
 * selectors (pod labels, namespace labels, both, ipBlock with except, named and numeric ports),
 * seeded into an in-process Kubernetes API simulator; the watcher (enforcement on) converges an
 * empty ODL emulator. Prints:
 *
 * - translation: the time to compute the whole translation alone (policy index, every ACL,
 *   every pod's port security), no I/O; and what one reconcile of an ACL key computes: the
 *   sweep's desired names, one policy's ACLs;
 * - converge: from start until the watcher is idle, and the writes by module (ACLs,
 *   interfaces);
 * - relabel: the writes caused by relabelling one pod (it leaves one peer group, enters
 *   another), and the time until idle again.
 *
 *   node --import tsx bench/watcher/policies.ts [--pods 10000] [--policies 1000] [--nodes 100]
 *     [--namespaces 100] [--profile aluminium] [--timeout 900]
 *
 * Everything shares the machine: figures are relative, not absolute.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import {
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1NetworkPolicy,
  type V1Pod,
} from '@kubernetes/client-node';
import { readPolicy, type PolicySpec } from '../../src/netvirt/policy/spec.js';
import { podSourceOf, PolicyIndex } from '../../src/netvirt/policy/translate.js';
import type { Profile } from '../../src/netvirt/profile.js';
import { seconds, startWatcherRun } from '../common/watcher-run.js';

/** Every flag takes a value; these are the defaults. */
const DEFAULTS = {
  pods: '10000',
  policies: '1000',
  nodes: '100',
  namespaces: '100',
  profile: 'aluminium',
  timeout: '900',
};
const { values } = parseArgs({
  options: Object.fromEntries(
    Object.entries(DEFAULTS).map(([k, d]) => [k, { type: 'string' as const, default: d }]),
  ),
});
const flag = (name: keyof typeof DEFAULTS): string => String(values[name] ?? DEFAULTS[name]);
const o = {
  pods: Number(flag('pods')),
  policies: Number(flag('policies')),
  nodes: Number(flag('nodes')),
  namespaces: Number(flag('namespaces')),
  profile: flag('profile') as Profile,
  timeoutMs: Number(flag('timeout')) * 1000,
};

const ns = (i: number) => `ns-${i % o.namespaces}`;
const ipOf = (i: number) => `10.${64 + Math.floor(i / 65536)}.${Math.floor(i / 256) % 256}.${i % 256}`;

function cluster(): { items: unknown[]; pods: V1Pod[]; policies: V1NetworkPolicy[] } {
  const items: unknown[] = [];
  for (let n = 0; n < o.nodes; n++)
    items.push({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: `node-${n}` },
      spec: {},
      status: {
        addresses: [{ type: 'InternalIP', address: `192.168.${Math.floor(n / 250)}.${(n % 250) + 1}` }],
      },
    });
  for (let m = 0; m < o.namespaces; m++)
    items.push({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: `ns-${m}`, labels: { tier: `t${m % 5}` } },
    });
  const pods: V1Pod[] = [];
  for (let i = 0; i < o.pods; i++) {
    const ip = ipOf(i + 1);
    pods.push({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `pod-${i}`, namespace: ns(i), labels: { app: `app-${i % 50}`, role: `r${i % 7}` } },
      spec: {
        nodeName: `node-${i % o.nodes}`,
        containers: [{ name: 'c', image: 'pause', ports: [{ name: 'http', containerPort: 8000 + (i % 3) }] }],
      },
      status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] },
    });
  }
  const policies: V1NetworkPolicy[] = [];
  for (let q = 0; q < o.policies; q++) {
    const kind = q % 5;
    const peer =
      kind === 0
        ? { podSelector: { matchLabels: { role: `r${q % 7}` } } }
        : kind === 1
          ? { namespaceSelector: { matchLabels: { tier: `t${q % 5}` } } }
          : kind === 2
            ? {
                namespaceSelector: { matchLabels: { tier: `t${q % 5}` } },
                podSelector: {
                  matchExpressions: [
                    { key: 'role', operator: 'In', values: [`r${q % 7}`, `r${(q + 1) % 7}`] },
                  ],
                },
              }
            : { ipBlock: { cidr: '10.0.0.0/8', except: [`10.${q % 200}.0.0/16`] } };
    const ports =
      kind === 4
        ? [{ port: 'http' }]
        : [{ port: 80 + (q % 20) }, { protocol: 'UDP', port: 5000, endPort: 5010 }];
    policies.push({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: `pol-${q}`, namespace: ns(q) },
      spec: {
        podSelector: { matchLabels: { app: `app-${q % 50}` } },
        policyTypes: q % 4 === 0 ? ['Ingress', 'Egress'] : ['Ingress'],
        ingress: [{ from: [peer], ports } as never],
        ...(q % 4 === 0 ? { egress: [{ to: [{ podSelector: {} }] }] } : {}),
      },
    });
  }
  items.push(...pods, ...policies);
  return { items, pods, policies };
}

async function main(): Promise<void> {
  const { items, pods, policies } = cluster();

  // Translation alone: the index, every ACL, every pod's port security.
  const t0 = performance.now();
  const specs = policies.map((p) =>
    readPolicy({ ...p, metadata: { ...p.metadata, uid: `uid-${p.metadata?.name}` } }),
  );
  const labels = new Map(Array.from({ length: o.namespaces }, (_, m) => [`ns-${m}`, { tier: `t${m % 5}` }]));
  const index = new PolicyIndex(
    'bench',
    o.profile,
    specs.filter((s): s is PolicySpec => !('error' in s)),
    (n) => labels.get(n),
  );
  const { acls } = index.acls(pods, []);
  let bindings = 0;
  for (const pod of pods) bindings += index.podSecurity(pod, ['ipv4']).securityGroups.length;
  const aces = [...acls.values()].reduce((n, a) => n + a.aces.length, 0);
  console.log(
    `translation: ${seconds(performance.now() - t0)} for ${o.pods} pods, ${o.policies} policies: ${acls.size} ACLs, ${aces} ACEs, ${bindings} bindings`,
  );
  // What one reconcile of an ACL key computes (plan-policy.ts): the sweep's names, one policy's ACLs.
  const source = podSourceOf(pods);
  const t1 = performance.now();
  const names = index.aclNames(source, []);
  const t2 = performance.now();
  for (const p of index.policies) index.policyAcls(p, source);
  const perPolicy = (performance.now() - t2) / Math.max(1, index.policies.length);
  console.log(
    `per key: sweep (${names.size} names, no rule) ${(t2 - t1).toFixed(1)} ms; one policy's ACLs ${perPolicy.toFixed(2)} ms on average`,
  );

  const run = await startWatcherRun({
    profile: o.profile,
    items,
    timeoutMs: o.timeoutMs,
    settings: { networkPolicyEnforcement: 'on' },
  });
  const { emu, kc, watcher, started } = run;
  const writes = () => ({ ...emu.counters().writes });
  try {
    await watcher.ready();
    await watcher.idle();
    const converged = writes();
    console.log(
      `converge: ${seconds(performance.now() - started)}; ACL writes ${converged['ietf-access-control-list'] ?? 0}, interface writes ${converged['ietf-interfaces'] ?? 0}`,
    );

    // Relabel one pod: it leaves the peer groups of role r0 and enters those of r1.
    const before = writes();
    const relabelled = performance.now();
    const core = kc.makeApiClient(CoreV1Api);
    await core.patchNamespacedPod(
      { name: 'pod-0', namespace: ns(0), body: { metadata: { labels: { app: 'app-0', role: 'r1' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    // The change reaches the watcher through its informer: wait for the pod's interface write.
    while ((writes()['ietf-interfaces'] ?? 0) === (before['ietf-interfaces'] ?? 0))
      await new Promise((r) => setTimeout(r, 20));
    await watcher.idle();
    const after = writes();
    const delta = (m: string) => (after[m] ?? 0) - (before[m] ?? 0);
    console.log(
      `relabel one pod: ${seconds(performance.now() - relabelled)}; ACL writes ${delta('ietf-access-control-list')}, interface writes ${delta('ietf-interfaces')}`,
    );
  } finally {
    await run.close();
  }
}

await main();
