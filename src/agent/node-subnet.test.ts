import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findNodeSubnet } from './node-subnet.js';
import { nodeInternalIp } from './agent.js';

describe('findNodeSubnet', () => {
  const entries = [
    { uid: 'n0', 'host-name': 'n0', 'internal-ip-address': '192.168.56.100', 'pod-cidr': '10.11.0.0/24' },
    { uid: 'n1', 'host-name': 'n1', 'internal-ip-address': '192.168.56.101', 'pod-cidr': '10.11.1.0/24' },
    { uid: 'n2', 'host-name': 'n2', 'internal-ip-address': 'fd00::0:2', 'pod-cidr': ' 10.11.2.0/24' },
  ];

  it('matches the node by internal IP, not by name', () => {
    assert.deepEqual(findNodeSubnet(entries, '192.168.56.101'), { uid: 'n1', podCidr: '10.11.1.0/24' });
  });

  it('compares IPv6 addresses in normal form', () => {
    assert.equal(findNodeSubnet(entries, 'fd00::2')?.podCidr, '10.11.2.0/24');
  });

  it('has nothing while the entry or its pod-cidr is missing', () => {
    assert.equal(findNodeSubnet(entries, '192.168.56.200'), undefined);
    assert.equal(
      findNodeSubnet([{ uid: 'n1', 'internal-ip-address': '192.168.56.101' }], '192.168.56.101'),
      undefined,
    );
    assert.equal(
      findNodeSubnet(
        [{ uid: 'n1', 'internal-ip-address': '192.168.56.101', 'pod-cidr': '' }],
        '192.168.56.101',
      ),
      undefined,
    );
  });

  it('refuses two entries for one IP with different subnets', () => {
    const twice = [
      ...entries,
      { uid: 'n1-old', 'internal-ip-address': '192.168.56.101', 'pod-cidr': '10.99.0.0/24' },
    ];
    assert.throws(() => findNodeSubnet(twice, '192.168.56.101'), /different pod-cidr/);
  });
});

describe('nodeInternalIp', () => {
  it('matches the watcher: an InternalIP, IPv4 first, never an ExternalIP', () => {
    const addr = (list: { type: string; address: string }[]) => ({ status: { addresses: list } });
    assert.equal(
      nodeInternalIp(
        addr([
          { type: 'Hostname', address: 'n1' },
          { type: 'ExternalIP', address: '1.2.3.4' },
          { type: 'InternalIP', address: 'fd00::1' },
          { type: 'InternalIP', address: '10.0.0.1' },
        ]),
      ),
      '10.0.0.1',
    );
    assert.equal(nodeInternalIp(addr([{ type: 'ExternalIP', address: '1.2.3.4' }])), undefined);
    assert.equal(nodeInternalIp({}), undefined);
  });
});
