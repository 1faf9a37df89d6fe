import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Emulator } from './server.js';
import { call, errorTag, eventually, startQuiet } from './testing.js';

const ELAN_B = '/restconf/config/elan:elan-instances/elan-instance';
const ELAN_R = '/rests/data/elan:elan-instances/elan-instance';
const elanBody = (name: string, extra: Record<string, unknown> = {}) => ({
  'elan:elan-instance': [{ 'elan-instance-name': name, ...extra }],
});

describe('RESTCONF status codes and bodies', () => {
  let emu: Emulator;
  before(async () => {
    emu = await startQuiet();
  });
  after(() => emu.close());

  it('bierman02: PUT creates 201, replaces 200, DELETE 200, then 404 data-missing with the ODL body', async () => {
    assert.equal((await call(emu.url, 'PUT', `${ELAN_B}/n1`, elanBody('n1'))).status, 201);
    assert.equal((await call(emu.url, 'PUT', `${ELAN_B}/n1`, elanBody('n1'))).status, 200);
    assert.equal((await call(emu.url, 'DELETE', `${ELAN_B}/n1`)).status, 200);
    const missing = await call(emu.url, 'DELETE', `${ELAN_B}/n1`);
    assert.equal(missing.status, 404);
    const body = missing.json() as { errors: { error: Record<string, string>[] } };
    assert.equal(body.errors.error.length, 1);
    assert.equal(body.errors.error[0]!['error-type'], 'protocol');
    assert.equal(body.errors.error[0]!['error-tag'], 'data-missing');
    assert.equal(typeof body.errors.error[0]!['error-message'], 'string');
    const get = await call(emu.url, 'GET', `${ELAN_B}/n1`);
    assert.equal(get.status, 404);
    assert.equal(errorTag(get), 'data-missing');
  });

  it('RFC 8040: PUT creates 201, replaces 204, DELETE 204, then 404', async () => {
    assert.equal((await call(emu.url, 'PUT', `${ELAN_R}=n2`, elanBody('n2'))).status, 201);
    assert.equal((await call(emu.url, 'PUT', `${ELAN_R}=n2`, elanBody('n2'))).status, 204);
    assert.equal((await call(emu.url, 'DELETE', `${ELAN_R}=n2`)).status, 204);
    const missing = await call(emu.url, 'DELETE', `${ELAN_R}=n2`);
    assert.equal(missing.status, 404);
    assert.equal(errorTag(missing), 'data-missing');
    assert.match(String(missing.headers['content-type']), /^application\/yang-data\+json/);
  });

  it('POST creates under the parent: bierman02 204 + Location, RFC 8040 201 + Location, existing 409 data-exists', async () => {
    const b = await call(emu.url, 'POST', '/restconf/config/elan:elan-instances', {
      'elan-instance': [{ 'elan-instance-name': 'p1' }],
    });
    assert.equal(b.status, 204);
    assert.equal(b.headers.location, '/restconf/config/elan:elan-instances/elan-instance/p1');
    const r = await call(emu.url, 'POST', '/rests/data/elan:elan-instances', elanBody('p2'));
    assert.equal(r.status, 201);
    assert.equal(r.headers.location, '/rests/data/elan:elan-instances/elan-instance=p2');
    for (const path of ['/restconf/config/elan:elan-instances', '/rests/data/elan:elan-instances']) {
      const again = await call(emu.url, 'POST', path, elanBody('p1'));
      assert.equal(again.status, 409);
      assert.equal(errorTag(again), 'data-exists');
    }
    // POST of a top-level container into the datastore root.
    const top = await call(emu.url, 'POST', '/rests/data', {
      'k8s-node:k8s-nodes-info': { id: 'cluster-a' },
    });
    assert.equal(top.status, 201);
    assert.equal(
      (await call(emu.url, 'POST', '/rests/data', { 'k8s-node:k8s-nodes-info': { id: 'x' } })).status,
      409,
    );
    const unqualified = await call(emu.url, 'POST', '/rests/data', { 'service-information': {} });
    assert.equal(unqualified.status, 400);
    assert.equal(errorTag(unqualified), 'malformed-message');
  });

  it('PATCH: bierman02 refuses plain JSON (415), RFC 8040 merges (200) and creates a missing target', async () => {
    const b = await call(emu.url, 'PATCH', `${ELAN_B}/m1`, elanBody('m1'));
    assert.equal(b.status, 415);
    const created = await call(emu.url, 'PATCH', `${ELAN_R}=m1`, elanBody('m1', { description: 'first' }));
    assert.equal(created.status, 200);
    await call(emu.url, 'PATCH', `${ELAN_R}=m1`, elanBody('m1', { 'segmentation-id': 7 }));
    const got = (await call(emu.url, 'GET', `${ELAN_R}=m1?content=config`)).json() as {
      'elan:elan-instance': Record<string, unknown>[];
    };
    assert.equal(got['elan:elan-instance'][0]!.description, 'first');
    assert.equal(got['elan:elan-instance'][0]!['segmentation-id'], 7);
  });

  it('GET at every depth, with per-dialect output forms', async () => {
    await call(
      emu.url,
      'PUT',
      `${ELAN_B}/g1`,
      elanBody('g1', { 'segment-type': 'elan:segment-type-vxlan', 'segmentation-id': '1001' }),
    );
    const entryB = (await call(emu.url, 'GET', `${ELAN_B}/g1`)).json() as Record<
      string,
      Record<string, unknown>[]
    >;
    assert.deepEqual(Object.keys(entryB), ['elan-instance']);
    assert.equal(entryB['elan-instance']![0]!['segmentation-id'], 1001);
    const entryR = (await call(emu.url, 'GET', `${ELAN_R}=g1`)).json() as Record<string, unknown>;
    assert.deepEqual(Object.keys(entryR), ['elan:elan-instance']);
    const containerB = (await call(emu.url, 'GET', '/restconf/config/elan:elan-instances')).json() as Record<
      string,
      unknown
    >;
    assert.deepEqual(Object.keys(containerB), ['elan-instances']);
    const list = (await call(emu.url, 'GET', ELAN_R)).json() as Record<string, unknown[]>;
    assert.ok(list['elan:elan-instance']!.length >= 1);
    const leaf = await call(emu.url, 'GET', `${ELAN_R}=g1/segmentation-id`);
    assert.deepEqual(leaf.json(), { 'elan:segmentation-id': 1001 });
    // bierman02 addresses containers and list entries only, and a list needs its key.
    const leafB = await call(emu.url, 'GET', `${ELAN_B}/g1/segmentation-id`);
    assert.equal(leafB.status, 400);
    assert.equal(errorTag(leafB), 'invalid-value');
    const listB = await call(emu.url, 'GET', ELAN_B);
    assert.equal(listB.status, 404);
    assert.equal(errorTag(listB), 'data-missing');
  });

  it('writes 64-bit numbers bare in bierman02 and as strings in RFC 8040; augments are qualified in both', async () => {
    // Written by hand: JSON.stringify cannot express a uint64 literal exactly.
    const iface =
      '{"ietf-interfaces:interface":[{"name":"default:pod-a","type":"iana-if-type:l2vlan","enabled":true,' +
      '"odl-interface:l2vlan-mode":"trunk","odl-interface:datapath-node-identifier":18446744073709551615}]}';
    const put = await call(
      emu.url,
      'PUT',
      '/restconf/config/ietf-interfaces:interfaces/interface/default:pod-a',
      iface,
    );
    assert.equal(put.status, 201);
    const b = await call(
      emu.url,
      'GET',
      '/restconf/config/ietf-interfaces:interfaces/interface/default:pod-a',
    );
    assert.match(b.text, /"odl-interface:datapath-node-identifier":18446744073709551615[,}]/);
    assert.match(b.text, /^\{"interface":\[/);
    assert.match(b.text, /"odl-interface:l2vlan-mode":"trunk"/);
    const r = await call(emu.url, 'GET', '/rests/data/ietf-interfaces:interfaces/interface=default:pod-a');
    assert.match(r.text, /"odl-interface:datapath-node-identifier":"18446744073709551615"/);
    assert.match(r.text, /^\{"ietf-interfaces:interface":\[/);
    // A bare 64-bit number in the body kept every digit.
    const literal =
      '{"ietf-interfaces:interface":[{"name":"default:pod-b","type":"iana-if-type:l2vlan","odl-interface:datapath-node-identifier":98765432109876543}]}';
    assert.equal(
      (await call(emu.url, 'PUT', '/rests/data/ietf-interfaces:interfaces/interface=default:pod-b', literal))
        .status,
      201,
    );
    assert.match(
      (await call(emu.url, 'GET', '/rests/data/ietf-interfaces:interfaces/interface=default:pod-b')).text,
      /"98765432109876543"/,
    );
  });

  it('percent-decodes keys in both dialects (prefix keys with %2F)', async () => {
    const network = {
      'dhcp_allocation_pool:network': [
        {
          'network-id': '10.0.0.1:ns',
          'allocation-pool': [{ subnet: '10.11.1.0/24', gateway: '10.11.1.1' }],
        },
      ],
    };
    assert.equal(
      (
        await call(
          emu.url,
          'PUT',
          '/restconf/config/dhcp_allocation_pool:dhcp_allocation_pool/network/10.0.0.1:ns',
          network,
        )
      ).status,
      201,
    );
    const pool = await call(
      emu.url,
      'GET',
      '/restconf/config/dhcp_allocation_pool:dhcp_allocation_pool/network/10.0.0.1:ns/allocation-pool/10.11.1.0%2F24',
    );
    assert.equal(pool.status, 200);
    assert.deepEqual(pool.json(), { 'allocation-pool': [{ subnet: '10.11.1.0/24', gateway: '10.11.1.1' }] });
    const poolR = await call(
      emu.url,
      'GET',
      '/rests/data/dhcp_allocation_pool:dhcp_allocation_pool/network=10.0.0.1%3Ans/allocation-pool=10.11.1.0%2F24',
    );
    assert.equal(poolR.status, 200);
    const second = { 'dhcp_allocation_pool:allocation-pool': [{ subnet: '10.12.0.0/16' }] };
    assert.equal(
      (
        await call(
          emu.url,
          'PUT',
          '/rests/data/dhcp_allocation_pool:dhcp_allocation_pool/network=10.0.0.1:ns/allocation-pool=10.12.0.0%2F16',
          second,
        )
      ).status,
      201,
    );
  });

  it('rejects bad bodies: bad JSON 400 malformed-message, wrong top member 400 malformed-message, key mismatch 400 invalid-value', async () => {
    const bad = await call(emu.url, 'PUT', `${ELAN_B}/x`, '{"elan:elan-instance":[');
    assert.equal(bad.status, 400);
    assert.equal(errorTag(bad), 'malformed-message');
    const wrongTop = await call(emu.url, 'PUT', `${ELAN_B}/x`, {
      'elan:elan-interface': [{ name: 'x', 'elan-instance-name': 'e' }],
    });
    assert.equal(wrongTop.status, 400);
    assert.equal(errorTag(wrongTop), 'malformed-message');
    const mismatch = await call(emu.url, 'PUT', `${ELAN_R}=x`, elanBody('y'));
    assert.equal(mismatch.status, 400);
    assert.equal(errorTag(mismatch), 'invalid-value');
    const empty = await call(emu.url, 'PUT', `${ELAN_R}=x`, '');
    assert.equal(empty.status, 400);
    assert.equal(
      (await call(emu.url, 'GET', `${ELAN_R}=x`)).status,
      404,
      'a refused write leaves nothing behind',
    );
  });

  it('answers unknown modules and nodes as ODL does per dialect', async () => {
    const cases: [string, number, string][] = [
      ['/restconf/config/nosuch:thing', 400, 'unknown-element'],
      ['/restconf/config/elan:nosuch', 400, 'invalid-value'],
      ['/restconf/config/elan:elan-instances/nosuch', 400, 'unknown-element'],
      ['/rests/data/nosuch:thing', 400, 'unknown-element'],
      ['/rests/data/elan:nosuch', 400, 'malformed-message'],
      // The Aluminium VPN module does not exist in a Sodium controller.
      ['/restconf/config/l3vpn-instances-interfaces:vpn-instances', 400, 'unknown-element'],
    ];
    for (const [path, status, tag] of cases) {
      const reply = await call(emu.url, 'GET', path);
      assert.equal(reply.status, status, path);
      assert.equal(errorTag(reply), tag, path);
    }
    assert.equal((await call(emu.url, 'GET', '/nothing/here')).status, 404);
  });

  it('accepts the three JSON media types and refuses others', async () => {
    for (const type of [
      'application/json',
      'application/yang.data+json',
      'application/yang-data+json; charset=utf-8',
    ]) {
      const reply = await call(emu.url, 'PUT', `${ELAN_R}=mt`, elanBody('mt'), {
        headers: { 'Content-Type': type },
      });
      assert.ok([201, 204].includes(reply.status), type);
    }
    const xml = await call(emu.url, 'PUT', `${ELAN_R}=mt`, '<x/>', {
      headers: { 'Content-Type': 'application/xml' },
    });
    assert.equal(xml.status, 415);
    const accept = await call(emu.url, 'GET', `${ELAN_R}=mt`, undefined, {
      headers: { Accept: 'application/xml' },
    });
    assert.equal(accept.status, 406);
    const json = await call(emu.url, 'GET', `${ELAN_R}=mt`, undefined, {
      headers: { Accept: 'application/json' },
    });
    assert.match(String(json.headers['content-type']), /^application\/json/);
  });

  it('demands basic auth: 401 with WWW-Authenticate for missing or wrong credentials', async () => {
    const none = await call(emu.url, 'GET', `${ELAN_R}=mt`, undefined, { auth: false });
    assert.equal(none.status, 401);
    assert.match(String(none.headers['www-authenticate']), /^Basic realm=/);
    assert.equal(
      (await call(emu.url, 'GET', `${ELAN_R}=mt`, undefined, { auth: 'admin:wrong' })).status,
      401,
    );
    assert.equal(
      (await call(emu.url, 'GET', '/odlcoe-emulator/ready', undefined, { auth: false })).status,
      401,
    );
    assert.equal((await call(emu.url, 'GET', '/odlcoe-emulator/ready')).status, 200);
  });

  it('keeps config and operational apart; RFC 8040 content= selects them', async () => {
    await call(emu.url, 'PUT', '/rests/data/ietf-interfaces:interfaces/interface=default:state-a', {
      'ietf-interfaces:interface': [
        { name: 'default:state-a', type: 'iana-if-type:l2vlan', 'odl-interface:parent-interface': 'tap0' },
      ],
    });
    await eventually(async () =>
      (
        await call(
          emu.url,
          'GET',
          '/restconf/operational/ietf-interfaces:interfaces-state/interface/default:state-a',
        )
      ).status === 200
        ? true
        : undefined,
    );
    assert.equal(
      (
        await call(
          emu.url,
          'GET',
          '/restconf/operational/ietf-interfaces:interfaces/interface/default:state-a',
        )
      ).status,
      404,
    );
    assert.equal(
      (await call(emu.url, 'GET', '/rests/data/ietf-interfaces:interfaces-state?content=config')).status,
      404,
    );
    assert.equal(
      (await call(emu.url, 'GET', '/rests/data/ietf-interfaces:interfaces-state?content=nonconfig')).status,
      200,
    );
    assert.equal((await call(emu.url, 'GET', '/rests/data/ietf-interfaces:interfaces-state')).status, 200);
    assert.equal(
      (await call(emu.url, 'GET', '/rests/data/ietf-interfaces:interfaces?content=bogus')).status,
      400,
    );
    // Writes go to config only.
    assert.equal(
      (
        await call(
          emu.url,
          'PUT',
          '/restconf/operational/elan:elan-instances/elan-instance/o1',
          elanBody('o1'),
        )
      ).status,
      405,
    );
    const stateWrite = await call(
      emu.url,
      'PUT',
      '/rests/data/ietf-interfaces:interfaces-state/interface=x',
      { 'ietf-interfaces:interface': [{ name: 'x', type: 'iana-if-type:l2vlan' }] },
    );
    assert.equal(stateWrite.status, 400);
  });

  it('removes containers left empty, so their GET is 404 (structural containers)', async () => {
    await call(emu.url, 'PUT', '/rests/data/pod:coe/pods=c0ffee00-0000-4000-8000-000000000001', {
      'pod:pods': [{ uid: 'c0ffee00-0000-4000-8000-000000000001', name: 'p' }],
    });
    assert.equal((await call(emu.url, 'GET', '/rests/data/pod:coe')).status, 200);
    await call(emu.url, 'DELETE', '/rests/data/pod:coe/pods=c0ffee00-0000-4000-8000-000000000001');
    assert.equal((await call(emu.url, 'GET', '/rests/data/pod:coe')).status, 404);
  });

  it('counts requests by method and status', async () => {
    const before = emu.counters().requests['GET 404'] ?? 0;
    await call(emu.url, 'GET', `${ELAN_R}=never`);
    assert.equal(emu.counters().requests['GET 404'], before + 1);
    const remote = (await call(emu.url, 'GET', '/odlcoe-emulator/counters')).json() as {
      requests: Record<string, number>;
      connections: number;
    };
    assert.equal(remote.requests['GET 404'], before + 1);
    assert.ok(remote.connections >= 1);
  });
});
