import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1EndpointSlice, V1Node, V1Pod, V1Service } from '@kubernetes/client-node';
import { ModelValidationError, clusterUuid } from '../../netvirt/index.js';
import { translateCoeEndpoints, translateCoePod, translateCoeService } from './translate.js';

const CLUSTER = 'test';
const CID = clusterUuid(CLUSTER);
const POD_UID = '11111111-2222-4333-8444-555555555555';
const SVC_UID = '99999999-2222-4333-8444-555555555555';

const node = (ip?: string): V1Node => ({
  metadata: { name: 'n1', uid: 'aaaaaaaa-0000-4000-8000-000000000001' },
  status: { addresses: ip ? [{ type: 'InternalIP', address: ip }] : [] },
});

const pod = (
  over: { ip?: string; ips?: string[]; hostNetwork?: boolean; phase?: string; nodeName?: string } = {},
): V1Pod => ({
  metadata: { name: 'p1', namespace: 'ns1', uid: POD_UID },
  spec: {
    containers: [],
    nodeName: over.nodeName ?? 'n1',
    ...(over.hostNetwork ? { hostNetwork: true } : {}),
  },
  status: {
    phase: over.phase ?? 'Running',
    ...(over.ip ? { podIP: over.ip } : {}),
    ...(over.ips ? { podIPs: over.ips.map((ip) => ({ ip })) } : {}),
  },
});

describe('translateCoePod', () => {
  it('builds the entry NetVirt Sodium needs: network-NS, host IP, one VXLAN interface, MAC from the IP', () => {
    const t = translateCoePod(pod({ ip: '10.244.1.5' }), node('192.168.1.10'), CLUSTER);
    assert.deepEqual(t, {
      state: 'desired',
      entry: {
        uid: POD_UID,
        name: 'p1',
        clusterId: CID,
        hostIpAddress: '192.168.1.10',
        networkNs: 'ns1',
        portMacAddress: '0a:58:0a:f4:01:05',
        interfaces: [{ uid: POD_UID, ipAddress: '10.244.1.5', networkId: CID, networkType: 'VXLAN' }],
      },
    });
  });

  it('prefers IPv4 on a dual-stack pod and takes IPv6 on a single-stack IPv6 pod (canonical spelling)', () => {
    const dual = translateCoePod(pod({ ips: ['fd00::5', '10.244.1.5'] }), node('192.168.1.10'), CLUSTER);
    assert.equal(dual.state === 'desired' && dual.entry.interfaces[0]?.ipAddress, '10.244.1.5');
    const v6 = translateCoePod(pod({ ips: ['FD00:0:0::5'] }), node('fd00:1::10'), CLUSTER);
    assert.equal(v6.state === 'desired' && v6.entry.interfaces[0]?.ipAddress, 'fd00::5');
    assert.equal(v6.state === 'desired' && v6.entry.portMacAddress, '0a:58:00:00:00:05');
  });

  it('wants no entry for host-network, finished or unscheduled pods', () => {
    assert.equal(
      translateCoePod(pod({ ip: '192.168.1.10', hostNetwork: true }), node('192.168.1.10'), CLUSTER).state,
      'absent',
    );
    assert.equal(
      translateCoePod(pod({ ip: '10.244.1.5', phase: 'Succeeded' }), node('192.168.1.10'), CLUSTER).state,
      'absent',
    );
    assert.equal(
      translateCoePod(pod({ ip: '10.244.1.5', nodeName: '' }), undefined, CLUSTER).state,
      'absent',
    );
  });

  it('cannot tell yet (keeps what exists) without an IP, a known node, or a node InternalIP', () => {
    assert.equal(translateCoePod(pod(), node('192.168.1.10'), CLUSTER).state, 'unknown');
    assert.equal(translateCoePod(pod({ ip: '10.244.1.5' }), undefined, CLUSTER).state, 'unknown');
    assert.equal(translateCoePod(pod({ ip: '10.244.1.5' }), node(), CLUSTER).state, 'unknown');
  });

  it('refuses a uid that is not a UUID with a precise error', () => {
    const bad = pod({ ip: '10.244.1.5' });
    bad.metadata!.uid = 'not-a-uuid';
    assert.throws(
      () => translateCoePod(bad, node('192.168.1.10'), CLUSTER),
      (err: unknown) => {
        assert.ok(err instanceof ModelValidationError);
        assert.match(err.where, /uid/);
        return true;
      },
    );
  });
});

const service = (spec: V1Service['spec'], status?: V1Service['status']): V1Service => ({
  metadata: { name: 'web', namespace: 'ns1', uid: SVC_UID },
  spec,
  ...(status ? { status } : {}),
});

describe('translateCoeService', () => {
  it('maps cluster IP, external IPs, load balancer IP and ingress, ports in spec order', () => {
    const s = translateCoeService(
      service(
        {
          clusterIP: '10.96.0.10',
          externalIPs: ['203.0.113.5', '203.0.113.5', '2001:DB8::1'],
          loadBalancerIP: '198.51.100.7',
          ports: [
            { name: 'https', port: 443, targetPort: 'web-tls', nodePort: 30443 },
            { port: 80, targetPort: 8080 },
          ],
        },
        { loadBalancer: { ingress: [{ ip: '198.51.100.7' }, { hostname: 'lb.example.com' }] } },
      ),
      CLUSTER,
    );
    assert.deepEqual(s, {
      uid: SVC_UID,
      name: 'web',
      clusterId: CID,
      networkNs: 'ns1',
      clusterIpAddress: '10.96.0.10',
      externalIpAddresses: ['203.0.113.5', '2001:db8::1'],
      loadBalancerIp: '198.51.100.7',
      ingressIpAddresses: ['198.51.100.7'],
      servicePorts: [
        { name: 'https', port: 443, targetPort: 'web-tls', nodePort: 30443 },
        { port: 80, targetPort: '8080' },
      ],
    });
  });

  it('omits the cluster IP of a headless service', () => {
    const s = translateCoeService(service({ clusterIP: 'None', ports: [{ port: 5432 }] }), CLUSTER);
    assert.equal('clusterIpAddress' in s, false);
  });

  it('names the field of an address that is not an IP', () => {
    assert.throws(
      () => translateCoeService(service({ clusterIP: '10.96.0.10', externalIPs: ['example.com'] }), CLUSTER),
      /spec\.externalIPs\[0\]/,
    );
  });
});

const eps = (
  name: string,
  addressType: string,
  endpoints: V1EndpointSlice['endpoints'],
  ports: V1EndpointSlice['ports'],
): V1EndpointSlice => ({
  metadata: { name, namespace: 'ns1', labels: { 'kubernetes.io/service-name': 'web' } },
  addressType,
  endpoints,
  ports,
});

describe('translateCoeEndpoints', () => {
  it('takes every ready address of every slice and the union of their ports, in canonical order', () => {
    const e = translateCoeEndpoints(service({ clusterIP: '10.96.0.10' }), [
      eps(
        'web-b',
        'IPv4',
        [
          { addresses: ['10.244.2.9'], conditions: { ready: true }, nodeName: 'n2' },
          { addresses: ['10.244.2.10'], conditions: { ready: false } },
          { addresses: ['10.244.1.10'] }, // ready unset: treated as ready; also in web-a
        ],
        [{ name: 'http', port: 8080 }],
      ),
      eps(
        'web-a',
        'IPv4',
        [{ addresses: ['10.244.1.10'], hostname: 'web-0', nodeName: 'n1' }],
        [
          { name: 'http', port: 8080 },
          { name: 'admin', port: 9000 },
        ],
      ),
      eps('web-fqdn', 'FQDN', [{ addresses: ['db.example.com'] }], [{ port: 1 }]),
    ]);
    assert.deepEqual(e, {
      uid: SVC_UID,
      name: 'web',
      networkNs: 'ns1',
      endpointAddresses: [
        { ipAddress: '10.244.1.10', hostName: 'web-0', nodeName: 'n1' },
        { ipAddress: '10.244.2.9', nodeName: 'n2' },
      ],
      endpointPorts: [
        { name: 'http', port: 8080 },
        { name: 'admin', port: 9000 },
      ],
    });
  });

  it('is an entry without addresses or ports when the service has no slices', () => {
    assert.deepEqual(translateCoeEndpoints(service({ clusterIP: '10.96.0.10' }), []), {
      uid: SVC_UID,
      name: 'web',
      networkNs: 'ns1',
    });
  });
});
