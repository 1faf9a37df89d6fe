/**
 * `odlcoectl network list|get|create|update|delete` against the Kubernetes simulator: a network
 * created from flags is the NAD the watcher reads, a config the watcher would refuse is refused
 * before anything is written, an update replaces only what it names (and keeps the NAD's other
 * members), the attachments recorded on pods are shown, and a delete is refused while pods are
 * attached unless forced. Human and JSON output.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { NetworkView } from '../../src/cli/networks.js';
import type { TraceReport } from '../../src/cli/trace/index.js';
import { ATTACHMENTS_ANNOTATION } from '../../src/netvirt/attachments.js';
import { NETVIRT_KINDS } from '../../src/netvirt/kinds.js';
import {
  readNetworkDefinition,
  type NetworkAttachmentDefinition,
  type OdlcoeNetwork,
} from '../../src/netvirt/network-config.js';
import { planAttachment } from '../../src/netvirt/plan-network.js';
import { translateNetworkElan } from '../../src/netvirt/translate-network.js';
import { entryBody } from '../../src/netvirt/write.js';
import { startHarness, type CliHarness } from './testing.js';

describe('odlcoectl network', () => {
  let h: CliHarness;
  const json = async (args: string[]) => {
    const res = await h.run([...args, '-o', 'json']);
    return { ...res, body: res.stdout ? (JSON.parse(res.stdout) as unknown) : undefined };
  };
  /** A command that must succeed, with its JSON report. */
  const viewOf = async (args: string[]): Promise<NetworkView> => {
    const res = await json(args);
    assert.equal(res.code, 0, res.stderr);
    return res.body as NetworkView;
  };

  before(async () => {
    h = await startHarness('sodium', 'rfc8040');
    await h.core.createNamespace({ body: { metadata: { name: 'tenant' } } });
  });
  after(async () => h?.close());

  it('creates a routed network from flags, as the NAD the watcher reads', async () => {
    const view = await viewOf([
      'network',
      'create',
      'tenant/blue',
      '--subnet',
      '10.50.0.0/24',
      '--gateway',
      '10.50.0.254',
      '--exclude',
      '10.50.0.0/28',
      '--routing',
      'vpn',
      '--route',
      '10.60.0.0/16,10.50.0.254',
    ]);
    assert.deepEqual(
      {
        state: view.state,
        routing: view.routing,
        elan: view.elan,
        vpn: view.vpn,
        subnets: view.subnets,
        routes: view.routes,
      },
      {
        state: 'valid',
        routing: 'vpn',
        elan: 'odlcoe-net.tenant.blue',
        vpn: 'odlcoe-net.tenant.blue',
        subnets: [{ cidr: '10.50.0.0/24', gateway: '10.50.0.254', exclude: ['10.50.0.0/28'] }],
        routes: [{ dst: '10.60.0.0/16', gw: '10.50.0.254' }],
      },
    );
    const nad = (await h.kube.request(
      'GET',
      '/apis/k8s.cni.cncf.io/v1/namespaces/tenant/network-attachment-definitions/blue',
    )) as {
      spec: { config: string };
    };
    assert.deepEqual(JSON.parse(nad.spec.config), {
      cniVersion: '1.0.0',
      name: 'blue',
      type: 'odlcoe',
      subnets: [{ cidr: '10.50.0.0/24', gateway: '10.50.0.254', exclude: ['10.50.0.0/28'] }],
      routing: 'vpn',
      routes: [{ dst: '10.60.0.0/16', gw: '10.50.0.254' }],
    });
  });

  it('refuses what the watcher would refuse, and writes nothing', async () => {
    const res = await h.run([
      'network',
      'create',
      'tenant/bad',
      '--subnet',
      '10.0.0.0/24',
      '--subnet',
      '10.0.0.0/25',
    ]);
    assert.equal(res.code, 2);
    assert.match(
      res.stderr,
      /refused, nothing written: spec.config\/subnets\[1\]\/cidr: 10.0.0.0\/25 overlaps 10.0.0.0\/24/,
    );
    const gone = await h.run(['network', 'get', 'tenant/bad']);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /no NetworkAttachmentDefinition tenant\/bad/);
    const stray = await h.run([
      'network',
      'create',
      'tenant/x',
      '--subnet',
      '10.1.0.0/24',
      '--gateway',
      '10.2.0.1',
    ]);
    assert.equal(stray.code, 2);
    assert.match(stray.stderr, /--gateway 10.2.0.1 is in none of the given --subnet ranges/);
  });

  it('updates only what it names, and shows the attachments recorded on pods', async () => {
    const view = await viewOf([
      'network',
      'update',
      'tenant/blue',
      '--route',
      '10.61.0.0/16,10.50.0.254',
      '--route',
      '192.0.2.0/24',
    ]);
    assert.deepEqual(view.routes, [{ dst: '10.61.0.0/16', gw: '10.50.0.254' }, { dst: '192.0.2.0/24' }]);
    assert.equal(view.subnets?.[0]?.gateway, '10.50.0.254', 'the subnets are kept');
    await h.core.createNamespacedPod({
      namespace: 'tenant',
      body: {
        metadata: {
          name: 'p1',
          annotations: {
            [ATTACHMENTS_ANNOTATION]: JSON.stringify({
              net1: {
                network: 'tenant/blue',
                interfaceName: 'tenant:p1@net1',
                ips: ['10.50.0.16/24'],
                mac: '0a:58:0a:32:00:10',
                routes: [],
              },
            }),
          },
        },
        spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'pause' }] },
      },
    });
    const list = await h.run(['network', 'list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^NETWORK\s+STATE\s+ROUTING\s+SUBNETS\s+ELAN\s+ATTACHED$/m);
    assert.match(
      list.stdout,
      /^tenant\/blue\s+valid\s+vpn\s+10\.50\.0\.0\/24\s+odlcoe-net\.tenant\.blue\s+1$/m,
    );
    const get = await h.run(['network', 'get', 'tenant/blue']);
    assert.match(get.stdout, /tenant\/p1\s+net1\s+tenant:p1@net1\s+10\.50\.0\.16\/24\s+0a:58:0a:32:00:10/);
  });

  it("creates, lists and shows a network routed through its namespace's VPN", async () => {
    const view = await viewOf([
      'network',
      'create',
      'tenant/red',
      '--subnet',
      '10.53.0.0/24',
      '--routing',
      'namespace',
    ]);
    assert.deepEqual(
      { state: view.state, routing: view.routing, elan: view.elan, vpn: view.vpn, subnets: view.subnets },
      {
        state: 'valid',
        routing: 'namespace',
        elan: 'odlcoe-net.tenant.red',
        vpn: 'tenant',
        subnets: [{ cidr: '10.53.0.0/24', gateway: '10.53.0.1', exclude: [] }],
      },
    );
    const list = await h.run(['network', 'list']);
    assert.match(
      list.stdout,
      /^tenant\/red\s+valid\s+namespace\s+10\.53\.0\.0\/24\s+odlcoe-net\.tenant\.red\s+0$/m,
    );
    const get = await h.run(['network', 'get', 'tenant/red']);
    assert.match(get.stdout, /^ {2}routing {2}namespace, VPN tenant \(namespace tenant's\)$/m);
    const bad = await h.run(['network', 'update', 'tenant/red', '--routing', 'bgp']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /routing: "bgp" is not "l2", "vpn" or "namespace"/);
    const deleted = await h.run(['network', 'delete', 'tenant/red']);
    assert.equal(deleted.code, 0, deleted.stderr);
  });

  it('refuses to delete an attached network unless forced', async () => {
    const refused = await h.run(['network', 'delete', 'tenant/blue']);
    assert.equal(refused.code, 4);
    assert.match(refused.stderr, /1 pod interface\(s\) are attached \(tenant\/p1 net1\)/);
    const forced = await json(['network', 'delete', 'tenant/blue', '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.deepEqual((forced.body as { deleted: string }).deleted, 'tenant/blue');
    const list = await json(['network', 'list']);
    assert.deepEqual(list.body, { networks: [] });
  });

  it('trace shows every extra interface of a pod: its record and its ODL entries against the plan', async () => {
    await viewOf(['network', 'create', 'tenant/green', '--subnet', '10.51.0.0/24']);
    const record = {
      net1: {
        network: 'tenant/green',
        interfaceName: 'tenant:p2@net1',
        ips: ['10.51.0.1/24'],
        mac: '0a:58:0a:33:00:01',
        routes: [],
      },
      net2: {
        network: 'tenant/gone',
        error: {
          reason: 'unknown-network',
          message: 'net2 (tenant/gone): no NetworkAttachmentDefinition tenant/gone',
        },
      },
    };
    const pod = await h.core.createNamespacedPod({
      namespace: 'tenant',
      body: {
        metadata: { name: 'p2', annotations: { [ATTACHMENTS_ANNOTATION]: JSON.stringify(record) } },
        spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'pause' }] },
        status: { phase: 'Running' },
      },
    });
    // ODL holds what the watcher would write for net1 (its plan, built by the kinds' builders).
    const nad = (await h.kube.request(
      'GET',
      '/apis/k8s.cni.cncf.io/v1/namespaces/tenant/network-attachment-definitions/green',
    )) as NetworkAttachmentDefinition;
    const elan = translateNetworkElan(
      (readNetworkDefinition(nad) as { network: OdlcoeNetwork }).network,
      h.settings,
    );
    const plan = planAttachment('attachment/tenant/p2/net1', 'tenant', 'p2', 'net1', {
      settings: h.settings,
      pod: () => pod,
      networkDefinition: () => readNetworkDefinition(nad),
      routeDistinguisher: () => ({ rd: '', reassigned: false }),
    });
    const put = async (kind: string, name: string, desired: unknown) => {
      const spec = NETVIRT_KINDS.spec(kind);
      const path = spec.entry('sodium', name);
      await h.odl.put(path, entryBody(path, spec.build('sodium', desired)));
    };
    await put('elanInstance', 'odlcoe-net.tenant.green', elan);
    for (const e of plan.entries) if (e.want === 'present') await put(e.kind, e.name, e.desired);

    const statuses = async () => {
      const res = await h.run(['trace', 'tenant/p2', '--no-ovs', '-o', 'json']);
      const r = JSON.parse(res.stdout) as TraceReport;
      return {
        code: res.code,
        attachments: r.attachments?.map((a) => ({
          ...a,
          entries: a.entries.map((e) => `${e.kind} ${e.name} ${e.status}`),
        })),
      };
    };
    const ok = await statuses();
    assert.deepEqual(ok.attachments, [
      {
        interface: 'net1',
        network: 'tenant/green',
        record: 'allocated',
        ips: ['10.51.0.1/24'],
        mac: '0a:58:0a:33:00:01',
        entries: [
          'ietf-interface tenant:p2@net1 ok',
          'elan-interface tenant:p2@net1 ok',
          'vpn-interface tenant:p2@net1 ok',
        ],
      },
      {
        interface: 'net2',
        network: 'tenant/gone',
        record: 'refused',
        problem: 'unknown-network: net2 (tenant/gone): no NetworkAttachmentDefinition tenant/gone',
        entries: [
          'ietf-interface tenant:p2@net2 ok',
          'elan-interface tenant:p2@net2 ok',
          'vpn-interface tenant:p2@net2 ok',
        ],
      },
    ]);
    await h.odl.delete(NETVIRT_KINDS.spec('elanInterface').entry('sodium', 'tenant:p2@net1'));
    const missing = await statuses();
    assert.equal(missing.code, 1);
    assert.equal(missing.attachments?.[0]?.entries[1], 'elan-interface tenant:p2@net1 missing');
    const human = await h.run(['trace', 'tenant/p2', '--no-ovs']);
    assert.match(human.stdout, /^Extra interfaces:$/m);
    assert.match(human.stdout, /^ {2}net2 on tenant\/gone: REFUSED \(unknown-network: /m);
    assert.match(human.stdout, /^EXTRA INTERFACE PROBLEM: net1, net2 \(see above\)$/m);
  });
});
