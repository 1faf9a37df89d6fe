/**
 * The coe-northbound backend across restarts, with foreign entries in ODL:
 * - a restart against an ODL that is already right writes nothing at all;
 * - pods, Services (with their endpoints) and nodes deleted while the watcher was down are
 *   removed at start-up, and a pod re-created under the same name loses its old entry;
 * - entries that are not this cluster's (another cluster's, ODL's own COE watcher's without a
 *   cluster-id, an endpoints entry without a services entry of ours) are never written or
 *   deleted, not even when they share a name with, or hold the uid of, one of our objects; one
 *   holding the uid of a pod or Service is a Warning Event on that pod or Service.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  netvirtPaths,
  putCoeEndpoints,
  putCoePod,
  putCoeService,
  putK8sNode,
} from '../../src/netvirt/index.js';
import {
  TARGETS,
  createNamespace,
  createNode,
  createPod,
  createService,
  createSlice,
  deletePod,
  readCoe,
  settle,
  slice,
  startCoeWatcher,
  startEnv,
  waitFor,
  writeCount,
  type CoeLists,
  type CoeWatcher,
  type Env,
} from './testing.js';

const CLUSTER_ID = 'd5b7c83d-b362-3bde-86d5-f509e6ca8560';
const OTHER_CLUSTER = 'c0ffee00-0000-4000-8000-0000000000aa';
const F_POD_OTHER = 'f0000000-0000-4000-8000-000000000001';
const F_POD_NO_CLUSTER = 'f0000000-0000-4000-8000-000000000002';
const F_SERVICE = 'f0000000-0000-4000-8000-000000000003';
const F_ENDPOINTS_ALONE = 'f0000000-0000-4000-8000-000000000004';
const F_NODE = 'f0000000-0000-4000-8000-000000000005';

for (const target of TARGETS) {
  describe(`coe-northbound restart and foreign entries (${target.profile}, ${target.dialect})`, () => {
    let env: Env;
    let w: CoeWatcher | undefined;
    const uid: Record<string, string> = {};
    /** The foreign entries as seeded; they must read back identical at every step. */
    let foreignBefore: CoeLists;

    before(async () => {
      env = await startEnv(target);
    });
    after(async () => {
      await w?.close();
      await env?.close();
    });

    const foreignOnly = (lists: CoeLists): CoeLists => {
      const isForeign = (e: Record<string, unknown>) =>
        [F_POD_OTHER, F_POD_NO_CLUSTER, F_SERVICE, F_ENDPOINTS_ALONE, F_NODE, uid.taken, uid.held].includes(
          String(e.uid),
        );
      return {
        pods: lists.pods.filter(isForeign),
        services: lists.services.filter(isForeign),
        endpoints: lists.endpoints.filter(isForeign),
        'k8s-nodes': lists['k8s-nodes'].filter(isForeign),
      };
    };
    const ours = (lists: CoeLists) => ({
      pods: lists.pods
        .filter((e) => e['cluster-id'] === CLUSTER_ID)
        .map((e) => `${String(e['network-NS'])}/${String(e.name)}@${String(e.uid)}`)
        .sort(),
      services: lists.services
        .filter((e) => e['cluster-id'] === CLUSTER_ID)
        .map((e) => `${String(e.name)}@${String(e.uid)}`)
        .sort(),
      endpoints: lists.endpoints
        .filter((e) => lists.services.some((s) => s.uid === e.uid && s['cluster-id'] === CLUSTER_ID))
        .map((e) => `${String(e.name)}@${String(e.uid)}`)
        .sort(),
      nodes: lists['k8s-nodes']
        .filter((e) => e['cluster-id'] === CLUSTER_ID)
        .map((e) => `${String(e['host-name'])}@${String(e.uid)}`)
        .sort(),
    });

    it('converges without touching foreign entries, and reports the one holding a pod’s uid', async () => {
      uid['node-a'] = await createNode(env, 'node-a', '192.168.10.11', { podCIDR: '10.244.1.0/24' });
      uid['node-b'] = await createNode(env, 'node-b', '192.168.10.12', { podCIDR: '10.244.2.0/24' });
      await createNamespace(env, 'alpha');
      uid.a0 = await createPod(env, 'alpha', 'a0', 'node-a', { ip: '10.244.1.10' });
      uid.a1 = await createPod(env, 'alpha', 'a1', 'node-b', { ip: '10.244.2.10' });
      uid.a2 = await createPod(env, 'alpha', 'a2', 'node-b', { ip: '10.244.2.11' });
      uid.taken = await createPod(env, 'alpha', 'taken', 'node-a', { ip: '10.244.1.11' });
      uid.web = await createService(env, 'alpha', {
        metadata: { name: 'web' },
        spec: { clusterIP: '10.96.0.10', ports: [{ port: 80 }] },
      });
      uid.db = await createService(env, 'alpha', {
        metadata: { name: 'db' },
        spec: { clusterIP: '10.96.0.11', ports: [{ port: 5432 }] },
      });
      uid.held = await createService(env, 'alpha', {
        metadata: { name: 'held' },
        spec: { clusterIP: '10.96.0.12', ports: [{ port: 8080 }] },
      });
      await createSlice(env, slice('alpha', 'web-1', 'web', [{ ip: '10.244.1.10' }], [{ port: 80 }]));
      await createSlice(env, slice('alpha', 'db-1', 'db', [{ ip: '10.244.2.10' }], [{ port: 5432 }]));

      // Foreign entries, some named like ours.
      const p = target.profile;
      const seed = async (op: { path: Parameters<Env['odl']['put']>[0]; body?: unknown }) => {
        await env.odl.put(op.path, op.body);
      };
      await seed(
        putCoePod(p, {
          uid: F_POD_OTHER,
          name: 'a0',
          clusterId: OTHER_CLUSTER,
          hostIpAddress: '192.168.10.11',
          networkNs: 'alpha',
          interfaces: [{ uid: F_POD_OTHER, ipAddress: '10.244.1.10', networkType: 'VXLAN' }],
        }),
      );
      await seed(
        putCoePod(p, {
          uid: F_POD_NO_CLUSTER,
          name: 'a1',
          hostIpAddress: '192.168.10.12',
          networkNs: 'alpha',
          interfaces: [
            {
              uid: F_POD_NO_CLUSTER,
              ipAddress: '10.244.2.10',
              networkId: '00000000-0000-0000-0000-000000000000',
              networkType: 'FLAT',
            },
          ],
        }),
      );
      // Holds the uid of our pod "taken": a collision, never overwritten.
      await seed(
        putCoePod(p, {
          uid: uid.taken,
          name: 'taken',
          hostIpAddress: '192.168.10.11',
          networkNs: 'alpha',
          interfaces: [{ uid: uid.taken, ipAddress: '10.244.1.99' }],
        }),
      );
      await seed(
        putCoeService(p, { uid: F_SERVICE, name: 'web', networkNs: 'alpha', clusterIpAddress: '10.96.0.99' }),
      );
      // Holds the uid of our Service "held" (ODL's own COE watcher's: no cluster-id): a collision.
      await seed(
        putCoeService(p, { uid: uid.held, name: 'held', networkNs: 'alpha', clusterIpAddress: '10.96.0.12' }),
      );
      await seed(
        putCoeEndpoints(p, {
          uid: F_SERVICE,
          name: 'web',
          networkNs: 'alpha',
          endpointAddresses: [{ ipAddress: '10.1.1.1' }],
        }),
      );
      await seed(putCoeEndpoints(p, { uid: F_ENDPOINTS_ALONE, name: 'db', networkNs: 'alpha' }));
      await seed(
        putK8sNode(p, {
          uid: F_NODE,
          clusterId: OTHER_CLUSTER,
          hostName: 'node-a',
          internalIpAddress: '192.168.10.11',
        }),
      );
      foreignBefore = foreignOnly(await readCoe(env));
      assert.equal(foreignBefore.pods.length, 3);

      w = await startCoeWatcher(env);
      await settle(w);
      const odl = await readCoe(env);
      assert.deepEqual(foreignOnly(odl), foreignBefore);
      assert.deepEqual(ours(odl), {
        pods: [`alpha/a0@${uid.a0}`, `alpha/a1@${uid.a1}`, `alpha/a2@${uid.a2}`],
        services: [`db@${uid.db}`, `web@${uid.web}`],
        endpoints: [`db@${uid.db}`, `web@${uid.web}`],
        nodes: [`node-a@${uid['node-a']}`, `node-b@${uid['node-b']}`],
      });
      await waitFor(
        () => w!.events.events.some((e) => e.reason === 'ForeignOdlObject' && e.object.name === 'taken'),
        {
          what: 'a ForeignOdlObject event on pod taken',
        },
      );
      const held = w.events.events.find((e) => e.reason === 'ForeignOdlObject' && e.object.name === 'held');
      assert.deepEqual(held?.object, { kind: 'Service', namespace: 'alpha', name: 'held', uid: uid.held });
      assert.match(held?.message ?? '', new RegExp(`coeService ${uid.held}`));
    });

    it('writes nothing when restarted against an ODL that is right', async () => {
      await w!.close();
      w = undefined;
      const before = writeCount(env);
      w = await startCoeWatcher(env);
      await settle(w);
      // Let the slow retry of the colliding key run once more: it must not write either.
      await waitFor(() => w!.events.events.some((e) => e.object.name === 'taken'), {
        what: 'the collision re-checked',
      });
      await w.watcher.idle();
      assert.equal(writeCount(env) - before, 0, JSON.stringify(env.emu.counters().requests));
      assert.deepEqual(foreignOnly(await readCoe(env)), foreignBefore);
    });

    it('removes at start-up what went while it was down', async () => {
      await w!.close();
      w = undefined;
      await deletePod(env, 'alpha', 'a1');
      await deletePod(env, 'alpha', 'a2');
      const oldA2 = uid.a2;
      uid.a2 = await createPod(env, 'alpha', 'a2', 'node-a', { ip: '10.244.1.12' }); // same name, new pod
      await env.core.deleteNamespacedService({ name: 'db', namespace: 'alpha' });
      await env.core.deleteNode({ name: 'node-b' });

      w = await startCoeWatcher(env);
      await settle(w);
      const odl = await readCoe(env);
      assert.deepEqual(foreignOnly(odl), foreignBefore);
      const got = ours(odl);
      assert.deepEqual(got.pods, [`alpha/a0@${uid.a0}`, `alpha/a2@${uid.a2}`]);
      assert.ok(!JSON.stringify(odl.pods).includes(oldA2!), 'the old a2 entry is gone');
      assert.deepEqual(got.services, [`web@${uid.web}`]);
      assert.deepEqual(got.endpoints, [`web@${uid.web}`]);
      assert.deepEqual(got.nodes, [`node-a@${uid['node-a']}`]);
      const a2 = odl.pods.find((e) => e.uid === uid.a2);
      assert.equal(a2?.['host-ip-address'], '192.168.10.11');
      // A sanity check that the foreign entries are where the test put them.
      assert.ok(await env.odl.get(netvirtPaths(target.profile).coeEndpoints(F_ENDPOINTS_ALONE)));
    });

    it('repairs or removes entries of this cluster that lack their name or network-NS', async () => {
      await w!.close();
      w = undefined;
      const paths = netvirtPaths(target.profile);
      const orphanPod = 'a0000000-0000-4000-8000-0000000000b1';
      const orphanService = 'a0000000-0000-4000-8000-0000000000b2';
      // Written by hand (odlcoe's builders refuse a pod without network-NS).
      const bare = (uid: string) => ({
        'pod:pods': [
          {
            uid,
            'cluster-id': CLUSTER_ID,
            'host-ip-address': '192.168.10.11',
            interface: [{ uid, 'ip-address': '10.244.1.77' }],
          },
        ],
      });
      await env.odl.put(paths.coePod(orphanPod), bare(orphanPod));
      await env.odl.put(paths.coePod(uid.a0!), bare(uid.a0!)); // a0's own entry, stripped
      await env.odl.put(paths.coeService(orphanService), {
        'service:services': [{ uid: orphanService, 'cluster-id': CLUSTER_ID }],
      });
      await env.odl.put(paths.coeEndpoints(orphanService), { 'service:endpoints': [{ uid: orphanService }] });

      w = await startCoeWatcher(env);
      await settle(w);
      const odl = await readCoe(env);
      assert.equal(
        odl.pods.find((e) => e.uid === orphanPod),
        undefined,
        'an orphan pods entry of ours is removed',
      );
      const a0 = odl.pods.find((e) => e.uid === uid.a0);
      assert.equal(a0?.name, 'a0');
      assert.equal(a0?.['network-NS'], 'alpha');
      assert.equal(
        odl.services.find((e) => e.uid === orphanService),
        undefined,
      );
      assert.equal(
        odl.endpoints.find((e) => e.uid === orphanService),
        undefined,
        'its endpoints go with it',
      );
      assert.deepEqual(foreignOnly(odl), foreignBefore);
    });
  });
}
