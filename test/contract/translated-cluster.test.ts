/**
 * Contract: what `translateCluster` makes of a small cluster writes completely into the
 * emulator, in dependency order, with no refusal, for both profiles and both dialects; the
 * parsers read it back unchanged (plus ODL's write-backs); the owned-leaf diff of the desired
 * state against what ODL holds then finds nothing to do; and writing everything again only
 * replaces (level-triggered: a second pass is harmless).
 *
 * Dependency order (what refers to what): k8s-node (nothing) → vpn-instance → elan-instance →
 * ietf-interface → elan-interface (→ elan-instance, interface) → vpn-interface (→ vpn-instance,
 * and owned through the ietf-interface of the same name). ODL does not check these leafrefs,
 * which is exactly why the test does: a dangling name would be accepted and silently do nothing.
 */
import type { V1Namespace, V1Node, V1Pod } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  allocateRouteDistinguishers,
  diffAll,
  diffElanInstance,
  diffElanInterface,
  diffInterface,
  diffK8sNode,
  diffVpnInstance,
  diffVpnInterface,
  interfaceName,
  namespacesNeedingVpn,
  netvirtPaths,
  parseElanInstances,
  parseElanInterfaces,
  parseInterfaces,
  parseK8sNodes,
  parseVpnInstances,
  parseVpnInterfaces,
  translateCluster,
  vpnName,
  type DesiredState,
  type Interface,
  type Profile,
  type TranslateSettings,
} from '../../src/netvirt/index.js';
import type { RestconfClient } from '../../src/restconf/client.js';
import type { DataPath } from '../../src/restconf/path.js';
import { desiredWrites } from '../helpers/desired-writes.js';
import { parseDhcpNetworks } from '../../src/netvirt/dhcp.js';
import { diffNodeNetwork } from '../../src/netvirt/node-network.js';
import { waitFor } from '../helpers/wait.js';
import {
  apply,
  controllerForSuite,
  CLUSTER,
  DIALECTS,
  failedRequests,
  ownerContext,
  PROFILES,
  RD_ADMINISTRATOR,
  ROUTE_TARGET,
} from './fixtures.js';

const LONG_NS = 'team-payments-processing-production-eu-west-1'; // 45 characters: VPN name is shortened

function node(name: string, uid: string, ip: string, podCidr: string): V1Node {
  return {
    metadata: { name, uid },
    spec: { podCIDR: podCidr },
    status: {
      addresses: [
        { type: 'InternalIP', address: ip },
        { type: 'Hostname', address: name },
      ],
    },
  };
}

function namespace(name: string, uid: string): V1Namespace {
  return { metadata: { name, uid }, status: { phase: 'Active' } };
}

function pod(
  ns: string,
  name: string,
  uid: string,
  nodeName: string,
  status: { phase: string; podIP?: string },
  hostNetwork = false,
): V1Pod {
  return {
    metadata: { namespace: ns, name, uid },
    spec: { nodeName, hostNetwork, containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] },
    status: status.podIP ? { ...status, podIPs: [{ ip: status.podIP }] } : status,
  };
}

const NODES = [
  node('worker-1', '11111111-1111-4111-8111-111111111111', '192.168.56.101', '10.11.1.0/24'),
  node('worker-2', '22222222-2222-4222-8222-222222222222', '192.168.56.102', '10.11.2.0/24'),
];
const NAMESPACES = [
  namespace('default', 'aaaaaaaa-0000-4000-8000-000000000001'),
  namespace('kube-system', 'aaaaaaaa-0000-4000-8000-000000000002'),
  namespace(LONG_NS, 'aaaaaaaa-0000-4000-8000-000000000003'),
];
const PODS = [
  pod('default', 'nginx-a', 'bbbbbbbb-0000-4000-8000-000000000001', 'worker-1', {
    phase: 'Running',
    podIP: '10.11.1.5',
  }),
  pod('default', 'nginx-b', 'bbbbbbbb-0000-4000-8000-000000000002', 'worker-2', {
    phase: 'Running',
    podIP: '10.11.2.7',
  }),
  // Scheduled, no IP yet: interface and elan-interface now, vpn-interface later.
  pod('default', 'starting', 'bbbbbbbb-0000-4000-8000-000000000003', 'worker-1', { phase: 'Pending' }),
  pod(LONG_NS, 'api-0', 'bbbbbbbb-0000-4000-8000-000000000004', 'worker-1', {
    phase: 'Running',
    podIP: '10.11.1.9',
  }),
  // Nothing in ODL for these two.
  pod(
    'kube-system',
    'kube-proxy-x',
    'bbbbbbbb-0000-4000-8000-000000000005',
    'worker-1',
    { phase: 'Running', podIP: '192.168.56.101' },
    true,
  ),
  pod('default', 'job-done', 'bbbbbbbb-0000-4000-8000-000000000006', 'worker-2', {
    phase: 'Succeeded',
    podIP: '10.11.2.9',
  }),
];

function desiredState(profile: Profile): DesiredState {
  const settings: TranslateSettings = {
    clusterName: CLUSTER,
    profile,
    routeTarget: ROUTE_TARGET,
    segmentType: 'vxlan',
  };
  const rds = allocateRouteDistinguishers(namespacesNeedingVpn(PODS), new Map(), {
    administrator: RD_ADMINISTRATOR,
  });
  return translateCluster(
    {
      nodes: NODES,
      namespaces: NAMESPACES,
      pods: PODS,
      routeDistinguishers: rds.byNamespace,
      nodeSubnets: new Map(NODES.map((n) => [n.metadata?.name ?? '', n.spec?.podCIDR ?? ''])),
    },
    settings,
  );
}

async function exists(client: RestconfClient, path: DataPath): Promise<boolean> {
  return (await client.get(path)) !== undefined;
}

for (const profile of PROFILES) {
  for (const dialect of DIALECTS) {
    describe(`translated cluster → emulator (${profile}, ${dialect})`, () => {
      const ctl = controllerForSuite(profile, dialect);
      const paths = netvirtPaths(profile);
      const desired = desiredState(profile);

      it('the translation covers the cluster as expected (sanity of the input)', () => {
        assert.deepEqual(desired.deferred, []);
        assert.deepEqual(
          [...desired.interfaces.keys()].sort(),
          [
            interfaceName('default', 'nginx-a'),
            interfaceName('default', 'nginx-b'),
            interfaceName('default', 'starting'),
            interfaceName(LONG_NS, 'api-0'),
          ].sort(),
        );
        assert.equal(desired.vpnInterfaces.size, 3, 'no vpn-interface for the pod without an IP');
        assert.deepEqual([...desired.vpnInstances.keys()].sort(), ['default', vpnName(LONG_NS)].sort());
        assert.ok(vpnName(LONG_NS).length <= 40);
        assert.equal(desired.elanInstances.size, 3, 'default on both nodes, the long namespace on one');
        // k8s-node entries only where ODL has the COE models; node networks on every release.
        assert.equal(desired.k8sNodes.size, profile === 'sodium' ? 2 : 0);
        assert.deepEqual(
          [...desired.nodeNetworks.keys()].sort(),
          NODES.map((n) => `odlcoe-node:${n.metadata?.name ?? ''}`).sort(),
        );
      });

      it('writes completely in dependency order, every reference resolving, with no refusal', async () => {
        const { client } = ctl;
        for (const { kind, op } of desiredWrites(profile, desired)) {
          if (kind === 'elan-interface') {
            const e = desired.elanInterfaces.get(op.path.at(-1)?.keys?.[0] ?? '');
            assert.ok(e);
            assert.ok(await exists(client, paths.elanInstance(e.elanInstanceName)), `ELAN of ${e.name}`);
            assert.ok(await exists(client, paths.interface(e.name)), `interface of ${e.name}`);
          }
          if (kind === 'vpn-interface') {
            const v = desired.vpnInterfaces.get(op.path.at(-1)?.keys?.[0] ?? '');
            assert.ok(v);
            for (const n of v.vpnInstanceNames)
              assert.ok(await exists(client, paths.vpnInstance(n.vpnName)), `VPN ${n.vpnName} of ${v.name}`);
            assert.ok(await exists(client, paths.interface(v.name)), `interface owning ${v.name}`);
          }
          assert.equal(await apply(client, op), 'created', `${kind} ${JSON.stringify(op.path)}`);
        }
        assert.deepEqual(failedRequests(ctl.emulator), {}, 'no request refused');
      });

      it('reads back equal to the desired state (plus write-backs); the diff finds nothing to do', async () => {
        const { client } = ctl;
        const ctx = ownerContext(profile);
        let interfaces: Interface[] = [];
        let elans = parseElanInstances(await client.get(paths.elanInstances()));
        await waitFor(
          async () => {
            interfaces = parseInterfaces(await client.get(paths.interfaces()));
            elans = parseElanInstances(await client.get(paths.elanInstances()));
            return (
              interfaces.every((i) => i.parentInterface !== undefined) &&
              elans.every((e) => e.elanTag !== undefined && e.macTimeout !== undefined)
            );
          },
          { what: 'ODL write-backs on every interface and ELAN' },
        );
        const elanInterfaces = parseElanInterfaces(await client.get(paths.elanInterfaces()));
        const vpns = parseVpnInstances(profile, await client.get(paths.vpnInstances()));
        const vpnInterfaces = parseVpnInterfaces(profile, await client.get(paths.vpnInterfaces()));
        const nodes = profile === 'sodium' ? parseK8sNodes(await client.get(paths.k8sNodesInfo())) : [];
        const networks = parseDhcpNetworks(await client.get(paths.dhcpAllocationPool()));

        const strip = <T extends object, K extends keyof T>(items: T[], ...keys: K[]) =>
          items.map((i) => {
            const copy = { ...i };
            for (const k of keys) delete copy[k];
            return copy;
          });
        const byName = <T>(m: Map<string, T>) => [...m.values()];
        const sortBy = <T>(items: T[], key: (t: T) => string) =>
          [...items].sort((a, b) => key(a).localeCompare(key(b)));
        const name = (x: { name: string }) => x.name;
        assert.deepEqual(
          sortBy(strip(interfaces, 'parentInterface'), name),
          sortBy(byName(desired.interfaces), name),
        );
        assert.deepEqual(
          sortBy(strip(elans, 'elanTag', 'macTimeout'), name),
          sortBy(byName(desired.elanInstances), name),
        );
        assert.equal(new Set(elans.map((e) => e.elanTag)).size, elans.length, 'one elan-tag per ELAN');
        assert.deepEqual(sortBy(elanInterfaces, name), sortBy(byName(desired.elanInterfaces), name));
        assert.deepEqual(sortBy(vpns, name), sortBy(byName(desired.vpnInstances), name));
        assert.deepEqual(sortBy(vpnInterfaces, name), sortBy(byName(desired.vpnInterfaces), name));
        const uid = (n: { uid: string }) => n.uid;
        assert.deepEqual(sortBy(nodes, uid), sortBy(byName(desired.k8sNodes), uid));
        const networkId = (n: { networkId: string }) => n.networkId;
        assert.deepEqual(sortBy(networks, networkId), sortBy(byName(desired.nodeNetworks), networkId));

        const ietfByName = new Map(interfaces.map((i) => [i.name, i]));
        const decisions = [
          ...diffAll(desired.interfaces, interfaces, name, (d, a, o) => diffInterface(d, a, ctx, o)),
          ...diffAll(desired.elanInstances, elans, name, (d, a, o) => diffElanInstance(d, a, ctx, o)),
          ...diffAll(desired.elanInterfaces, elanInterfaces, name, (d, a, o) =>
            diffElanInterface(d, a, ctx, o),
          ),
          ...diffAll(desired.vpnInstances, vpns, name, (d, a, o) => diffVpnInstance(d, a, ctx, o)),
          ...diffAll(desired.vpnInterfaces, vpnInterfaces, name, (d, a, o) =>
            diffVpnInterface(d, a, ietfByName.get(d?.name ?? a?.name ?? ''), ctx, o),
          ),
          ...diffAll(desired.k8sNodes, nodes, uid, (d, a, o) => diffK8sNode(d, a, ctx, o)),
          ...diffAll(desired.nodeNetworks, networks, networkId, (d, a, o) => diffNodeNetwork(d, a, ctx, o)),
        ];
        assert.deepEqual(
          decisions.filter((d) => d.action !== 'none'),
          [],
          'nothing to do after a complete write',
        );
      });

      it('writing everything again only replaces', async () => {
        for (const { kind, op } of desiredWrites(profile, desired))
          assert.equal(await apply(ctl.client, op), 'replaced', `${kind} ${JSON.stringify(op.path)}`);
        assert.deepEqual(failedRequests(ctl.emulator), {}, 'no request refused');
      });
    });
  }
}
