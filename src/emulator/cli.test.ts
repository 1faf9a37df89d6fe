import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const MAIN = 'src/emulator/main.ts';

interface Started {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
}

/** Starts the CLI and waits for its `emulator listening` line. */
function startCli(args: string[]): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    cwd: root,
    env: { ...process.env, ODLCOE_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`no listening line within 30 s: ${stderr}`)), 30_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      for (const line of stderr.split('\n')) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as { message?: string; url?: string };
        if (entry.message === 'emulator listening' && entry.url) {
          clearTimeout(timer);
          resolve({ child, url: entry.url, exited });
          return;
        }
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before listening: ${stderr}`));
    });
  });
}

async function curl(...args: string[]): Promise<{ status: number; body: string }> {
  const { stdout } = await run('curl', ['-s', '-o', '-', '-w', '\n%{http_code}', ...args]);
  const cut = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
}

describe('odlcoe-emulator CLI', () => {
  const dir = mkdtempSync(join(tmpdir(), 'odlcoe-emulator-cli-'));
  const children: ChildProcess[] = [];
  after(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the acceptance sequence to curl -u admin:admin and stops cleanly on SIGTERM', async () => {
    const record = join(dir, 'record.jsonl');
    const emu = await startCli(['--port', '0', '--record', record]);
    children.push(emu.child);
    const elan = `${emu.url}/restconf/config/elan:elan-instances/elan-instance/n1`;
    const put = [
      '-u',
      'admin:admin',
      '-X',
      'PUT',
      '-H',
      'Content-Type: application/json',
      '-d',
      '{"elan:elan-instance":[{"elan-instance-name":"n1"}]}',
    ];
    assert.equal((await curl(...put, elan)).status, 201);
    assert.equal((await curl(...put, elan)).status, 200);
    const rests = `${emu.url}/rests/data/elan:elan-instances/elan-instance=n1`;
    assert.equal((await curl('-u', 'admin:admin', '-X', 'DELETE', rests)).status, 204);
    const missing = await curl('-u', 'admin:admin', '-X', 'DELETE', elan);
    assert.equal(missing.status, 404);
    const error = (JSON.parse(missing.body) as { errors: { error: Record<string, string>[] } }).errors
      .error[0]!;
    assert.equal(error['error-tag'], 'data-missing');
    assert.equal((await curl('-X', 'GET', elan)).status, 401);
    emu.child.kill('SIGTERM');
    assert.equal(await emu.exited, 0);
    assert.equal(
      readFileSync(record, 'utf8').trim().split('\n').length,
      3,
      'the record file was flushed on SIGTERM',
    );
  });

  it('takes the password from a file and the profile from a flag', async () => {
    const passwordFile = join(dir, 'password');
    writeFileSync(passwordFile, 's3cret\n');
    const emu = await startCli([
      '--port',
      '0',
      '--profile',
      'aluminium',
      '--user',
      'odl',
      '--password-file',
      passwordFile,
    ]);
    children.push(emu.child);
    const url = `${emu.url}/restconf/config/l3vpn-instances-interfaces:vpn-instances`;
    assert.equal((await curl('-u', 'odl:s3cret', url)).status, 404);
    assert.equal((await curl('-u', 'admin:admin', url)).status, 401);
    emu.child.kill('SIGINT');
    assert.equal(await emu.exited, 0);
  });

  it('starts a Sodium without the COE feature (--features none)', async () => {
    const emu = await startCli(['--port', '0', '--profile', 'sodium', '--features', 'none']);
    children.push(emu.child);
    const reply = await curl('-u', 'admin:admin', `${emu.url}/restconf/config/k8s-node:k8s-nodes-info`);
    assert.equal(reply.status, 400);
    assert.match(reply.body, /The module named 'k8s-node' does not exist\./);
    const modules = await curl('-u', 'admin:admin', `${emu.url}/restconf/modules`);
    assert.equal(modules.status, 200);
    assert.match(modules.body, /"name":"l3vpn"/);
    assert.doesNotMatch(modules.body, /k8s-node/);
    emu.child.kill('SIGINT');
    assert.equal(await emu.exited, 0);
  });

  for (const [args, pattern] of [
    [['--port', 'eighty'], /port/],
    [['--features', 'bogus'], /unknown feature "bogus"/],
    [['--profile', 'aluminium', '--features', 'coe'], /no aluminium release ships the COE models/],
    [['--profile', 'neon'], /profile/],
    [['--error-rate', '1.5'], /error-rate/],
    [['--error-status', '404'], /error-status/],
    [['--tls-cert', '/nonexistent'], /tls-key/],
    [['--password', 'a', '--password-file', '/x'], /not both/],
    [['--bogus'], /unknown option/],
  ] as [string[], RegExp][]) {
    it(`exits 2 with a clear error for ${args.join(' ')}`, async () => {
      const result = await run(process.execPath, ['--import', 'tsx', MAIN, ...args], { cwd: root }).then(
        () => ({ code: 0, stderr: '' }),
        (err: { code: number; stderr: string }) => err,
      );
      assert.equal(result.code, 2);
      assert.match(result.stderr, pattern);
    });
  }

  it('exits 1 with a logged reason when it cannot start', async () => {
    const state = join(dir, 'broken-state.json');
    writeFileSync(state, 'not json');
    const result = await run(process.execPath, ['--import', 'tsx', MAIN, '--port', '0', '--state', state], {
      cwd: root,
      env: { ...process.env, ODLCOE_LOG_LEVEL: 'info' },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => err,
    );
    assert.equal(result.code, 1);
    assert.match(result.stderr, /state file .* is corrupt/);
  });
});
