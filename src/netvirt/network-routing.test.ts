import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readNetworkDefinition, type OdlcoeNetwork } from './network-config.js';
import { namespaceRoutingConflicts, routedSubnet, type RoutedSubnet } from './network-routing.js';

const net = (namespace: string, name: string, ...cidrs: string[]): OdlcoeNetwork => {
  const d = readNetworkDefinition({
    metadata: { namespace, name, uid: `uid-${name}` },
    spec: {
      config: JSON.stringify({
        type: 'odlcoe',
        routing: 'namespace',
        subnets: cidrs.map((cidr) => ({ cidr })),
      }),
    },
  });
  if (d.state !== 'odlcoe') throw new Error(`test network ${name} does not read`);
  return d.network;
};
const POD_NETWORK: RoutedSubnet[] = [
  { cidr: '10.244.0.0/16', what: 'the cluster CIDR' },
  { cidr: 'fd00:244::/56', what: 'the cluster CIDR' },
];

describe('namespace-routed networks: overlap with the pod network and each other', () => {
  it('refuses a subnet sharing any address with a pod subnet, either way round', () => {
    const refused = namespaceRoutingConflicts(
      [
        { network: net('lab', 'inside', '10.244.3.0/24'), created: '2026-01-01T00:00:00Z' },
        { network: net('lab', 'around', '10.0.0.0/8'), created: '2026-01-01T00:00:00Z' },
        { network: net('lab', 'v6', 'fd00:244:0:ff::/64'), created: '2026-01-01T00:00:00Z' },
        { network: net('lab', 'next-to', '10.245.0.0/24', 'fd00:245::/64'), created: '2026-01-01T00:00:00Z' },
      ],
      POD_NETWORK,
    );
    assert.deepEqual([...refused.keys()].sort(), ['lab/around', 'lab/inside', 'lab/v6']);
    assert.match(
      refused.get('lab/inside') ?? '',
      /^spec\.config\/subnets: 10\.244\.3\.0\/24 overlaps the cluster CIDR 10\.244\.0\.0\/16, routed in the same VPNs/,
    );
    assert.match(
      refused.get('lab/around') ?? '',
      /10\.0\.0\.0\/8 overlaps the cluster CIDR 10\.244\.0\.0\/16/,
    );
  });

  it('of two overlapping networks the older keeps its routing, whatever their names and namespaces', () => {
    const candidates = [
      { network: net('b', 'aaa', '10.60.0.128/25'), created: '2026-01-02T00:00:00Z' },
      { network: net('a', 'zzz', '10.60.0.0/24'), created: '2026-01-01T00:00:00Z' },
    ];
    const refused = namespaceRoutingConflicts(candidates, []);
    assert.deepEqual([...refused.keys()], ['b/aaa']);
    assert.match(
      refused.get('b/aaa') ?? '',
      /10\.60\.0\.128\/25 overlaps network a\/zzz's subnet 10\.60\.0\.0\/24/,
    );
    // Created in the same second: the name decides.
    const tie = namespaceRoutingConflicts(
      candidates.map((c) => ({ ...c, created: '2026-01-01T00:00:00Z' })),
      [],
    );
    assert.deepEqual([...tie.keys()], ['b/aaa']);
  });

  it('a refused network takes nothing from the ones after it', () => {
    const refused = namespaceRoutingConflicts(
      [
        { network: net('lab', 'first', '10.244.9.0/24'), created: '2026-01-01T00:00:00Z' },
        { network: net('lab', 'second', '10.244.9.0/24', '10.70.0.0/24'), created: '2026-01-02T00:00:00Z' },
        { network: net('lab', 'third', '10.70.0.0/25'), created: '2026-01-03T00:00:00Z' },
      ],
      [{ cidr: '10.244.9.0/24', what: "node n1's pod subnet" }],
    );
    // first and second overlap the node; third overlaps only second, which is refused.
    assert.deepEqual([...refused.keys()].sort(), ['lab/first', 'lab/second']);
  });

  it('reads routed subnets leniently: a bad CIDR is not compared', () => {
    assert.deepEqual(routedSubnet(' 10.1.0.0/16 ', 'x'), { cidr: '10.1.0.0/16', what: 'x' });
    assert.equal(routedSubnet('10.1.0.0/40', 'x'), undefined);
    assert.equal(routedSubnet('nonsense', 'x'), undefined);
  });
});
