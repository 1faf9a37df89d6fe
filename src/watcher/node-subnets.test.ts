import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { clusterUuid, type K8sNode } from '../netvirt/index.js';
import type { DhcpNetwork } from '../netvirt/dhcp.js';
import { translateNodeNetwork } from '../netvirt/node-network.js';
import { k8sNodeEntries, nodeNetworkEntries, NodeSubnets } from './node-subnets.js';

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

/** A backend cache's entries of one kind, in memory; `reads` counts the entries re-read from "ODL". */
function memoryCache<K extends string, T>(entries: T[], keyOf: (e: T) => string) {
  const map = new Map(entries.map((e) => [keyOf(e), e]));
  const odl = new Map(map);
  const reads: string[] = [];
  return {
    odl,
    reads,
    get: (_kind: K, key: string) => map.get(key),
    values: (_kind: K) => map.values(),
    refresh: async (_kind: K, key: string) => {
      reads.push(key);
      const entry = odl.get(key);
      if (entry) map.set(key, entry);
      else map.delete(key);
      return entry;
    },
  };
}

const cache = (entries: K8sNode[]) => memoryCache<'k8sNode', K8sNode>(entries, (e) => e.uid);

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

const networks = (entries: DhcpNetwork[]) =>
  memoryCache<'dhcpNetwork', DhcpNetwork>(entries, (e) => e.networkId);

describe('NodeSubnets over node networks', () => {
  const records = (n: ReturnType<typeof networks>, nodes: V1Node[]) => ({
    entries: nodeNetworkEntries(n),
    node: (name: string) => nodes.find((x) => x.metadata?.name === name),
  });

  it('odl: a network an ODL user created is read (and never written); a k8s-node pod-cidr is carried over', async () => {
    const n = networks([]);
    const c = cache([{ uid: 'b', clusterId: OURS, podCidr: ' 10.5.0.0/24 ' }]);
    const subnets = new NodeSubnets('odl', k8sNodeEntries(c, owner), undefined, records(n, []));
    assert.deepEqual(subnets.nodeNetworkSubnet(node('a')), { kind: 'none' });
    // The user creates n-a's network: read back on the next look (the watcher polls).
    n.odl.set('odlcoe-node:n-a', translateNodeNetwork('n-a', ['10.4.0.0/24']));
    await subnets.refreshNode(node('a'));
    assert.deepEqual(n.reads, ['odlcoe-node:n-a']);
    assert.equal(subnets.subnetFor(node('a')), '10.4.0.0/24');
    assert.deepEqual(subnets.nodeNetworkSubnet(node('a')), { kind: 'user' });
    // n-b has only a k8s-node pod-cidr (the upgrade, or a Sodium user's old way): carried over.
    assert.equal(subnets.subnetFor(node('b')), '10.5.0.0/24');
    assert.deepEqual(subnets.nodeNetworkSubnet(node('b')), { kind: 'subnet', cidr: '10.5.0.0/24' });
  });

  it('podCIDR and allocate: the network carries what the entry would', () => {
    const subnets = new NodeSubnets('podCIDR', undefined, undefined, records(networks([]), []));
    assert.deepEqual(subnets.nodeNetworkSubnet(node('a', '10.6.0.0/24')), {
      kind: 'subnet',
      cidr: '10.6.0.0/24',
    });
  });

  it('allocate: recovers from networks first (a gone node by name), then k8s-node entries; a gone node’s name is kept', () => {
    const n = networks([
      translateNodeNetwork('n-a', ['10.7.0.0/24']),
      translateNodeNetwork('n-gone', ['10.7.1.0/24']),
      { networkId: '192.168.1.1:default', allocationPools: [{ subnet: '10.7.2.0/24' }] }, // not ours
    ]);
    const c = cache([
      { uid: 'a', clusterId: OURS, podCidr: '10.7.0.0/24' },
      { uid: 'c', clusterId: OURS, podCidr: '10.7.3.0/24' }, // upgraded: k8s-node only
    ]);
    const subnets = new NodeSubnets(
      'allocate',
      k8sNodeEntries(c, owner),
      { clusterCidr: '10.7.0.0/16', nodePrefixLength: 24 },
      records(n, [node('a')]),
    );
    assert.deepEqual(subnets.recover(), []);
    assert.equal(subnets.allocated('a'), '10.7.0.0/24');
    assert.equal(subnets.allocated('c'), '10.7.3.0/24');
    // The gone node's subnet stays taken until its network goes.
    assert.deepEqual(subnets.entrySubnet(node('d')), { kind: 'subnet', cidr: '10.7.2.0/24' });
    assert.equal(subnets.releaseNetwork('n-gone'), true);
    assert.deepEqual(subnets.entrySubnet(node('e')), { kind: 'subnet', cidr: '10.7.1.0/24' });
    assert.equal(subnets.nodeName('a'), 'n-a');
  });
});
