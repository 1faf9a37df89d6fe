/**
 * The agent under the coe-northbound backend, on real OVS: pod ports carry the iface-id NetVirt
 * Sodium's COE renderer names the pod's interface (`<cluster-id>:<pod name>`, which does not
 * name the namespace), plus `odlcoe-pod` = `<namespace>/<pod>`, by which a restarted agent tells
 * live pods' ports from stale ones, even with the same pod name in two namespaces.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hostVethName } from '../../src/agent/names.js';
import { createNetns, skipUnlessRoot, type TestNetns } from '../helpers/netns.js';
import { waitFor } from '../helpers/wait.js';
import { cniEnv, execShim, startTestNode, type TestNode } from './testing.js';

const skip = skipUnlessRoot();
/** clusterUuid('test'): Java's UUID.nameUUIDFromBytes("odlcoe:test"), written out. */
const CLUSTER_ID = 'd5b7c83d-b362-3bde-86d5-f509e6ca8560';

describe('agent under the coe-northbound backend (real OVS)', { skip, timeout: 240_000 }, () => {
  let node: TestNode;
  const namespaces: TestNetns[] = [];

  const externalIds = async (cid: string) =>
    (await node.ovs.vsctl(['get', 'Interface', hostVethName(cid, 'eth0'), 'external_ids'])).trim();
  const portExists = async (cid: string) =>
    (await node.ovs.vsctl(['list-ports', node.bridge])).split('\n').includes(hostVethName(cid, 'eth0'));

  before(async () => {
    node = await startTestNode();
    node.config.backend = 'coe-northbound';
    node.config.clusterName = 'test';
    await node.startAgent();
    for (const name of ['alpha', 'beta'])
      await node.kube.request('POST', '/api/v1/namespaces', {
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
      });
    for (const [cid, namespace] of [
      ['cid-web-a', 'alpha'],
      ['cid-web-b', 'beta'],
    ] as const) {
      const ns = await createNetns('odlcoe-coe');
      namespaces.push(ns);
      const uid = await node.createPod('web-0', namespace);
      const out = await execShim(
        node.shim,
        cniEnv('ADD', cid, ns.path, { name: 'web-0', namespace, uid }),
        await node.pluginConfig(),
      );
      assert.equal(out.code, 0, out.stdout + out.stderr);
    }
  });
  after(async () => {
    for (const ns of namespaces) await ns.remove().catch(() => undefined);
    await node?.stop();
  });

  it('names the port’s iface-id as the renderer names the interface, and records the pod', async () => {
    const ids = await externalIds('cid-web-a');
    assert.match(ids, new RegExp(`iface-id="${CLUSTER_ID}:web-0"`), ids);
    assert.match(ids, /odlcoe-pod="alpha\/web-0"/, ids);
    assert.match(await externalIds('cid-web-b'), /odlcoe-pod="beta\/web-0"/);
  });

  it('a restarted agent keeps live pods’ ports and removes the port of a pod deleted meanwhile', async () => {
    await node.stopAgent();
    await node.deletePod('web-0', 'beta');
    await node.startAgent();
    await waitFor(async () => !(await portExists('cid-web-b')), {
      timeoutMs: 30_000,
      what: 'the port of beta/web-0 removed by the start-up reconcile',
    });
    assert.ok(await portExists('cid-web-a'), 'alpha/web-0 (same iface-id) keeps its port');
  });
});
