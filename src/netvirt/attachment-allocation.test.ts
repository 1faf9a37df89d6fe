import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allocateAttachments, type AllocationInputs } from './attachment-allocation.js';
import { AttachmentHoldings } from './attachment-holdings.js';
import { formatAttachments, parseAttachments, type AttachmentRecord } from './attachments.js';
import { readNetworkDefinition, type NetworkDefinition } from './network-config.js';

const def = (namespace: string, name: string, config: unknown): NetworkDefinition =>
  readNetworkDefinition({
    metadata: { namespace, name, uid: `${name}-uid` },
    spec: { config: JSON.stringify(config) },
  });

const NETS: Record<string, NetworkDefinition> = {
  'tenant/blue': def('tenant', 'blue', {
    type: 'odlcoe',
    routing: 'vpn',
    subnets: [{ cidr: '10.50.0.0/29', exclude: ['10.50.0.2'] }],
    routes: [{ dst: '10.60.0.0/16', gw: '10.50.0.1' }],
  }),
  'tenant/red': def('tenant', 'red', {
    type: 'odlcoe',
    subnets: [{ cidr: '10.51.0.0/24' }, { cidr: 'fd00:51::/64' }],
  }),
  'tenant/mac': def('tenant', 'mac', { type: 'macvlan' }),
  'tenant/broken': def('tenant', 'broken', { type: 'odlcoe', subnets: [] }),
};

/** Inputs over NETS with what other pods hold, as recorded in their annotations. */
function inputs(others: Record<string, Map<string, AttachmentRecord>> = {}): AllocationInputs {
  const holdings = new AttachmentHoldings();
  for (const [holder, records] of Object.entries(others)) holdings.set(holder.replace(/^pod /, ''), records);
  return {
    network: (ns, name) => NETS[`${ns}/${name}`],
    usage: (network) => holdings.holdings(network, `${pod.namespace}/${pod.name}`),
  };
}

const pod = { namespace: 'tenant', name: 'p1' };

describe('attachment allocation', () => {
  it('allocates the lowest free address per family, derives the MAC, names the interface and adds routes', () => {
    const out = allocateAttachments(
      pod,
      JSON.stringify([{ name: 'blue', 'default-route': ['10.50.0.1'] }, { name: 'red' }, { name: 'mac' }]),
      new Map(),
      inputs(),
    );
    assert.deepEqual(Object.fromEntries(out), {
      net1: {
        network: 'tenant/blue',
        interfaceName: 'tenant:p1@net1',
        ips: ['10.50.0.3/29'],
        mac: '0a:58:0a:32:00:03',
        routes: [
          { dst: '10.60.0.0/16', gw: '10.50.0.1' },
          { dst: '0.0.0.0/0', gw: '10.50.0.1' },
        ],
      },
      net2: {
        network: 'tenant/red',
        interfaceName: 'tenant:p1@net2',
        ips: ['10.51.0.1/24', 'fd00:51::1/64'],
        mac: '0a:58:0a:33:00:01',
        routes: [],
      },
    });
  });

  it('skips what other pods hold and refuses when the subnet is used up', () => {
    const taken = new Map<string, AttachmentRecord>();
    for (const [i, ip] of ['10.50.0.3', '10.50.0.4', '10.50.0.5'].entries())
      taken.set(`net${i + 1}`, {
        network: 'tenant/blue',
        interfaceName: `tenant:q@net${i + 1}`,
        ips: [`${ip}/29`],
        mac: `0a:58:0a:32:00:0${3 + i}`,
        routes: [],
      });
    const one = allocateAttachments(pod, 'blue', new Map(), inputs({ 'pod tenant/q': taken }));
    assert.deepEqual((one.get('net1') as { ips: string[] }).ips, ['10.50.0.6/29']);
    const two = allocateAttachments(pod, 'blue@a,blue@b', new Map(), inputs({ 'pod tenant/q': taken }));
    assert.deepEqual(two.get('b'), {
      network: 'tenant/blue',
      error: {
        reason: 'subnet-exhausted',
        message: 'b (tenant/blue): no free IPv4 address left in 10.50.0.0/29',
      },
    });
  });

  it('honours static ips and mac, and refuses each bad request with its own reason', () => {
    const held = new Map<string, AttachmentRecord>([
      [
        'net1',
        {
          network: 'tenant/red',
          interfaceName: 'tenant:q@net1',
          ips: ['10.51.0.9/24'],
          mac: '02:00:00:00:00:09',
          routes: [],
        },
      ],
    ]);
    const ask = (el: Record<string, unknown>) =>
      allocateAttachments(
        pod,
        JSON.stringify([{ name: 'red', ...el }]),
        new Map(),
        inputs({ 'pod tenant/q': held }),
      ).get('net1');
    assert.deepEqual(ask({ ips: ['10.51.0.7/24'], mac: '02:00:00:00:00:07' }), {
      network: 'tenant/red',
      interfaceName: 'tenant:p1@net1',
      ips: ['10.51.0.7/24'],
      mac: '02:00:00:00:00:07',
      routes: [],
    });
    const reason = (el: Record<string, unknown>) => {
      const r = ask(el);
      return r && 'error' in r ? `${r.error.reason}: ${r.error.message}` : 'allocated';
    };
    assert.equal(
      reason({ ips: ['10.51.0.9/24'] }),
      'ip-taken: net1 (tenant/red): 10.51.0.9 is held by pod tenant/q net1',
    );
    assert.equal(
      reason({ ips: ['10.99.0.9/24'] }),
      "ip-outside-subnet: net1 (tenant/red): 10.99.0.9 is outside the network's subnets 10.51.0.0/24, fd00:51::/64",
    );
    assert.equal(
      reason({ ips: ['10.51.0.300'] }),
      'malformed-ip: net1 (tenant/red): ips entry "10.51.0.300" is not an address or address/prefix',
    );
    assert.equal(
      reason({ mac: '01:00:5e:00:00:01' }),
      'malformed-mac: net1 (tenant/red): mac "01:00:5e:00:00:01" is not a unicast 48-bit MAC',
    );
    assert.equal(
      reason({ mac: 'zz' }),
      'malformed-mac: net1 (tenant/red): mac "zz" is not a unicast 48-bit MAC',
    );
    assert.equal(
      reason({ mac: '02:00:00:00:00:09' }),
      'mac-taken: net1 (tenant/red): mac 02:00:00:00:00:09 is held by pod tenant/q net1',
    );
    assert.equal(
      reason({ ips: ['10.51.0.0/24'] }),
      'ip-taken: net1 (tenant/red): 10.51.0.0 is reserved by the network (network or broadcast address, or excluded)',
    );
  });

  it('refuses unknown and invalid networks, and a malformed selection for every default interface', () => {
    const out = allocateAttachments(pod, 'nowhere,broken', new Map(), inputs());
    assert.equal((out.get('net1') as { error: { reason: string } }).error.reason, 'unknown-network');
    assert.match(
      (out.get('net2') as { error: { message: string } }).error.message,
      /tenant\/broken is invalid: spec.config\/subnets/,
    );
    const bad = allocateAttachments(pod, '[{"name": 1}, {"name": "x"}]', new Map(), inputs());
    assert.deepEqual([...bad.keys()], ['net1', 'net2']);
    assert.equal((bad.get('net2') as { error: { reason: string } }).error.reason, 'malformed-request');
    assert.doesNotThrow(
      () => parseAttachments(formatAttachments(bad)),
      'failure records keep to the contract',
    );
  });

  it("keeps recorded allocations (restart), following only the network's routes", () => {
    const first = allocateAttachments(pod, 'blue,red', new Map(), inputs());
    // Another pod took the lowest address meanwhile: the recorded one stays.
    const again = allocateAttachments(pod, 'blue,red', first, inputs());
    assert.equal(formatAttachments(again), formatAttachments(first));
    const moved = new Map(first);
    moved.set('net1', { ...(first.get('net1') as object), ips: ['10.50.0.2/29'] } as AttachmentRecord);
    const fixed = allocateAttachments(pod, 'blue,red', moved, inputs());
    assert.deepEqual(
      (fixed.get('net1') as { ips: string[] }).ips,
      ['10.50.0.3/29'],
      'an excluded address is not kept',
    );
  });
});
