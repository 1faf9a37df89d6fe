import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Emulator } from './server.js';
import { call, startQuiet, type Reply } from './testing.js';

/**
 * The emulator is as strict as the release it plays: Aluminium (and Sodium without the COE
 * feature) has no COE module, and every URL into one answers as ODL's RESTCONF does (netconf
 * release/aluminium-sr4: bierman02 `ControllerContext.toIdentifier`, RFC 8040
 * `YangInstanceIdentifierDeserializer`); the module list it publishes names what it serves.
 */

const COE_URLS = {
  bierman02: [
    '/restconf/config/k8s-node:k8s-nodes-info',
    '/restconf/config/k8s-node:k8s-nodes-info/k8s-nodes/c0ffee00-0000-4000-8000-000000000001',
    '/restconf/config/pod:coe',
    '/restconf/config/service:service-information',
    '/restconf/config/k8s-cluster:k8s-clusters-info',
    '/restconf/operational/k8s-node:k8s-nodes-info',
  ],
  rfc8040: [
    '/rests/data/k8s-node:k8s-nodes-info',
    '/rests/data/k8s-node:k8s-nodes-info/k8s-nodes=c0ffee00-0000-4000-8000-000000000001',
    '/rests/data/pod:coe',
    '/rests/data/service:endpoints-info',
    '/rests/data/k8s-cluster:k8s-clusters-info?content=config',
  ],
} as const;

const moduleOf = (path: string) => /(?:config|operational|data)\/([^:]+):/.exec(path)?.[1] ?? '?';

function theError(reply: Reply): Record<string, string> {
  const body = reply.json() as { errors?: { error?: Record<string, string>[] } };
  assert.deepEqual(Object.keys(body), ['errors'], reply.text);
  assert.equal(body.errors?.error?.length, 1, reply.text);
  return body.errors!.error![0]!;
}

async function assertNoModule(emu: Emulator, method: string, path: string): Promise<void> {
  const module = moduleOf(path);
  const body =
    method === 'PUT'
      ? { [`${module}:k8s-nodes`]: [{ uid: 'c0ffee00-0000-4000-8000-000000000001' }] }
      : undefined;
  const reply = await call(emu.url, method, path, body);
  assert.equal(reply.status, 400, `${method} ${path}: ${reply.text}`);
  const error = theError(reply);
  assert.equal(error['error-tag'], 'unknown-element', path);
  assert.equal(error['error-type'], 'protocol', path);
  assert.equal(
    error['error-message'],
    path.startsWith('/rests/')
      ? `Failed to lookup for module with name '${module}'.`
      : `The module named '${module}' does not exist.`,
    path,
  );
}

interface YangLibraryModule {
  name: string;
  revision: string;
  namespace: string;
  schema: string;
  'conformance-type': string;
}

async function modulesState(emu: Emulator, path: string): Promise<YangLibraryModule[]> {
  const reply = await call(emu.url, 'GET', path);
  assert.equal(reply.status, 200, reply.text);
  const body = reply.json() as Record<string, { 'module-set-id': string; module: YangLibraryModule[] }>;
  const top = body['ietf-yang-library:modules-state'] ?? body['modules-state'];
  assert.ok(top, reply.text);
  assert.equal(typeof top['module-set-id'], 'string');
  return top.module;
}

async function biermanModules(
  emu: Emulator,
): Promise<{ name: string; revision: string; namespace: string }[]> {
  const reply = await call(emu.url, 'GET', '/restconf/modules');
  assert.equal(reply.status, 200, reply.text);
  return (reply.json() as { modules: { module: { name: string; revision: string; namespace: string }[] } })
    .modules.module;
}

const names = (modules: readonly { name: string }[]) => modules.map((m) => m.name).sort();

describe('emulator, aluminium: no COE models', () => {
  let emu: Emulator;
  before(async () => {
    emu = await startQuiet({ profile: 'aluminium' });
  });
  after(() => emu.close());

  for (const [dialect, urls] of Object.entries(COE_URLS)) {
    it(`answers every ${dialect} URL into a COE module with 400 unknown-element and ODL's message`, async () => {
      for (const path of urls) {
        await assertNoModule(emu, 'GET', path);
        await assertNoModule(emu, 'DELETE', path.split('?')[0]!);
      }
      const put = dialect === 'bierman02' ? urls[1] : urls[1];
      await assertNoModule(emu, 'PUT', put);
    });
  }

  it('a module inside the URL that does not exist says so the bierman02 way', async () => {
    const reply = await call(emu.url, 'GET', '/restconf/config/elan:elan-instances/k8s-node:k8s-nodes-info');
    assert.equal(reply.status, 400);
    assert.equal(theError(reply)['error-message'], '"k8s-node" module does not exist.');
  });

  it('publishes its modules on /rests (ietf-yang-library modules-state) and /restconf/modules', async () => {
    const rfc = await modulesState(emu, '/rests/data/ietf-yang-library:modules-state');
    const nonconfig = await modulesState(
      emu,
      '/rests/data/ietf-yang-library:modules-state?content=nonconfig',
    );
    const operational = await modulesState(emu, '/restconf/operational/ietf-yang-library:modules-state');
    const bierman = await biermanModules(emu);
    const expected = [
      'aclservice',
      'dhcp_allocation_pool',
      'elan',
      'iana-if-type',
      'ietf-access-control-list',
      'ietf-interfaces',
      'ietf-yang-library',
      'l3vpn-instances-interfaces',
      'odl-interface',
      'odl-nat',
    ];
    for (const list of [rfc, nonconfig, operational, bierman]) assert.deepEqual(names(list), expected);
    const vpn = rfc.find((m) => m.name === 'l3vpn-instances-interfaces');
    assert.deepEqual(vpn, {
      name: 'l3vpn-instances-interfaces',
      revision: '2020-02-04',
      schema: '/modules/l3vpn-instances-interfaces/2020-02-04',
      namespace: 'urn:opendaylight:netvirt:neutronvpn:l3vpn',
      'conformance-type': 'import',
    });
    assert.deepEqual(
      bierman.find((m) => m.name === 'dhcp_allocation_pool'),
      {
        name: 'dhcp_allocation_pool',
        revision: '2016-12-14',
        namespace: 'urn:opendaylight:netvirt:dhcp_allocation_pool',
      },
    );
    // State data: not in the config datastore, not writable.
    assert.equal(
      (await call(emu.url, 'GET', '/rests/data/ietf-yang-library:modules-state?content=config')).status,
      404,
    );
    assert.equal((await call(emu.url, 'PUT', '/restconf/modules', { modules: {} })).status, 405);
  });

  it('counts data requests by the module they address, existing or not', async () => {
    const before = emu.counters().modules;
    await call(emu.url, 'GET', '/rests/data/k8s-node:k8s-nodes-info');
    await call(emu.url, 'GET', '/restconf/config/elan:elan-instances');
    const now = emu.counters().modules;
    assert.equal((now['k8s-node'] ?? 0) - (before['k8s-node'] ?? 0), 1);
    assert.equal((now.elan ?? 0) - (before.elan ?? 0), 1);
  });

  it('cannot be started with the COE feature', async () => {
    await assert.rejects(
      startQuiet({ profile: 'aluminium', features: ['coe'] }),
      /no aluminium release ships the COE models/,
    );
  });
});

describe('emulator, sodium with and without the COE feature', () => {
  it('serves the COE models by default, and lists them', async () => {
    const emu = await startQuiet({ profile: 'sodium' });
    try {
      const listed = names(await biermanModules(emu));
      for (const m of ['k8s-node', 'pod', 'service', 'k8s-cluster', 'l3vpn', 'odl-l3vpn'])
        assert.ok(listed.includes(m), m);
      assert.ok(!listed.includes('l3vpn-instances-interfaces'));
      assert.equal((await call(emu.url, 'GET', '/restconf/config/k8s-node:k8s-nodes-info')).status, 404);
      assert.equal((await call(emu.url, 'GET', '/rests/data/k8s-cluster:k8s-clusters-info')).status, 404);
    } finally {
      await emu.close();
    }
  });

  it('without it answers like Aluminium for every COE module', async () => {
    const emu = await startQuiet({ profile: 'sodium', features: [] });
    try {
      for (const path of [...COE_URLS.bierman02, ...COE_URLS.rfc8040]) await assertNoModule(emu, 'GET', path);
      const listed = names(await modulesState(emu, '/rests/data/ietf-yang-library:modules-state'));
      assert.ok(listed.includes('l3vpn'));
      for (const m of ['k8s-node', 'pod', 'service', 'k8s-cluster']) assert.ok(!listed.includes(m), m);
    } finally {
      await emu.close();
    }
  });
});
