/**
 * Extra networks against the emulator (its schema checks validate every body against the
 * profile's YANG) and the Kubernetes simulator, both profiles: what ODL holds of networks and
 * attachments equals a hand-written expected set, and every pod's attachment record equals a
 * hand-written one, for a routed NAD, an L2 NAD and a NAD on an ELAN an ODL user made, through
 * create, a NAD update (routes added), a pod delete (its address is free again) and a NAD
 * delete; the ODL user's ELAN is never written. Then the refusals: a static IP already taken,
 * one outside the subnet, a malformed MAC and an unknown NAD each get their own reason in the
 * record and an Event on the pod, and no ODL object; an invalid NAD gets an Event on the NAD
 * and nothing in ODL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRegistry, type Registry } from '../../src/common/metrics.js';
import { elanInstanceEntry } from '../../src/netvirt/elan.js';
import { elanInstanceKind, vpnInstanceKind } from '../../src/netvirt/kinds.js';
import { vpnRouteDistinguishers } from '../../src/netvirt/ownership.js';
import type { Profile } from '../../src/netvirt/profile.js';
import { entryBody } from '../../src/netvirt/write.js';
import type { Watcher } from '../../src/watcher/watcher.js';
import {
  createNamespace,
  createNode,
  deletePod,
  metricValue,
  RecordedEvents,
  readOdl,
  startEnv,
  startTestWatcher,
  waitFor,
  type Env,
} from './testing.js';
import {
  att,
  converged,
  createAttachedPod,
  deleteNad,
  networksInOdl,
  putNad,
  recordsOf,
  type AttachmentView,
  type Raw,
} from './networks-testing.js';

const USER_ELAN = 'made-in-odl';

const BLUE = { cniVersion: '1.0.0', type: 'odlcoe', routing: 'vpn', subnets: [{ cidr: '10.50.0.0/24' }] };
const GREEN = {
  cniVersion: '1.0.0',
  type: 'odlcoe',
  subnets: [{ cidr: '10.51.0.0/24', exclude: ['10.51.0.1'] }],
};
const USER = { cniVersion: '1.0.0', type: 'odlcoe', elan: USER_ELAN, subnets: [{ cidr: '10.52.0.0/24' }] };

// ---------------------------------------------------------------------------------------------
// the hand-written expectations

const BLUE_ELAN = 'odlcoe-net.tenant.blue elan:segment-type-vxlan external=false';
const GREEN_ELAN = 'odlcoe-net.tenant.green elan:segment-type-vxlan external=false';

const blue = (n: number) =>
  att(
    'odlcoe-net.tenant.blue',
    `10.50.0.${n}`,
    `0a:58:0a:32:00:0${n}`,
    `odlcoe-net.tenant.blue 10.50.0.${n}/32 gw 10.50.0.1`,
  );
const green = (n: number) => att('odlcoe-net.tenant.green', `10.51.0.${n}`, `0a:58:0a:33:00:0${n}`);

const E1: Record<string, AttachmentView> = {
  'tenant:a@net1': blue(2),
  'tenant:a@data0': green(2),
  'tenant:a@net3': att(USER_ELAN, '10.52.0.1', '0a:58:0a:34:00:01'),
  'tenant:b@net1': blue(3),
  'tenant:b@data0': green(3),
  'tenant:c@net1': att('odlcoe-net.tenant.green', '10.51.0.100', '02:00:00:00:01:00'),
};

const rec = (network: string, ifname: string, pod: string, ip: string, mac: string, routes: Raw[] = []) => [
  ifname,
  { network, interfaceName: `tenant:${pod}@${ifname}`, ips: [ip], mac, routes },
];
const defaultVia = (gw: string) => ({ dst: '0.0.0.0/0', gw });
const R1: Record<string, Raw> = {
  a: Object.fromEntries([
    rec('tenant/green', 'data0', 'a', '10.51.0.2/24', '0a:58:0a:33:00:02'),
    rec('tenant/blue', 'net1', 'a', '10.50.0.2/24', '0a:58:0a:32:00:02', [defaultVia('10.50.0.1')]),
    rec('tenant/user', 'net3', 'a', '10.52.0.1/24', '0a:58:0a:34:00:01'),
  ]),
  b: Object.fromEntries([
    rec('tenant/green', 'data0', 'b', '10.51.0.3/24', '0a:58:0a:33:00:03'),
    rec('tenant/blue', 'net1', 'b', '10.50.0.3/24', '0a:58:0a:32:00:03'),
  ]),
  c: Object.fromEntries([rec('tenant/green', 'net1', 'c', '10.51.0.100/24', '02:00:00:00:01:00')]),
};

// ---------------------------------------------------------------------------------------------
// the cluster

/** The ELAN an ODL user made over RESTCONF, as ODL then holds it (with its write-backs). */
async function userElan(env: Env): Promise<Raw | undefined> {
  const odl = await readOdl(env);
  return odl['elan-instance'].find((e) => e['elan-instance-name'] === USER_ELAN);
}

for (const profile of ['sodium', 'aluminium'] as Profile[])
  describe(`extra networks in ODL (${profile})`, () => {
    let env: Env;
    let watcher: Watcher | undefined;
    let registry: Registry;
    const events = new RecordedEvents();
    let userElanBefore: Raw | undefined;

    before(async () => {
      env = await startEnv({ profile });
      const path = elanInstanceKind.entry(profile, USER_ELAN);
      await env.odl.put(
        path,
        entryBody(
          path,
          elanInstanceEntry({ name: USER_ELAN, segmentType: 'vxlan', description: 'made by an ODL user' }),
        ),
      );
      for (const n of [1, 2]) await createNode(env, `n${n}`, `192.168.56.1${n}`, `10.20.${n}.0/24`);
      await createNamespace(env, 'tenant');
      await putNad(env, 'blue', BLUE);
      await putNad(env, 'green', GREEN);
      await putNad(env, 'user', USER);
      registry = createRegistry();
      watcher = await startTestWatcher(env, {}, { events, registry });
      await waitFor(async () => (await userElan(env))?.['elan-tag'] !== undefined, {
        what: "ELAN manager's write-back on the user's ELAN",
      });
      userElanBefore = await userElan(env);
    });
    after(async () => {
      await watcher?.close();
      await env.close();
    });

    it('creates the networks and every attachment, with records the agent reads', async () => {
      await createAttachedPod(env, 'a', 'n1', [
        { name: 'blue', 'default-route': ['10.50.0.1'] },
        { name: 'green', interface: 'data0' },
        { name: 'user' },
      ]);
      await createAttachedPod(env, 'b', 'n2', 'blue,tenant/green@data0');
      await createAttachedPod(env, 'c', 'n1', [
        { name: 'green', ips: ['10.51.0.100/24'], mac: '02:00:00:00:01:00' },
      ]);
      await converged(
        env,
        {
          attachments: E1,
          elans: [BLUE_ELAN, GREEN_ELAN],
          vpns: ['odlcoe-net.tenant.blue'],
        },
        R1,
      );
      const vpn = vpnInstanceKind.parse(profile, (await networksInOdl(env)).vpnEntries[0] ?? {});
      const rds = vpnRouteDistinguishers(vpn);
      const targets = vpn.profile === 'sodium' ? (vpn.ipv4Family?.vpnTargets ?? []) : vpn.vpnTargets;
      assert.equal(rds.length, 1, 'the network VPN has one RD');
      assert.deepEqual(
        targets.map((t) => `${t.value} ${t.type}`),
        [`${rds[0] ?? ''} both`],
        'the network VPN imports and exports only its own RD',
      );
    });

    it('a NAD update (routes added) changes the records, not ODL', async () => {
      await putNad(env, 'green', { ...GREEN, routes: [{ dst: '10.61.0.0/16', gw: '10.51.0.1' }] }, true);
      const route = { dst: '10.61.0.0/16', gw: '10.51.0.1' };
      const withRoute = (records: Raw, ifname: string) => ({
        ...records,
        [ifname]: { ...(records[ifname] as Raw), routes: [route] },
      });
      await converged(
        env,
        {
          attachments: E1,
          elans: [BLUE_ELAN, GREEN_ELAN],
          vpns: ['odlcoe-net.tenant.blue'],
        },
        { a: withRoute(R1.a!, 'data0'), b: withRoute(R1.b!, 'data0'), c: withRoute(R1.c!, 'net1') },
      );
    });

    it('a pod delete removes its attachments and frees its addresses', async () => {
      await deletePod(env, 'tenant', 'b');
      const E2 = { ...E1 };
      delete E2['tenant:b@net1'];
      delete E2['tenant:b@data0'];
      await converged(
        env,
        {
          attachments: E2,
          elans: [BLUE_ELAN, GREEN_ELAN],
          vpns: ['odlcoe-net.tenant.blue'],
        },
        { b: undefined },
      );
      await waitFor(
        async () =>
          !(await env.core.listNamespacedPod({ namespace: 'tenant' })).items.some(
            (p) => p.metadata?.name === 'b',
          ),
        { what: 'pod b gone' },
      );
      await createAttachedPod(env, 'd', 'n2', 'blue');
      await converged(
        env,
        {
          attachments: { ...E2, 'tenant:d@net1': blue(3) },
          elans: [BLUE_ELAN, GREEN_ELAN],
          vpns: ['odlcoe-net.tenant.blue'],
        },
        { d: Object.fromEntries([rec('tenant/blue', 'net1', 'd', '10.50.0.3/24', '0a:58:0a:32:00:03')]) },
      );
    });

    it("a NAD delete removes its ELAN, VPN and attachments; the ODL user's ELAN was never written", async () => {
      await deleteNad(env, 'blue');
      const E3 = { ...E1 };
      for (const k of ['tenant:a@net1', 'tenant:b@net1', 'tenant:b@data0']) delete E3[k];
      await converged(env, { attachments: E3, elans: [GREEN_ELAN], vpns: [] }, {});
      const a = await recordsOf(env, 'a');
      assert.equal((a?.net1 as { error?: { reason: string } }).error?.reason, 'unknown-network');
      await deleteNad(env, 'user');
      await deleteNad(env, 'green');
      await converged(env, { attachments: {}, elans: [], vpns: [] }, {});
      assert.deepEqual(await userElan(env), userElanBefore, "the ODL user's ELAN is as it was");
      assert.equal(
        await metricValue(registry, 'odlcoe_watcher_reconciles_total', { result: 'error' }),
        0,
        'no reconcile failed',
      );
    });
  });

describe('extra networks: refusals (sodium)', () => {
  let env: Env;
  let watcher: Watcher | undefined;
  let registry: Registry;
  const events = new RecordedEvents();

  before(async () => {
    env = await startEnv({ profile: 'sodium' });
    await createNode(env, 'n1', '192.168.56.11', '10.20.1.0/24');
    await createNamespace(env, 'tenant');
    await putNad(env, 'green', GREEN);
    registry = createRegistry();
    watcher = await startTestWatcher(env, {}, { events, registry });
    await createAttachedPod(env, 'holder', 'n1', [{ name: 'green', ips: ['10.51.0.100/24'] }]);
  });
  after(async () => {
    await watcher?.close();
    await env.close();
  });

  const cases: [string, unknown, string, RegExp][] = [
    [
      'taken',
      [{ name: 'green', ips: ['10.51.0.100/24'] }],
      'ip-taken',
      /10\.51\.0\.100 is held by pod tenant\/holder net1/,
    ],
    [
      'outside',
      [{ name: 'green', ips: ['10.99.0.5/24'] }],
      'ip-outside-subnet',
      /10\.99\.0\.5 is outside the network's subnets 10\.51\.0\.0\/24/,
    ],
    [
      'badmac',
      [{ name: 'green', mac: '0g:00:00:00:00:01' }],
      'malformed-mac',
      /mac "0g:00:00:00:00:01" is not a unicast 48-bit MAC/,
    ],
    ['unknown', 'nowhere', 'unknown-network', /no NetworkAttachmentDefinition tenant\/nowhere/],
  ];
  for (const [pod, networks, reason, message] of cases)
    it(`${reason}: its reason in the record, an Event on the pod, nothing in ODL`, async () => {
      await createAttachedPod(env, pod, 'n1', networks);
      const record = (await recordsOf(env, pod))?.net1 as { error?: { reason: string; message: string } };
      assert.equal(record.error?.reason, reason);
      assert.match(record.error?.message ?? '', message);
      await waitFor(
        () =>
          events.events.some(
            (e) =>
              e.object.kind === 'Pod' &&
              e.object.name === pod &&
              e.reason === 'InvalidForOdl' &&
              message.test(e.message),
          ),
        { what: `the Event on pod ${pod}` },
      );
      assert.ok(
        (await metricValue(registry, 'odlcoe_watcher_reconciles_total', {
          kind: 'attachment',
          result: 'deferred',
        })) > 0,
        'refused attachments are counted as deferred',
      );
      const odl = await readOdl(env);
      const names = [...odl.interface, ...odl['elan-interface'], ...odl['vpn-interface']].map((e) =>
        String(e.name),
      );
      assert.ok(
        !names.some((n) => n.startsWith(`tenant:${pod}@`)),
        `no ODL object for pod ${pod}'s refused attachment`,
      );
    });

  it('an invalid NAD: an Event on the NAD, a metric, nothing written', async () => {
    await putNad(env, 'bad', {
      type: 'odlcoe',
      routing: 'vpn',
      subnets: [{ cidr: '10.70.0.0/24', gateway: '10.71.0.1' }],
    });
    await waitFor(
      () =>
        events.events.some(
          (e) =>
            e.object.kind === 'NetworkAttachmentDefinition' &&
            e.object.name === 'bad' &&
            /gateway: 10\.71\.0\.1 is not a host address of 10\.70\.0\.0\/24/.test(e.message),
        ),
      { what: 'the Event on NAD tenant/bad' },
    );
    assert.ok(
      (await metricValue(registry, 'odlcoe_watcher_reconciles_total', {
        kind: 'network',
        result: 'deferred',
      })) > 0,
      'the refused network is counted as deferred',
    );
    const odl = await readOdl(env);
    assert.ok(
      !odl['elan-instance'].some((e) => e['elan-instance-name'] === 'odlcoe-net.tenant.bad'),
      'no ELAN for the invalid NAD',
    );
    assert.ok(
      !odl['vpn-instance'].some((e) => e['vpn-instance-name'] === 'odlcoe-net.tenant.bad'),
      'no VPN for the invalid NAD',
    );
  });

  it("a deleted pod's addresses stay held until ODL no longer holds its interfaces", async () => {
    const green = (pod: string, n: number) =>
      Object.fromEntries([rec('tenant/green', 'net1', pod, `10.51.0.${n}/24`, `0a:58:0a:33:00:0${n}`)]);
    await createAttachedPod(env, 'g1', 'n1', 'green');
    assert.deepEqual(await recordsOf(env, 'g1'), green('g1', 2));
    await waitFor(async () => (await networksInOdl(env)).attachments['tenant:g1@net1'] !== undefined, {
      what: "g1's attachment in ODL",
    });
    // ODL answers 503 for a while: g1's attachment interfaces cannot be deleted yet.
    env.emu.faults.outage(4, '503');
    await deletePod(env, 'tenant', 'g1');
    await createAttachedPod(env, 'g2', 'n1', 'green');
    assert.deepEqual(
      await recordsOf(env, 'g2'),
      green('g2', 3),
      "g1's 10.51.0.2 is not handed out while ODL still holds g1's interfaces",
    );
    await waitFor(async () => (await networksInOdl(env)).attachments['tenant:g1@net1'] === undefined, {
      what: "g1's attachment gone from ODL after the outage",
      timeoutMs: 30_000,
    });
    await createAttachedPod(env, 'g3', 'n1', 'green');
    assert.deepEqual(await recordsOf(env, 'g3'), green('g3', 2), "g1's address is free once ODL let it go");
  });
});
