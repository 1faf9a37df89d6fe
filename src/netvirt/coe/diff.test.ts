import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterUuid, type CoeEndpoints, type CoePod, type CoeService } from '../../netvirt/index.js';
import { encodePath } from '../../restconf/path.js';
import { diffCoeEndpoints, diffCoePod, diffCoeService } from './diff.js';

const ctx = { clusterName: 'test', profile: 'sodium' as const };
const CID = clusterUuid('test');
const UID = '11111111-2222-4333-8444-555555555555';

const pod = (over: Partial<CoePod> = {}): CoePod => ({
  uid: UID,
  name: 'p1',
  clusterId: CID,
  hostIpAddress: '192.168.1.10',
  networkNs: 'ns1',
  portMacAddress: '0a:58:0a:f4:01:05',
  interfaces: [{ uid: UID, ipAddress: '10.244.1.5', networkId: CID, networkType: 'VXLAN' }],
  ...over,
});

describe('diffCoePod', () => {
  it('creates a missing entry with a PUT-shaped body of exactly the model leaves', () => {
    const d = diffCoePod(pod(), undefined, ctx);
    assert.equal(d.action, 'create');
    assert.ok(d.action === 'create');
    const [write] = d.writes;
    assert.ok(write?.op === 'put');
    assert.equal(encodePath(write.path, 'bierman02'), `pod:coe/pods/${UID}`);
    assert.deepEqual(Object.keys(write.body), ['pod:pods']);
  });

  it('writes nothing when only spelling differs (case, IP form)', () => {
    const actual = pod({ clusterId: CID.toUpperCase(), portMacAddress: '0A:58:0A:F4:01:05' });
    assert.equal(diffCoePod(pod(), actual, ctx).action, 'none');
  });

  it('updates the whole entry, carrying members odlcoe does not model', () => {
    const actual = pod({ hostIpAddress: '192.168.1.99', preserved: { 'x:extra': 1 } });
    const d = diffCoePod(pod(), actual, ctx);
    assert.ok(d.action === 'update');
    assert.deepEqual(d.changed, ['host-ip-address']);
    const body = d.writes[0]?.op === 'put' ? d.writes[0].body : undefined;
    const entry = (body?.['pod:pods'] as Record<string, unknown>[] | undefined)?.[0];
    assert.equal(entry?.['host-ip-address'], '192.168.1.10');
    assert.equal(entry?.['x:extra'], 1);
  });

  it('deletes an undesired entry of this cluster and never one of another', () => {
    assert.equal(diffCoePod(undefined, pod(), ctx).action, 'delete-candidate');
    const other = diffCoePod(undefined, pod({ clusterId: clusterUuid('other') }), ctx);
    assert.deepEqual(other.action === 'foreign' && other.wanted, false);
    const none = diffCoePod(pod(), pod({ clusterId: undefined }), ctx);
    assert.ok(none.action === 'foreign' && none.wanted);
  });
});

const service = (over: Partial<CoeService> = {}): CoeService => ({
  uid: UID,
  name: 'web',
  clusterId: CID,
  networkNs: 'ns1',
  clusterIpAddress: '10.96.0.10',
  servicePorts: [{ name: 'http', port: 80, targetPort: '8080' }],
  ...over,
});

describe('diffCoeService', () => {
  it('compares external IPs as a set but ports in order', () => {
    const d = service({ externalIpAddresses: ['203.0.113.1', '203.0.113.2'] });
    assert.equal(
      diffCoeService(d, service({ externalIpAddresses: ['203.0.113.2', '203.0.113.1'] }), ctx).action,
      'none',
    );
    const reordered = service({
      servicePorts: [
        { name: 'b', port: 2 },
        { name: 'a', port: 1 },
      ],
    });
    const d2 = diffCoeService(
      service({
        servicePorts: [
          { name: 'a', port: 1 },
          { name: 'b', port: 2 },
        ],
      }),
      reordered,
      ctx,
    );
    assert.ok(d2.action === 'update');
    assert.deepEqual(d2.changed, ['service-ports']);
  });

  it('drops a cluster IP that the service no longer has (headless)', () => {
    const d = diffCoeService(service({ clusterIpAddress: undefined }), service(), ctx);
    assert.ok(d.action === 'update');
    const entry =
      d.writes[0]?.op === 'put'
        ? (d.writes[0].body['service:services'] as Record<string, unknown>[])[0]
        : undefined;
    assert.equal(entry && 'cluster-ip-address' in entry, false);
  });
});

const endpoints = (over: Partial<CoeEndpoints> = {}): CoeEndpoints => ({
  uid: UID,
  name: 'web',
  networkNs: 'ns1',
  endpointAddresses: [{ ipAddress: '10.0.0.1' }, { ipAddress: '10.0.0.2' }],
  endpointPorts: [{ name: 'http', port: 80 }],
  ...over,
});

describe('diffCoeEndpoints', () => {
  it('is owned through the services entry of the same uid', () => {
    assert.equal(diffCoeEndpoints(undefined, endpoints(), service(), ctx).action, 'delete-candidate');
    const alone = diffCoeEndpoints(undefined, endpoints(), undefined, ctx);
    assert.ok(alone.action === 'foreign');
    const foreignService = diffCoeEndpoints(
      endpoints(),
      endpoints({ name: 'x' }),
      service({ clusterId: undefined }),
      ctx,
    );
    assert.ok(foreignService.action === 'foreign' && foreignService.wanted);
  });

  it('ignores the order of addresses and replaces the lists whole on a change', () => {
    const reversed = endpoints({ endpointAddresses: [{ ipAddress: '10.0.0.2' }, { ipAddress: '10.0.0.1' }] });
    assert.equal(diffCoeEndpoints(endpoints(), reversed, service(), ctx).action, 'none');
    const d = diffCoeEndpoints(
      endpoints({ endpointAddresses: [{ ipAddress: '10.0.0.1' }] }),
      endpoints(),
      service(),
      ctx,
    );
    assert.ok(d.action === 'update');
    const entry =
      d.writes[0]?.op === 'put'
        ? (d.writes[0].body['service:endpoints'] as Record<string, unknown>[])[0]
        : undefined;
    assert.deepEqual(entry?.['endpoint-addresses'], [{ 'ip-address': '10.0.0.1' }]);
  });
});

describe('a diff of nothing', () => {
  it('decides none when neither a desired nor an actual entry is given (an endpoints entry never written)', () => {
    assert.deepEqual(diffCoePod(undefined, undefined, ctx, { uid: UID }), { action: 'none', name: UID });
    assert.deepEqual(diffCoeService(undefined, undefined, ctx), { action: 'none', name: '' });
    assert.equal(diffCoeEndpoints(undefined, undefined, undefined, ctx, { uid: UID }).action, 'none');
  });
});
