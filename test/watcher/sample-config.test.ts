/**
 * The sample configuration shipped in config/ (and copied into the Deployment's ConfigMap)
 * starts a working watcher as it is: only what differs per cluster (the API server, the ODL
 * URL and its password file, the metrics address) is overridden, by flags, as an operator would.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { stopPid } from '../helpers/processes.js';
import { createNamespace, createNode, createPod, readOdl, startEnv, waitFor } from './testing.js';
import { startWatcherProcess } from './watcher-process.js';

const SAMPLE = fileURLToPath(new URL('../../config/watcher.example.yaml', import.meta.url));

describe('the shipped sample watcher configuration', () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  it('starts, leads and converges a pod with only per-cluster values overridden', async () => {
    const env = await startEnv({ profile: 'sodium', dialect: 'bierman02' });
    cleanups.push(() => env.close());
    const dir = mkdtempSync(join(tmpdir(), 'odlcoe-watcher-sample-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    env.sim.writeKubeconfig(join(dir, 'kubeconfig'));
    writeFileSync(join(dir, 'odl-password'), 'admin\n', { mode: 0o600 });
    await createNamespace(env, 'odlcoe-system'); // where the sample's Lease lives
    await createNode(env, 'node-a', '192.168.71.1', '10.253.1.0/24');
    await createNamespace(env, 'apps');
    await createPod(env, 'apps', 'web', 'node-a', { ip: '10.253.1.10' });

    const watcher = startWatcherProcess(
      [
        ['--config', SAMPLE],
        ['--kubeconfig', join(dir, 'kubeconfig')],
        ['--odl-url', env.emu.url],
        ['--odl-password-file', join(dir, 'odl-password')],
        ['--metrics-host', '127.0.0.1'],
        ['--metrics-port', '0'],
      ].flat(),
      {},
    );
    cleanups.push(() => stopPid(watcher.child.pid ?? -1));
    const exitedEarly = watcher.exited.then((code) => {
      throw new Error(`watcher exited with ${code}: ${watcher.log.slice(-5).join('\n')}`);
    });
    exitedEarly.catch(() => undefined);

    await watcher.started();
    await Promise.race([
      waitFor(async () => (await readOdl(env))['vpn-interface'].some((e) => e.name === 'apps:web'), {
        what: 'apps:web in ODL',
        timeoutMs: 40_000,
      }),
      exitedEarly,
    ]);
    assert.equal((await watcher.scrape('/readyz')).status, 200);
    watcher.child.kill('SIGTERM');
    assert.equal(await watcher.exited, 0, watcher.log.slice(-5).join('\n'));
  });
});
