import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parsePodSubnet, podRoutes } from '../pod-subnet.js';
import { readConflistSubnet, renderConflist, writeFileAtomic } from './conflist.js';

const settings = {
  cniVersion: '1.0.0',
  networkName: 'odlcoe',
  socketPath: '/run/odlcoe/cni.sock',
  mtu: 1450,
  subnet: parsePodSubnet('10.11.1.0/24'),
  routes: podRoutes(parsePodSubnet('10.11.1.0/24'), ['10.11.0.0/16'], ['10.96.0.0/12']),
  ipamDataDir: '/var/lib/cni/networks',
  pendingDelDir: '/var/lib/odlcoe/pending-del',
};

describe('renderConflist', () => {
  it('renders the odlcoe plugin with host-local IPAM for the subnet, the pod network routed before the default', () => {
    assert.deepEqual(JSON.parse(renderConflist(settings)), {
      cniVersion: '1.0.0',
      name: 'odlcoe',
      plugins: [
        {
          type: 'odlcoe',
          socket: '/run/odlcoe/cni.sock',
          mtu: 1450,
          pendingDelDir: '/var/lib/odlcoe/pending-del',
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: '10.11.1.0/24', gateway: '10.11.1.1' }]],
            routes: [
              { dst: '10.11.0.0/16' },
              { dst: '10.11.1.0/24' },
              { dst: '10.96.0.0/12' },
              { dst: '0.0.0.0/0' },
            ],
            dataDir: '/var/lib/cni/networks',
          },
        },
      ],
    });
  });

  it('leaves the node gateway address out of the range with rangeStart', () => {
    const doc = JSON.parse(
      renderConflist({ ...settings, subnet: parsePodSubnet(settings.subnet.cidr, true) }),
    ) as { plugins: { ipam: { ranges: unknown[][] } }[] };
    assert.deepEqual(doc.plugins[0]?.ipam.ranges, [
      [
        {
          subnet: settings.subnet.cidr,
          gateway: settings.subnet.gateway,
          rangeStart: parsePodSubnet(settings.subnet.cidr, true).rangeStart,
        },
      ],
    ]);
  });

  it('is deterministic and ends with a newline', () => {
    assert.equal(renderConflist(settings), renderConflist({ ...settings }));
    assert.ok(renderConflist(settings).endsWith('}\n'));
  });

  it('uses the IPv6 default route for an IPv6 subnet and adds the log file when set', () => {
    const doc = JSON.parse(
      renderConflist({
        ...settings,
        subnet: parsePodSubnet('fd00:10::/64'),
        routes: podRoutes(parsePodSubnet('fd00:10::/64'), ['10.11.0.0/16', 'fd00::/48'], ['10.96.0.0/12']),
        logFile: '/var/log/odlcoe-cni.log',
      }),
    );
    assert.equal(doc.plugins[0].logFile, '/var/log/odlcoe-cni.log');
    assert.deepEqual(doc.plugins[0].ipam.routes, [
      { dst: 'fd00:10::/64' },
      { dst: 'fd00::/48' },
      { dst: '::/0' },
    ]);
    assert.equal(doc.plugins[0].ipam.ranges[0][0].gateway, 'fd00:10::1');
  });
});

describe('writeFileAtomic', () => {
  let dir = '';
  after(() => rm(dir, { recursive: true, force: true }));

  it('writes, skips identical content, replaces changed content, leaves no temp file', async () => {
    dir = await mkdtemp(join(tmpdir(), 'odlcoe-conflist-'));
    const path = join(dir, 'net.d', '10-odlcoe.conflist');
    assert.equal(await writeFileAtomic(path, renderConflist(settings)), true);
    const first = await stat(path);
    assert.equal(await writeFileAtomic(path, renderConflist(settings)), false);
    assert.equal((await stat(path)).mtimeMs, first.mtimeMs);
    assert.equal(await readConflistSubnet(path), '10.11.1.0/24');
    const changed = renderConflist({ ...settings, mtu: 1400 });
    assert.equal(await writeFileAtomic(path, changed), true);
    assert.equal(await readFile(path, 'utf8'), changed);
    assert.deepEqual(await readdir(join(dir, 'net.d')), ['10-odlcoe.conflist']);
    assert.equal((await stat(path)).mode & 0o777, 0o644);
  });

  it('reads no subnet from a missing or foreign file', async () => {
    assert.equal(await readConflistSubnet(join(dir, 'absent.conflist')), undefined);
    const foreign = join(dir, 'other.conflist');
    await writeFileAtomic(
      foreign,
      JSON.stringify({ plugins: [{ type: 'bridge', ipam: { ranges: [[{ subnet: '1.2.3.0/24' }]] } }] }),
    );
    assert.equal(await readConflistSubnet(foreign), undefined);
  });
});
