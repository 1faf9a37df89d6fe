import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dhcpNetworkEntry } from './dhcp.js';
import { ModelValidationError } from './errors.js';
import { NETVIRT_KINDS } from './kinds.js';
import {
  diffNodeNetwork,
  networkSubnets,
  nodeAllocationPool,
  nodeNetworkName,
  nodeNetworkOwnership,
  nodeOfNetwork,
  podRangeStart,
  translateNodeNetwork,
} from './node-network.js';

const ctx = { profile: 'aluminium' } as const;

describe('podRangeStart: the one rule for the pool and the conflist', () => {
  it('pods start at the second address, or at the third with node gateways on', () => {
    assert.equal(podRangeStart('10.11.1.0/24', false), '10.11.1.2');
    assert.equal(podRangeStart('10.11.1.0/24', true), '10.11.1.3');
    assert.equal(podRangeStart('fd00:10:11:1::/64', true), 'fd00:10:11:1::3');
    assert.equal(nodeAllocationPool('10.11.1.0/24', true).allocateFrom, '10.11.1.3');
    assert.equal(
      translateNodeNetwork('worker-1', ['10.11.1.0/24'], true).allocationPools[0]?.allocateFrom,
      '10.11.1.3',
    );
  });

  it('a subnet too small to reserve the gateway keeps the second address for pods (it gets no gateway)', () => {
    assert.equal(podRangeStart('10.11.1.0/29', true), '10.11.1.3');
    assert.equal(podRangeStart('10.11.1.0/30', true), '10.11.1.2');
    assert.throws(() => podRangeStart('10.11.1.0/31', true), ModelValidationError);
  });
});

describe('node networks (dhcp_allocation_pool odlcoe-node:<node>)', () => {
  it('one pool per family: gateway the first address, pods the rest (no IPv4 broadcast)', () => {
    assert.deepEqual(nodeAllocationPool('10.11.1.0/24'), {
      subnet: '10.11.1.0/24',
      gateway: '10.11.1.1',
      allocateFrom: '10.11.1.2',
      allocateTo: '10.11.1.254',
    });
    assert.deepEqual(nodeAllocationPool('fd00:10:11:1::/64'), {
      subnet: 'fd00:10:11:1::/64',
      gateway: 'fd00:10:11:1::1',
      allocateFrom: 'fd00:10:11:1::2',
      allocateTo: 'fd00:10:11:1:ffff:ffff:ffff:ffff',
    });
    assert.throws(() => nodeAllocationPool('10.11.1.0/31'), ModelValidationError);
    assert.deepEqual(dhcpNetworkEntry(translateNodeNetwork('worker-1', ['10.11.1.0/24'])), {
      'network-id': 'odlcoe-node:worker-1',
      'allocation-pool': [
        {
          subnet: '10.11.1.0/24',
          'allocate-from': '10.11.1.2',
          'allocate-to': '10.11.1.254',
          gateway: '10.11.1.1',
        },
      ],
    });
  });

  it('names: odlcoe-node:<node>, never an ELAN name; ownership is the name space', () => {
    assert.equal(nodeNetworkName('worker-1'), 'odlcoe-node:worker-1');
    assert.equal(nodeOfNetwork('odlcoe-node:worker-1'), 'worker-1');
    assert.equal(nodeOfNetwork('192.168.56.101:default'), undefined);
    assert.equal(nodeOfNetwork('odlcoe-node:'), undefined);
    assert.deepEqual(nodeNetworkOwnership(translateNodeNetwork('w', ['10.0.0.0/24'])), { owner: 'ours' });
    assert.equal(
      nodeNetworkOwnership({ networkId: '192.168.56.101:default', allocationPools: [] }).owner,
      'foreign',
    );
  });

  it('the subnets of a network: canonical, IPv4 first, unusable pools left out', () => {
    assert.deepEqual(
      networkSubnets({
        networkId: 'odlcoe-node:w',
        allocationPools: [{ subnet: 'FD00:1::/64' }, { subnet: ' 10.1.0.0/24 ' }, { subnet: '10.2.0.5/24' }],
      }),
      ['10.1.0.0/24', 'fd00:1::/64'],
    );
    assert.deepEqual(networkSubnets(undefined), []);
  });

  it('diff: the pools are owned (as a set); allocations and unknown members are carried forward', () => {
    const desired = translateNodeNetwork('w', ['10.1.0.0/24']);
    const actual = {
      ...desired,
      allocationPools: [{ ...desired.allocationPools[0]! }],
      preserved: { allocations: [{ subnet: '10.1.0.0/24' }] },
    };
    assert.equal(diffNodeNetwork(desired, actual, ctx).action, 'none');
    const moved = translateNodeNetwork('w', ['10.9.0.0/24']);
    const d = diffNodeNetwork(moved, actual, ctx);
    assert.equal(d.action, 'update');
    if (d.action !== 'update') return;
    assert.deepEqual(d.changed, ['allocation-pool']);
    const op = d.writes[0];
    assert.equal(op?.op, 'put');
    if (op?.op !== 'put') return;
    assert.deepEqual((op.body['dhcp_allocation_pool:network'] as Record<string, unknown>[])[0]?.allocations, [
      { subnet: '10.1.0.0/24' },
    ]);
    assert.equal(diffNodeNetwork(undefined, actual, ctx).action, 'delete-candidate');
    assert.equal(
      diffNodeNetwork(undefined, { networkId: 'elan-x', allocationPools: [] }, ctx).action,
      'foreign',
    );
  });
});

describe('the dhcpNetwork kind', () => {
  it('is one entry of the netvirt table: its node key owns a node network, nothing owns another', () => {
    const spec = NETVIRT_KINDS.spec('dhcpNetwork');
    const ctx = {
      owner: {
        clusterName: 'c',
        profile: 'sodium' as const,
        routeTarget: '64512:1',
        rdAdministrator: '64512',
      },
      get: () => undefined,
    };
    assert.equal(spec.ownerKey('odlcoe-node:worker-1', ctx), 'node-network/worker-1');
    assert.equal(spec.ownerKey('192.168.56.101:default', ctx), undefined);
    assert.equal(spec.module('aluminium'), 'dhcp_allocation_pool');
    assert.deepEqual(NETVIRT_KINDS.restrictedTo('aluminium', ['dhcp_allocation_pool', 'elan']).kinds.sort(), [
      'dhcpNetwork',
      'elanInstance',
      'elanInterface',
    ]);
  });
});
