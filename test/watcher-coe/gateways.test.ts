/**
 * What NetVirt Sodium's COE renderer needs beyond pod entries, under the coe-northbound backend.
 *
 * Node gateways: with service ranges configured, the watcher
 * writes one `pod:coe/pods` entry per node gateway, in the form NetVirt Sodium's COE renderer
 * needs to make the gateway port a service gateway (src/netvirt/coe/gateway.ts). Real kubesim,
 * real emulator (which validates every body against the model), both dialects; after each step
 * ODL's pods list equals a hand-written expected set.
 *
 * Pod names: the renderer names a pod's interface `<cluster-id>:<pod name>`, so of two pods of one
 * name in different namespaces only the first may be on the network; the other is reported, and
 * takes the name over once the first goes.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  TARGETS,
  createNamespace,
  createNode,
  createPod,
  deletePod,
  readCoe,
  settle,
  startCoeWatcher,
  startEnv,
  waitFor,
  writeCount,
  type CoeWatcher,
  type Env,
} from './testing.js';

/** clusterUuid('test'), written out (as in lifecycle.test.ts). */
const CLUSTER_ID = 'd5b7c83d-b362-3bde-86d5-f509e6ca8560';
const SERVICES = { serviceCidrs: ['10.96.0.0/12'] };

/** Java's UUID.nameUUIDFromBytes, the oracle for the gateway entry's uid. */
function javaNameUuid(text: string): string {
  const b = createHash('md5').update(text, 'utf8').digest();
  b[6] = (b[6]! & 0x0f) | 0x30;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

for (const target of TARGETS) {
  describe(`coe-northbound node gateways (${target.profile}, ${target.dialect})`, () => {
    let env: Env;
    let w: CoeWatcher | undefined;
    const uid: Record<string, string> = {};

    before(async () => {
      env = await startEnv(target);
    });
    after(async () => {
      await w?.close();
      await env?.close();
    });

    const gateway = (node: string, hostIp: string, address: string, mac: string) => {
      const id = javaNameUuid(`odlcoe:test:node-gateway:${uid[node]}`);
      return {
        uid: id,
        name: `odlcoe-gw.${node}`,
        'cluster-id': CLUSTER_ID,
        'host-ip-address': hostIp,
        'network-NS': 'odlcoe.node-gateways',
        'port-mac-address': mac,
        interface: [{ uid: id, 'ip-address': address, 'network-id': CLUSTER_ID, 'network-type': 'VXLAN' }],
      };
    };
    const gatewayEntries = async () =>
      (await readCoe(env)).pods
        .filter((p) => p['network-NS'] === 'odlcoe.node-gateways')
        .sort((a, b) => String(a.name).localeCompare(String(b.name)));

    it('writes one gateway pod entry per node, at the node subnet’s second address', async () => {
      uid['node-a'] = await createNode(env, 'node-a', '192.168.10.11', { podCIDR: '10.244.1.0/24' });
      uid['node-b'] = await createNode(env, 'node-b', '192.168.10.12', { podCIDR: '10.244.2.0/24' });
      await createNamespace(env, 'alpha');
      await createPod(env, 'alpha', 'a0', 'node-a', { ip: '10.244.1.10' });
      w = await startCoeWatcher(env, SERVICES);
      await settle(w);
      assert.deepEqual(await gatewayEntries(), [
        gateway('node-a', '192.168.10.11', '10.244.1.2', '0a:58:0a:f4:01:02'),
        gateway('node-b', '192.168.10.12', '10.244.2.2', '0a:58:0a:f4:02:02'),
      ]);
      const pods = (await readCoe(env)).pods.filter((p) => p['network-NS'] === 'alpha');
      assert.deepEqual(
        pods.map((p) => p.name),
        ['a0'],
        'pod entries are written beside the gateways',
      );
    });

    it('a node that goes takes its gateway entry with it', async () => {
      await env.core.deleteNode({ name: 'node-b' });
      await settle(w!, () => w!.watcher.view.node('node-b') === undefined);
      await waitFor(async () => (await gatewayEntries()).length === 1, {
        what: 'node-b’s gateway entry removed',
      });
      assert.deepEqual(await gatewayEntries(), [
        gateway('node-a', '192.168.10.11', '10.244.1.2', '0a:58:0a:f4:01:02'),
      ]);
    });

    it('writes nothing when restarted against an ODL that is right', async () => {
      await w!.close();
      w = undefined;
      const before = writeCount(env);
      w = await startCoeWatcher(env, SERVICES);
      await settle(w);
      assert.equal(writeCount(env) - before, 0, JSON.stringify(env.emu.counters().requests));
    });

    it('removes every gateway entry when the service ranges are taken away', async () => {
      await w!.close();
      w = await startCoeWatcher(env);
      await settle(w);
      assert.deepEqual(await gatewayEntries(), [], 'no gateway entries without service ranges');
      assert.equal(
        (await readCoe(env)).pods.filter((p) => p['network-NS'] === 'alpha').length,
        1,
        'pod entries stay',
      );
    });
  });
}

for (const target of TARGETS) {
  describe(`coe-northbound pod names across namespaces (${target.profile}, ${target.dialect})`, () => {
    let env: Env;
    let w: CoeWatcher | undefined;

    before(async () => {
      env = await startEnv(target);
    });
    after(async () => {
      await w?.close();
      await env?.close();
    });

    const podEntries = async () =>
      (await readCoe(env)).pods.map((p) => `${String(p['network-NS'])}/${String(p.name)}`).sort();

    it('lets the first pod of a name on the network and reports the other on its pod', async () => {
      await createNode(env, 'node-a', '192.168.10.11', { podCIDR: '10.244.1.0/24' });
      await createNamespace(env, 'alpha');
      await createNamespace(env, 'beta');
      await createPod(env, 'alpha', 'web-0', 'node-a', { ip: '10.244.1.10' });
      await createPod(env, 'beta', 'web-0', 'node-a', { ip: '10.244.1.11' });
      await createPod(env, 'beta', 'db-0', 'node-a', { ip: '10.244.1.12' });
      w = await startCoeWatcher(env);
      await settle(w);
      assert.deepEqual(await podEntries(), ['alpha/web-0', 'beta/db-0']);
      const event = w.events.events.find(
        (e) => e.reason === 'InvalidForOdl' && e.object.namespace === 'beta',
      );
      assert.equal(event?.object.name, 'web-0', JSON.stringify(w.events.events));
      assert.match(event?.message ?? '', /already on the network in namespace alpha/);
    });

    it('hands the name to the other pod once the first goes', async () => {
      await deletePod(env, 'alpha', 'web-0');
      await settle(w!, () => !w!.watcher.view.pod('alpha', 'web-0'));
      await waitFor(async () => (await podEntries()).includes('beta/web-0'), {
        what: 'beta/web-0 written once alpha/web-0 is gone',
      });
      assert.deepEqual(await podEntries(), ['beta/db-0', 'beta/web-0']);
    });
  });
}
