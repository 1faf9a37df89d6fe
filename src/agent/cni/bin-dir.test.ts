import assert from 'node:assert/strict';
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { silentLogger } from '../../common/log.js';
import { CniBinDir } from './bin-dir.js';

// The real plugins and a real agent: test/agent/cni-bin-dir.test.ts. Here stand-in files show
// what is installed, kept and replaced.
describe('CniBinDir', () => {
  let root = '';
  let dir = '';
  let plugins = '';
  let shimSource = '';
  const LOOPBACK = '#!/bin/sh\necho loopback from the plugins\n';

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'odlcoe-bin-dir-'));
    shimSource = join(root, 'odlcoe.js');
    await writeFile(shimSource, 'process.exit(0);\n');
  });
  after(() => rm(root, { recursive: true, force: true }));

  beforeEach(async () => {
    const case_ = await mkdtemp(join(root, 'case-'));
    dir = join(case_, 'bin');
    plugins = join(case_, 'plugins');
    await mkdir(plugins);
    await writeFile(join(plugins, 'loopback'), LOOPBACK, { mode: 0o755 });
  });

  const binDir = (pluginDir = plugins) =>
    new CniBinDir({ dir, shimSource, pluginDir, logger: silentLogger() });

  it('installs the shim and loopback (mode 0755, no temporary file left), and is ready', async () => {
    const bin = binDir();
    await bin.install();
    assert.equal(await readFile(join(dir, 'loopback'), 'utf8'), LOOPBACK);
    assert.equal((await stat(join(dir, 'loopback'))).mode & 0o777, 0o755);
    assert.match(
      await readFile(join(dir, 'odlcoe'), 'utf8'),
      /^#!\/bin\/sh\nexec '.+' '.+odlcoe-shim\.mjs' "\$@"\n$/,
    );
    assert.deepEqual((await readdir(dir)).sort(), ['loopback', 'odlcoe', 'odlcoe-shim.mjs']);
    assert.equal(await bin.ready(), true);
  });

  it('leaves an identical loopback as it is (no rewrite at each start)', async () => {
    await binDir().install();
    const first = await stat(join(dir, 'loopback'));
    await binDir().install();
    const second = await stat(join(dir, 'loopback'));
    assert.equal(second.ino, first.ino);
    assert.equal(second.mtimeMs, first.mtimeMs);
  });

  it("keeps a loopback that is already there, a link to the plugins' own or another build", async () => {
    await mkdir(dir);
    await symlink(join(plugins, 'loopback'), join(dir, 'loopback'));
    await binDir().install();
    assert.ok((await lstat(join(dir, 'loopback'))).isSymbolicLink(), 'the link is left in place');

    await rm(join(dir, 'loopback'));
    await writeFile(join(dir, 'loopback'), '#!/bin/sh\necho the runtime build\n', { mode: 0o755 });
    const bin = binDir();
    await bin.install();
    assert.match(await readFile(join(dir, 'loopback'), 'utf8'), /the runtime build/);
    assert.equal(await bin.ready(), true);
  });

  it('replaces what is no usable plugin: a file without execute bits, a dangling link', async () => {
    await mkdir(dir);
    await writeFile(join(dir, 'loopback'), LOOPBACK, { mode: 0o644 });
    await binDir().install();
    assert.equal((await stat(join(dir, 'loopback'))).mode & 0o777, 0o755);

    await rm(join(dir, 'loopback'));
    await symlink(join(root, 'nowhere'), join(dir, 'loopback'));
    await binDir().install();
    const installed = await lstat(join(dir, 'loopback'));
    assert.ok(installed.isFile(), 'a regular file replaced the dangling link');
    assert.equal(await readFile(join(dir, 'loopback'), 'utf8'), LOOPBACK);
  });

  it('without a loopback to install it is not ready, says what is missing and where it looked, and recovers', async () => {
    const empty = join(root, 'no-plugins');
    await mkdir(empty, { recursive: true });
    const bin = binDir(empty);
    await bin.install();
    assert.deepEqual((await readdir(dir)).sort(), ['odlcoe', 'odlcoe-shim.mjs']);
    await assert.rejects(
      bin.ready(),
      new RegExp(
        `^Error: the CNI bin dir ${dir} has no loopback plugin, .*every RunPodSandbox and StopPodSandbox fails.*` +
          `${join(empty, 'loopback')} \\(in ${empty}, the directory of ipam\\.pluginPath\\) is missing\\. ` +
          `Install the CNI plugins \\(Debian: containernetworking-plugins\\).* or put loopback into ${dir}$`,
      ),
    );
    // Not executable counts as nothing to install either.
    await writeFile(join(empty, 'loopback'), LOOPBACK, { mode: 0o644 });
    const again = binDir(empty);
    await again.install();
    await assert.rejects(again.ready(), /loopback \(in .*\) is not executable/);

    await writeFile(join(dir, 'loopback'), LOOPBACK);
    await chmod(join(dir, 'loopback'), 0o755);
    assert.equal(await bin.ready(), true);
  });

  it('refuses to start without the compiled shim', async () => {
    const bin = new CniBinDir({
      dir,
      shimSource: join(root, 'absent.js'),
      pluginDir: plugins,
      logger: silentLogger(),
    });
    await assert.rejects(
      bin.install(),
      /cannot install the CNI shim: .*absent\.js is missing \(build first\)/,
    );
  });
});
