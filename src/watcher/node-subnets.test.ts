import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { clusterUuid, type K8sNode } from '../netvirt/index.js';
import { k8sNodeEntries, NodeSubnets } from './node-subnets.js';

const OURS = clusterUuid('prod');
const owner = {
  clusterName: 'prod',
  profile: 'sodium',
  routeTarget: '64512:1',
  rdAdministrator: '64512',
} as const;
const node = (uid: string, podCIDR?: string): V1Node => ({
  metadata: { name: `n-${uid}`, uid },
  spec: podCIDR ? { podCIDR } : {},
});

/** A backend cache's k8s-node entries, in memory; `reads` counts the entries re-read from "ODL". */
function cache(entries: K8sNode[]) {
  const map = new Map(entries.map((e) => [e.uid, e]));
  const odl = new Map(map);
  const reads: string[] = [];
  return {
    odl,
    reads,
    get: (_kind: 'k8sNode', uid: string) => map.get(uid),
    values: (_kind: 'k8sNode') => map.values(),
    refresh: async (_kind: 'k8sNode', uid: string) => {
      reads.push(uid);
      const entry = odl.get(uid);
      if (entry) map.set(uid, entry);
      else map.delete(uid);
      return entry;
    },
  };
}

describe('NodeSubnets over a backend’s k8s-node entries', () => {
  it('odl: reads the pod-cidr an ODL user set from the cache, and re-reads only a cached entry', async () => {
    const c = cache([{ uid: 'a', clusterId: OURS }]);
    const subnets = new NodeSubnets('odl', k8sNodeEntries(c, owner));
    assert.equal(subnets.subnetFor(node('a')), undefined);
    assert.deepEqual(subnets.entrySubnet(node('a')), { kind: 'none' });
    c.odl.set('a', { uid: 'a', clusterId: OURS, podCidr: ' 10.1.0.0/24 ' });
    await subnets.refreshEntry('a');
    await subnets.refreshEntry('b'); // not in the cache: the watcher creates it first
    assert.deepEqual(c.reads, ['a']);
    assert.equal(subnets.subnetFor(node('a')), '10.1.0.0/24');
  });

  it('podCIDR: copies spec.podCIDR and never reads ODL', async () => {
    const c = cache([]);
    const subnets = new NodeSubnets('podCIDR', k8sNodeEntries(c, owner));
    assert.deepEqual(subnets.entrySubnet(node('a', '10.2.0.0/24')), { kind: 'subnet', cidr: '10.2.0.0/24' });
    assert.equal(subnets.entrySubnet(node('b', 'nonsense')).kind, 'none');
    await subnets.refreshEntry('a');
    assert.deepEqual(c.reads, []);
  });

  it('allocate: recovers only this cluster’s recorded allocations, then allocates around them', () => {
    const c = cache([
      { uid: 'a', clusterId: OURS, podCidr: '10.3.0.0/24' },
      { uid: 'x', clusterId: clusterUuid('other'), podCidr: '10.3.1.0/24' },
      { uid: 'b', clusterId: OURS },
    ]);
    const subnets = new NodeSubnets('allocate', k8sNodeEntries(c, owner), {
      clusterCidr: '10.3.0.0/16',
      nodePrefixLength: 24,
    });
    assert.deepEqual(subnets.recover(), []);
    assert.equal(subnets.subnetFor(node('a')), '10.3.0.0/24');
    // A gone node's allocation and entry stay readable by uid until it is released.
    assert.equal(subnets.allocated('a'), '10.3.0.0/24');
    assert.equal(subnets.entry('a')?.podCidr, '10.3.0.0/24');
    // Another cluster's entry is not an allocation of ours: its subnet is free to us.
    assert.deepEqual(subnets.entrySubnet(node('b')), { kind: 'subnet', cidr: '10.3.1.0/24' });
    assert.equal(subnets.release('a'), true);
    assert.equal(subnets.subnetFor(node('a')), undefined);
    assert.equal(subnets.allocated('a'), undefined);
  });
});
