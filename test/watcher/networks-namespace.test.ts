/**
 * A network routed through its namespace's VPN (`"routing": "namespace"`) against the emulator
 * (its schema checks validate every body against the profile's YANG) and the Kubernetes
 * simulator, both profiles, as hand-written expected sets: the NAD `lab/red` of a namespace
 * without pods makes that namespace's VPN (`lab`) needed; pods of namespace `tenant` attach to
 * it and their vpn-interfaces join `lab` (adjacency: the attachment's address, gateway: the
 * subnet's); a NAD update (routes added) changes only the records; switching its routing to
 * `vpn` moves the interfaces into the network's own VPN (and `lab`'s VPN goes), back to
 * `namespace` moves them back (and the network's VPN goes), `l2` drops them; a pod delete
 * frees its address; the NAD delete removes the network and, with nothing else needing it,
 * `lab`'s VPN. Then the overlap rule: a namespace-routed NAD overlapping a node's pod subnet,
 * or an older namespace-routed NAD, is refused with an Event and nothing is written, and the
 * newer one becomes valid once the older is gone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRegistry, type Registry } from '../../src/common/metrics.js';
import type { Profile } from '../../src/netvirt/profile.js';
import { putAdjacency } from '../../src/netvirt/vpn.js';
import type { Watcher } from '../../src/watcher/watcher.js';
import {
  createNamespace,
  createNode,
  deletePod,
  metricValue,
  RecordedEvents,
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
  putNad,
  recordsOf,
  type AttachmentView,
  type Raw,
} from './networks-testing.js';

const RED = {
  cniVersion: '1.0.0',
  type: 'odlcoe',
  routing: 'namespace',
  subnets: [{ cidr: '10.53.0.0/24' }],
};
const RED_ELAN = 'odlcoe-net.lab.red elan:segment-type-vxlan external=false';

/** Pod `pod`'s attachment to lab/red at 10.53.0.<n>, in the VPN `vpn` (`-`: none). */
const red = (n: number, vpn: string | undefined): AttachmentView =>
  att(
    'odlcoe-net.lab.red',
    `10.53.0.${n}`,
    `0a:58:0a:35:00:0${n}`,
    vpn === undefined ? '-' : `${vpn} 10.53.0.${n}/32 gw 10.53.0.1`,
  );
const rec = (ifname: string, pod: string, n: number, routes: Raw[] = []): Raw => ({
  [ifname]: {
    network: 'lab/red',
    interfaceName: `tenant:${pod}@${ifname}`,
    ips: [`10.53.0.${n}/24`],
    mac: `0a:58:0a:35:00:0${n}`,
    routes,
  },
});
const DEFAULT_VIA_GW = { dst: '0.0.0.0/0', gw: '10.53.0.1' };
/** ODL while lab/red is routed through `lab`'s VPN and pods of `tenant` exist. */
const routedInLab = (attachments: Record<string, AttachmentView>) => ({
  attachments,
  elans: [RED_ELAN],
  vpns: [],
  otherVpns: ['lab', 'tenant'],
});

for (const profile of ['sodium', 'aluminium'] as Profile[])
  describe(`a network routed through its namespace's VPN (${profile})`, () => {
    let env: Env;
    let watcher: Watcher | undefined;
    let registry: Registry;
    const events = new RecordedEvents();

    before(async () => {
      env = await startEnv({ profile });
      for (const n of [1, 2]) await createNode(env, `n${n}`, `192.168.56.1${n}`, `10.20.${n}.0/24`);
      await createNamespace(env, 'tenant');
      await createNamespace(env, 'lab');
      await putNad(env, 'red', RED, false, 'lab');
      registry = createRegistry();
      watcher = await startTestWatcher(env, {}, { events, registry });
    });
    after(async () => {
      await watcher?.close();
      await env.close();
    });

    it("makes its namespace's VPN without pods there; attachments join that VPN", async () => {
      await converged(env, { attachments: {}, elans: [RED_ELAN], vpns: [], otherVpns: ['lab'] }, {});
      await createAttachedPod(env, 'a', 'n1', [
        { name: 'red', namespace: 'lab', 'default-route': ['10.53.0.1'] },
      ]);
      await createAttachedPod(env, 'b', 'n2', 'lab/red@data0');
      await converged(env, routedInLab({ 'tenant:a@net1': red(2, 'lab'), 'tenant:b@data0': red(3, 'lab') }), {
        a: rec('net1', 'a', 2, [DEFAULT_VIA_GW]),
        b: rec('data0', 'b', 3),
      });
    });

    it('a NAD update (routes added) changes the records, not ODL', async () => {
      const route = { dst: '10.62.0.0/16', gw: '10.53.0.1' };
      await putNad(env, 'red', { ...RED, routes: [route] }, true, 'lab');
      await converged(env, routedInLab({ 'tenant:a@net1': red(2, 'lab'), 'tenant:b@data0': red(3, 'lab') }), {
        a: rec('net1', 'a', 2, [route, DEFAULT_VIA_GW]),
        b: rec('data0', 'b', 3, [route]),
      });
    });

    it('switching routing moves the interfaces between VPNs, and the VPN no one needs goes', async () => {
      const both = (vpn: string | undefined) => ({
        'tenant:a@net1': red(2, vpn),
        'tenant:b@data0': red(3, vpn),
      });
      // vpnmanager adds learnt (MIP) addresses to the interface's entry: learnt in `lab`, they
      // must not ride into the next VPN (networksInOdl: one adjacency per vpn-interface).
      const learnt = putAdjacency(profile, 'tenant:a@net1', {
        ipAddress: '10.53.0.77/32',
        macAddress: '0a:58:0a:35:00:4d',
        adjacencyType: 'learnt-ip',
      });
      if (learnt.op === 'put') await env.odl.put(learnt.path, learnt.body);
      await putNad(env, 'red', { ...RED, routing: 'vpn' }, true, 'lab');
      await converged(
        env,
        {
          attachments: both('odlcoe-net.lab.red'),
          elans: [RED_ELAN],
          vpns: ['odlcoe-net.lab.red'],
          otherVpns: ['tenant'],
        },
        {},
      );
      await putNad(env, 'red', RED, true, 'lab');
      await converged(env, routedInLab(both('lab')), {});
      await putNad(env, 'red', { ...RED, routing: 'l2' }, true, 'lab');
      await converged(
        env,
        { attachments: both(undefined), elans: [RED_ELAN], vpns: [], otherVpns: ['tenant'] },
        {},
      );
      await putNad(env, 'red', RED, true, 'lab');
      await converged(env, routedInLab(both('lab')), {
        a: rec('net1', 'a', 2, [DEFAULT_VIA_GW]),
        b: rec('data0', 'b', 3),
      });
    });

    it('a pod delete removes its attachment and frees its address', async () => {
      await deletePod(env, 'tenant', 'b');
      await converged(env, routedInLab({ 'tenant:a@net1': red(2, 'lab') }), { b: undefined });
      await createAttachedPod(env, 'd', 'n2', 'lab/red');
      await converged(env, routedInLab({ 'tenant:a@net1': red(2, 'lab'), 'tenant:d@net1': red(3, 'lab') }), {
        d: rec('net1', 'd', 3),
      });
    });

    it("a NAD delete removes its ELAN and attachments, and its namespace's VPN no one else needs", async () => {
      await deleteNad(env, 'red', 'lab');
      await converged(env, { attachments: {}, elans: [], vpns: [], otherVpns: ['tenant'] }, {});
      const a = await recordsOf(env, 'a');
      assert.equal((a?.net1 as { error?: { reason: string } }).error?.reason, 'unknown-network');
      assert.equal(
        await metricValue(registry, 'odlcoe_watcher_reconciles_total', { result: 'error' }),
        0,
        'no reconcile failed',
      );
    });

    it('overlapping the pod network or an older namespace-routed network: refused, nothing written', async () => {
      const refusedWith = (name: string, message: RegExp) =>
        waitFor(
          () =>
            events.events.some(
              (e) =>
                e.object.kind === 'NetworkAttachmentDefinition' &&
                e.object.name === name &&
                e.reason === 'InvalidForOdl' &&
                message.test(e.message),
            ),
          { what: `the Event on NAD lab/${name}` },
        );
      await putNad(env, 'clash', { ...RED, subnets: [{ cidr: '10.20.2.0/25' }] }, false, 'lab');
      await refusedWith(
        'clash',
        /10\.20\.2\.0\/25 overlaps node n2's pod subnet 10\.20\.2\.0\/24, routed in the same VPNs/,
      );
      // Name order is the opposite of creation order: the older one wins by its creationTimestamp
      // (whole seconds).
      await putNad(env, 'zz-older', { ...RED, subnets: [{ cidr: '10.54.0.0/24' }] }, false, 'lab');
      await new Promise((r) => setTimeout(r, 1_100));
      await putNad(env, 'aa-newer', { ...RED, subnets: [{ cidr: '10.54.0.128/25' }] }, false, 'lab');
      await refusedWith(
        'aa-newer',
        /10\.54\.0\.128\/25 overlaps network lab\/zz-older's subnet 10\.54\.0\.0\/24/,
      );
      await createAttachedPod(env, 'e', 'n1', 'lab/aa-newer');
      const e = (await recordsOf(env, 'e'))?.net1 as { error?: { reason: string } };
      assert.equal(e.error?.reason, 'invalid-network', 'a pod asking for a refused network is refused');
      const elan = (n: string) => `odlcoe-net.lab.${n} elan:segment-type-vxlan external=false`;
      await converged(
        env,
        { attachments: {}, elans: [elan('zz-older')], vpns: [], otherVpns: ['lab', 'tenant'] },
        {},
      );
      await deleteNad(env, 'zz-older', 'lab');
      await converged(
        env,
        {
          attachments: {
            'tenant:e@net1': att(
              'odlcoe-net.lab.aa-newer',
              '10.54.0.130',
              '0a:58:0a:36:00:82',
              'lab 10.54.0.130/32 gw 10.54.0.129',
            ),
          },
          elans: [elan('aa-newer')],
          vpns: [],
          otherVpns: ['lab', 'tenant'],
        },
        {},
      );
    });
  });
