import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CniError } from './error.js';
import { formatResult, parsePrevResult, type CniResult } from './result.js';
import { SUPPORTED_CNI_VERSIONS } from './version.js';

const result: CniResult = {
  interfaces: [
    { name: 'veth1a2b3c4d', mac: 'aa:bb:cc:dd:ee:ff' },
    { name: 'eth0', mac: '0a:58:0a:0b:01:05', sandbox: '/var/run/netns/p1', mtu: 1450 },
  ],
  ips: [
    { address: '10.11.1.5/24', gateway: '10.11.1.1', interface: 1 },
    { address: 'fd00::5/64', gateway: 'fd00::1', interface: 1 },
  ],
  routes: [{ dst: '0.0.0.0/0', gw: '10.11.1.1' }],
  dns: {},
};

describe('formatResult', () => {
  it('adds ips[].version for 0.3.0, 0.3.1 and 0.4.0 only', () => {
    for (const v of ['0.3.0', '0.3.1', '0.4.0'] as const) {
      const out = formatResult(result, v) as { ips: { version?: string }[]; cniVersion: string };
      assert.equal(out.cniVersion, v);
      assert.deepEqual(
        out.ips.map((ip) => ip.version),
        ['4', '6'],
      );
    }
    for (const v of ['1.0.0', '1.1.0'] as const) {
      const out = formatResult(result, v) as { ips: Record<string, unknown>[] };
      assert.ok(
        out.ips.every((ip) => !('version' in ip)),
        v,
      );
    }
  });

  it('carries interface mtu only from 1.1.0', () => {
    const mtus = SUPPORTED_CNI_VERSIONS.map(
      (v) => (formatResult(result, v) as { interfaces: { mtu?: number }[] }).interfaces[1]?.mtu,
    );
    assert.deepEqual(mtus, [undefined, undefined, undefined, undefined, 1450]);
  });

  it('keeps interface indexes, sandbox only on the pod interface, and routes', () => {
    const out = formatResult(result, '1.0.0') as Record<string, unknown>;
    assert.deepEqual(out, {
      cniVersion: '1.0.0',
      interfaces: [
        { name: 'veth1a2b3c4d', mac: 'aa:bb:cc:dd:ee:ff' },
        { name: 'eth0', mac: '0a:58:0a:0b:01:05', sandbox: '/var/run/netns/p1' },
      ],
      ips: [
        { address: '10.11.1.5/24', gateway: '10.11.1.1', interface: 1 },
        { address: 'fd00::5/64', gateway: 'fd00::1', interface: 1 },
      ],
      routes: [{ dst: '0.0.0.0/0', gw: '10.11.1.1' }],
      dns: {},
    });
  });
});

describe('parsePrevResult', () => {
  it('reads back every version it writes', () => {
    for (const v of SUPPORTED_CNI_VERSIONS) {
      const back = parsePrevResult(formatResult(result, v));
      assert.deepEqual(back.ips, result.ips, v);
      assert.deepEqual(back.routes, result.routes, v);
      assert.equal(back.interfaces[1]?.sandbox, '/var/run/netns/p1');
    }
  });

  it('rejects an interface index out of range and malformed members with code 6', () => {
    const bad = [
      { interfaces: [], ips: [{ address: '10.0.0.2/24', interface: 3 }] },
      { ips: 'x' },
      { routes: [{ gw: '1.1.1.1' }] },
      [],
    ];
    for (const b of bad) {
      assert.throws(
        () => parsePrevResult(b),
        (err: unknown) => err instanceof CniError && err.code === 6,
        JSON.stringify(b),
      );
    }
  });
});
