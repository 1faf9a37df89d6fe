import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { NameError } from '../common/name-error.js';
import { HOST_LOCAL_PATH, HostLocalIpam, IpamConfigError, IpamError } from './ipam.js';

// host-local needs no privileges: these run it for real against a temp data dir.
const skip = existsSync(HOST_LOCAL_PATH)
  ? false
  : `${HOST_LOCAL_PATH} not installed (Debian containernetworking-plugins)`;

describe('HostLocalIpam configuration', () => {
  const base = { dataDir: '/tmp/x', networkName: 'odlcoe' };
  const bad: [string, ConstructorParameters<typeof HostLocalIpam>[0], RegExp][] = [
    [
      'a subnet that is no CIDR',
      { ...base, range: { subnet: '10.11.1.0', gateway: '10.11.1.1' } },
      /not a CIDR/,
    ],
    [
      'host bits in the subnet',
      { ...base, range: { subnet: '10.11.1.5/24', gateway: '10.11.1.1' } },
      /host bits/,
    ],
    [
      'a gateway outside the subnet',
      { ...base, range: { subnet: '10.11.1.0/24', gateway: '10.11.2.1' } },
      /gateway.*not a usable/,
    ],
    [
      'the broadcast address as gateway',
      { ...base, range: { subnet: '10.11.1.0/24', gateway: '10.11.1.255' } },
      /not a usable/,
    ],
    [
      'an IPv6 gateway for IPv4',
      { ...base, range: { subnet: '10.11.1.0/24', gateway: 'fd00::1' } },
      /not an ipv4/,
    ],
    [
      'a reversed range',
      {
        ...base,
        range: {
          subnet: '10.11.1.0/24',
          gateway: '10.11.1.1',
          rangeStart: '10.11.1.9',
          rangeEnd: '10.11.1.3',
        },
      },
      /after rangeEnd/,
    ],
    [
      'a route of the other family',
      { ...base, range: { subnet: '10.11.1.0/24', gateway: '10.11.1.1' }, routes: [{ dst: '::/0' }] },
      /route destination/,
    ],
    [
      'a relative data dir',
      { ...base, dataDir: 'data', range: { subnet: '10.11.1.0/24', gateway: '10.11.1.1' } },
      /absolute/,
    ],
  ];
  for (const [what, opts, why] of bad) {
    it(`rejects ${what}`, () =>
      assert.throws(
        () => new HostLocalIpam(opts),
        (e: unknown) => e instanceof IpamConfigError && why.test(e.message),
      ));
  }

  it('rejects a network name that would escape the data dir', () => {
    assert.throws(
      () =>
        new HostLocalIpam({
          ...base,
          networkName: '../etc',
          range: { subnet: '10.11.1.0/24', gateway: '10.11.1.1' },
        }),
      NameError,
    );
  });

  it('writes the range host-local reads, with defaults made explicit', () => {
    const ipam = new HostLocalIpam({
      ...base,
      range: { subnet: '10.11.1.0/24', gateway: '10.11.1.1' },
      routes: [{ dst: '0.0.0.0/0' }],
    });
    assert.deepEqual(ipam.networkConfig(), {
      cniVersion: '1.0.0',
      name: 'odlcoe',
      type: 'odlcoe',
      ipam: {
        type: 'host-local',
        dataDir: '/tmp/x',
        ranges: [
          [
            {
              subnet: '10.11.1.0/24',
              gateway: '10.11.1.1',
              rangeStart: '10.11.1.1',
              rangeEnd: '10.11.1.254',
            },
          ],
        ],
        routes: [{ dst: '0.0.0.0/0' }],
      },
    });
  });
});

describe('HostLocalIpam with the real host-local', { skip }, () => {
  let dataDir: string;
  let ipam: HostLocalIpam;
  const netns = '/var/run/netns/unused-by-host-local';

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'odlcoe-ipam-'));
    ipam = new HostLocalIpam({
      dataDir,
      networkName: 'odlcoe-unit',
      range: {
        subnet: '10.11.1.0/24',
        gateway: '10.11.1.1',
        rangeStart: '10.11.1.10',
        rangeEnd: '10.11.1.12',
      },
      routes: [{ dst: '0.0.0.0/0', gw: '10.11.1.1' }],
    });
  });
  after(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('has no leases before the first ADD', async () => {
    assert.deepEqual(await ipam.leases(), []);
    assert.equal(await ipam.available(), 3);
  });

  it('allocates in the range, with gateway and routes', async () => {
    const result = await ipam.add({ containerId: 'c1', ifName: 'eth0', netns });
    assert.deepEqual(result, {
      ips: [{ address: '10.11.1.10/24', gateway: '10.11.1.1' }],
      routes: [{ dst: '0.0.0.0/0', gw: '10.11.1.1' }],
    });
    const file = await readFile(join(dataDir, 'odlcoe-unit', '10.11.1.10'), 'utf8');
    assert.equal(file, 'c1\r\neth0');
  });

  it('lists leases from host-local files', async () => {
    await ipam.add({ containerId: 'c2', ifName: 'net1', netns });
    assert.deepEqual(await ipam.leases(), [
      { ip: '10.11.1.10', containerId: 'c1', ifName: 'eth0' },
      { ip: '10.11.1.11', containerId: 'c2', ifName: 'net1' },
    ]);
    assert.equal(await ipam.available(), 1);
  });

  it('reports host-local refusing a second ADD of the same attachment', async () => {
    const err = await ipam.add({ containerId: 'c1', ifName: 'eth0', netns }).then(
      () => assert.fail('should have failed'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof IpamError);
    assert.equal(err.code, 999);
    assert.match(err.message, /host-local ADD for c1\/eth0 failed: .*duplicate allocation/);
  });

  it('says when the range is exhausted', async () => {
    await ipam.add({ containerId: 'c3', ifName: 'eth0', netns });
    const err = await ipam.add({ containerId: 'c4', ifName: 'eth0', netns }).then(
      () => assert.fail('should have failed'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof IpamError);
    assert.equal(err.exhausted, true);
    assert.equal(await ipam.available(), 0);
  });

  it('releases by container id and ifname, idempotently, without a netns', async () => {
    await ipam.del({ containerId: 'c1', ifName: 'eth0' });
    await ipam.del({ containerId: 'c1', ifName: 'eth0' });
    await ipam.del({ containerId: 'never-added', ifName: 'eth0', netns });
    assert.deepEqual(
      (await ipam.leases()).map((l) => l.containerId),
      ['c2', 'c3'],
    );
  });

  it('skips files that are not leases and leases still being written', async () => {
    const dir = join(dataDir, 'odlcoe-unit');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, '10.11.1.200'), '');
    await writeFile(join(dir, 'notes.txt'), 'x');
    await writeFile(join(dir, 'fd00::5'), 'c9\n');
    const leases = await ipam.leases();
    assert.deepEqual(
      leases.map((l) => [l.ip, l.containerId, l.ifName]),
      [
        ['10.11.1.11', 'c2', 'net1'],
        ['10.11.1.12', 'c3', 'eth0'],
        ['fd00::5', 'c9', ''],
      ],
    );
  });

  it('validates requests before running host-local', async () => {
    await assert.rejects(ipam.add({ containerId: '-x', ifName: 'eth0', netns }), NameError);
    await assert.rejects(ipam.add({ containerId: 'x', ifName: 'eth0', netns: 'relative' }), NameError);
    await assert.rejects(ipam.del({ containerId: 'x', ifName: 'a/b' }), NameError);
  });

  it('reports a missing plugin as an IpamError', async () => {
    const missing = new HostLocalIpam({
      pluginPath: '/nonexistent/host-local',
      dataDir,
      networkName: 'x',
      range: { subnet: '10.0.0.0/30', gateway: '10.0.0.1' },
    });
    await assert.rejects(
      missing.add({ containerId: 'c', ifName: 'eth0', netns }),
      (e: unknown) => e instanceof IpamError && /ENOENT/.test(e.message),
    );
  });
});
