/**
 * Extra networks' allocations are stable: with 500 pods attached to a routed network (and 500
 * on an L2 one), a restarted watcher recovers every allocation from the pods' records and
 * writes nothing, neither to ODL nor to any pod (no address moves). And a cluster without the
 * NetworkAttachmentDefinition CRD runs as before, with extra networks off.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ATTACHMENTS_ANNOTATION } from '../../src/netvirt/attachments.js';
import { NETWORKS_ANNOTATION } from '../../src/netvirt/network-selection.js';
import type { Watcher } from '../../src/watcher/watcher.js';
import {
  createNamespace,
  createNode,
  createPod,
  readOdl,
  startEnv,
  startTestWatcher,
  waitFor,
  writeCount,
  type Env,
} from './testing.js';

const PODS = 500;
const nad = (name: string, config: unknown) => ({
  apiVersion: 'k8s.cni.cncf.io/v1',
  kind: 'NetworkAttachmentDefinition',
  metadata: { name, namespace: 'tenant' },
  spec: { config: JSON.stringify(config) },
});

/** Every pod's resourceVersion and record. */
async function podState(env: Env): Promise<Map<string, string>> {
  const pods = await env.core.listNamespacedPod({ namespace: 'tenant' });
  return new Map(
    pods.items.map((p) => [
      p.metadata?.name ?? '',
      `${p.metadata?.resourceVersion ?? ''} ${p.metadata?.annotations?.[ATTACHMENTS_ANNOTATION] ?? '-'}`,
    ]),
  );
}

describe(`extra networks: a restart with ${PODS} attached pods`, () => {
  let env: Env;
  let watcher: Watcher | undefined;

  before(async () => {
    env = await startEnv({ profile: 'sodium' });
    for (const n of [1, 2]) await createNode(env, `n${n}`, `192.168.56.1${n}`, `10.20.${n}.0/24`);
    await createNamespace(env, 'tenant');
    env.sim.seed([
      nad('blue', { type: 'odlcoe', routing: 'vpn', subnets: [{ cidr: '10.50.0.0/22' }] }),
      nad('green', { type: 'odlcoe', subnets: [{ cidr: '10.51.0.0/22' }] }),
      ...Array.from({ length: PODS }, (_, i) => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `p${i}`,
          namespace: 'tenant',
          annotations: { [NETWORKS_ANNOTATION]: 'blue,green' },
        },
        spec: {
          nodeName: `n${1 + (i % 2)}`,
          hostNetwork: false,
          containers: [{ name: 'c', image: 'pause' }],
        },
        status: { phase: 'Running' },
      })),
    ]);
    watcher = await startTestWatcher(env, { workers: 8 });
  });
  after(async () => {
    await watcher?.close();
    await env.close();
  });

  it('allocates every attachment once, cluster-wide unique', async () => {
    await waitFor(
      async () => [...(await podState(env)).values()].filter((v) => !v.endsWith(' -')).length === PODS,
      { what: `records on all ${PODS} pods`, timeoutMs: 240_000, intervalMs: 500 },
    );
    await watcher?.idle();
    const odl = await readOdl(env);
    const vifs = odl['vpn-interface'].filter((e) => String(e.name).endsWith('@net1'));
    const elanIfs = odl['elan-interface'].filter((e) => String(e.name).includes('@'));
    assert.equal(vifs.length, PODS, 'one vpn-interface per routed attachment');
    assert.equal(elanIfs.length, 2 * PODS, 'one elan-interface per attachment');
    const pods = await env.core.listNamespacedPod({ namespace: 'tenant' });
    const ips = pods.items.flatMap((p) =>
      Object.values(
        JSON.parse(p.metadata?.annotations?.[ATTACHMENTS_ANNOTATION] ?? '{}') as Record<
          string,
          { ips: string[] }
        >,
      ).flatMap((r) => r.ips),
    );
    assert.equal(ips.length, 2 * PODS);
    assert.equal(new Set(ips).size, 2 * PODS, 'no address is handed out twice');
  });

  it('a restart writes nothing and moves no address', async () => {
    await watcher?.close();
    const writes = writeCount(env);
    const before = await podState(env);
    watcher = await startTestWatcher(env, { workers: 8 });
    await watcher.ready();
    await watcher.idle();
    assert.equal(writeCount(env), writes, 'no write to ODL');
    assert.deepEqual(
      await podState(env),
      before,
      'no pod was patched: every record and resourceVersion is as it was',
    );
  });
});

describe('extra networks on a cluster without the NetworkAttachmentDefinition CRD', () => {
  let env: Env;
  let watcher: Watcher | undefined;

  before(async () => {
    env = await startEnv({ profile: 'sodium', kubesim: { withoutGroups: ['k8s.cni.cncf.io'] } });
    await createNode(env, 'n1', '192.168.56.11', '10.20.1.0/24');
    await createNamespace(env, 'tenant');
    watcher = await startTestWatcher(env);
  });
  after(async () => {
    await watcher?.close();
    await env.close();
  });

  it('runs as before: pods get their primary interface, NADs are never listed', async () => {
    await createPod(env, 'tenant', 'web', 'n1', { ip: '10.20.1.5' });
    await waitFor(async () => (await readOdl(env))['vpn-interface'].some((e) => e.name === 'tenant:web'), {
      what: "the pod's primary vpn-interface",
    });
    assert.equal(watcher?.view.includes('networkattachmentdefinitions'), false, 'no NAD informer');
    const asked = Object.entries(env.sim.stats().requests).filter(([k]) =>
      k.includes('network-attachment-definitions'),
    );
    assert.deepEqual(
      asked,
      [['GET /apis/k8s.cni.cncf.io/v1/network-attachment-definitions', 1]],
      'NADs are asked for once at start-up, and never listed or watched after the 404',
    );
    assert.ok(watcher?.isLeader(), 'the watcher leads and keeps running');
  });
});
