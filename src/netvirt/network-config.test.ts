import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readNetworkDefinition, subnetHosts, type NetworkAttachmentDefinition } from './network-config.js';

const nad = (config: unknown, name = 'blue', namespace = 'tenant'): NetworkAttachmentDefinition => ({
  metadata: { name, namespace, uid: 'nad-uid-1' },
  spec: { config: typeof config === 'string' ? config : JSON.stringify(config) },
});

const invalid = (config: unknown, pattern: RegExp, name?: string) => {
  const d = readNetworkDefinition(nad(config, name));
  assert.equal(d.state, 'invalid', `expected ${JSON.stringify(config)} to be refused`);
  if (d.state === 'invalid') assert.match(d.message, pattern);
};

describe('odlcoe NetworkAttachmentDefinition config', () => {
  it('reads a routed network with gateway, exclusions and routes', () => {
    const d = readNetworkDefinition(
      nad({
        cniVersion: '1.0.0',
        name: 'blue',
        type: 'odlcoe',
        routing: 'vpn',
        subnets: [{ cidr: '10.50.0.0/24', exclude: ['10.50.0.2', '10.50.0.8/29'] }, { cidr: 'fd00:50::/64' }],
        routes: [{ dst: '10.60.0.0/16', gw: '10.50.0.1' }, { dst: '192.0.2.0/24' }],
      }),
    );
    assert.equal(d.state, 'odlcoe');
    if (d.state !== 'odlcoe') return;
    assert.equal(d.network.routing, 'vpn');
    assert.equal(
      d.network.subnets[0]?.gateway,
      '10.50.0.1',
      'a routed subnet gets its first address as gateway',
    );
    assert.equal(d.network.subnets[1]?.gateway, 'fd00:50::1');
    assert.deepEqual(d.network.routes, [{ dst: '10.60.0.0/16', gw: '10.50.0.1' }, { dst: '192.0.2.0/24' }]);
    const first = [...take(subnetHosts(d.network.subnets[0]!), 4)];
    assert.deepEqual(
      first,
      ['10.50.0.3', '10.50.0.4', '10.50.0.5', '10.50.0.6'],
      'gateway and exclusions are skipped',
    );
  });

  it('leaves the members the agent, the shim and Multus read to them', () => {
    const d = readNetworkDefinition(
      nad({
        cniVersion: '1.0.0',
        name: 'blue',
        type: 'odlcoe',
        capabilities: { ips: true, mac: true },
        socket: '/run/odlcoe/cni.sock',
        mtu: 1400,
        subnets: [{ cidr: '10.50.0.0/24' }],
      }),
    );
    assert.equal(d.state, 'odlcoe');
  });

  it('reads a network routed through its namespace\'s VPN: a gateway as for "vpn", no VPN name limit', () => {
    const long = 'n'.repeat(40);
    const d = readNetworkDefinition(
      nad({ type: 'odlcoe', routing: 'namespace', subnets: [{ cidr: '10.53.0.0/24' }] }, long, long),
    );
    assert.equal(d.state, 'odlcoe', 'the namespace VPN name is shortened, not the network refused');
    if (d.state !== 'odlcoe') return;
    assert.equal(d.network.routing, 'namespace');
    assert.equal(d.network.subnets[0]?.gateway, '10.53.0.1');
  });

  it('reads an L2 network (no gateway unless given) and one on an ELAN made in ODL', () => {
    const l2 = readNetworkDefinition(nad({ type: 'odlcoe', subnets: [{ cidr: '10.51.0.0/24' }] }));
    assert.equal(l2.state === 'odlcoe' && l2.network.routing, 'l2');
    assert.equal(l2.state === 'odlcoe' && l2.network.subnets[0]?.gateway, undefined);
    const onElan = readNetworkDefinition(
      nad({ type: 'odlcoe', elan: 'user-elan', subnets: [{ cidr: '10.52.0.0/24' }] }),
    );
    assert.equal(onElan.state === 'odlcoe' && onElan.network.elan, 'user-elan');
  });

  it("leaves other plugins' NADs alone", () => {
    assert.equal(
      readNetworkDefinition(nad({ type: 'macvlan', ipam: { type: 'host-local' } })).state,
      'foreign-plugin',
    );
    assert.equal(readNetworkDefinition(nad({ plugins: [{ type: 'bridge' }] })).state, 'foreign-plugin');
    assert.equal(
      readNetworkDefinition({ metadata: { name: 'x', namespace: 'y', uid: 'u' }, spec: {} }).state,
      'foreign-plugin',
    );
  });

  it('refuses each kind of bad definition with a message naming the member', () => {
    invalid(
      { type: 'odlcoe', ipam: { type: 'host-local' }, subnets: [{ cidr: '10.0.0.0/24' }] },
      /ipam: an odlcoe network has no "ipam"/,
    );
    invalid(
      { type: 'odlcoe', subnets: [{ cidr: '10.0.0.0/24' }, { cidr: '10.0.0.128/25' }] },
      /subnets\[1\]\/cidr: 10.0.0.128\/25 overlaps 10.0.0.0\/24/,
    );
    invalid(
      { type: 'odlcoe', subnets: [{ cidr: '10.0.0.0/24', gateway: '10.0.1.1' }] },
      /gateway: 10.0.1.1 is not a host address of 10.0.0.0\/24/,
    );
    invalid({ type: 'odlcoe', subnets: [{ cidr: '10.0.0.5/24' }] }, /cidr: .*host bits set/);
    invalid({ type: 'odlcoe', subnets: [] }, /subnets: not a non-empty list/);
    invalid(
      { type: 'odlcoe', routing: 'bgp', subnets: [{ cidr: '10.0.0.0/24' }] },
      /routing: "bgp" is not "l2", "vpn" or "namespace"/,
    );
    invalid(
      { type: 'odlcoe', elan: 'x', routing: 'namespace', subnets: [{ cidr: '10.0.0.0/24' }] },
      /existing ELAN is "l2"/,
    );
    invalid(
      { type: 'odlcoe', elan: 'x', routing: 'vpn', subnets: [{ cidr: '10.0.0.0/24' }] },
      /existing ELAN is "l2"/,
    );
    invalid(
      { type: 'odlcoe', elan: 'odlcoe-net.a.b', subnets: [{ cidr: '10.0.0.0/24' }] },
      /odlcoe's own networks/,
    );
    invalid(
      { type: 'odlcoe', subnets: [{ cidr: '10.0.0.0/24', exclude: ['10.9.0.1'] }] },
      /exclude\[0\]: 10.9.0.1 is outside/,
    );
    invalid(
      {
        type: 'odlcoe',
        subnets: [{ cidr: '10.0.0.0/24' }],
        routes: [{ dst: '10.1.0.0/16', gw: '10.2.0.1' }],
      },
      /routes\[0\]\/gw: 10.2.0.1 is not inside any subnet/,
    );
    invalid(
      { type: 'odlcoe', subnets: [{ cidr: '10.0.0.0/24', vlan: 5 }] },
      /subnets\[0\]: unknown member\(s\) "vlan"/,
    );
    invalid('{"type": "odlcoe", ', /not JSON/);
    invalid({ plugins: [{ type: 'odlcoe' }] }, /single plugin config/);
    invalid(
      { type: 'odlcoe', routing: 'vpn', subnets: [{ cidr: '10.0.0.0/24' }] },
      /VPN name odlcoe-net\.tenant\.a-network-name-far-too-long-for-vpn has 53 characters/,
      'a-network-name-far-too-long-for-vpn',
    );
  });
});

function* take<T>(it: Iterable<T>, n: number): Generator<T> {
  if (n <= 0) return;
  for (const x of it) {
    yield x;
    if (--n === 0) return;
  }
}
