import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gatewayIfaceId, podIfaceId } from './iface-id.js';
import { podOfPort } from '../ovs/external-ids.js';

/** clusterUuid('test'): Java's UUID.nameUUIDFromBytes("odlcoe:test"), written out. */
const CLUSTER_ID = 'd5b7c83d-b362-3bde-86d5-f509e6ca8560';

describe('iface-ids per backend', () => {
  it('netvirt: the interfaces the watcher writes', () => {
    assert.equal(podIfaceId({ backend: 'netvirt' }, 'shop', 'web-0'), 'shop:web-0');
    assert.equal(gatewayIfaceId({ backend: 'netvirt' }, 'n1'), 'odlcoe-gw.n1');
  });

  it('coe-northbound: <cluster-id>:<pod name>, as NetVirt Sodium’s CoeUtils.buildInterfaceName', () => {
    const naming = { backend: 'coe-northbound', clusterName: 'test' } as const;
    assert.equal(podIfaceId(naming, 'shop', 'web-0'), `${CLUSTER_ID}:web-0`);
    assert.equal(gatewayIfaceId(naming, 'n1'), `${CLUSTER_ID}:odlcoe-gw.n1`);
  });
});

describe('podOfPort', () => {
  it('reads odlcoe-pod first, then a <namespace>:<pod> iface-id (ports of older agents)', () => {
    assert.deepEqual(podOfPort({ 'odlcoe-pod': 'shop/web-0', 'iface-id': `${CLUSTER_ID}:web-0` }), {
      namespace: 'shop',
      name: 'web-0',
    });
    assert.deepEqual(podOfPort({ 'iface-id': 'shop:web-0' }), { namespace: 'shop', name: 'web-0' });
  });

  it('gives up on a malformed record rather than guess from the iface-id', () => {
    for (const bad of ['shop', '/web-0', 'shop/', 'a/b/c'])
      assert.equal(podOfPort({ 'odlcoe-pod': bad, 'iface-id': 'shop:web-0' }), undefined, bad);
  });
});
