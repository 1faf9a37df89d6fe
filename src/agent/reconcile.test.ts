import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { silentLogger } from '../common/log.js';
import type { OvsPort } from '../ovs/ovs.js';
import { skipUnlessRoot } from '../../test/helpers/netns.js';
import type { IpamLease } from './ipam.js';
import { hostVethName } from './names.js';
import { linkExists } from './netns.js';
import type { IpamState } from './pod-attach.js';
import { livePods, planReconcile, reconcileNodeAttachments, type LivePod } from './reconcile.js';
import { testPod, useAttachFixture, type TestPod } from './testing.js';

const port = (name: string, ids: Record<string, string>): OvsPort => ({ name, ofport: 3, externalIds: ids });
const podPort = (name: string, pod: string, cid: string, ip: string, uid?: string) =>
  port(name, {
    'iface-id': pod,
    'container-id': cid,
    'ip-address': ip,
    'attached-mac': '0a:58:00:00:00:00',
    ...(uid ? { 'pod-uid': uid } : {}),
  });
const lease = (ip: string, containerId: string, ifName = 'eth0'): IpamLease => ({ ip, containerId, ifName });

describe('planReconcile', () => {
  const pods = new Map<string, LivePod>([
    ['default/alive', { uid: 'u-alive', ips: ['10.11.1.2'] }],
    ['default/renamed', { uid: 'u-new', ips: [] }],
    ['default/no-ip-yet', { uid: 'u-3', ips: [] }],
  ]);

  it('removes ports of pods gone from the node and of older pods under a reused name', () => {
    const ports = [
      podPort('veth00000001', 'default:alive', 'c1', '10.11.1.2', 'u-alive'),
      podPort('veth00000002', 'default:gone', 'c2', '10.11.1.3', 'u-gone'),
      podPort('veth00000003', 'default:renamed', 'c3', '10.11.1.4', 'u-old'),
      podPort('veth00000004', 'default:no-ip-yet', 'c4', '10.11.1.5'),
    ];
    const plan = planReconcile(ports, [], pods);
    assert.deepEqual(
      plan.stalePorts.map((p) => p.name),
      ['veth00000002', 'veth00000003'],
    );
  });

  it('keeps what is in doubt: other ports, ports without a parsable iface-id', () => {
    const ports = [
      port('tun0', { 'iface-id': 'default:gone' }),
      port('veth0000000a', { 'container-id': 'c9' }),
      port('veth0000000b', { 'container-id': 'c10', 'iface-id': 'nocolon' }),
      port('patch-ext', {}),
    ];
    assert.deepEqual(planReconcile(ports, [], pods).stalePorts, []);
  });

  it('finds the pod of a coe-northbound port by odlcoe-pod, its iface-id naming no namespace', () => {
    const coe = (name: string, pod: string, cid: string, uid: string) =>
      port(name, {
        'container-id': cid,
        'iface-id': `d5b7c83d-b362-3bde-86d5-f509e6ca8560:${pod.split('/')[1]}`,
        'odlcoe-pod': pod,
        'pod-uid': uid,
      });
    const ports = [
      coe('veth00000011', 'default/alive', 'c11', 'u-alive'),
      coe('veth00000012', 'other/alive', 'c12', 'u-other'),
      coe('veth00000013', 'default/renamed', 'c13', 'u-old'),
    ];
    assert.deepEqual(
      planReconcile(ports, [], pods).stalePorts.map((p) => p.name),
      ['veth00000012', 'veth00000013'],
      'a pod of the same name in another namespace does not keep a port alive',
    );
  });

  it('frees a lease only when no live pod, no remaining port and no removed port holds it', () => {
    const ports = [
      podPort('veth00000001', 'default:alive', 'c1', '10.11.1.2', 'u-alive'),
      podPort('veth00000002', 'default:gone', 'c2', '10.11.1.3'),
    ];
    const leases = [
      lease('10.11.1.2', 'c1'), // port of a live pod
      lease('10.11.1.3', 'c2'), // removed with its port
      lease('10.11.1.9', 'c9'), // nobody: ADD interrupted, pod deleted
      lease('10.11.1.10', 'c10'), // held by a live pod's reported IP
      lease('10.11.1.11', 'c1'), // same container as a kept port
      lease('10.11.1.12', 'c12', ''), // owner unreadable: in doubt
    ];
    const withIp = new Map(pods);
    withIp.set('default/other', { uid: 'u-o', ips: ['10.11.1.10'] });
    const plan = planReconcile(ports, leases, withIp);
    assert.deepEqual(
      plan.staleLeases.map((l) => l.ip),
      ['10.11.1.9'],
    );
  });
});

describe('livePods', () => {
  it('indexes by namespace/name, skips host-network pods, collects IPs', () => {
    const pods = [
      {
        metadata: { namespace: 'a', name: 'p', uid: 'u1' },
        status: { podIP: '10.0.0.2', podIPs: [{ ip: '10.0.0.2' }, { ip: 'fd00::2' }] },
      },
      { metadata: { namespace: 'a', name: 'h', uid: 'u2' }, spec: { hostNetwork: true, containers: [] } },
    ] as V1Pod[];
    const live = livePods(pods);
    assert.deepEqual([...live.keys()], ['a/p']);
    assert.deepEqual(live.get('a/p'), { uid: 'u1', ips: ['10.0.0.2', 'fd00::2'] });
  });
});

describe('static pods', () => {
  it("keep their port: kubelet's UID is the mirror pod's config.mirror annotation, not its metadata.uid", () => {
    const mirror: V1Pod = {
      metadata: {
        namespace: 'kube-system',
        name: 'probe-node1',
        uid: 'api-server-assigned',
        annotations: { 'kubernetes.io/config.mirror': 'manifest-hash' },
      },
      spec: { containers: [] },
      status: { podIP: '10.11.1.9' },
    };
    const live = livePods([mirror]);
    assert.equal(live.get('kube-system/probe-node1')?.uid, 'manifest-hash');
    const ports = [podPort('veth0000beef', 'kube-system:probe-node1', 'c1', '10.11.1.9', 'manifest-hash')];
    assert.deepEqual(planReconcile(ports, [lease('10.11.1.9', 'c1')], live).stalePorts, []);
  });
});

describe('reconcileNodeAttachments on a real dataplane', { skip: skipUnlessRoot(), timeout: 180_000 }, () => {
  const node = useAttachFixture();

  const podObject = (pod: TestPod, uid: string, ip?: string): V1Pod => ({
    metadata: { namespace: pod.namespace, name: pod.name, uid },
    spec: { nodeName: 'n1', containers: [] },
    ...(ip ? { status: { podIP: ip, podIPs: [{ ip }] } } : {}),
  });

  it('removes what pods gone from the node left, keeps live pods, and frees leases once the subnet is known', async () => {
    // The subnet the agent knows: absent at first (ODL not answering yet, no conflist).
    let known: IpamState | undefined = node.ipamState;
    const attacher = node.attacher({ ipamState: () => known });
    const signal = new AbortController().signal;
    const wire = async (pod: TestPod) => {
      const containerId = node.containerId();
      const ns = await node.netns();
      const result = await attacher.add(node.request('ADD', containerId, ns.path, pod), signal);
      return { containerId, ip: (result.ips[0]?.address ?? '').split('/')[0] ?? '' };
    };
    const [live, gone, replaced] = [testPod(), testPod(), testPod()];
    const kept = await wire(live);
    const stale = [await wire(gone), await wire(replaced)];
    // A lease whose ADD never reached OVS (the agent died in between).
    const orphan = node.containerId();
    await node.ipamState.ipam.add({ containerId: orphan, ifName: 'eth0', netns: '/run/netns/gone' });
    const options = {
      ovs: node.ovs,
      bridge: node.bridge,
      attacher,
      ipamState: () => known,
      // `gone` is no longer on the node; `replaced` is, but as a newer pod under the same name.
      pods: [podObject(live, live.uid, kept.ip), podObject(replaced, 'uid-of-a-newer-pod')],
      metrics: node.metrics,
      logger: silentLogger(),
    };
    const leasesOf = async (containerId: string) =>
      (await node.leases()).filter((l) => l.containerId === containerId).map((l) => l.ip);

    known = undefined;
    assert.deepEqual(await reconcileNodeAttachments(options), {
      ports: 2,
      leases: 0,
      failures: 0,
      leasesChecked: false,
    });
    for (const s of stale) {
      assert.equal(await node.ovs.getPort(hostVethName(s.containerId, 'eth0')), undefined, 'port removed');
      assert.equal(await linkExists(hostVethName(s.containerId, 'eth0')), false, 'veth removed');
      assert.deepEqual(await leasesOf(s.containerId), [s.ip], 'no subnet known: its lease is left');
    }

    known = node.ipamState;
    assert.deepEqual(await reconcileNodeAttachments(options), {
      ports: 0,
      leases: 3,
      failures: 0,
      leasesChecked: true,
    });
    for (const containerId of [...stale.map((s) => s.containerId), orphan])
      assert.deepEqual(await leasesOf(containerId), [], 'lease released');
    const port = await node.ovs.getPort(hostVethName(kept.containerId, 'eth0'));
    assert.equal(port?.externalIds['pod-uid'], live.uid, 'the live pod keeps its port');
    assert.deepEqual(await leasesOf(kept.containerId), [kept.ip], 'and its lease');
  });
});
