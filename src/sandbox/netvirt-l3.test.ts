import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { podMac } from '../netvirt/names.js';
import type { OvsPort } from '../ovs/ovs.js';
import { conflistGateways, netvirtL3Flows, routedPorts } from './netvirt-l3.js';

const port = (name: string, ofport: number, externalIds: Record<string, string>): OvsPort => ({
  name,
  ofport,
  externalIds,
});

describe('routedPorts', () => {
  it("routes to pods' primary interfaces and the node gateway, not to extra interfaces or unattached ports", () => {
    const ports = [
      port('veth00000001', 3, {
        'container-id': 'a',
        'attached-mac': '0a:58:0a:0b:01:03',
        'ip-address': '10.11.1.3',
      }),
      port('veth00000002', 4, {
        'container-id': 'a',
        'odlcoe-network': 'default/blue',
        'attached-mac': '0a:58:0a:32:00:05',
        'ip-address': '10.50.0.5',
      }),
      port('veth00000003', 5, {
        'odlcoe-node-gateway': 'n1',
        'attached-mac': '0a:58:0a:0b:01:02',
        'ip-address': '10.11.1.2',
      }),
      port('veth00000004', 0, {
        'container-id': 'b',
        'attached-mac': '0a:58:0a:0b:01:04',
        'ip-address': '10.11.1.4',
      }),
      port('veth00000005', 6, {
        'container-id': 'c',
        'attached-mac': '0a:58:0a:0b:01:05',
        'ip-address': '10.11.1.5,fd00::5',
      }),
      port('br-int', 65534, {}),
    ];
    assert.deepEqual(routedPorts(ports), [
      { ofport: 3, mac: '0a:58:0a:0b:01:03', ips: ['10.11.1.3'] },
      { ofport: 5, mac: '0a:58:0a:0b:01:02', ips: ['10.11.1.2'] },
      { ofport: 6, mac: '0a:58:0a:0b:01:05', ips: ['10.11.1.5'] },
    ]);
  });
});

describe('netvirtL3Flows', () => {
  const flows = netvirtL3Flows(['10.11.1.1'], [{ ofport: 3, mac: '0a:58:0a:0b:01:03', ips: ['10.11.1.3'] }]);
  const gwMac = podMac('10.11.1.1');

  it('answers ARP for the subnet gateway only, as NetVirt does', () => {
    const arp = flows.filter((f) => f.includes(',arp,'));
    assert.equal(arp.length, 1);
    assert.match(arp[0] ?? '', /arp_op=1,arp_tpa=10\.11\.1\.1,/);
    assert.match(arp[0] ?? '', new RegExp(`mod_dl_src:${gwMac}`));
    assert.match(arp[0] ?? '', /load:0x0a0b0101->NXM_OF_ARP_SPA\[\],in_port$/);
  });

  it('routes what is sent to the gateway MAC to the port holding the destination, else drops it', () => {
    assert.ok(
      flows.includes(
        `cookie=0x0dc0e13,priority=150,ip,dl_dst=${gwMac},nw_dst=10.11.1.3,actions=mod_dl_src:${gwMac},mod_dl_dst:0a:58:0a:0b:01:03,dec_ttl,output:3`,
      ),
      flows.join('\n'),
    );
    assert.ok(
      flows.includes(`cookie=0x0dc0e13,priority=100,ip,dl_dst=${gwMac},actions=drop`),
      flows.join('\n'),
    );
  });

  it('switches everything else as before, and has no gateway rules without a gateway', () => {
    assert.ok(flows.includes('cookie=0x0dc0e13,priority=0,actions=NORMAL'));
    assert.deepEqual(netvirtL3Flows([], [{ ofport: 3, mac: '0a:58:0a:0b:01:03', ips: ['10.11.1.3'] }]), [
      'cookie=0x0dc0e13,priority=0,actions=NORMAL',
    ]);
  });
});

describe('conflistGateways', () => {
  let dir = '';
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("reads the gateways of the agent's conflist; none while it is absent", async () => {
    dir = await mkdtemp(join(tmpdir(), 'odlcoe-l3-'));
    const path = join(dir, '10-odlcoe.conflist');
    assert.deepEqual(await conflistGateways(path), []);
    await writeFile(
      path,
      JSON.stringify({
        plugins: [{ ipam: { ranges: [[{ subnet: '10.11.1.0/24', gateway: '10.11.1.1' }]] } }],
      }),
    );
    assert.deepEqual(await conflistGateways(path), ['10.11.1.1']);
  });
});
