/**
 * Pods and namespaces being deleted, with kube-apiserver's graceful deletion: a deleted pod
 * bound to a node stays Terminating (its containers still run, Services still reach it) until
 * its kubelet deletes it with grace 0, and a deleted namespace stays Terminating until its
 * pods are gone. The watcher keeps their ODL objects, writing nothing, until then.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import {
  createNamespace,
  createNode,
  createPod,
  finishDeletion,
  readOdl,
  startEnv,
  startTestWatcher,
  terminatePod,
  waitFor,
  writeCount,
  type Env,
  type OdlLists,
} from './testing.js';

const names = (odl: OdlLists) => ({
  interfaces: odl.interface.map((e) => String(e.name)).sort(),
  elanInterfaces: odl['elan-interface'].map((e) => String(e.name)).sort(),
  vpnInterfaces: odl['vpn-interface'].map((e) => String(e.name)).sort(),
  vpns: odl['vpn-instance'].map((e) => String(e['vpn-instance-name'])).sort(),
});

/** Lets the watch events of the last change reach the watcher, then waits for it to finish. */
async function settled(watcher: { idle(): Promise<void> }): Promise<void> {
  await new Promise((r) => setTimeout(r, 1_000));
  await watcher.idle();
}

describe('terminating pods and namespaces', () => {
  let cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    cleanups = [];
  });

  it("keeps a Terminating pod's network, and its namespace's VPN, until the pod is really gone", async () => {
    const env: Env = await startEnv({ profile: 'sodium', dialect: 'rfc8040' });
    cleanups.push(() => env.close());
    await createNode(env, 'node-a', '192.168.60.1', '10.246.1.0/24');
    await createNamespace(env, 'shop');
    await createPod(env, 'shop', 'web', 'node-a', { ip: '10.246.1.10' });
    await createPod(env, 'shop', 'api', 'node-a', { ip: '10.246.1.11' });
    const watcher = await startTestWatcher(env);
    cleanups.push(() => watcher.close());
    await waitFor(async () => (await readOdl(env))['vpn-interface'].length === 2, {
      what: 'both pods routed',
    });
    await watcher.idle();
    const converged = names(await readOdl(env));
    assert.deepEqual(converged.vpnInterfaces, ['shop:api', 'shop:web']);

    // kubectl delete pod: Terminating for its grace period; nothing changes in ODL.
    const before = writeCount(env);
    const marked = await terminatePod(env, 'shop', 'web');
    assert.equal(marked.metadata?.deletionGracePeriodSeconds, 30);
    await settled(watcher);
    assert.deepEqual(names(await readOdl(env)), converged);
    assert.equal(writeCount(env), before, 'no ODL write for a Terminating pod');

    // kubectl delete namespace: Terminating too, and so is its last pod; the VPN stays.
    await env.core.deleteNamespace({ name: 'shop' });
    assert.equal((await env.core.readNamespace({ name: 'shop' })).status?.phase, 'Terminating');
    await settled(watcher);
    assert.deepEqual(names(await readOdl(env)), converged);
    assert.equal(writeCount(env), before, 'no ODL write for a Terminating namespace');

    // Kubelet finishes web (grace 0): its objects go, api's stay.
    await finishDeletion(env, 'shop', 'web');
    await waitFor(async () => !names(await readOdl(env)).interfaces.includes('shop:web'), {
      what: "web's objects to go",
    });
    await watcher.idle();
    const onlyApi = names(await readOdl(env));
    assert.deepEqual(onlyApi.vpnInterfaces, ['shop:api']);
    assert.deepEqual(onlyApi.elanInterfaces, ['shop:api']);
    assert.deepEqual(onlyApi.vpns, ['shop']);

    // The last pod goes, then the namespace, then (after the grace period) its VPN.
    await finishDeletion(env, 'shop', 'api');
    await waitFor(
      async () => (await env.core.listNamespace()).items.every((n) => n.metadata?.name !== 'shop'),
      {
        what: 'the namespace to go',
      },
    );
    await waitFor(
      async () => {
        const left = names(await readOdl(env));
        return left.interfaces.length === 0 && left.vpns.length === 0;
      },
      { what: 'the pod and the VPN to go', timeoutMs: 20_000 },
    );
  });
});
