import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../common/log.js';
import { createRegistry } from '../common/metrics.js';
import { startEmulator, type Emulator } from '../emulator/server.js';
import { loadRestconfAuth } from './auth.js';
import { RestconfClient, type RequestSample, type RestconfClientOptions } from './client.js';
import { restconfMetrics } from './metrics.js';
import type { DataPath, Dialect } from './path.js';
import { countsSince, elanBody, elanEntry, elanInstances, elanList, elanPath, rejection } from './testing.js';

const ADMIN = { kind: 'basic', user: 'admin', password: 'admin' } as const;

/** Status codes of the emulator (and ODL) per dialect: netvirt-model.md. */
const STATUS: Record<Dialect, { replaced: string; posted: string; deleted: string }> = {
  bierman02: { replaced: 'PUT 200', posted: 'POST 204', deleted: 'DELETE 200' },
  rfc8040: { replaced: 'PUT 204', posted: 'POST 201', deleted: 'DELETE 204' },
};

const vpnInterface = 'default:nginx-1';
const vpnInterfacePath: DataPath = [
  { module: 'l3vpn', name: 'vpn-interfaces' },
  { name: 'vpn-interface', keys: [vpnInterface] },
];
const adjacencies: DataPath = [...vpnInterfacePath, { module: 'odl-l3vpn', name: 'adjacency' }];
const adjacency = {
  ip_address: '10.11.1.5/32',
  mac_address: '0a:58:0a:0b:01:05',
  adjacency_type: 'primary-adjacency',
};

/** Asserts that `promise` rejects with a RestconfError and returns it. */

for (const dialect of ['bierman02', 'rfc8040'] as const) {
  describe(`RestconfClient against the emulator (${dialect})`, () => {
    let emulator: Emulator;
    let client: RestconfClient;
    const samples: RequestSample[] = [];
    const counts = () => emulator.counters().requests;

    before(async () => {
      emulator = await startEmulator({ port: 0, profile: 'sodium', logger: silentLogger() });
      client = new RestconfClient({
        baseUrl: emulator.url,
        dialect,
        auth: ADMIN,
        retry: { maxAttempts: 3, initialMs: 10, maxMs: 50 },
        onRequest: (s) => samples.push(s),
      });
    });
    after(async () => {
      client?.close();
      await emulator?.close();
    });

    it('POSTs the top container into the datastore root, then refuses it again with data-exists, unretried', async () => {
      const before = counts();
      await client.post([], { 'elan:elan-instances': { 'elan-instance': [elanEntry('a')] } });
      assert.deepEqual(countsSince(before, counts()), { [STATUS[dialect].posted]: 1 });

      const again = counts();
      const err = await rejection(
        client.post([], { 'elan:elan-instances': { 'elan-instance': [elanEntry('a')] } }),
      );
      assert.equal(err.status, 409);
      assert.equal(err.errorTag, 'data-exists');
      assert.equal(err.retryable, false);
      assert.equal(err.attempts, 1);
      assert.equal(err.mayHaveApplied, false);
      assert.deepEqual(countsSince(again, counts()), { 'POST 409': 1 });
    });

    it('PUT answers created (201), then replaced (200 bierman02 / 204 RFC 8040)', async () => {
      const before = counts();
      assert.equal(await client.put(elanPath('b'), elanBody('b', 2002)), 'created');
      assert.equal(await client.put(elanPath('b'), elanBody('b', 2003)), 'replaced');
      assert.deepEqual(countsSince(before, counts()), { 'PUT 201': 1, [STATUS[dialect].replaced]: 1 });
    });

    it('GET returns the parsed document, with the top member as the dialect writes it', async () => {
      const doc = (await client.get(elanPath('b'))) as Record<string, unknown>;
      const member = dialect === 'bierman02' ? 'elan-instance' : 'elan:elan-instance';
      assert.deepEqual(Object.keys(doc), [member]);
      const [entry] = doc[member] as Record<string, unknown>[];
      assert.equal(entry?.['segmentation-id'], 2003);
    });

    it('getEntries unwraps a list path and an entry path', async () => {
      const names = (await client.getEntries(elanList)).map((e) => e['elan-instance-name']).sort();
      assert.deepEqual(names, ['a', 'b']);
      const [entry, ...rest] = await client.getEntries(elanPath('b'));
      assert.equal(rest.length, 0);
      assert.equal(entry?.['elan-instance-name'], 'b');
    });

    it('POSTs a list entry into its container; a second POST is 409 data-exists', async () => {
      const before = counts();
      await client.post(elanInstances, elanBody('c'));
      const err = await rejection(client.post(elanInstances, elanBody('c')));
      assert.equal(err.errorTag, 'data-exists');
      assert.equal(err.status, 409);
      assert.deepEqual(countsSince(before, counts()), { [STATUS[dialect].posted]: 1, 'POST 409': 1 });
    });

    if (dialect === 'rfc8040') {
      it('merge (PATCH) changes the given leaves and keeps the others', async () => {
        const before = counts();
        await client.merge(elanPath('b'), {
          'elan:elan-instance': [{ 'elan-instance-name': 'b', 'mac-timeout': 30 }],
        });
        assert.deepEqual(countsSince(before, counts()), { 'PATCH 200': 1 });
        const [entry] = await client.getEntries(elanPath('b'));
        assert.equal(entry?.['mac-timeout'], 30);
        assert.equal(entry?.['segmentation-id'], 2003);
      });
    } else {
      it('merge (PATCH) fails with 415: the old /restconf takes PATCH only as YANG-Patch', async () => {
        const before = counts();
        const err = await rejection(
          client.merge(elanPath('b'), {
            'elan:elan-instance': [{ 'elan-instance-name': 'b', 'mac-timeout': 30 }],
          }),
        );
        assert.equal(err.status, 415);
        assert.equal(err.retryable, false);
        assert.deepEqual(countsSince(before, counts()), { 'PATCH 415': 1 });
      });
    }

    it('percent-encodes / in keys, and getEntries reads an augment list (qualified member) inside an entry', async () => {
      const body = {
        'l3vpn:vpn-interface': [
          {
            name: vpnInterface,
            'vpn-instance-names': [{ 'vpn-name': 'default', 'associated-subnet-type': 'V4Subnet' }],
            'router-interface': false,
            'odl-l3vpn:adjacency': [adjacency],
          },
        ],
      };
      assert.equal(await client.put(vpnInterfacePath, body), 'created');
      const [entry] = await client.getEntries([
        ...adjacencies.slice(0, 2),
        { module: 'odl-l3vpn', name: 'adjacency', keys: ['10.11.1.5/32'] },
      ]);
      assert.equal(entry?.mac_address, adjacency.mac_address);
      const all = await client.getEntries(adjacencies);
      assert.deepEqual(
        all.map((a) => a.ip_address),
        ['10.11.1.5/32'],
      );
    });

    it('reads the operational datastore through its own URL', async () => {
      const before = counts();
      // The emulator keeps no operational elan-instances: 404, which reads as no data.
      assert.equal(await client.get(elanPath('b'), 'operational'), undefined);
      assert.deepEqual(countsSince(before, counts()), { 'GET 404': 1 });
      const url = client.dataUrl(elanPath('b'), 'operational', 'GET');
      assert.ok(
        dialect === 'bierman02' ? url.includes('/restconf/operational/') : url.endsWith('?content=nonconfig'),
        url,
      );
    });

    it('DELETE answers deleted (200 / 204), then absent (404); GET of missing data is undefined, getEntries []', async () => {
      const before = counts();
      assert.equal(await client.delete(elanPath('c')), 'deleted');
      assert.equal(await client.delete(elanPath('c')), 'absent');
      assert.equal(await client.get(elanPath('c')), undefined);
      assert.deepEqual(await client.getEntries(elanPath('c')), []);
      assert.deepEqual(countsSince(before, counts()), {
        [STATUS[dialect].deleted]: 1,
        'DELETE 404': 1,
        'GET 404': 2,
      });
    });

    it('decodes a 400 unknown-element with its tag, type and message, without retrying', async () => {
      const before = counts();
      const err = await rejection(
        client.put(elanPath('d'), { 'elan:elan-instance': [{ ...elanEntry('d'), 'no-such-leaf': 1 }] }),
      );
      assert.equal(err.status, 400);
      assert.equal(err.errorTag, 'unknown-element');
      assert.equal(err.errorType, 'protocol');
      assert.match(err.errorMessage ?? '', /no-such-leaf/);
      assert.equal(err.method, 'PUT');
      assert.equal(err.url, client.dataUrl(elanPath('d'), 'config', 'PUT'));
      assert.equal(err.retryable, false);
      assert.equal(err.attempts, 1);
      assert.match(err.message, /^PUT http:\/\/127\.0\.0\.1:\d+\/.*: 400 unknown-element: .*no-such-leaf/);
      assert.deepEqual(countsSince(before, counts()), { 'PUT 400': 1 });
    });

    it('reports a URL key that differs from the body key as 400 invalid-value', async () => {
      const err = await rejection(client.put(elanPath('e'), elanBody('not-e')));
      assert.equal(err.status, 400);
      assert.equal(err.errorTag, 'invalid-value');
    });

    it('reports each attempt to onRequest with the path template', () => {
      const puts = samples.filter((s) => s.method === 'PUT' && s.status === 201);
      assert.ok(puts.length >= 2);
      assert.ok(puts.some((s) => s.pathTemplate === 'elan:elan-instances/elan-instance={key}'));
      assert.ok(samples.every((s) => s.attempt === 1 && s.seconds >= 0));
    });
  });
}

describe('RestconfClient authentication against the emulator', () => {
  let emulator: Emulator;
  let dir: string;
  const clients: RestconfClient[] = [];
  const makeClient = (options: Partial<RestconfClientOptions>): RestconfClient => {
    const client = new RestconfClient({
      baseUrl: emulator.url,
      dialect: 'rfc8040',
      retry: { maxAttempts: 5, initialMs: 10, maxMs: 20 },
      ...options,
    });
    clients.push(client);
    return client;
  };

  before(async () => {
    emulator = await startEmulator({
      port: 0,
      profile: 'sodium',
      user: 'odlcoe',
      password: 's3cret pass',
      logger: silentLogger(),
    });
    dir = mkdtempSync(join(tmpdir(), 'odlcoe-restconf-auth-'));
  });
  after(async () => {
    for (const c of clients) c.close();
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('authenticates with a password read from a file', async () => {
    const passwordFile = join(dir, 'password');
    writeFileSync(passwordFile, 's3cret pass\n', { mode: 0o600 });
    const client = makeClient({ auth: loadRestconfAuth({ user: 'odlcoe', passwordFile, env: {} }) });
    assert.equal(await client.put(elanPath('f'), elanBody('f')), 'created');
  });

  it('authenticates with user and password from the environment', async () => {
    const client = makeClient({
      auth: loadRestconfAuth({ env: { ODLCOE_ODL_USER: 'odlcoe', ODLCOE_ODL_PASSWORD: 's3cret pass' } }),
    });
    assert.equal(await client.delete(elanPath('f')), 'deleted');
  });

  it('fails a wrong password with 401 once, unretried, and says to check the credentials', async () => {
    const before = emulator.counters().requests;
    const err = await rejection(
      makeClient({ auth: { kind: 'basic', user: 'odlcoe', password: 'wrong' } }).get(elanPath('f')),
    );
    assert.equal(err.status, 401);
    assert.equal(err.retryable, false);
    assert.equal(err.attempts, 1);
    assert.match(err.message, /authentication failed; check the ODL credentials/);
    assert.doesNotMatch(err.message, /wrong/);
    assert.deepEqual(countsSince(before, emulator.counters().requests), { 'GET 401': 1 });
  });

  it('sends a bearer token loaded from a file (the emulator speaks basic auth only: 401, unretried)', async () => {
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'eyJhbGciOi.token\n', { mode: 0o600 });
    const auth = loadRestconfAuth({ tokenFile, env: {} });
    assert.deepEqual(auth, { kind: 'bearer', token: 'eyJhbGciOi.token' });
    const before = emulator.counters().requests;
    const err = await rejection(makeClient({ auth }).put(elanPath('g'), elanBody('g')));
    assert.equal(err.status, 401);
    assert.doesNotMatch(err.message, /eyJhbGciOi/);
    assert.deepEqual(countsSince(before, emulator.counters().requests), { 'PUT 401': 1 });
  });

  it('sends no credentials when none are configured', async () => {
    const err = await rejection(makeClient({ auth: loadRestconfAuth({ env: {} }) }).get(elanPath('f')));
    assert.equal(err.status, 401);
  });
});

describe('RestconfClient options, metrics and close', () => {
  let emulator: Emulator;
  before(async () => {
    emulator = await startEmulator({ port: 0, profile: 'sodium', logger: silentLogger() });
  });
  after(async () => {
    await emulator?.close();
  });

  it('refuses bad options with the option named', () => {
    const make = (o: Partial<RestconfClientOptions>) => () =>
      new RestconfClient({ baseUrl: emulator.url, dialect: 'rfc8040', ...o });
    assert.throws(make({ baseUrl: 'http://admin:admin@127.0.0.1:8181' }), /must not contain credentials/);
    assert.throws(make({ baseUrl: 'ftp://127.0.0.1' }), /http or https/);
    assert.throws(make({ baseUrl: 'not a url' }), /is not a URL/);
    assert.throws(make({ dialect: 'draft-17' as Dialect }), /dialect "draft-17"/);
    assert.throws(make({ concurrency: 0 }), /concurrency must be a positive integer/);
    assert.throws(make({ timeoutMs: 1.5 }), /timeoutMs/);
    assert.throws(
      make({ retry: { initialMs: 100, maxMs: 10 } }),
      /retry.maxMs \(10\) is below retry.initialMs/,
    );
    assert.throws(make({ tls: { insecureSkipVerify: true } }), /TLS options are set but .* plain http/);
    assert.throws(make({ auth: { kind: 'basic', user: 'admin', password: 'a\r\nb' } }), /control characters/);
  });

  it('records attempts in the histogram and counts nothing as a retry when nothing was retried', async () => {
    const registry = createRegistry();
    const client = new RestconfClient({
      baseUrl: emulator.url,
      dialect: 'bierman02',
      auth: ADMIN,
      onRequest: restconfMetrics(registry),
    });
    // A second client on the same registry shares the metric families.
    const other = new RestconfClient({
      baseUrl: emulator.url,
      dialect: 'bierman02',
      auth: ADMIN,
      onRequest: restconfMetrics(registry),
    });
    try {
      await client.put(elanPath('m'), elanBody('m'));
      await other.get(elanPath('m'));
      const text = await registry.metrics();
      assert.match(
        text,
        /odlcoe_restconf_request_duration_seconds_count\{method="PUT",path="elan:elan-instances\/elan-instance=\{key\}",status="201"\} 1/,
      );
      assert.match(
        text,
        /odlcoe_restconf_request_duration_seconds_count\{method="GET",path="elan:elan-instances\/elan-instance=\{key\}",status="200"\} 1/,
      );
      assert.doesNotMatch(text, /odlcoe_restconf_retries_total\{/);
    } finally {
      client.close();
      other.close();
    }
  });

  it('a throwing onRequest hook does not fail the request', async () => {
    const client = new RestconfClient({
      baseUrl: emulator.url,
      dialect: 'rfc8040',
      auth: ADMIN,
      onRequest: () => {
        throw new Error('broken hook');
      },
    });
    try {
      assert.equal(await client.delete(elanPath('m')), 'deleted');
    } finally {
      client.close();
    }
  });

  it('after close() every request fails with code closed, and close() is idempotent', async () => {
    const client = new RestconfClient({ baseUrl: emulator.url, dialect: 'rfc8040', auth: ADMIN });
    await client.get(elanPath('m'));
    client.close();
    client.close();
    const err = await rejection(client.get(elanPath('m')));
    assert.equal(err.code, 'closed');
    assert.equal(err.retryable, false);
  });

  it('refuses a write without a JSON body and an operational write before sending anything', async () => {
    const client = new RestconfClient({ baseUrl: emulator.url, dialect: 'rfc8040', auth: ADMIN });
    try {
      await assert.rejects(client.put(elanPath('m'), undefined), /the body must be a JSON value/);
      await assert.rejects(client.delete([]), /non-empty data path/);
    } finally {
      client.close();
    }
  });
});
