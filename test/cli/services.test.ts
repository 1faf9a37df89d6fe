/**
 * odlcoectl with Services on (`services.cidrs`): `status` shows every node gateway against the
 * watcher's plan, `trace svc/<ns>/<name>` follows a Service's routes through the gateways and
 * names what is missing (exit 1), and the pod trace plans the node network's pool as the
 * watcher does with gateways on (pods from the third address).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { StatusReport } from '../../src/cli/status.js';
import type { ServiceTraceReport } from '../../src/cli/trace/service.js';
import type { TraceReport } from '../../src/cli/trace/index.js';
import { netvirtPaths, type WriteOp } from '../../src/netvirt/index.js';
import {
  allocateRouteDistinguishers,
  namespacesNeedingVpn,
  translateCluster,
} from '../../src/netvirt/index.js';
import { gatewayPortNameOf } from '../../src/ovs/node-gateway.js';
import { Ovs } from '../../src/ovs/ovs.js';
import { desiredWrites } from '../helpers/desired-writes.js';
import { createNetns, skipUnlessRoot } from '../helpers/netns.js';
import { startOvsSandbox } from '../helpers/ovs-sandbox.js';
import { waitFor } from '../helpers/wait.js';
import { apply, createCluster, NODES, RD_ADMINISTRATOR, startHarness, type CliHarness } from './testing.js';

const CIDRS = ['--service-cidrs', '10.96.0.0/16'];

describe('odlcoectl with Services on: status gateways, trace svc/<ns>/<name>', () => {
  let h: CliHarness;

  before(async () => {
    h = await startHarness('aluminium', 'rfc8040');
    const cluster = await createCluster(h);
    await h.core.createNamespacedService({
      namespace: 'default',
      body: {
        metadata: { name: 'web' },
        spec: {
          clusterIP: '10.96.0.10',
          clusterIPs: ['10.96.0.10'],
          externalIPs: ['192.0.2.10'],
          ports: [{ port: 80 }],
        },
      },
    });
    await h.core.createNamespacedService({
      namespace: 'default',
      body: {
        metadata: { name: 'db' },
        spec: { clusterIP: 'None', clusterIPs: ['None'], ports: [{ port: 5432 }] },
      },
    });
    const services = (await h.core.listServiceForAllNamespaces()).items;
    const rds = allocateRouteDistinguishers(namespacesNeedingVpn(cluster.pods), new Map(), {
      administrator: RD_ADMINISTRATOR,
    }).byNamespace;
    const desired = translateCluster(
      {
        ...cluster,
        services,
        routeDistinguishers: rds,
        nodeSubnets: new Map(NODES.map((n) => [n.name, n.subnet])),
      },
      { ...h.settings, rdAdministrator: RD_ADMINISTRATOR, serviceCidrs: ['10.96.0.0/16'] },
    );
    assert.equal(desired.vpnInterfaces.has('odlcoe-gw.node-a'), true, 'the gateways are planned');
    await apply(
      h,
      desiredWrites(h.profile, desired).map((w) => w.op),
    );
  });
  after(async () => h?.close());

  it('status: every gateway complete with its Service routes (exit 0)', async () => {
    const res = await h.run([...CIDRS, 'status', '-o', 'json']);
    const report = JSON.parse(res.stdout) as StatusReport;
    assert.equal(res.code, 0, res.stdout);
    assert.deepEqual(
      report.gateways?.map((g) => [g.node, g.gateway, g.address, g.ok, g.routes]),
      [
        ['node-a', 'odlcoe-gw.node-a', '10.11.1.2', true, { desired: 2, inOdl: 2 }],
        ['node-b', 'odlcoe-gw.node-b', '10.11.2.2', true, { desired: 2, inOdl: 2 }],
      ],
    );
    const human = await h.run([...CIDRS, 'status']);
    assert.match(human.stdout, /Node gateways: 2 complete, 0 not/);
    // Without the Service ranges, status says nothing of gateways.
    const off = JSON.parse((await h.run(['status', '-o', 'json'])).stdout) as StatusReport;
    assert.equal(off.gateways, null);
  });

  it('trace svc: the Service IPs, their routes on every gateway via that gateway (exit 0)', async () => {
    const res = await h.run([...CIDRS, 'trace', 'svc/default/web', '--no-ovs', '-o', 'json']);
    const report = JSON.parse(res.stdout) as ServiceTraceReport;
    assert.equal(res.code, 0, res.stdout);
    assert.equal(report.verdict, 'ok');
    assert.deepEqual(report.routes, ['10.96.0.10/32', '192.0.2.10/32']);
    assert.deepEqual(
      report.gateways.map((g) => [
        g.gateway,
        g.serviceRoutes.map((r) => `${r.prefix} ${r.status} ${r.nextHops.join()}`),
      ]),
      [
        ['odlcoe-gw.node-a', ['10.96.0.10/32 ok 10.11.1.2', '192.0.2.10/32 ok 10.11.1.2']],
        ['odlcoe-gw.node-b', ['10.96.0.10/32 ok 10.11.2.2', '192.0.2.10/32 ok 10.11.2.2']],
      ],
    );
    const human = await h.spawn([...CIDRS, 'trace', 'svc/default/web', '--no-ovs']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /OK: every gateway is complete/);
  });

  it(
    'trace svc on a node: its gateway port on OVS against the gateway’s ODL side',
    { skip: skipUnlessRoot() },
    async () => {
      const netns = await createNetns('odlcoectl-gw');
      const sandbox = await startOvsSandbox({ netns: netns.name });
      const ovs = new Ovs({ dbSocket: sandbox.dbSocket });
      try {
        await ovs.ensureBridge('br-int', { datapathType: 'netdev' });
        const port = gatewayPortNameOf('odlcoe-gw.node-a');
        await ovs.addPort(
          'br-int',
          port,
          {
            'iface-id': 'odlcoe-gw.node-a',
            'attached-mac': '0a:58:0a:0b:01:02',
            'ip-address': '10.11.1.2',
            'odlcoe-node-gateway': 'node-a',
          },
          {},
          { type: 'internal', mac: '0a:58:0a:0b:01:02', mtu: 1450 },
        );
        const traceHere = async () => {
          const res = await h.run([
            ...CIDRS,
            'trace',
            'svc/default/web',
            '--ovs-db',
            sandbox.dbSocket,
            '-o',
            'json',
          ]);
          return { code: res.code, report: JSON.parse(res.stdout) as ServiceTraceReport };
        };
        await waitFor(async () => ((await ovs.getPort(port))?.ofport ?? 0) > 0, {
          what: 'the gateway port attached',
        });
        const good = await traceHere();
        assert.equal(good.code, 0, JSON.stringify(good.report.missing));
        assert.deepEqual(
          good.report.localGateway.ports.map((p) => [p.node, p.port, p.problems]),
          [['node-a', port, []]],
        );
        await sandbox.vsctl(['set', 'Interface', port, 'external_ids:attached-mac="0a:58:00:00:00:01"']);
        const bad = await traceHere();
        assert.equal(bad.code, 1);
        assert.deepEqual(bad.report.missing, [
          `node node-a: gateway port ${port} has external_ids:attached-mac=0a:58:00:00:00:01, not 0a:58:0a:0b:01:02`,
        ]);
        const human = await h.run([...CIDRS, 'trace', 'svc/default/web', '--ovs-db', sandbox.dbSocket]);
        assert.match(
          human.stdout,
          /Gateway ports on this host’s OVS:\n {2}node-a: veth[0-9a-f]{8} ofport \d+: gateway port/,
        );
      } finally {
        ovs.close();
        await sandbox.stop();
        await netns.remove();
      }
    },
  );

  it('trace svc elsewhere: the gateway port is not checked, and the report says why', async () => {
    const res = await h.run([...CIDRS, 'trace', 'svc/default/web', '--no-ovs', '-o', 'json']);
    const report = JSON.parse(res.stdout) as ServiceTraceReport;
    assert.equal(res.code, 0);
    assert.deepEqual(report.localGateway, {
      checked: false,
      note: 'skipped (--no-ovs)',
      ports: [],
      findings: [],
    });
  });

  it('trace svc: a headless Service has no routes by design (exit 0); a missing one is a problem (exit 1)', async () => {
    const headless = await h.run([...CIDRS, 'trace', 'svc/default/db', '--no-ovs', '-o', 'json']);
    assert.equal(headless.code, 0);
    assert.equal((JSON.parse(headless.stdout) as ServiceTraceReport).verdict, 'no-routes');
    const gone = await h.run([...CIDRS, 'trace', 'svc/default/nope', '--no-ovs', '-o', 'json']);
    assert.equal(gone.code, 1);
    assert.match((JSON.parse(gone.stdout) as ServiceTraceReport).missing.join('\n'), /does not exist/);
  });

  it('trace svc without the Service ranges, or a bad reference: usage (exit 2)', async () => {
    assert.equal((await h.run(['trace', 'svc/default/web'])).code, 2);
    assert.equal((await h.run([...CIDRS, 'trace', 'svc/default', '--no-ovs'])).code, 2);
  });

  it('the pod trace plans the node network with the gateway on (no false difference)', async () => {
    const res = await h.run([...CIDRS, 'trace', 'default/web-0', '--no-ovs', '-o', 'json']);
    const report = JSON.parse(res.stdout) as TraceReport;
    assert.equal(res.code, 0, JSON.stringify(report.firstProblem));
    assert.equal(report.steps.find((s) => s.step === 'node-subnet')?.status, 'ok');
  });

  it('a gateway’s vpn-interface gone: trace svc and status name it (exit 1)', async () => {
    const paths = netvirtPaths(h.profile);
    const del: WriteOp = { op: 'delete', path: paths.vpnInterface('odlcoe-gw.node-b') };
    await apply(h, [del]);
    const res = await h.run([...CIDRS, 'trace', 'svc/default/web', '--no-ovs', '-o', 'json']);
    const report = JSON.parse(res.stdout) as ServiceTraceReport;
    assert.equal(res.code, 1);
    assert.equal(report.verdict, 'problem');
    assert.deepEqual(report.missing, [
      'vpn-interface odlcoe-gw.node-b missing',
      'route 10.96.0.10/32 on odlcoe-gw.node-b missing',
      'route 192.0.2.10/32 on odlcoe-gw.node-b missing',
    ]);
    const human = await h.run([...CIDRS, 'trace', 'svc/default/web', '--no-ovs']);
    assert.match(human.stdout, /MISSING OR WRONG:\n {2}vpn-interface odlcoe-gw\.node-b missing/);
    const status = await h.run([...CIDRS, 'status', '-o', 'json']);
    assert.equal(status.code, 1);
    const gw = (JSON.parse(status.stdout) as StatusReport).gateways?.find((g) => g.node === 'node-b');
    assert.equal(gw?.ok, false);
    assert.deepEqual(gw?.routes, { desired: 2, inOdl: 0 });
  });
});
