/**
 * Contract: the NetVirt builders and parsers (src/netvirt), the RESTCONF client
 * (src/restconf/client.ts) and the ODL emulator (src/emulator) were written independently from
 * netvirt-model.md. Here they meet, for both model profiles and both RESTCONF dialects:
 *
 * - every builder's body for a realistic object is accepted (201), and a second PUT replaces;
 * - the matching parser reads back exactly what was written, from an entry GET, a container
 *   GET and the client's list read, plus ODL's own write-backs (elan-tag, mac-timeout,
 *   parent-interface) and nothing else;
 * - a read-modify-write (parse → build → PUT) carries those write-backs, and the owned-leaf
 *   diff sees nothing to do in them;
 * - a single adjacency or allocation pool can be written under its parent (prefix keys in the
 *   URL), and a primary-adjacency update leaves ODL's learnt-ip adjacencies alone;
 * - DELETE removes, and a second DELETE is 'absent'.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  diffElanInstance,
  diffElanInterface,
  diffInterface,
  diffK8sNode,
  diffVpnInstance,
  diffVpnInterface,
  netvirtPaths,
  parseCoeEndpoints,
  parseCoePods,
  parseCoeServices,
  parseDhcpNetworks,
  parseElanInstances,
  parseElanInterfaces,
  parseInterfaces,
  parseK8sNodes,
  parseList,
  parseRouterPorts,
  parseVpnInstances,
  parseVpnInterfaces,
  putAdjacency,
  putAllocationPool,
  putCoeEndpoints,
  putCoePod,
  putCoeService,
  putDhcpNetwork,
  putElanInstance,
  putElanInterface,
  putInterface,
  putK8sNode,
  putRouterPorts,
  putVpnInstance,
  putVpnInterface,
  readAdjacency,
  type Adjacency,
  type Decision,
  type NetvirtPaths,
  type Profile,
  type WriteOp,
} from '../../src/netvirt/index.js';
import { diffNodeNetwork, translateNodeNetwork } from '../../src/netvirt/node-network.js';
import { RestconfError, type RestconfClient } from '../../src/restconf/client.js';
import { parentPath, type DataPath } from '../../src/restconf/path.js';
import { waitFor } from '../helpers/wait.js';
import {
  apply,
  controllerForSuite,
  DIALECTS,
  ELAN_NAME,
  failedRequests,
  IF_NAME,
  ownerContext,
  PROFILES,
  sampleCoeEndpoints,
  sampleCoePod,
  sampleCoeService,
  sampleDhcpNetwork,
  sampleElanInstance,
  sampleElanInterface,
  sampleInterface,
  sampleIpv6Pool,
  sampleK8sNode,
  samplePrimaryAdjacency,
  sampleRouterPorts,
  sampleVpnInstance,
  sampleVpnInterface,
} from './fixtures.js';

/** One kind of entry: how it is built, where it lives, how it is parsed and what ODL adds. */
interface KindCase<T> {
  kind: string;
  value(profile: Profile): T;
  build(profile: Profile, value: T): WriteOp;
  /** The top container of the kind (GET of all entries). */
  container(paths: NetvirtPaths): DataPath;
  /** The list under the container, by name. */
  list: string;
  parse(profile: Profile, body: unknown): T[];
  key(value: T): string;
  /** Whether ODL's asynchronous write-backs have landed in the parsed entry. */
  writeBacksDone?(parsed: T): boolean;
  /** ODL's write-backs found in the parsed entry, checked for shape; merged into the expectation. */
  writeBacks?(parsed: T): Partial<T>;
  /** The owned-leaf diff of desired (what was written) against the parsed entry. */
  diff?(profile: Profile, desired: T, actual: T): Decision;
  /** Only in a profile (the COE models: Sodium with COE; no later release has them). */
  profile?: Profile;
}

const kindCase = <T>(c: KindCase<T>): KindCase<unknown> => c as KindCase<unknown>;

const CASES: KindCase<unknown>[] = [
  kindCase({
    kind: 'ietf-interface',
    value: sampleInterface,
    build: putInterface,
    container: (p) => p.interfaces(),
    list: 'interface',
    parse: (_p, body) => parseInterfaces(body),
    key: (v) => v.name,
    writeBacksDone: (v) => v.parentInterface !== undefined,
    writeBacks: (v) => {
      // Genius names the parent after the OVS port it found; the emulator's stands in for it.
      assert.match(v.parentInterface ?? '', /^tap[0-9a-f]{11}$/, 'parent-interface written back by Genius');
      return { parentInterface: v.parentInterface };
    },
    diff: (profile, d, a) => diffInterface(d, a, ownerContext(profile)),
  }),
  kindCase({
    kind: 'elan-instance',
    value: sampleElanInstance,
    build: putElanInstance,
    container: (p) => p.elanInstances(),
    list: 'elan-instance',
    parse: (_p, body) => parseElanInstances(body),
    key: (v) => v.name,
    writeBacksDone: (v) => v.elanTag !== undefined && v.macTimeout !== undefined,
    writeBacks: (v) => {
      assert.ok(
        Number.isInteger(v.elanTag) && (v.elanTag ?? 0) > 0,
        `elan-tag allocated by ELAN manager, got ${v.elanTag}`,
      );
      assert.equal(v.macTimeout, 300, 'mac-timeout 300 merged in by ELAN manager when absent');
      return { elanTag: v.elanTag, macTimeout: v.macTimeout };
    },
    diff: (profile, d, a) => diffElanInstance(d, a, ownerContext(profile)),
  }),
  kindCase({
    kind: 'elan-interface with static MACs',
    value: sampleElanInterface,
    build: putElanInterface,
    container: (p) => p.elanInterfaces(),
    list: 'elan-interface',
    parse: (_p, body) => parseElanInterfaces(body),
    key: (v) => v.name,
    diff: (profile, d, a) => diffElanInterface(d, a, ownerContext(profile)),
  }),
  kindCase({
    kind: 'vpn-instance',
    value: sampleVpnInstance,
    build: putVpnInstance,
    container: (p) => p.vpnInstances(),
    list: 'vpn-instance',
    parse: parseVpnInstances,
    key: (v) => v.name,
    diff: (profile, d, a) => diffVpnInstance(d, a, ownerContext(profile)),
  }),
  kindCase({
    kind: 'vpn-interface with a primary adjacency',
    value: sampleVpnInterface,
    build: putVpnInterface,
    container: (p) => p.vpnInterfaces(),
    list: 'vpn-interface',
    parse: parseVpnInterfaces,
    key: (v) => v.name,
    diff: (profile, d, a) => diffVpnInterface(d, a, sampleInterface(), ownerContext(profile)),
  }),
  kindCase({
    kind: 'dhcp network with an allocation pool',
    value: sampleDhcpNetwork,
    build: putDhcpNetwork,
    container: (p) => p.dhcpAllocationPool(),
    list: 'network',
    parse: (_p, body) => parseDhcpNetworks(body),
    key: (v) => v.networkId,
  }),
  kindCase({
    kind: 'node network (odlcoe-node:<node>, one pool per family)',
    value: () => translateNodeNetwork('worker-1', ['10.11.1.0/24', 'fd00:10:11:1::/64']),
    build: putDhcpNetwork,
    container: (p) => p.dhcpAllocationPool(),
    list: 'network',
    parse: (_p, body) => parseDhcpNetworks(body),
    key: (v) => v.networkId,
    diff: (profile, d, a) => diffNodeNetwork(d, a, ownerContext(profile)),
  }),
  kindCase({
    kind: 'router-ports',
    value: sampleRouterPorts,
    build: putRouterPorts,
    container: (p) => p.floatingIpInfo(),
    list: 'router-ports',
    parse: (_p, body) => parseRouterPorts(body),
    key: (v) => v.routerId,
  }),
  kindCase({
    kind: 'COE pod',
    profile: 'sodium',
    value: sampleCoePod,
    build: putCoePod,
    container: (p) => p.coePods(),
    list: 'pods',
    parse: (_p, body) => parseCoePods(body),
    key: (v) => v.uid,
  }),
  kindCase({
    kind: 'COE service',
    profile: 'sodium',
    value: sampleCoeService,
    build: putCoeService,
    container: (p) => p.coeServices(),
    list: 'services',
    parse: (_p, body) => parseCoeServices(body),
    key: (v) => v.uid,
  }),
  kindCase({
    kind: 'COE endpoints',
    profile: 'sodium',
    value: sampleCoeEndpoints,
    build: putCoeEndpoints,
    container: (p) => p.coeEndpointsInfo(),
    list: 'endpoints',
    parse: (_p, body) => parseCoeEndpoints(body),
    key: (v) => v.uid,
  }),
  kindCase({
    kind: 'k8s-node',
    profile: 'sodium',
    value: sampleK8sNode,
    build: putK8sNode,
    container: (p) => p.k8sNodesInfo(),
    list: 'k8s-nodes',
    parse: (_p, body) => parseK8sNodes(body),
    key: (v) => v.uid,
    diff: (profile, d, a) => diffK8sNode(d, a, ownerContext(profile)),
  }),
];

/** GET `path` and parse it; the answer must hold exactly one entry. */
async function readOne<T>(client: RestconfClient, path: DataPath, parse: (body: unknown) => T[]): Promise<T> {
  const body = await client.get(path);
  assert.notEqual(body, undefined, `GET ${client.dataUrl(path, 'config', 'GET')} found nothing`);
  const entries = parse(body);
  assert.equal(entries.length, 1, `one entry from ${JSON.stringify(body)}`);
  return entries[0] as T;
}

/** Reads the entry until ODL's write-backs have landed (they are asynchronous, as in ODL). */
async function readSettled<T>(
  client: RestconfClient,
  c: KindCase<T>,
  path: DataPath,
  profile: Profile,
): Promise<T> {
  let parsed: T | undefined;
  await waitFor(
    async () => {
      parsed = await readOne(client, path, (b) => c.parse(profile, b));
      return c.writeBacksDone?.(parsed) ?? true;
    },
    { what: `ODL write-backs in ${c.kind}` },
  );
  return parsed as T;
}

for (const profile of PROFILES) {
  for (const dialect of DIALECTS) {
    describe(`NetVirt builders/parsers × RESTCONF client × emulator (${profile}, ${dialect})`, () => {
      const ctl = controllerForSuite(profile, dialect);
      const paths = netvirtPaths(profile);

      for (const c of CASES.filter((c) => c.profile !== undefined && c.profile !== profile)) {
        it(`${c.kind}: ${profile} has no such model, and says so as ODL does (400 unknown-element)`, async () => {
          const op = c.build(profile, c.value(profile));
          assert.equal(op.op, 'put');
          if (op.op !== 'put') return;
          await assert.rejects(
            ctl.client.put(op.path, op.body),
            (err: unknown) =>
              err instanceof RestconfError && err.status === 400 && err.errorTag === 'unknown-element',
          );
        });
      }

      for (const c of CASES.filter((c) => c.profile === undefined || c.profile === profile)) {
        it(`${c.kind}: PUT 201, PUT replaces, GET + parser returns what was written plus ODL's additions`, async () => {
          const { client } = ctl;
          const baseline = ctl.emulator.counters().requests;
          const value = c.value(profile);
          const op = c.build(profile, value);
          assert.equal(op.op, 'put');
          if (op.op !== 'put') return;

          assert.equal(await apply(client, op), 'created', 'first PUT creates (201)');
          assert.equal(await apply(client, op), 'replaced', 'second PUT replaces (200/204)');

          const parsed = await readSettled(client, c, op.path, profile);
          const expected = { ...(value as object), ...(c.writeBacks?.(parsed) ?? {}) };
          assert.deepEqual(parsed, expected, 'entry GET parses back to what was written + write-backs');

          // The same entry among all of its kind: container GET and the client's list read
          // (bierman02 cannot GET a keyless list; the client reads the parent instead).
          const all = c.parse(profile, await client.get(c.container(paths)));
          assert.deepEqual(
            all.filter((e) => c.key(e) === c.key(value)),
            [parsed],
            'container GET parses to the same entry',
          );
          const listPath: DataPath = [...c.container(paths), { name: c.list }];
          const raw = await client.getEntries(listPath);
          assert.deepEqual(
            c.parse(profile, { [c.list]: raw }).filter((e) => c.key(e) === c.key(value)),
            [parsed],
            'client.getEntries on the list parses to the same entry',
          );

          // Read-modify-write: what was read (write-backs included) builds a body ODL accepts,
          // and writing it changes nothing.
          assert.equal(await apply(client, c.build(profile, parsed)), 'replaced');
          assert.deepEqual(
            await readSettled(client, c, op.path, profile),
            parsed,
            'a rewrite of the parsed entry keeps ODL additions unchanged',
          );

          if (c.diff) {
            const decision = c.diff(profile, value, parsed);
            assert.equal(
              decision.action,
              'none',
              `owned-leaf diff of the written entry against ODL's copy: ${JSON.stringify(decision)}`,
            );
          }

          assert.equal(await client.delete(op.path), 'deleted');
          assert.equal(await client.delete(op.path), 'absent', 'DELETE of missing data is success');
          assert.equal(await client.get(op.path), undefined);
          assert.deepEqual(failedRequests(ctl.emulator, baseline), {}, 'no request failed');
        });
      }

      for (const c of CASES.filter((c) => c.profile === undefined || c.profile === profile)) {
        it(`${c.kind}: POST under the parent creates (as the watcher creates), a second POST is 409 data-exists`, async () => {
          const { client } = ctl;
          const baseline = ctl.emulator.counters().requests;
          const value = c.value(profile);
          const op = c.build(profile, value);
          assert.equal(op.op, 'put');
          if (op.op !== 'put') return;
          const parent = parentPath(op.path);
          await client.post(parent, op.body);
          await assert.rejects(
            client.post(parent, op.body),
            (err: unknown) =>
              err instanceof RestconfError && err.status === 409 && err.errorTag === 'data-exists',
            'POST of an existing entry',
          );
          const parsed = await readSettled(client, c, op.path, profile);
          assert.deepEqual(parsed, { ...(value as object), ...(c.writeBacks?.(parsed) ?? {}) });
          assert.equal(await client.delete(op.path), 'deleted');
          assert.deepEqual(failedRequests(ctl.emulator, baseline), { 'POST 409': 1 }, 'nothing else failed');
        });
      }

      it('single adjacency PUT under a vpn-interface; a primary update leaves learnt-ip adjacencies', async () => {
        const { client } = ctl;
        const baseline = ctl.emulator.counters().requests;
        const iface = sampleVpnInterface();
        const primary = samplePrimaryAdjacency();
        assert.equal(await apply(client, putVpnInterface(profile, { ...iface, adjacencies: [] })), 'created');

        const put = putAdjacency(profile, IF_NAME, primary);
        assert.equal(await apply(client, put), 'created', 'adjacency PUT (key with %2F) creates');
        assert.equal(await apply(client, put), 'replaced');
        const readAdj = (body: unknown) => parseList(body, 'vpn-interface', 'adjacency', readAdjacency);
        assert.deepEqual(await readOne<Adjacency>(client, put.path, readAdj), primary);

        // vpnmanager adds learnt (MIP) addresses into the same config entry.
        const learnt: Adjacency = {
          ipAddress: '10.11.1.77/32',
          macAddress: '0a:58:0a:0b:01:4d',
          adjacencyType: 'learnt-ip',
        };
        assert.equal(await apply(client, putAdjacency(profile, IF_NAME, learnt)), 'created');
        const actual = await readOne(client, paths.vpnInterface(IF_NAME), (b) =>
          parseVpnInterfaces(profile, b),
        );
        assert.deepEqual(actual, { ...iface, adjacencies: [primary, learnt] });

        // The adjacency list alone (bierman02 reads it through the vpn-interface entry).
        const keyed = paths.adjacency(IF_NAME, primary.ipAddress);
        const listPath: DataPath = [...keyed.slice(0, -1), { ...keyed[keyed.length - 1]!, keys: [] }];
        const entries = await client.getEntries(listPath);
        assert.deepEqual(
          parseList({ adjacency: entries }, 'vpn-interface', 'adjacency', readAdjacency),
          [primary, learnt],
          'client.getEntries on the adjacency list',
        );

        const ctx = ownerContext(profile);
        assert.equal(diffVpnInterface(iface, actual, sampleInterface(), ctx).action, 'none');

        // The node subnet's gateway moved: only the primary adjacency is rewritten.
        const moved = { ...primary, subnetGatewayIp: '10.11.1.254' };
        const decision = diffVpnInterface({ ...iface, adjacencies: [moved] }, actual, sampleInterface(), ctx);
        assert.equal(decision.action, 'update');
        if (decision.action !== 'update') return;
        assert.deepEqual(
          decision.writes.map((w) => w.op),
          ['put'],
          'one write, to the adjacency entry alone',
        );
        for (const w of decision.writes) assert.equal(await apply(client, w), 'replaced');
        const after = await readOne(client, paths.vpnInterface(IF_NAME), (b) =>
          parseVpnInterfaces(profile, b),
        );
        assert.deepEqual(after, { ...iface, adjacencies: [moved, learnt] }, 'learnt-ip adjacency kept');

        assert.equal(await client.delete(put.path), 'deleted', 'one adjacency deleted by its own path');
        const left = await readOne(client, paths.vpnInterface(IF_NAME), (b) =>
          parseVpnInterfaces(profile, b),
        );
        assert.deepEqual(left.adjacencies, [learnt]);
        assert.equal(await client.delete(paths.vpnInterface(IF_NAME)), 'deleted');
        assert.deepEqual(failedRequests(ctl.emulator, baseline), {}, 'no request failed');
      });

      it('allocation pool PUT under a dhcp network (prefix key in the URL)', async () => {
        const { client } = ctl;
        const baseline = ctl.emulator.counters().requests;
        const network = sampleDhcpNetwork();
        assert.equal(await apply(client, putDhcpNetwork(profile, network)), 'created');
        const pool = sampleIpv6Pool();
        const put = putAllocationPool(profile, ELAN_NAME, pool);
        assert.equal(await apply(client, put), 'created');
        assert.equal(await apply(client, put), 'replaced');
        const read = await readOne(client, paths.dhcpNetwork(ELAN_NAME), parseDhcpNetworks);
        assert.deepEqual(read, { ...network, allocationPools: [...network.allocationPools, pool] });
        assert.equal(await client.delete(put.path), 'deleted');
        const left = await readOne(client, paths.dhcpNetwork(ELAN_NAME), parseDhcpNetworks);
        assert.deepEqual(left, network);
        assert.equal(await client.delete(paths.dhcpNetwork(ELAN_NAME)), 'deleted');
        assert.deepEqual(failedRequests(ctl.emulator, baseline), {}, 'no request failed');
      });
    });
  }
}
