import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { OvsPort } from '../ovs/ovs.js';
import type { IpamLease } from './ipam.js';
import { livePods, planReconcile, type LivePod } from './reconcile.js';

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
