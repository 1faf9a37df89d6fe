/**
 * Node gateways and Service routes against the emulator, both profiles and both dialects: what
 * ODL holds equals a hand-written expected set for 3 nodes, 3 namespaces and 6 Services
 * (ClusterIP v4, dual-stack, externalIPs, LoadBalancer with an ingress IP, headless,
 * ExternalName), then after a Service IP change, a Service delete, a node added and a node
 * removed; a restart over a correct ODL writes nothing; a ClusterIP outside the service range
 * is reported on the Service and routed nowhere.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Service } from '@kubernetes/client-node';
import type { Profile } from '../../src/netvirt/profile.js';
import type { Dialect } from '../../src/restconf/path.js';
import type { Watcher } from '../../src/watcher/watcher.js';
import {
  createNamespace,
  createNode,
  RecordedEvents,
  readOdl,
  startEnv,
  startTestWatcher,
  waitFor,
  writeCount,
  type Env,
} from './testing.js';

const SERVICE_CIDRS = ['10.96.0.0/16', 'fd00:96::/112'];

/** A gateway as the test compares it: what odlcoe owns of its four entries. */
interface GatewayView {
  address: string;
  mac: string;
  elan: string;
  vpn: string;
  gatewayIp: string;
  routes: string[];
}

// ---------------------------------------------------------------------------------------------
// the hand-written expectations

const route = (gw: string, prefixes: string[]) => prefixes.map((p) => `${p} via ${gw}`).sort();
const ALL_ROUTES = [
  '10.96.0.10/32', // shop/web: ClusterIP
  '10.96.0.20/32', // shop/dual: dual-stack
  'fd00:96::20/128',
  '10.96.0.30/32', // blog/ext: ClusterIP + externalIP
  '192.0.2.30/32',
  '10.96.0.40/32', // blog/lb: LoadBalancer + ingress IP
  '198.51.100.40/32',
  // api/headless, api/name: none
];
const gw = (n: number, routes: string[]): GatewayView => ({
  address: `10.20.${n}.2/32`,
  mac: `0a:58:0a:14:${n.toString(16).padStart(2, '0')}:02`,
  elan: `odlcoe-gw.n${n}`,
  vpn: 'odlcoe.gateways',
  gatewayIp: `10.20.${n}.1`,
  routes: route(`10.20.${n}.2`, routes),
});
const gateways = (nodes: number[], routes: string[]) =>
  Object.fromEntries(nodes.map((n) => [`odlcoe-gw.n${n}`, gw(n, routes)]));
/** The gateway VPN's RDs: one per node, from the top of 64512's 4-byte number space down. */
const rds = (count: number) => Array.from({ length: count }, (_, i) => `64512:${4294967295 - i}`);

// ---------------------------------------------------------------------------------------------
// reading ODL back

type Raw = Record<string, unknown>;
const member = (e: Raw, suffix: string): unknown =>
  Object.entries(e).find(([k]) => k === suffix || k.endsWith(`:${suffix}`))?.[1];

async function gatewaysInOdl(env: Env): Promise<Record<string, GatewayView>> {
  const odl = await readOdl(env);
  const out: Record<string, GatewayView> = {};
  const isGw = (e: Raw) => String(e.name ?? e['elan-instance-name']).startsWith('odlcoe-gw.');
  const ifs = new Set(odl.interface.filter(isGw).map((e) => String(e.name)));
  const elans = new Set(odl['elan-instance'].filter(isGw).map((e) => String(e['elan-instance-name'])));
  const elanIfs = new Map(odl['elan-interface'].filter(isGw).map((e) => [String(e.name), e]));
  for (const v of odl['vpn-interface'].filter(isGw)) {
    const name = String(v.name);
    const adjs = (member(v, 'adjacency') ?? []) as Raw[];
    const primary = adjs.find((a) => a.adjacency_type === 'primary-adjacency') ?? {};
    const elanIf = elanIfs.get(name) ?? {};
    const elan = String(elanIf['elan-instance-name']);
    assert.ok(ifs.has(name), `ietf-interface ${name}`);
    assert.ok(elans.has(elan), `ELAN ${elan}`);
    out[name] = {
      address: String(primary.ip_address),
      mac: String(primary.mac_address),
      elan,
      vpn: ((v['vpn-instance-names'] ?? []) as Raw[]).map((x) => String(x['vpn-name'])).join(','),
      gatewayIp: String(primary.subnet_gateway_ip),
      routes: adjs
        .filter((a) => a.adjacency_type === 'extra-route')
        .map((a) => `${String(a.ip_address)} via ${((a['next-hop-ip-list'] ?? []) as string[]).join(',')}`)
        .sort(),
    };
  }
  // No gateway entry without its vpn-interface.
  for (const name of [...ifs, ...elans, ...elanIfs.keys()])
    assert.ok(out[name], `stray gateway entry ${name}`);
  return out;
}

async function gatewayVpnRds(env: Env): Promise<string[] | undefined> {
  const odl = await readOdl(env);
  const vpn = odl['vpn-instance'].find((e) => e['vpn-instance-name'] === 'odlcoe.gateways');
  if (!vpn) return undefined;
  const fam = (vpn['ipv4-family'] ?? vpn) as Raw;
  return (fam['route-distinguisher'] ?? []) as string[];
}

async function converged(env: Env, expected: Record<string, GatewayView>, rdCount: number) {
  // An assertion that throws is waitFor's last error, reported when the deadline passes.
  await waitFor(
    async () => {
      assert.deepEqual(await gatewaysInOdl(env), expected);
      assert.deepEqual(await gatewayVpnRds(env), rds(rdCount));
      return true;
    },
    { what: 'the expected gateways and Service routes', timeoutMs: 20_000 },
  );
}

// ---------------------------------------------------------------------------------------------

const svc = (ns: string, name: string, spec: V1Service['spec'], status?: V1Service['status']): V1Service => ({
  metadata: { name, namespace: ns },
  spec: { ports: [{ port: 80 }], ...spec },
  ...(status ? { status } : {}),
});

async function createService(env: Env, s: V1Service): Promise<void> {
  const ns = s.metadata?.namespace ?? '';
  const created = await env.core.createNamespacedService({ namespace: ns, body: s });
  if (s.status && JSON.stringify(created.status ?? {}) !== JSON.stringify(s.status))
    await env.core.replaceNamespacedServiceStatus({
      name: s.metadata?.name ?? '',
      namespace: ns,
      body: { ...created, status: s.status },
    });
}

for (const profile of ['sodium', 'aluminium'] as Profile[])
  for (const dialect of ['bierman02', 'rfc8040'] as Dialect[])
    describe(`node gateways and Service routes (${profile}, ${dialect})`, () => {
      let env: Env;
      let watcher: Watcher | undefined;
      const events = new RecordedEvents();
      const start = async () => {
        watcher = await startTestWatcher(env, { serviceCidrs: SERVICE_CIDRS }, { events });
      };

      before(async () => {
        env = await startEnv({ profile, dialect });
        for (const n of [1, 2, 3]) await createNode(env, `n${n}`, `192.168.56.1${n}`, `10.20.${n}.0/24`);
        for (const ns of ['shop', 'blog', 'api']) await createNamespace(env, ns);
        await createService(env, svc('shop', 'web', { clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'] }));
        await createService(
          env,
          svc('shop', 'dual', {
            clusterIP: '10.96.0.20',
            clusterIPs: ['10.96.0.20', 'fd00:96::20'],
            ipFamilies: ['IPv4', 'IPv6'],
            ipFamilyPolicy: 'RequireDualStack',
          }),
        );
        await createService(
          env,
          svc('blog', 'ext', { clusterIP: '10.96.0.30', externalIPs: ['192.0.2.30'] }),
        );
        await createService(
          env,
          svc(
            'blog',
            'lb',
            { type: 'LoadBalancer', clusterIP: '10.96.0.40' },
            {
              loadBalancer: { ingress: [{ ip: '198.51.100.40' }] },
            },
          ),
        );
        await createService(env, svc('api', 'headless', { clusterIP: 'None' }));
        await createService(env, svc('api', 'name', { type: 'ExternalName', externalName: 'example.com' }));
        await start();
      });
      after(async () => {
        await watcher?.close();
        await env.close();
      });

      it('every node has its gateway, every gateway every Service route', async () => {
        await converged(env, gateways([1, 2, 3], ALL_ROUTES), 3);
      });

      it('a restart over a correct ODL writes nothing', async () => {
        await watcher?.close();
        const before = writeCount(env);
        await start();
        await new Promise((r) => setTimeout(r, 1_500));
        await converged(env, gateways([1, 2, 3], ALL_ROUTES), 3);
        assert.equal(writeCount(env), before);
      });

      it('an IP change moves the route', async () => {
        const s = await env.core.readNamespacedService({ name: 'ext', namespace: 'blog' });
        await env.core.replaceNamespacedService({
          name: 'ext',
          namespace: 'blog',
          body: { ...s, spec: { ...s.spec, externalIPs: ['192.0.2.31'] } },
        });
        const routes = ALL_ROUTES.map((r) => (r === '192.0.2.30/32' ? '192.0.2.31/32' : r));
        await converged(env, gateways([1, 2, 3], routes), 3);
      });

      const afterDelete = ALL_ROUTES.filter((r) => r !== '10.96.0.20/32' && r !== 'fd00:96::20/128').map(
        (r) => (r === '192.0.2.30/32' ? '192.0.2.31/32' : r),
      );

      it('a deleted Service leaves no route behind', async () => {
        await env.core.deleteNamespacedService({ name: 'dual', namespace: 'shop' });
        await converged(env, gateways([1, 2, 3], afterDelete), 3);
      });

      it('a node joining gets its gateway and the routes; the gateway VPN one more RD', async () => {
        await createNode(env, 'n4', '192.168.56.14', '10.20.4.0/24');
        await converged(env, gateways([1, 2, 3, 4], afterDelete), 4);
      });

      it('a node leaving takes its gateway with it', async () => {
        await env.core.deleteNode({ name: 'n1' });
        await converged(env, gateways([2, 3, 4], afterDelete), 3);
      });

      it('a ClusterIP outside the service range: an Event on the Service, no route, the rest unchanged', async () => {
        await createService(env, svc('api', 'stray', { clusterIP: '10.200.0.1' }));
        await waitFor(
          () =>
            events.events.some(
              (e) =>
                e.object.name === 'stray' &&
                e.reason === 'InvalidForOdl' &&
                /10\.200\.0\.1.*outside/.test(e.message),
            ),
          { what: 'the InvalidForOdl Event on api/stray' },
        );
        await converged(env, gateways([2, 3, 4], afterDelete), 3);
      });
    });
