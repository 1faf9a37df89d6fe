/**
 * The Dockerfile, checked statically (Docker cannot run here): the base image is pinned and the
 * same in both stages; every COPY source exists and survives .dockerignore; everything the
 * build compiles is in the context; every program path the image or the manifests run is one
 * the build produces; npm never runs the `prepare` hook in the image; the Debian packages
 * installed are the ones that hold the binaries the agent spawns; the agent entrypoint is a
 * valid, executable script that starts the agent.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  APP_DIR,
  buildInputs,
  exists,
  filesUnder,
  inDockerContext,
  loadManifests,
  read,
  ROOT,
  sourceOfDistPath,
} from './repo.js';

const run = promisify(execFile);
const WATCHER_ENTRYPOINT = '/usr/local/bin/odlcoe-watcher-entrypoint';

interface Instruction {
  op: string;
  args: string;
}

/** Dockerfile instructions with continuation lines joined and comments dropped. */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let current = '';
  for (const line of text.split('\n')) {
    if (/^\s*#/.test(line) && current === '') continue;
    if (/^\s*#/.test(line)) continue;
    current += line.replace(/\\$/, ' ');
    if (line.endsWith('\\')) continue;
    const trimmed = current.trim();
    current = '';
    if (trimmed === '') continue;
    const [op = '', ...rest] = trimmed.split(/\s+/);
    out.push({ op: op.toUpperCase(), args: rest.join(' ') });
  }
  return out;
}

const dockerfile = instructions(read('Dockerfile'));
const args = new Map(
  dockerfile
    .filter((i) => i.op === 'ARG' && i.args.includes('='))
    .map((i) => [i.args.split('=')[0] ?? '', i.args.slice(i.args.indexOf('=') + 1)]),
);
const expand = (s: string) =>
  s.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a, b) => args.get(a ?? b) ?? `$${a ?? b}`);

/** COPY sources from the build context (not `--from=<stage>`), with their destination. */
function contextCopies(): { sources: string[]; dest: string }[] {
  return dockerfile
    .filter((i) => i.op === 'COPY' && !/--from=/.test(i.args))
    .map((i) => {
      const parts = i.args.split(/\s+/).filter((p) => !p.startsWith('--'));
      return { sources: parts.slice(0, -1), dest: parts[parts.length - 1] ?? '' };
    });
}

/** The exec-form program of CMD/ENTRYPOINT (`["node", "/app/..."]`). */
function execForm(op: 'CMD' | 'ENTRYPOINT'): string[] | undefined {
  const last = dockerfile.filter((i) => i.op === op).at(-1);
  if (!last) return undefined;
  const parsed: unknown = JSON.parse(last.args);
  assert.ok(Array.isArray(parsed), `${op} uses the exec form (no shell): ${last.args}`);
  return parsed as string[];
}

/** Files COPY puts into the image from the context, as image paths (WORKDIR /app). */
function imageFileFromContext(path: string): boolean {
  return contextCopies().some(({ sources, dest }) => sources.length === 1 && dest === path);
}

/** The Debian package owning `path`, trying the spellings merged-/usr systems list it under. */
async function debianPackageOf(path: string): Promise<string> {
  const candidates = [path, path.replace(/^\/usr\//, '/'), `/usr${path}`, realpathSync(path)];
  for (const candidate of new Set(candidates)) {
    try {
      return (await run('dpkg', ['-S', candidate])).stdout.split(':')[0]?.trim() ?? '';
    } catch {
      // not under this spelling
    }
  }
  assert.fail(`no Debian package owns ${path}`);
}

describe('Dockerfile', () => {
  it('both stages start from the same pinned Node 20 bookworm-slim image', () => {
    const froms = dockerfile.filter((i) => i.op === 'FROM').map((i) => expand(i.args.split(/\s+/)[0] ?? ''));
    assert.equal(froms.length, 2, 'a build stage and a runtime stage');
    for (const image of froms) {
      assert.match(
        image,
        /^node:20\.\d+\.\d+-bookworm-slim(@sha256:[0-9a-f]{64})?$/,
        `${image}: an exact release (or digest), never a moving tag like node:20`,
      );
    }
    assert.equal(new Set(froms).size, 1, 'the runtime runs on the Node the build compiled with');
  });

  it('every COPY source exists and is in the build context', () => {
    for (const { sources } of contextCopies()) {
      for (const source of sources) {
        const path = source.replace(/^\.\//, '').replace(/\/$/, '');
        assert.ok(exists(path), `COPY source ${source} exists`);
        const files = statSync(join(ROOT, path)).isDirectory() ? filesUnder(path) : [path];
        assert.ok(
          files.some((f) => inDockerContext(f)),
          `COPY source ${source} is not excluded by .dockerignore`,
        );
      }
    }
  });

  it('the build stage has every file the TypeScript build compiles', () => {
    const copied = contextCopies().flatMap((c) =>
      c.sources.map((s) => s.replace(/^\.\//, '').replace(/\/$/, '')),
    );
    const inputs = buildInputs();
    assert.ok(
      inputs.includes('src/agent/main.ts') && inputs.includes('cni/odlcoe.ts'),
      'sanity: build inputs',
    );
    for (const file of inputs) {
      // bench/ is compiled in development builds; the image does not ship benchmarks.
      if (file.startsWith('bench/')) continue;
      assert.ok(
        copied.some((c) => file === c || file.startsWith(`${c}/`)),
        `${file} is compiled by tsconfig.build.json but not copied into the build stage`,
      );
      assert.ok(inDockerContext(file), `${file} is excluded by .dockerignore`);
    }
    for (const config of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'])
      assert.ok(inDockerContext(config), `${config} in the context`);
    assert.ok(!inDockerContext('node_modules/yaml/package.json'), 'local node_modules stay out');
    assert.ok(!inDockerContext('dist/src/agent/main.js'), 'local build output stays out');
    assert.ok(!inDockerContext('src/agent/config.test.ts'), 'tests stay out');
  });

  it('npm never runs the prepare hook (it would build without sources / without tsc)', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts?: Record<string, string> };
    const runs = dockerfile.filter((i) => i.op === 'RUN').map((i) => i.args);
    const installs = runs.filter((r) => /\bnpm ci\b/.test(r));
    assert.equal(installs.length, 2, 'npm ci in the build stage and the runtime stage');
    if (pkg.scripts?.prepare) for (const r of installs) assert.match(r, /--ignore-scripts/, r);
    assert.ok(
      installs.some((r) => /--omit=dev/.test(r)),
      'the runtime stage installs production dependencies only',
    );
    assert.ok(
      runs.some((r) => /\bnpm run build\b/.test(r)),
      'the build stage builds',
    );
    assert.equal(pkg.scripts?.build, 'tsc -p tsconfig.build.json', 'the build that buildInputs() models');
  });

  it('CMD and every program the manifests run is one the image has', () => {
    const cmd = execForm('CMD');
    assert.ok(cmd);
    assert.deepEqual(cmd, [WATCHER_ENTRYPOINT], 'the image runs the watcher by default, with its heap cap');

    const containers = loadManifests().flatMap((m) => {
      const spec = (m.spec as { template?: { spec?: { containers?: unknown[] } } } | undefined)?.template
        ?.spec;
      return (spec?.containers ?? []) as { name: string; command?: string[] }[];
    });
    assert.ok(containers.length >= 2, 'the watcher and the agent');
    for (const c of containers) {
      const command = c.command ?? cmd;
      const program = command[0] ?? '';
      if (program === 'node') {
        assert.ok(sourceOfDistPath(command[1] ?? ''), `${c.name}: the build produces ${command[1]}`);
      } else {
        assert.ok(imageFileFromContext(program), `${c.name}: ${program} is copied into the image`);
      }
    }
  });

  /**
   * An entrypoint script: installed at `dest`, executable, valid sh, naming the built program in
   * `<variable>=` and exec-ing it as `exec`, so that signals reach the program and its arguments
   * are passed on.
   */
  async function checkEntrypoint(dest: string, variable: string, exec: RegExp): Promise<void> {
    const copy = contextCopies().find((c) => c.dest === dest);
    assert.ok(copy, `${dest} is installed`);
    const script = copy.sources[0] ?? '';
    assert.ok(statSync(join(ROOT, script)).mode & 0o111, `${script} is executable`);
    await run('sh', ['-n', join(ROOT, script)]);
    const text = read(script);
    const program = new RegExp(`^${variable}=(\\S+)$`, 'm').exec(text)?.[1] ?? '';
    assert.ok(sourceOfDistPath(program), `the build produces ${program}`);
    assert.ok(program.startsWith(`${APP_DIR}/`));
    assert.match(text, exec, 'exec (signals reach the program), arguments passed on');
  }

  it('the agent entrypoint is executable, valid sh, and starts the built agent', () =>
    checkEntrypoint(
      '/usr/local/bin/odlcoe-agent-entrypoint',
      'agent',
      /^exec "\$node_bin" "\$agent" "\$@"$/m,
    ));

  it('the watcher entrypoint is executable, valid sh, and starts the built watcher', () =>
    checkEntrypoint(WATCHER_ENTRYPOINT, 'watcher', /^exec node "\$watcher" "\$@"$/m));

  describe('the watcher entrypoint sizes the heap to the memory limit', () => {
    const script = join(ROOT, 'config/image/odlcoe-watcher-entrypoint.sh');
    // A `node` first on PATH that prints what it was started with: the script under test is the
    // shell arithmetic, and the image's node and watcher are not on this machine.
    const bin = mkdtempSync(join(tmpdir(), 'odlcoe-entrypoint-'));
    after(() => rmSync(bin, { recursive: true, force: true }));
    writeFileSync(join(bin, 'node'), '#!/bin/sh\nprintf "%s\\n" "NODE_OPTIONS=${NODE_OPTIONS:-}" "$@"\n', {
      mode: 0o755,
    });
    const start = async (env: Record<string, string>, ...args: string[]) => {
      try {
        const out = await run('sh', [script, ...args], {
          env: { PATH: `${bin}:${process.env.PATH ?? ''}`, ...env },
        });
        return { code: 0, lines: out.stdout.trim().split('\n'), stderr: out.stderr };
      } catch (err) {
        const e = err as { code?: number; stderr?: string };
        return { code: e.code ?? -1, lines: [], stderr: e.stderr ?? '' };
      }
    };
    const reserve = Number(
      /ODLCOE_HEAP_RESERVE_MB:-(\d+)/.exec(read('config/image/odlcoe-watcher-entrypoint.sh'))?.[1],
    );

    it('caps the old space at the limit minus the reserve, keeping other options and arguments', async () => {
      assert.ok(reserve > 0, 'the script has a default reserve');
      const r = await start(
        { ODLCOE_MEMORY_LIMIT_MB: '1024', NODE_OPTIONS: '--enable-source-maps' },
        '--leader-elect',
      );
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(r.lines, [
        `NODE_OPTIONS=--max-old-space-size=${1024 - reserve} --enable-source-maps`,
        '/app/dist/src/watcher/main.js',
        '--leader-elect',
      ]);
      const own = await start({ ODLCOE_MEMORY_LIMIT_MB: '2048', ODLCOE_HEAP_RESERVE_MB: '300' });
      assert.equal(own.lines[0], 'NODE_OPTIONS=--max-old-space-size=1748', 'a reserve of its own');
    });

    it('leaves the heap alone without a limit, or when NODE_OPTIONS sets the cap', async () => {
      assert.equal((await start({})).lines[0], 'NODE_OPTIONS=');
      const set = await start({ ODLCOE_MEMORY_LIMIT_MB: '1024', NODE_OPTIONS: '--max-old-space-size=700' });
      assert.equal(set.lines[0], 'NODE_OPTIONS=--max-old-space-size=700');
    });

    it('refuses a limit that is not a number of MiB, or too small for the reserve', async () => {
      const bad = await start({ ODLCOE_MEMORY_LIMIT_MB: '1Gi' });
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /ODLCOE_MEMORY_LIMIT_MB must be a whole number of MiB, not '1Gi'/);
      const badReserve = await start({ ODLCOE_MEMORY_LIMIT_MB: '1024', ODLCOE_HEAP_RESERVE_MB: '-5' });
      assert.equal(badReserve.code, 2);
      assert.match(badReserve.stderr, /ODLCOE_HEAP_RESERVE_MB must be a whole number of MiB/);
      const small = await start({ ODLCOE_MEMORY_LIMIT_MB: String(reserve + 50) });
      assert.equal(small.code, 2);
      assert.match(small.stderr, new RegExp(`give the container at least ${reserve + 96} MiB`));
    });
  });

  it('the Debian packages installed hold the binaries the agent spawns or installs', async () => {
    const runs = dockerfile.filter((i) => i.op === 'RUN').map((i) => i.args);
    const apt = runs.find((r) => /apt-get install/.test(r)) ?? '';
    assert.match(apt, /--no-install-recommends/);
    assert.match(apt, /rm -rf \/var\/lib\/apt\/lists/, 'apt lists are not left in the layer');
    const packages = new Set(
      apt
        .slice(apt.indexOf('apt-get install'))
        .split(/\s+/)
        .filter((w) => /^[a-z0-9][a-z0-9.+-]+$/.test(w) && !['apt-get', 'install', 'rm'].includes(w)),
    );
    // Programs the agent runs by name (`run('ip', ...)`), itself or through the Open vSwitch
    // adapter, plus host-local by its configured path and the loopback plugin beside it (which
    // the agent installs into the CNI bin dir).
    const spawned = new Set<string>();
    const agentFiles = ['src/agent', 'src/ovs'].flatMap((dir) => filesUnder(dir));
    for (const file of agentFiles.filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
      for (const m of read(file).matchAll(/\brun\('([\w.-]+)'/g)) spawned.add(m[1] as string);
      for (const m of read(file).matchAll(/\[`--net=\$\{\w+\}`, '([\w.-]+)'/g)) spawned.add(m[1] as string);
    }
    assert.deepEqual(
      [...spawned].sort(),
      ['ethtool', 'ip', 'nsenter', 'ovs-vsctl'],
      'sanity: what the agent spawns',
    );
    for (const program of [...spawned, '/usr/lib/cni/host-local', '/usr/lib/cni/loopback']) {
      const path = program.startsWith('/')
        ? program
        : (await run('sh', ['-c', 'command -v "$1"', 'sh', program])).stdout.trim();
      const pkg = await debianPackageOf(path);
      assert.ok(
        packages.has(pkg),
        `${program} (${path}) comes from Debian package ${pkg}, which the image installs`,
      );
    }
  });
});
