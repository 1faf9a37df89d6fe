/**
 * `npm start -- --once`, exactly as built (dist/src/sandbox/main.js, run as a child process):
 * it must converge and exit 0, its summary must be what `odlcoectl dump -o json` reports for
 * the ODL state it left behind, and it must leave no process or network namespace behind.
 * As root with Open vSwitch the run includes the two simulated nodes, their pings and TCP and UDP
 * exchanges between pods of one node.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/common/exec.js';
import type { DumpTree } from '../../src/cli/dump.js';
import { silentLogger } from '../../src/common/log.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { isAlive } from '../../src/sandbox/processes.js';
import { dataPathUnavailableReason } from '../../src/sandbox/sandbox.js';
import { SAMPLE_CLUSTER } from '../../src/sandbox/sample-cluster.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SANDBOX = join(ROOT, 'dist/src/sandbox/main.js');
const CLI = join(ROOT, 'dist/src/cli/main.js');

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runNode(args: string[], timeoutMs: number): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGINT'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Source files whose compiled file in dist/ is missing or older: the child would run stale code. */
function staleBuild(): string[] {
  const stale: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else if (entry.endsWith('.ts') && !entry.endsWith('.test.ts') && entry !== 'testing.ts') {
        const out = join(ROOT, 'dist', relative(ROOT, path).replace(/\.ts$/, '.js'));
        if (!existsSync(out) || statSync(out).mtimeMs < statSync(path).mtimeMs)
          stale.push(relative(ROOT, path));
      }
    }
  };
  walk(join(ROOT, 'src'));
  walk(join(ROOT, 'cni'));
  return stale;
}

describe('npm start -- --once (the built sandbox)', () => {
  let parent: string;
  let workDir: string;
  let result: Exit;
  let emulator: Emulator | undefined;
  let dataPath: boolean;

  before(async () => {
    const stale = staleBuild();
    assert.deepEqual(
      stale,
      [],
      `dist/ is older than these sources; run \`npm run build\` first: ${stale.slice(0, 5).join(', ')}`,
    );
    dataPath = (await dataPathUnavailableReason()) === undefined;
    parent = await mkdtemp(join(tmpdir(), 'odlcoe-e2e-once-'));
    workDir = join(parent, 'work');
    result = await runNode(
      [
        SANDBOX,
        '--once',
        '-o',
        'json',
        '--timeout',
        '90',
        '--work-dir',
        workDir,
        // Any free ports: tests never take fixed ones.
        ...['--kube-port', '--odl-port', '--metrics-port', '--agent-metrics-port'].flatMap((flag) => [
          flag,
          '0',
        ]),
      ],
      150_000,
    );
  });

  after(async () => {
    await emulator?.close();
    if (parent) await rm(parent, { recursive: true, force: true });
  });

  it('converges and exits 0 with the dump on stdout and the human summary on stderr', () => {
    assert.equal(result.code, 0, `exit ${result.code}\n${result.stderr}`);
    assert.match(result.stderr, /Converged in [\d.]+ s\./);
    assert.match(result.stderr, /ODL now holds, for cluster "sandbox"/);
    const dump = JSON.parse(result.stdout) as DumpTree;
    assert.equal(dump.cluster, 'sandbox');
    const namespaces = [
      ...new Set(SAMPLE_CLUSTER.pods.filter((p) => !p.hostNetwork).map((p) => p.namespace)),
    ].sort();
    assert.deepEqual(
      dump.vpns.map((v) => v.namespace),
      namespaces,
    );
    const interfaces = dump.vpns.flatMap((v) => v.elans.flatMap((e) => e.interfaces));
    assert.equal(interfaces.length, SAMPLE_CLUSTER.pods.filter((p) => !p.hostNetwork).length);
    for (const i of interfaces) {
      assert.ok(i.ip && i.mac, `${i.name} has its IP and MAC in ODL`);
      assert.equal(i.adjacency?.ipPrefix, `${i.ip}/32`, `${i.name} has its adjacency`);
    }
    assert.deepEqual(
      dump.k8sNodes.map((n) => n.podCidr).sort(),
      SAMPLE_CLUSTER.nodes.map((n) => n.podCidr).sort(),
    );
    if (dataPath) {
      assert.match(result.stderr, /Data path \(real pods/);
      assert.doesNotMatch(result.stderr, /FAILED/);
      assert.match(result.stderr, /ping .* ok/);
      assert.match(result.stderr, /tcp +\S+ [\d.]+ -> \S+ [\d.]+ HTTP GET: ok/);
      assert.match(result.stderr, /udp +\S+ [\d.]+ -> \S+ [\d.]+ echo: ok/);
      // Two pods of node-a with an extra interface on backend/storage (Multus, the watcher's record).
      assert.match(
        result.stderr,
        /ping backend\/api-0 10\.50\.0\.\d+ -> monitoring\/prometheus-0 10\.50\.0\.\d+ over net1 \(extra network storage\): ok/,
      );
      assert.match(
        result.stderr,
        /pod interfaces: TX checksum offload turned off \(datapath netdev, userspace-tso-enable false\)/,
      );
    } else {
      assert.match(result.stderr, /Data path: not shown/);
    }
  });

  it('reports exactly what `odlcoectl dump -o json` reports for the ODL state it left', async () => {
    assert.equal(result.code, 0);
    // The emulator kept its datastore in the work dir; serve it again and ask the real CLI.
    emulator = await startEmulator({
      port: 0,
      profile: 'sodium',
      stateFile: join(workDir, 'odl-state.json'),
      logger: silentLogger(),
    });
    const cli = await runNode(
      [CLI, '--config', join(workDir, 'odlcoe.json'), '--odl-url', emulator.url, 'dump', '-o', 'json'],
      60_000,
    );
    assert.equal(cli.code, 0, cli.stderr);
    assert.deepEqual(JSON.parse(result.stdout), JSON.parse(cli.stdout));
  });

  it('leaves no process and no network namespace behind', async () => {
    const namespaces = [...result.stderr.matchAll(/network namespace (odlcoe-sbx-[a-z0-9-]+)/g)].map(
      (m) => m[1],
    );
    if (dataPath) assert.equal(namespaces.length, 2, 'two simulated nodes were announced');
    const listed = (await run('ip', ['netns', 'list'])).stdout;
    for (const ns of namespaces) assert.ok(!listed.includes(ns!), `${ns} was removed`);
    const nodesDir = join(workDir, 'nodes');
    const pidFiles = existsSync(nodesDir)
      ? readdirSync(nodesDir).flatMap((node) => [
          join(nodesDir, node, 'agent.pid'),
          join(nodesDir, node, 'ovs', 'ovsdb-server.pid'),
          join(nodesDir, node, 'ovs', 'ovs-vswitchd.pid'),
        ])
      : [];
    for (const file of pidFiles.filter((f) => existsSync(f))) {
      const pid = Number((await readFile(file, 'utf8')).trim());
      assert.ok(!(await isAlive(pid)), `pid ${pid} (${file}) has exited`);
    }
  });

  it('refuses bad flags with exit code 2 and a reason', async () => {
    const bad = await runNode([SANDBOX, '--timeout', 'soon'], 30_000);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--timeout must be a whole number of seconds/);
    const json = await runNode([SANDBOX, '-o', 'json'], 30_000);
    assert.equal(json.code, 2);
    assert.match(json.stderr, /-o json needs --once/);
  });
});
