/**
 * `odlcoectl gc` and `status` with extra networks: ODL programmed for the cluster plus two NADs
 * (a routed one and an L2 one) with a pod's attachments to them as the watcher makes them, and
 * hand-placed stale objects: the ELAN of a NAD that is gone and the interfaces of a gone pod's
 * attachment. `gc` plans the networks and attachments through the kinds table like every other
 * kind: exactly the stale objects are candidates, the live networks' ELAN and VPN and the live
 * attachments are neither candidates nor "unknown"; `status` counts the extra interfaces; `dump`
 * lists the networks with their VPN and attachments apart from the namespace tree.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DumpTree } from '../../src/cli/dump.js';
import type { GcReport } from '../../src/cli/gc.js';
import type { StatusReport } from '../../src/cli/status.js';
import {
  ATTACHMENTS_ANNOTATION,
  formatAttachments,
  type AttachmentRecord,
} from '../../src/netvirt/attachments.js';
import { putElanInstance, putElanInterface } from '../../src/netvirt/elan.js';
import { putInterface } from '../../src/netvirt/interfaces.js';
import { netvirtPaths } from '../../src/netvirt/paths.js';
import { readNetworkDefinition, type OdlcoeNetwork } from '../../src/netvirt/network-config.js';
import {
  translateAttachment,
  translateNetworkElan,
  translateNetworkVpn,
} from '../../src/netvirt/translate-network.js';
import { putVpnInstance, putVpnInterface } from '../../src/netvirt/vpn.js';
import type { WriteOp } from '../../src/netvirt/write.js';
import { apply, createCluster, programOdl, startHarness, type CliHarness } from './testing.js';

const GONE_POD_UID = '5f1c9a7e-0000-4000-8000-00000000ee01';
const GONE_NAD_UID = '5f1c9a7e-0000-4000-8000-00000000ee02';

const RECORDS = new Map<string, AttachmentRecord>([
  [
    'net1',
    {
      network: 'team-a/blue',
      interfaceName: 'team-a:att@net1',
      ips: ['10.50.0.2/24'],
      mac: '0a:58:0a:32:00:02',
      routes: [],
    },
  ],
  [
    'data0',
    {
      network: 'team-a/green',
      interfaceName: 'team-a:att@data0',
      ips: ['10.51.0.2/24'],
      mac: '0a:58:0a:33:00:02',
      routes: [],
    },
  ],
  [
    'net3',
    {
      network: 'team-a/nowhere',
      error: {
        reason: 'unknown-network',
        message: 'net3 (team-a/nowhere): no NetworkAttachmentDefinition team-a/nowhere',
      },
    },
  ],
]);

/** The objects the watcher makes for a network and a pod's attachment to it. */
function attachmentWrites(
  h: CliHarness,
  net: OdlcoeNetwork,
  record: AttachmentRecord,
  podUid: string,
): WriteOp[] {
  if (!('ips' in record)) return [];
  const o = translateAttachment(record, net, podUid, h.settings);
  return [
    putInterface(h.profile, o.interface),
    putElanInterface(h.profile, o.elanInterface),
    ...(o.vpnInterface ? [putVpnInterface(h.profile, o.vpnInterface)] : []),
  ];
}

describe('odlcoectl gc and status with extra networks (sodium)', () => {
  let h: CliHarness;
  const json = async <T>(args: string[]): Promise<T> => {
    const res = await h.run([...args, '-o', 'json']);
    assert.ok(res.code === 0 || res.code === 1, `${args.join(' ')}: exit ${res.code} ${res.stderr}`);
    return JSON.parse(res.stdout) as T;
  };

  before(async () => {
    h = await startHarness('sodium', 'rfc8040');
    const cluster = await createCluster(h);
    await programOdl(h, cluster);
    for (const args of [
      ['network', 'create', 'team-a/blue', '--subnet', '10.50.0.0/24', '--routing', 'vpn'],
      ['network', 'create', 'team-a/green', '--subnet', '10.51.0.0/24'],
    ]) {
      const res = await h.run(args);
      assert.equal(res.code, 0, res.stderr);
    }
    const pod = await h.core.createNamespacedPod({
      namespace: 'team-a',
      body: {
        metadata: { name: 'att', annotations: { [ATTACHMENTS_ANNOTATION]: formatAttachments(RECORDS) } },
        spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'pause' }] },
        status: { phase: 'Running', podIP: '10.11.1.77', podIPs: [{ ip: '10.11.1.77' }] },
      },
    });
    const nads = (await h.kube.request('GET', '/apis/k8s.cni.cncf.io/v1/network-attachment-definitions')) as {
      items: Parameters<typeof readNetworkDefinition>[0][];
    };
    const nets = new Map(
      nads.items.map((n) => {
        const d = readNetworkDefinition(n);
        if (d.state !== 'odlcoe') throw new Error(`NAD ${n.metadata?.name ?? '?'} does not read`);
        return [`team-a/${d.network.name}`, d.network];
      }),
    );
    const blue = nets.get('team-a/blue')!;
    const green = nets.get('team-a/green')!;
    const gone = { ...green, name: 'old', uid: GONE_NAD_UID };
    const writes: WriteOp[] = [];
    for (const net of [blue, green, gone])
      writes.push(putElanInstance(h.profile, translateNetworkElan(net, h.settings)!));
    writes.push(putVpnInstance(h.profile, translateNetworkVpn(blue, '64512:50', h.settings)!));
    for (const r of RECORDS.values()) {
      const net = 'network' in r ? nets.get(r.network) : undefined;
      if (net) writes.push(...attachmentWrites(h, net, r, pod.metadata?.uid ?? ''));
    }
    // A pod that is gone left its attachment to blue.
    writes.push(
      ...attachmentWrites(
        h,
        blue,
        {
          network: 'team-a/blue',
          interfaceName: 'team-a:gone@net1',
          ips: ['10.50.0.3/24'],
          mac: '0a:58:0a:32:00:03',
          routes: [],
        },
        GONE_POD_UID,
      ),
    );
    await apply(h, writes);
  });
  after(async () => h?.close());

  it('gc: exactly the gone NAD’s ELAN and the gone pod’s attachment; the live networks are planned, not unknown', async () => {
    const report = await json<GcReport>(['gc', '--dry-run']);
    assert.deepEqual(report.candidates.map((c) => `${c.kind} ${c.name}`).sort(), [
      'elan-instance odlcoe-net.team-a.old',
      'elan-interface team-a:gone@net1',
      'ietf-interface team-a:gone@net1',
      'vpn-interface team-a:gone@net1',
    ]);
    const network = (n: string) => n.includes('@') || n.startsWith('odlcoe-net.');
    assert.deepEqual(
      report.kept.filter((k) => network(k.name)),
      [],
      'no network or attachment entry is kept as unknown',
    );
  });

  it('status counts the extra interfaces: programmed, pending, refused', async () => {
    const report = await json<StatusReport>(['status']);
    assert.deepEqual(report.attachments, { programmed: 2, pending: 0, refused: 1, pendingAttachments: [] });
    assert.equal(report.collisions.length, 0);
  });

  it('dump: the networks with their VPN and attachments, apart from the namespace tree', async () => {
    const tree = await json<DumpTree>(['dump']);
    assert.deepEqual(
      tree.networks.map((n) => ({
        name: n.name,
        nad: n.nad,
        vpn: n.vpn,
        attachments: n.attachments.map((a) => `${a.name} ${a.ip ?? '-'} ${a.vpn ?? '-'}`),
      })),
      [
        {
          name: 'odlcoe-net.team-a.blue',
          nad: 'team-a/blue',
          vpn: { name: 'odlcoe-net.team-a.blue', routeDistinguisher: '64512:50' },
          attachments: [
            'team-a:att@net1 10.50.0.2 odlcoe-net.team-a.blue',
            'team-a:gone@net1 10.50.0.3 odlcoe-net.team-a.blue',
          ],
        },
        {
          name: 'odlcoe-net.team-a.green',
          nad: 'team-a/green',
          vpn: null,
          attachments: ['team-a:att@data0 10.51.0.2 -'],
        },
        { name: 'odlcoe-net.team-a.old', nad: 'team-a/old', vpn: null, attachments: [] },
      ],
    );
    const inTree = JSON.stringify([tree.vpns, tree.elansWithoutVpn, tree.interfacesWithoutElan]);
    assert.ok(!/odlcoe-net\.|@/.test(inTree), 'no network or attachment in the namespace tree');
    const human = await h.run(['dump']);
    assert.match(
      human.stdout,
      /^ {2}elan odlcoe-net\.team-a\.blue {2}\(NAD team-a\/blue uid [0-9a-f-]+, vpn odlcoe-net\.team-a\.blue \(rd 64512:50\)\)$/m,
    );
  });

  it('status names an extra interface ODL lacks', async () => {
    await h.odl.delete(netvirtPaths(h.profile).vpnInterface('team-a:att@net1'));
    const report = await json<StatusReport>(['status']);
    assert.equal(report.attachments?.pending, 1);
    assert.deepEqual(
      report.attachments?.pendingAttachments.map((p) => p.attachment),
      ['team-a/att/net1'],
    );
    assert.match(
      report.attachments?.pendingAttachments[0]?.reasons.join() ?? '',
      /vpn-interface team-a:att@net1 missing/,
    );
  });
});
