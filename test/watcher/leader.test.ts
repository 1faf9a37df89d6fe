/**
 * Two watcher processes (the real `odlcoe-watcher` entry point, configured by flags and
 * environment) on one Lease: only the leader writes to ODL, the standby is ready with warm
 * caches; when the leader is killed (SIGKILL, no lease release), the standby takes over and
 * converges. SIGTERM drains and releases the Lease.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { stopPid } from '../helpers/processes.js';
import {
  createNamespace,
  createNode,
  createPod,
  deletePod,
  readOdl,
  startEnv,
  waitFor,
  type Env,
} from './testing.js';
import { baseArgs, startWatcherProcess, type WatcherProcess } from './watcher-process.js';

interface Replica extends WatcherProcess {
  identity: string;
}

function startReplica(env: Env, dir: string, identity: string): Replica {
  const replica = startWatcherProcess(
    [
      ...baseArgs(env, dir),
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
      ODLCOE_CLUSTER_NAME: 'test',
      ODLCOE_LEASE_DURATION: '3s',
      ODLCOE_RENEW_DEADLINE: '2s',
      ODLCOE_RETRY_PERIOD: '500ms',
    },
  );
  return { ...replica, identity };
}

/** Sum of `odlcoe_watcher_odl_writes_total` samples on the replica's /metrics. */
async function writesOf(replica: Replica): Promise<number> {
  const { text } = await replica.scrape('/metrics');
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
    await r1.started();
    await waitFor(async () => (await holder(env)) === 'replica-1', {
      what: 'replica-1 to lead',
      timeoutMs: 30_000,
    });
    const r2 = startReplica(env, dir, 'replica-2');
    cleanups.push(() => stopPid(r2.child.pid ?? -1));
    await r2.started();

    const vpnInterfaces = async () => (await readOdl(env))['vpn-interface'].map((e) => e.name).sort();
    await waitFor(async () => (await vpnInterfaces()).length === 1, { what: 'p0 in ODL', timeoutMs: 30_000 });
    // The standby is ready (warm caches), and writes nothing.
    await waitFor(async () => (await r2.scrape('/readyz')).status === 200, {
      what: 'replica-2 ready',
      timeoutMs: 30_000,
    });
    await createPod(env, 'apps', 'p1', 'node-a', { ip: '10.252.1.11' });
    await waitFor(async () => (await vpnInterfaces()).length === 2, { what: 'p1 in ODL' });
    assert.ok((await writesOf(r1)) > 0, 'the leader wrote');
    assert.equal(await writesOf(r2), 0, 'the standby wrote nothing');
    assert.equal(await holder(env), 'replica-1');

    // The leader dies without releasing the Lease; the standby waits it out and takes over.
    r1.child.kill('SIGKILL');
    await r1.exited; // from here on, whatever changes in ODL is the standby's doing
    await createPod(env, 'apps', 'p2', 'node-a', { ip: '10.252.1.12' });
    await deletePod(env, 'apps', 'p0');
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
    r2.child.kill('SIGTERM');
    assert.equal(await r2.exited, 0, r2.log.slice(-5).join('\n'));
    assert.equal(await holder(env), '');
  });
});
