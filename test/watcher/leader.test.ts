/**
 * Two watcher processes (the real `odlcoe-watcher` entry point, configured by flags and
 * environment) on one Lease: only the leader writes to ODL, the standby is ready with warm
 * caches; when the leader is killed (SIGKILL, no lease release), the standby takes over and
 * converges. SIGTERM drains and releases the Lease.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { stopPid } from '../helpers/processes.js';
import { createNamespace, createNode, createPod, readOdl, startEnv, waitFor, type Env } from './harness.js';

const MAIN = fileURLToPath(new URL('../../src/watcher/main.ts', import.meta.url));

interface Replica {
  child: ChildProcess;
  identity: string;
  port: () => number | undefined;
  log: string[];
}

function startReplica(env: Env, dir: string, identity: string): Replica {
  const log: string[] = [];
  let port: number | undefined;
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      MAIN,
      '--kubeconfig',
      join(dir, 'kubeconfig'),
      '--odl-url',
      env.emu.url,
      '--odl-user',
      'admin',
      '--odl-password-file',
      join(dir, 'odl-password'),
      '--profile',
      env.profile,
      '--dialect',
      env.dialect,
      '--subnet-source',
      'podCIDR',
      '--metrics-host',
      '127.0.0.1',
      '--metrics-port',
      '0',
      '--lease-namespace',
      'default',
      '--lease-name',
      'odlcoe-watcher',
      '--identity',
      identity,
      '--grace-period',
      '300ms',
    ],
    {
      env: {
        ...process.env,
        ODLCOE_LOG_LEVEL: 'info',
        ODLCOE_CLUSTER_NAME: 'test',
        ODLCOE_LEASE_DURATION: '3s',
        ODLCOE_RENEW_DEADLINE: '2s',
        ODLCOE_RETRY_PERIOD: '500ms',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let buffered = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      log.push(line);
      try {
        const entry = JSON.parse(line) as { message?: string; port?: number };
        if (entry.message === 'ops server listening') port = entry.port;
      } catch {
        // not JSON: keep it in the log only
      }
    }
  });
  return { child, identity, port: () => port, log };
}

async function scrape(replica: Replica, path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`http://127.0.0.1:${replica.port()}${path}`);
  return { status: res.status, text: await res.text() };
}

/** Sum of `odlcoe_watcher_odl_writes_total` samples on the replica's /metrics. */
async function writesOf(replica: Replica): Promise<number> {
  const { text } = await scrape(replica, '/metrics');
  return text
    .split('\n')
    .filter((l) => l.startsWith('odlcoe_watcher_odl_writes_total{'))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

async function holder(env: Env): Promise<string | undefined> {
  try {
    const lease = await env.coordination.readNamespacedLease({
      name: 'odlcoe-watcher',
      namespace: 'default',
    });
    return lease.spec?.holderIdentity ?? undefined;
  } catch {
    return undefined;
  }
}

describe('two watcher replicas on one Lease', () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  it('only the leader writes; when it is killed the standby converges', async () => {
    const env = await startEnv({ profile: 'sodium', dialect: 'rfc8040' });
    cleanups.push(() => env.close());
    const dir = mkdtempSync(join(tmpdir(), 'odlcoe-watcher-le-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    env.sim.writeKubeconfig(join(dir, 'kubeconfig'));
    writeFileSync(join(dir, 'odl-password'), 'admin\n', { mode: 0o600 });

    await createNode(env, 'node-a', '192.168.70.1', '10.252.1.0/24');
    await createNamespace(env, 'apps');
    await createPod(env, 'apps', 'p0', 'node-a', { ip: '10.252.1.10' });

    const r1 = startReplica(env, dir, 'replica-1');
    cleanups.push(() => stopPid(r1.child.pid ?? -1));
    await waitFor(async () => (await holder(env)) === 'replica-1', {
      what: 'replica-1 to lead',
      timeoutMs: 30_000,
    });
    const r2 = startReplica(env, dir, 'replica-2');
    cleanups.push(() => stopPid(r2.child.pid ?? -1));

    const vpnInterfaces = async () => (await readOdl(env))['vpn-interface'].map((e) => e.name).sort();
    await waitFor(async () => (await vpnInterfaces()).length === 1, { what: 'p0 in ODL', timeoutMs: 30_000 });
    // The standby is ready (warm caches), and writes nothing.
    await waitFor(() => r2.port() !== undefined, { what: 'replica-2 ops server', timeoutMs: 30_000 });
    await waitFor(async () => (await scrape(r2, '/readyz')).status === 200, {
      what: 'replica-2 ready',
      timeoutMs: 30_000,
    });
    await createPod(env, 'apps', 'p1', 'node-a', { ip: '10.252.1.11' });
    await waitFor(async () => (await vpnInterfaces()).length === 2, { what: 'p1 in ODL' });
    assert.ok((await writesOf(r1)) > 0, 'the leader wrote');
    assert.equal(await writesOf(r2), 0, 'the standby wrote nothing');
    assert.equal(await holder(env), 'replica-1');

    // The leader dies without releasing the Lease; the standby waits it out and takes over.
    const killed = new Promise((resolve) => r1.child.once('exit', resolve));
    r1.child.kill('SIGKILL');
    await killed; // from here on, whatever changes in ODL is the standby's doing
    await createPod(env, 'apps', 'p2', 'node-a', { ip: '10.252.1.12' });
    await env.core.deleteNamespacedPod({ name: 'p0', namespace: 'apps' });
    await waitFor(async () => (await holder(env)) === 'replica-2', {
      what: 'replica-2 to lead',
      timeoutMs: 30_000,
    });
    await waitFor(
      async () => JSON.stringify(await vpnInterfaces()) === JSON.stringify(['apps:p1', 'apps:p2']),
      {
        what: 'replica-2 to converge',
        timeoutMs: 30_000,
      },
    );
    assert.ok((await writesOf(r2)) > 0, 'the new leader wrote');

    // SIGTERM: drains, releases the Lease, exits 0.
    const exited = new Promise<number | null>((resolve) => r2.child.once('exit', (code) => resolve(code)));
    r2.child.kill('SIGTERM');
    assert.equal(await exited, 0, r2.log.slice(-5).join('\n'));
    assert.equal(await holder(env), '');
  });
});
