/**
 * The deployment manifests (config/deploy) and sample configuration (config/*.example.yaml):
 *
 * - kustomization lists every manifest, `kubectl kustomize` builds them, each parses;
 * - the Namespace is accepted by a Kubernetes API server (the simulator, through kubectl's
 *   server-side dry run and then a real create read back with @kubernetes/client-node);
 * - kinds the simulator does not serve are checked structurally: selectors match template
 *   labels, every mount has a volume and every volume a mount, references (ServiceAccount,
 *   ConfigMap keys, Secret) resolve, probes and Prometheus annotations name the metrics port;
 * - every container argument is a flag the program's own `--help` lists, and the effective
 *   configuration (ConfigMap file + downward-API environment + arguments), computed by the
 *   programs' own config loaders, agrees with the manifests: same metrics port, the Lease the
 *   Role grants, the Secret's file, and every node path the agent and the shim share mounted
 *   from the host at the same path;
 * - the RBAC rules cover exactly the API calls the code makes (static inventory of informers
 *   and requests), plus the read-only rules granted for planned growth, and nothing else.
 */
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { buildAgentConfig, type AgentConfig } from '../../src/agent/config.js';
import { startKubeSim, type KubeSim } from '../../src/kubesim/server.js';
import { loadWatcherConfig, type WatcherConfig } from '../../src/config/watcher-config.js';
import { apiCalls, key, verbsByResource } from './api-calls.js';
import {
  DEPLOY_DIR,
  filesUnder,
  find,
  kustomizationResources,
  loadManifests,
  read,
  ROOT,
  type Manifest,
} from './repo.js';

const run = promisify(execFile);
const NAMESPACE = 'odlcoe-system';
const NAMESPACED = new Set([
  'ServiceAccount',
  'Role',
  'RoleBinding',
  'ConfigMap',
  'Secret',
  'Deployment',
  'DaemonSet',
]);
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding']);

// --- minimal shapes of what the tests read -------------------------------------------------------

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { fieldPath: string };
    resourceFieldRef?: { containerName?: string; resource: string; divisor?: string };
  };
}
interface Probe {
  httpGet?: { path: string; port: string | number };
}
interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  volumeMounts?: {
    name: string;
    mountPath: string;
    readOnly?: boolean;
    subPath?: string;
    mountPropagation?: string;
  }[];
  securityContext?: Record<string, unknown> & { capabilities?: { drop?: string[] } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
}
interface Volume {
  name: string;
  configMap?: { name: string; items?: { key: string; path: string }[] };
  secret?: { secretName: string; items?: { key: string; path: string }[] };
  hostPath?: { path: string; type?: string };
  emptyDir?: Record<string, unknown>;
}
interface PodSpec {
  serviceAccountName?: string;
  hostNetwork?: boolean;
  dnsPolicy?: string;
  priorityClassName?: string;
  tolerations?: { key?: string; operator?: string; effect?: string }[];
  securityContext?: Record<string, unknown>;
  containers: Container[];
  volumes?: Volume[];
}
interface Workload extends Manifest {
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
      spec: PodSpec;
    };
  };
}
interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

// --- helpers -----------------------------------------------------------------------------------

const manifests = loadManifests();
const workloads = manifests.filter((m) => m.kind === 'Deployment' || m.kind === 'DaemonSet') as Workload[];
const watcher = find(manifests, 'Deployment', 'odlcoe-watcher') as Workload;
const agent = find(manifests, 'DaemonSet', 'odlcoe-agent') as Workload;
const configMap = find(manifests, 'ConfigMap', 'odlcoe-config') as Manifest & {
  data: Record<string, string>;
};
const secretTemplate = YAML.parse(read('config/deploy/odl-credentials.example.yaml')) as Manifest & {
  stringData?: Record<string, string>;
};
const only = <T>(items: T[] | undefined, what: string): T => {
  assert.equal(items?.length, 1, `exactly one ${what}`);
  return items[0] as T;
};
const container = (w: Workload) => only(w.spec.template.spec.containers, `container in ${w.metadata.name}`);

/** Values the downward API would give, for `$(VAR)` expansion in arguments. */
function environment(w: Workload): Record<string, string> {
  const field: Record<string, string> = {
    'metadata.name': `${w.metadata.name}-7d9f8b6c5-x2k4p`,
    'metadata.namespace': w.metadata.namespace ?? '',
    'spec.nodeName': 'worker-1',
  };
  const out: Record<string, string> = {};
  for (const e of container(w).env ?? []) {
    const path = e.valueFrom?.fieldRef?.fieldPath;
    const resource = e.valueFrom?.resourceFieldRef;
    const value =
      e.value ??
      (path !== undefined ? field[path] : resource !== undefined ? resourceValue(w, resource) : undefined);
    assert.ok(
      value !== undefined,
      `${w.metadata.name}: env ${e.name} has a value, a known fieldRef (${path}) or resourceFieldRef`,
    );
    out[e.name] = value;
  }
  return out;
}

/** Bytes of a memory quantity as Kubernetes writes them (`1Gi`, `512Mi`, `1000M`, plain bytes). */
function bytesOf(quantity: string): number {
  const m = /^(\d+)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(quantity);
  assert.ok(m, `a memory quantity odlcoe's manifests use: ${quantity}`);
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return Number(m[1]) * (m[2] ? unit[m[2] as keyof typeof unit] : 1);
}

/** A Downward API resourceFieldRef's value: the container's limit over the divisor, rounded up. */
function resourceValue(
  w: Workload,
  ref: { containerName?: string; resource: string; divisor?: string },
): string {
  assert.equal(ref.resource, 'limits.memory', 'the only resource odlcoe reads');
  assert.equal(ref.containerName ?? container(w).name, container(w).name, 'its own container');
  const limit = container(w).resources?.limits?.memory;
  assert.ok(limit, `${w.metadata.name}: limits.memory is set, so the Downward API gives it (not the node's)`);
  return String(Math.ceil(bytesOf(limit) / bytesOf(ref.divisor ?? '1')));
}

function expandArgs(w: Workload): string[] {
  const env = environment(w);
  return (container(w).args ?? []).map((a) =>
    a.replace(/\$\((\w+)\)/g, (_, name: string) => {
      assert.ok(name in env, `${w.metadata.name}: $(${name}) in an argument names an env variable`);
      return env[name] as string;
    }),
  );
}

/** `--flag` names in a program's --help output, and which of them take a value. */
interface HelpFlags {
  flags: Set<string>;
  takesValue: Set<string>;
}
function parseHelp(text: string): HelpFlags {
  const flags = new Set<string>();
  const takesValue = new Set<string>();
  for (const m of text.matchAll(/^\s+(?:-\w, )?(--[a-z][\w-]*)( <[^>]+>| \[[^\]]+\])?/gm)) {
    flags.add(m[1] as string);
    if (m[2]) takesValue.add(m[1] as string);
  }
  return { flags, takesValue };
}

/** Arguments as commander would key them (`--lease-name=x` → leaseName: 'x'). */
function argsToFlags(args: string[], help: HelpFlags): Record<string, string | string[] | boolean> {
  const out: Record<string, string | string[] | boolean> = {};
  const camel = (flag: string) =>
    flag.replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const [flag = '', inline] = arg.split(/=(.*)/s, 2);
    if (flag.startsWith('--no-')) {
      out[camel(flag.replace(/^--no-/, '--'))] = false;
      continue;
    }
    if (!help.takesValue.has(flag)) {
      out[camel(flag)] = true;
      continue;
    }
    const value = inline ?? args[++i] ?? '';
    const k = camel(flag);
    const previous = out[k];
    out[k] =
      previous === undefined ? value : [...(Array.isArray(previous) ? previous : [String(previous)]), value];
  }
  return out;
}

/** The mount whose path holds `file`, and its volume. */
function mountOf(
  w: Workload,
  file: string,
): { mountPath: string; volume: Volume; mountPropagation?: string } {
  const c = container(w);
  const mounts = (c.volumeMounts ?? [])
    .filter((m) => file === m.mountPath || file.startsWith(`${m.mountPath}/`))
    .sort((a, b) => b.mountPath.length - a.mountPath.length);
  const mount = mounts[0];
  assert.ok(mount, `${w.metadata.name}: ${file} is on a mounted volume`);
  const volume = (w.spec.template.spec.volumes ?? []).find((v) => v.name === mount.name);
  assert.ok(volume, `${w.metadata.name}: volume ${mount.name}`);
  return {
    mountPath: mount.mountPath,
    volume,
    ...(mount.mountPropagation ? { mountPropagation: mount.mountPropagation } : {}),
  };
}

function rulesFor(serviceAccount: string): { rule: Rule; kind: string; namespace?: string }[] {
  const out: { rule: Rule; kind: string; namespace?: string }[] = [];
  for (const binding of manifests.filter(
    (m) => m.kind === 'ClusterRoleBinding' || m.kind === 'RoleBinding',
  )) {
    const b = binding as Manifest & {
      roleRef: { kind: string; name: string };
      subjects: { kind: string; name: string; namespace?: string }[];
    };
    if (
      !b.subjects.some(
        (s) => s.kind === 'ServiceAccount' && s.name === serviceAccount && s.namespace === NAMESPACE,
      )
    )
      continue;
    const role = find(manifests, b.roleRef.kind, b.roleRef.name) as Manifest & { rules: Rule[] };
    if (b.kind === 'RoleBinding')
      assert.equal(
        role.metadata.namespace,
        b.metadata.namespace,
        `${b.metadata.name} binds a Role of its namespace`,
      );
    for (const rule of role.rules)
      out.push({
        rule,
        kind: role.kind,
        ...(role.metadata.namespace ? { namespace: role.metadata.namespace } : {}),
      });
  }
  return out;
}

function granted(rules: { rule: Rule }[]): Map<string, Set<string>> {
  return verbsByResource(
    rules.flatMap(({ rule }) =>
      rule.apiGroups.flatMap((group) =>
        rule.resources.flatMap((resource) => rule.verbs.map((verb) => ({ group, resource, verb }))),
      ),
    ),
  );
}

const asObject = (m: Map<string, Set<string>>) =>
  Object.fromEntries([...m].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, [...v].sort()]));

// --- the tests ---------------------------------------------------------------------------------

describe('deployment manifests', () => {
  let watcherHelp: HelpFlags;
  let agentHelp: HelpFlags;
  let watcherConfig: WatcherConfig;
  let agentConfig: AgentConfig;
  let tmp: string;

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'odlcoe-deploy-'));
    const help = async (main: string) =>
      (
        await run(process.execPath, ['--import', 'tsx', join(ROOT, main), '--help'], {
          cwd: ROOT,
          timeout: 60_000,
        })
      ).stdout;
    [watcherHelp, agentHelp] = (
      await Promise.all([help('src/watcher/main.ts'), help('src/agent/main.ts')])
    ).map(parseHelp) as [HelpFlags, HelpFlags];

    // The effective configuration each program computes from what the manifests give it.
    const wArgs = expandArgs(watcher);
    const wFlags = argsToFlags(wArgs, watcherHelp);
    const wFile = String(wFlags.config);
    assert.equal(mountOf(watcher, wFile).volume.configMap?.name, 'odlcoe-config');
    watcherConfig = loadWatcherConfig({
      flags: wFlags,
      env: environment(watcher),
      readFile: (path) => {
        assert.equal(path, wFile);
        return YAML.parse(configMap.data[posix.basename(path)] ?? '');
      },
      defaultIdentity: () => 'default-identity',
    });

    const aArgs = (container(agent).args ?? []).slice();
    const aFlags = argsToFlags(aArgs, agentHelp);
    const aFile = String(aFlags.config);
    assert.equal(mountOf(agent, aFile).volume.configMap?.name, 'odlcoe-config');
    const local = join(tmp, posix.basename(aFile));
    writeFileSync(local, configMap.data[posix.basename(aFile)] ?? '');
    const { config: _config, ...settingFlags } = aFlags;
    agentConfig = buildAgentConfig({
      file: local,
      env: environment(agent),
      flags: settingFlags as Record<string, string | string[] | undefined>,
    });
  });
  after(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('kustomization lists every manifest once, and kubectl kustomize builds them', async () => {
    const listed = kustomizationResources();
    assert.equal(new Set(listed).size, listed.length, 'no file listed twice');
    const onDisk = filesUnder('config/deploy')
      .map((f) => posix.basename(f))
      .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml' && !f.endsWith('.example.yaml'));
    assert.deepEqual([...listed].sort(), onDisk.sort(), 'every manifest in config/deploy is listed');
    assert.ok(!listed.some((f) => f.includes('example')), 'templates are never applied');

    const built = YAML.parseAllDocuments(
      (await run('/usr/bin/kubectl', ['kustomize', DEPLOY_DIR])).stdout,
    ).map((d) => d.toJS() as Manifest);
    const ids = (ms: Manifest[]) =>
      ms.map((m) => `${m.kind}/${m.metadata.namespace ?? ''}/${m.metadata.name}`).sort();
    assert.deepEqual(ids(built), ids(manifests));
  });

  it('every object is well-formed, in odlcoe-system (or cluster-scoped), unique, labelled', () => {
    const seen = new Set<string>();
    for (const m of manifests) {
      const id = `${m.file}: ${m.kind}/${m.metadata?.name}`;
      assert.ok(m.apiVersion && m.kind && m.metadata?.name, `${id} has apiVersion, kind, metadata.name`);
      assert.ok(NAMESPACED.has(m.kind) || CLUSTER_SCOPED.has(m.kind), `${id}: a kind these tests know`);
      if (NAMESPACED.has(m.kind)) assert.equal(m.metadata.namespace, NAMESPACE, `${id} namespace`);
      else assert.equal(m.metadata.namespace, undefined, `${id} is cluster-scoped`);
      const k = `${m.kind}/${m.metadata.namespace ?? ''}/${m.metadata.name}`;
      assert.ok(!seen.has(k), `${id} defined once`);
      seen.add(k);
      assert.equal(
        m.metadata.labels?.['app.kubernetes.io/part-of'],
        'odlcoe',
        `${id} labelled part-of odlcoe`,
      );
    }
  });

  describe('against the Kubernetes API simulator', () => {
    let sim: KubeSim;
    let kubeconfig: string;
    before(async () => {
      sim = await startKubeSim({ port: 0 });
      kubeconfig = join(tmp, 'kubeconfig');
      sim.writeKubeconfig(kubeconfig);
    });
    after(async () => {
      await sim?.close();
    });

    it('the Namespace passes a server-side dry run, then is created as written', async () => {
      const file = join(DEPLOY_DIR, 'namespace.yaml');
      const kubectl = (...args: string[]) => run('/usr/bin/kubectl', ['--kubeconfig', kubeconfig, ...args]);
      const dry = await kubectl('create', '--dry-run=server', '-f', file, '-o', 'json');
      const echoed = JSON.parse(dry.stdout) as Manifest;
      assert.equal(echoed.metadata.name, NAMESPACE);

      const kc = new KubeConfig();
      kc.loadFromString(sim.kubeconfig());
      const core = kc.makeApiClient(CoreV1Api);
      await assert.rejects(core.readNamespace({ name: NAMESPACE }), 'a dry run creates nothing');

      await kubectl('apply', '-f', file);
      const created = await core.readNamespace({ name: NAMESPACE });
      const written = find(manifests, 'Namespace', NAMESPACE);
      assert.deepEqual(created.metadata?.labels, written.metadata.labels);
      assert.equal(created.status?.phase, 'Active');
    });
  });

  for (const w of workloads) {
    it(`${w.kind} ${w.metadata.name}: selector, volumes, references, probes, resources`, () => {
      const spec = w.spec.template.spec;
      const labels = w.spec.template.metadata.labels;
      for (const [k, v] of Object.entries(w.spec.selector.matchLabels))
        assert.equal(labels[k], v, `selector ${k}=${v} matches the template labels`);

      const volumes = new Map((spec.volumes ?? []).map((v) => [v.name, v]));
      assert.equal(volumes.size, (spec.volumes ?? []).length, 'volume names are unique');
      const mounted = new Set<string>();
      for (const c of spec.containers) {
        const paths = new Set<string>();
        for (const m of c.volumeMounts ?? []) {
          assert.ok(volumes.has(m.name), `${c.name}: mount ${m.mountPath} has a volume ${m.name}`);
          assert.ok(!paths.has(m.mountPath), `${c.name}: ${m.mountPath} mounted once`);
          assert.equal(
            m.subPath,
            undefined,
            `${c.name}: no subPath mounts (they never see ConfigMap updates)`,
          );
          paths.add(m.mountPath);
          mounted.add(m.name);
        }
      }
      for (const name of volumes.keys()) assert.ok(mounted.has(name), `volume ${name} is mounted`);
      for (const v of volumes.values()) {
        if (v.configMap) {
          const cm = find(manifests, 'ConfigMap', v.configMap.name) as Manifest & {
            data: Record<string, string>;
          };
          for (const item of v.configMap.items ?? [])
            assert.ok(item.key in cm.data, `ConfigMap key ${item.key}`);
        }
        if (v.secret) {
          assert.equal(
            v.secret.secretName,
            secretTemplate.metadata.name,
            'the Secret the template describes',
          );
          for (const item of v.secret.items ?? [])
            assert.ok(item.key in (secretTemplate.stringData ?? {}), `Secret key ${item.key}`);
        }
        if (v.hostPath)
          assert.ok(posix.isAbsolute(v.hostPath.path), `hostPath ${v.hostPath.path} is absolute`);
      }

      const sa = find(manifests, 'ServiceAccount', spec.serviceAccountName ?? '');
      assert.equal(sa.metadata.namespace, w.metadata.namespace);

      const c = container(w);
      const ports = new Map((c.ports ?? []).map((p) => [p.name, p.containerPort]));
      const metricsPort = ports.get('metrics');
      assert.ok(metricsPort, 'a named metrics port');
      const probes = {
        startupProbe: '/healthz',
        livenessProbe: '/healthz',
        readinessProbe: '/readyz',
      } as const;
      for (const [probe, path] of Object.entries(probes)) {
        const get = c[probe as keyof typeof probes]?.httpGet;
        assert.equal(get?.path, path, `${probe} on ${path}`);
        assert.equal(get?.port, 'metrics', `${probe} on the metrics port`);
      }
      const annotations = w.spec.template.metadata.annotations ?? {};
      assert.equal(annotations['prometheus.io/scrape'], 'true');
      assert.equal(
        annotations['prometheus.io/port'],
        String(metricsPort),
        'Prometheus scrapes the metrics port',
      );
      assert.equal(annotations['prometheus.io/path'], '/metrics');

      assert.ok(c.resources?.requests?.cpu && c.resources.requests.memory, 'cpu and memory requests');
      assert.ok(c.resources?.limits?.memory, 'a memory limit');
      assert.equal(c.image, 'odlcoe:dev', 'the image the Dockerfile builds (tag it for your registry)');
      for (const e of c.env ?? [])
        if (e.valueFrom)
          assert.ok(
            ['metadata.name', 'metadata.namespace', 'spec.nodeName'].includes(
              e.valueFrom.fieldRef?.fieldPath ?? '',
            ) || e.valueFrom.resourceFieldRef?.resource === 'limits.memory',
            `${e.name}: a downward-API field or the container's memory limit`,
          );
    });
  }

  it('every container argument is a flag its program accepts', () => {
    const cases: [Workload, HelpFlags][] = [
      [watcher, watcherHelp],
      [agent, agentHelp],
    ];
    for (const [w, help] of cases) {
      assert.ok(help.flags.has('--config'), `sanity: ${w.metadata.name} --help parsed`);
      const args = expandArgs(w);
      for (let i = 0; i < args.length; i++) {
        const flag = (args[i] as string).split('=')[0] as string;
        assert.ok(help.flags.has(flag), `${w.metadata.name}: ${flag} is listed by --help`);
        if (help.takesValue.has(flag) && !(args[i] as string).includes('=')) i++;
      }
    }
  });

  it('watcher: runs with a heap cap from its own memory limit', () => {
    const c = container(watcher);
    assert.deepEqual(
      c.command,
      ['/usr/local/bin/odlcoe-watcher-entrypoint'],
      'the entrypoint that sets the cap',
    );
    const limit = c.resources?.limits?.memory ?? '';
    assert.equal(
      environment(watcher).ODLCOE_MEMORY_LIMIT_MB,
      String(bytesOf(limit) / 2 ** 20),
      'ODLCOE_MEMORY_LIMIT_MB is limits.memory in MiB',
    );
  });

  it('watcher: two replicas, leader election on the Lease its Role grants, hardened pod', () => {
    const spec = watcher.spec.template.spec;
    const c = container(watcher);
    assert.equal(watcher.spec.replicas, 2);
    assert.ok(expandArgs(watcher).includes('--leader-elect'), 'leader election asked for explicitly');

    const le = watcherConfig.leaderElection;
    assert.equal(le.enabled, true);
    assert.equal(le.identity, `${watcher.metadata.name}-7d9f8b6c5-x2k4p`, 'identity = the pod name');
    assert.equal(le.namespace, watcher.metadata.namespace, 'the Lease lives in the watcher namespace');
    const leaseRules = rulesFor(spec.serviceAccountName ?? '').filter(({ rule }) =>
      rule.resources.includes('leases'),
    );
    assert.ok(leaseRules.length > 0);
    for (const { rule, kind, namespace } of leaseRules) {
      assert.equal(kind, 'Role', 'leases only through a namespaced Role');
      assert.equal(namespace, le.namespace);
      if (rule.resourceNames) assert.deepEqual(rule.resourceNames, [le.name], 'the Lease the watcher uses');
    }

    assert.equal(watcherConfig.metrics.port, c.ports?.[0]?.containerPort, 'ops server on the declared port');
    const password = watcherConfig.odl.passwordFile ?? '';
    const secretMount = mountOf(watcher, password);
    assert.equal(
      secretMount.volume.secret?.secretName,
      secretTemplate.metadata.name,
      'password from the Secret',
    );
    assert.ok(posix.basename(password) in (secretTemplate.stringData ?? {}), 'the Secret has that key');

    assert.equal(spec.hostNetwork, true, 'off the pod network it configures');
    assert.equal(spec.dnsPolicy, 'ClusterFirstWithHostNet');
    assert.ok(
      spec.tolerations?.some((t) => t.key === 'node.kubernetes.io/not-ready' && t.operator === 'Exists'),
      'runs on nodes that wait for their pod network',
    );
    assert.equal(spec.securityContext?.['runAsNonRoot'], true);
    assert.ok(Number(spec.securityContext?.['runAsUser']) > 0);
    assert.equal(c.securityContext?.['readOnlyRootFilesystem'], true);
    assert.equal(c.securityContext?.['allowPrivilegeEscalation'], false);
    assert.deepEqual(c.securityContext?.capabilities?.drop, ['ALL']);
    for (const m of c.volumeMounts ?? []) {
      const v = mountOf(watcher, m.mountPath).volume;
      assert.ok(!v.hostPath, `${m.mountPath}: no host paths`);
      if (v.configMap || v.secret) assert.equal(m.readOnly, true, `${m.mountPath} read-only`);
    }
  });

  it('agent: host network, privileged, node name from the downward API, on every node', () => {
    const spec = agent.spec.template.spec;
    const c = container(agent);
    assert.equal(spec.hostNetwork, true);
    assert.equal(c.securityContext?.['privileged'], true);
    assert.equal(spec.priorityClassName, 'system-node-critical');
    assert.ok(
      spec.tolerations?.some((t) => t.operator === 'Exists' && t.key === undefined && t.effect === undefined),
      'tolerates every taint',
    );
    const nodeName = (c.env ?? []).find((e) => e.name === 'NODE_NAME');
    assert.equal(nodeName?.valueFrom?.fieldRef?.fieldPath, 'spec.nodeName');
    assert.equal(agentConfig.nodeName, 'worker-1', 'the agent config takes NODE_NAME');
    assert.equal(agentConfig.metrics.port, c.ports?.[0]?.containerPort, 'ops server on the declared port');
    const password = agentConfig.odl.passwordFile ?? '';
    assert.equal(mountOf(agent, password).volume.secret?.secretName, secretTemplate.metadata.name);
    assert.ok(posix.basename(password) in (secretTemplate.stringData ?? {}));
  });

  it('agent: every path it shares with the host is a hostPath mounted at the same path', () => {
    const env = environment(agent);
    // The shim runs on the host and uses the paths the agent writes into the conflist and the
    // launcher, so these must mean the same file inside and outside the container.
    const shared: [string, string][] = [
      ['cni.confDir', agentConfig.cni.confDir],
      ['cni.binDir', agentConfig.cni.binDir ?? ''],
      ['cni.socket (directory)', dirname(agentConfig.cni.socket)],
      ['cni.pendingDelDir', agentConfig.cni.pendingDelDir],
      ['ipam.dataDir', agentConfig.ipam.dataDir],
      ['ovs.dbSocket (directory)', dirname(agentConfig.ovs.dbSocket ?? '/var/run/openvswitch/db.sock')],
      ['ODLCOE_HOST_NODE_DIR', env['ODLCOE_HOST_NODE_DIR'] ?? ''],
    ];
    if (agentConfig.cni.logFile) shared.push(['cni.logFile (directory)', dirname(agentConfig.cni.logFile)]);
    for (const [what, path] of shared) {
      assert.ok(path.startsWith('/'), `${what} is set`);
      const { mountPath, volume } = mountOf(agent, path);
      assert.ok(volume.hostPath, `${what} ${path} is on a hostPath volume`);
      assert.equal(volume.hostPath.path, mountPath, `${what}: host path and container path are the same`);
    }
    // The runtime adds network namespaces after the agent started: they must propagate in.
    const netns = mountOf(agent, '/run/netns/cni-0123');
    assert.equal(netns.volume.hostPath?.path, '/run/netns');
    assert.equal(netns.mountPropagation, 'HostToContainer');
    // host-local comes from the image, never from the host.
    const plugin = agentConfig.ipam.pluginPath;
    assert.ok(
      !(container(agent).volumeMounts ?? []).some((m) => plugin.startsWith(`${m.mountPath}/`)),
      `${plugin} is the image's own`,
    );
  });

  it('RBAC covers exactly the API calls the code makes (plus declared planned growth)', () => {
    const planned = new Map([['networking.k8s.io/networkpolicies', new Set(['get', 'list', 'watch'])]]);
    const cases = [
      {
        sa: 'odlcoe-watcher',
        // The watcher holds a Lease through src/k8s/leader-election.ts → lease-lock.ts, and
        // records Events through src/k8s/event-recorder.ts.
        code: apiCalls(['src/watcher'], ['src/k8s/lease-lock.ts', 'src/k8s/event-recorder.ts']),
        planned,
      },
      {
        sa: 'odlcoe-agent',
        // Events on pods whose extra interface cannot be wired, through src/k8s/event-recorder.ts.
        code: apiCalls(['src/agent'], ['src/k8s/event-recorder.ts']),
        planned: new Map<string, Set<string>>(),
      },
    ];
    for (const { sa, code, planned: growth } of cases) {
      assert.deepEqual(code.unresolved, [], `${sa}: every API call in the code is understood`);
      const needed = verbsByResource(code.calls);
      const rules = rulesFor(sa);
      const have = granted(rules);
      for (const [res, verbs] of needed)
        for (const verb of verbs)
          assert.ok(
            have.get(res)?.has(verb),
            `${sa}: code needs ${verb} on ${res} (${JSON.stringify(asObject(have))})`,
          );
      for (const [res, verbs] of have) {
        for (const verb of verbs) {
          const need = needed.get(res);
          const ok =
            need?.has(verb) ||
            // `get` beside list/watch: the conventional read set, harmless once list is granted.
            (verb === 'get' && need?.has('list')) ||
            growth.get(res)?.has(verb);
          assert.ok(ok, `${sa}: ${verb} on ${res} is granted but no code needs it`);
        }
      }
      for (const { rule } of rules) {
        assert.ok(
          !rule.verbs.includes('*') && !rule.resources.includes('*') && !rule.apiGroups.includes('*'),
          'no wildcards',
        );
      }
    }
    assert.equal(key({ group: '', resource: 'pods' }), 'core/pods');
  });

  it('the ConfigMap carries the example files verbatim, and both validate', () => {
    assert.equal(configMap.data['watcher.yaml'], read('config/watcher.example.yaml'));
    assert.equal(configMap.data['agent.yaml'], read('config/agent.example.yaml'));
    const example = YAML.parse(read('config/agent.example.yaml')) as Record<string, unknown>;
    assert.equal(example['nodeName'], undefined, 'nodeName comes from NODE_NAME, never from the shared file');
    assert.equal(agentConfig.odl.url, watcherConfig.odl.url, 'watcher and agent talk to the same controller');
    assert.equal(agentConfig.odl.dialect, watcherConfig.settings.dialect, 'and in the same dialect');
  });

  it('the Secret template holds no password, only a marked placeholder and how to create it', () => {
    assert.equal(secretTemplate.kind, 'Secret');
    assert.equal(secretTemplate.metadata.namespace, NAMESPACE);
    const values = Object.values(secretTemplate.stringData ?? {});
    assert.ok(values.length > 0);
    for (const v of values) assert.match(v, /^REPLACE-ME/, 'a placeholder clearly marked to be replaced');
    assert.match(
      read('config/deploy/odl-credentials.example.yaml'),
      /kubectl -n odlcoe-system create secret generic odlcoe-odl-credentials/,
    );
    assert.equal((secretTemplate as unknown as { data?: unknown }).data, undefined, 'no base64 data');
  });
});
