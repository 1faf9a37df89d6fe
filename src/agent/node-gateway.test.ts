import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger } from '../common/log.js';
import { createRegistry } from '../common/metrics.js';
import { AgentMetrics } from './metrics.js';
import {
  gatewayHostRepairs,
  gatewayPort,
  gatewayRoutes,
  NodeGateway,
  parseHostState,
} from './node-gateway.js';

describe('gatewayRoutes', () => {
  it('routes the node subnet (its pods are not on-link), the cluster and the Service ranges of the subnet’s family', () => {
    assert.deepEqual(
      gatewayRoutes(
        '10.11.1.0/24',
        ['10.11.0.0/16', '10.11.1.0/24', 'fd00::/48'],
        ['10.96.0.0/12', '10.11.0.0/16'],
      ),
      ['10.11.0.0/16', '10.11.1.0/24', '10.96.0.0/12'],
    );
  });
});

describe('gatewayPort', () => {
  it('names the netvirt backend’s gateway interface, unmarked', () => {
    const ids = gatewayPort('n1', '10.11.1.0/24').externalIds;
    assert.equal(ids['iface-id'], 'odlcoe-gw.n1');
    assert.equal(ids['is-service-gateway'], undefined);
  });

  it('under coe-northbound: the interface Sodium’s renderer makes, marked is-service-gateway', () => {
    const ids = gatewayPort('n1', '10.11.1.0/24', {
      backend: 'coe-northbound',
      clusterName: 'test',
    }).externalIds;
    assert.deepEqual(ids, {
      'iface-id': 'd5b7c83d-b362-3bde-86d5-f509e6ca8560:odlcoe-gw.n1',
      'attached-mac': '0a:58:0a:0b:01:02',
      'ip-address': '10.11.1.2',
      'odlcoe-node-gateway': 'n1',
      'is-service-gateway': 'true',
    });
  });
});

describe('gatewayHostRepairs', () => {
  const port = gatewayPort('n1', '10.11.1.0/24');
  const spec = { port, mtu: 1450, routes: ['10.11.1.0/24', '10.96.0.0/12'] };

  /** The device up with the right MAC and MTU, holding 10.11.1.2/`prefixlen`, with these routes. */
  const upWith = (prefixlen: number, routes: object[]) =>
    parseHostState(
      JSON.stringify([
        {
          ifname: port.name,
          flags: ['BROADCAST', 'UP'],
          mtu: 1450,
          address: '0a:58:0a:0b:01:02',
          addr_info: [{ family: 'inet', local: '10.11.1.2', prefixlen }],
        },
      ]),
      JSON.stringify(routes),
      4,
    );

  it('asks for nothing when the device is as it must be (no churn)', () => {
    const state = upWith(32, [
      { dst: '10.11.1.1', protocol: 'boot', scope: 'link' },
      { dst: '10.11.1.0/24', gateway: '10.11.1.1' },
      { dst: '10.96.0.0/12', gateway: '10.11.1.1' },
    ]);
    assert.deepEqual(gatewayHostRepairs(spec, state), []);
  });

  it('turns the on-link gateway of an older agent into the routed one: the subnet-prefix address goes first', () => {
    const state = upWith(24, [
      { dst: '10.11.1.0/24', protocol: 'kernel', scope: 'link' },
      { dst: '10.96.0.0/12', gateway: '10.11.1.1' },
    ]);
    assert.deepEqual(
      gatewayHostRepairs(spec, state).map((r) => r.command.join(' ')),
      [
        `address replace 10.11.1.2/32 dev ${port.name}`,
        `address del 10.11.1.2/24 dev ${port.name}`,
        `route replace 10.11.1.1/32 dev ${port.name}`,
        `route replace 10.11.1.0/24 via 10.11.1.1 dev ${port.name}`,
      ],
    );
  });

  it('names every missing piece of a re-created device, in the order ip must apply them', () => {
    const state = parseHostState(
      JSON.stringify([{ ifname: port.name, flags: ['BROADCAST'], mtu: 1500, address: '0a:58:0a:0b:01:02' }]),
      '[]',
      4,
    );
    assert.deepEqual(
      gatewayHostRepairs(spec, state).map((r) => r.command.join(' ')),
      [
        `link set dev ${port.name} mtu 1450`,
        `link set dev ${port.name} up`,
        `address replace 10.11.1.2/32 dev ${port.name}`,
        `route replace 10.11.1.1/32 dev ${port.name}`,
        `route replace 10.11.1.0/24 via 10.11.1.1 dev ${port.name}`,
        `route replace 10.96.0.0/12 via 10.11.1.1 dev ${port.name}`,
      ],
    );
  });
});

describe('gatewayHostRepairs, IPv6', () => {
  it('keeps an IPv6 gateway on-link (NetVirt answers no neighbour solicitation for the pods’ gateway)', () => {
    const port = gatewayPort('n1', 'fd00:11:1::/64');
    const state = parseHostState(
      JSON.stringify([{ ifname: port.name, flags: ['UP'], mtu: 1450, address: port.mac }]),
      '[]',
      6,
    );
    assert.deepEqual(
      gatewayHostRepairs({ port, mtu: 1450, routes: [] }, state).map((r) => r.command.join(' ')),
      [`address replace fd00:11:1::2/64 dev ${port.name}`],
    );
  });
});

describe('NodeGateway', () => {
  const untouchable = new Proxy(
    {},
    {
      get: () => () => {
        throw new Error('OVS must not be touched');
      },
    },
  );
  const gateway = (serviceCidrs: string[]) =>
    new NodeGateway({
      ovs: untouchable as never,
      bridge: 'br-int',
      nodeName: 'n1',
      mtu: 1450,
      serviceCidrs,
      clusterCidrs: [],
      offload: { turnsOff: () => false },
      leaseDir: '/nonexistent',
      metrics: new AgentMetrics(createRegistry('odlcoe_agent_')),
      logger: silentLogger(),
    });

  it('a subnet too small to reserve the gateway address: not ready, saying so, nothing written', async () => {
    const g = gateway(['10.96.0.0/12']);
    await g.sync('10.11.1.0/30');
    assert.throws(
      () => g.ready(),
      /node subnet 10\.11\.1\.0\/30 is too small to reserve the node gateway's address \(its second address\).*IPv4 at most \/29/,
    );
  });

  it('not ready until the subnet is known; ready with Services off', async () => {
    const g = gateway(['10.96.0.0/12']);
    await g.sync(undefined);
    assert.throws(() => g.ready(), /pod subnet of node n1 is not known yet/);
    assert.equal(gateway([]).ready(), true);
  });
});
