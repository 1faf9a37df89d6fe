import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { waitFor } from './testing.js';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));

function run(args: string[]): { child: ChildProcess; stderr: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ODLCOE_LOG_LEVEL: 'info' },
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stderr: () => stderr, exit };
}

describe('odlcoe-kubesim CLI', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubesim-cli-'));
  const children: ChildProcess[] = [];
  after(() => {
    for (const child of children)
      if (child.exitCode === null && child.pid !== undefined) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves, writes a working kubeconfig, logs its URL and stops on SIGTERM', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'cli-token\n', { mode: 0o600 });
    const sim = run([
      '--port',
      '0',
      '--token-file',
      tokenFile,
      '--history-limit',
      '100',
      '--kubeconfig-out',
      kubeconfig,
    ]);
    children.push(sim.child);
    await waitFor('the listening line', () => sim.stderr().includes('kubesim listening'), 30_000);
    const line = sim
      .stderr()
      .split('\n')
      .find((l) => l.includes('kubesim listening'))!;
    const logged = JSON.parse(line) as { url: string; message: string };
    assert.match(logged.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(!line.includes('cli-token'), 'the token is never logged');
    assert.equal(statSync(kubeconfig).mode & 0o777, 0o600);

    const kc = new KubeConfig();
    kc.loadFromString(readFileSync(kubeconfig, 'utf8'));
    assert.equal(kc.getCurrentCluster()?.server, logged.url);
    const namespaces = await kc.makeApiClient(CoreV1Api).listNamespace();
    assert.ok(namespaces.items.some((n) => n.metadata?.name === 'default'));

    sim.child.kill('SIGTERM');
    assert.equal(await sim.exit, 0);
  });

  it('rejects a bad option with a precise message', async () => {
    const sim = run(['--port', 'eighty']);
    children.push(sim.child);
    assert.notEqual(await sim.exit, 0);
    assert.match(sim.stderr(), /"eighty" is not a whole number/);
  });
});
