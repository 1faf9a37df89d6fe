import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttachmentHoldings } from './attachment-holdings.js';
import type { AttachmentRecord } from './attachments.js';
import { readNetworkDefinition, type NetworkSubnet } from './network-config.js';

const SUBNET = ((): NetworkSubnet => {
  const d = readNetworkDefinition({
    metadata: { namespace: 'tenant', name: 'blue', uid: 'u' },
    spec: {
      config: JSON.stringify({
        type: 'odlcoe',
        routing: 'vpn',
        subnets: [{ cidr: '10.50.0.0/24', exclude: ['10.50.0.2', '10.50.0.8/30'] }],
      }),
    },
  });
  if (d.state !== 'odlcoe' || !d.network.subnets[0]) throw new Error('test network does not read');
  return d.network.subnets[0];
})();

const records = (...ips: string[]): Map<string, AttachmentRecord> =>
  new Map(
    ips.map((ip, i) => [
      `net${i + 1}`,
      {
        network: 'tenant/blue',
        interfaceName: `x@net${i + 1}`,
        ips: [`${ip}/24`],
        mac: `02:00:00:00:00:${ip.split('.')[3]?.padStart(2, '0') ?? '00'}`,
        routes: [],
      },
    ]),
  );
const addr = (n: bigint) => `10.50.0.${n - 0x0a320000n}`;

describe('attachment holdings', () => {
  it('answers who holds an address or MAC, never counting the pod being allocated', () => {
    const h = new AttachmentHoldings();
    h.set('tenant/a', records('10.50.0.3'));
    assert.equal(h.holdings('tenant/blue', 'tenant/b').ipHolder('10.50.0.3'), 'pod tenant/a net1');
    assert.equal(h.holdings('tenant/blue', 'tenant/b').macHolder('02:00:00:00:00:03'), 'pod tenant/a net1');
    assert.equal(h.holdings('tenant/blue', 'tenant/a').ipHolder('10.50.0.3'), undefined);
    assert.equal(h.holdings('tenant/red', 'tenant/b').ipHolder('10.50.0.3'), undefined, 'per network');
    h.set('tenant/a', undefined);
    assert.equal(h.holdings('tenant/blue', 'tenant/b').ipHolder('10.50.0.3'), undefined, 'released');
  });

  it('keeps every holder of a doubly held address: free only when the last one goes', () => {
    const h = new AttachmentHoldings();
    h.set('tenant/a', records('10.50.0.3'));
    h.set('tenant/b', records('10.50.0.3'));
    h.set('tenant/a', undefined);
    assert.equal(h.holdings('tenant/blue', 'tenant/c').ipHolder('10.50.0.3'), 'pod tenant/b net1');
    h.set(
      'tenant/b',
      new Map([['net1', { network: 'tenant/blue', error: { reason: 'ip-taken', message: 'x' } }]]),
    );
    assert.equal(
      h.holdings('tenant/blue', 'tenant/c').ipHolder('10.50.0.3'),
      undefined,
      'a refusal holds nothing',
    );
  });

  it('the first candidate skips held and reserved addresses, and goes back when one below is released', () => {
    const h = new AttachmentHoldings();
    h.set('tenant/a', records('10.50.0.1', '10.50.0.3', '10.50.0.4', '10.50.0.5', '10.50.0.6', '10.50.0.7'));
    const first = () => h.holdings('tenant/blue', 'tenant/z').firstCandidate?.(SUBNET) ?? 0n;
    // .0 network, .1 held, .2 excluded, .3-.7 held, .8-.11 excluded: .12.
    assert.equal(addr(first()), '10.50.0.12');
    h.set('tenant/b', records('10.50.0.12'));
    assert.equal(addr(first()), '10.50.0.13');
    h.set('tenant/a', records('10.50.0.1', '10.50.0.3', '10.50.0.5', '10.50.0.6', '10.50.0.7'));
    assert.equal(addr(first()), '10.50.0.4', 'a released address below is the first candidate again');
  });
});
