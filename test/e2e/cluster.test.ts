/**
 * odlcoe end to end, every component real: the Kubernetes API simulator, the ODL emulator,
 * the watcher, and two simulated nodes (a network namespace each, each with its own
 * userspace Open vSwitch and its own odlcoe-agent process). Pods are created through the
 * Kubernetes API; the kubelet stand-in of their node creates their network namespace, execs
 * the CNI shim with the environment and CNI_ARGS containerd sends, and writes the IP into the
 * pod status. Then the invariants that tie the components together are checked for every pod,
 * against each component's own view (OVSDB, ODL's RESTCONF, the pod's netns, the API), and
 * everything must disappear once the pods are deleted.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { run } from '../../src/common/exec.js';
import { KubeApiError } from '../../src/k8s/kube-client.js';
import { vpnName } from '../../src/netvirt/index.js';
import { gatewayAddress, gatewayName, GATEWAY_VPN, isGatewayName } from '../../src/netvirt/gateway.js';
import { gatewayProblems } from '../../src/sandbox/summary.js';
import { readOdl } from '../../src/cli/snapshot.js';
import { ownerContextOf } from '../../src/netvirt/translate-settings.js';
import { bridgePorts, ping, podPairsWithinNode, type WiredPod } from '../../src/sandbox/datapath.js';
import { exchangeTraffic, trafficWithinNode } from '../../src/sandbox/pod-traffic.js';
import {
  dataPathUnavailableReason,
  ODL_PASSWORD,
  ODL_USER,
  startSandbox,
  type Sandbox,
} from '../../src/sandbox/sandbox.js';
import type { SampleCluster } from '../../src/sandbox/sample-cluster.js';
import { waitFor } from '../helpers/wait.js';

const CLUSTER: SampleCluster = {
  nodes: [
    { name: 'e2e-node-1', internalIp: '192.168.77.11', podCidr: '10.77.1.0/24' },
    { name: 'e2e-node-2', internalIp: '192.168.77.12', podCidr: '10.77.2.0/24' },
  ],
  namespaces: ['shop', 'billing'],
  pods: [],
  // Services on: a gateway per node, routes for every Service IP through the gateways.
  services: {
    cidrs: ['10.97.0.0/16'],
    clusterCidrs: ['10.77.0.0/16'],
    services: [
      { namespace: 'shop', name: 'cart', app: 'cart', clusterIp: '10.97.0.10', externalIps: ['192.0.2.77'] },
      { namespace: 'billing', name: 'ledger', app: 'ledger', clusterIp: 'None' },
    ],
  },
};
/** The Service whose routes are checked on every gateway, and its host routes. */
const SERVICE = { ref: 'shop/cart', prefixes: ['10.97.0.10/32', '192.0.2.77/32'] };

const PODS = [
  { namespace: 'shop', name: 'cart', node: 'e2e-node-1' },
  { namespace: 'shop', name: 'catalog', node: 'e2e-node-1' },
  { namespace: 'billing', name: 'invoices', node: 'e2e-node-1' },
  { namespace: 'shop', name: 'checkout', node: 'e2e-node-2' },
  { namespace: 'billing', name: 'ledger', node: 'e2e-node-2' },
] as const;

const unavailable = await dataPathUnavailableReason();

/** One entry from ODL's config datastore as RESTCONF returns it (bierman02), or undefined on 404. */
async function odlEntry(sandbox: Sandbox, path: string): Promise<Record<string, unknown> | undefined> {
  const res = await fetch(`${sandbox.odl.url}/restconf/config/${path}`, {
    headers: { authorization: `Basic ${Buffer.from(`${ODL_USER}:${ODL_PASSWORD}`).toString('base64')}` },
  });
  if (res.status === 404) return undefined;
  const text = await res.text();
  assert.equal(res.status, 200, `GET ${path}: ${res.status} ${text}`);
  const body = JSON.parse(text) as Record<string, Record<string, unknown>[]>;
  const [list] = Object.values(body);
  assert.ok(Array.isArray(list) && list.length === 1, `GET ${path}: one entry expected`);
  return list[0];
}

const enc = encodeURIComponent;
const vpnModuleOf = (profile: string) => (profile === 'sodium' ? 'l3vpn' : 'l3vpn-instances-interfaces');
/** A vpn-interface's adjacencies as RESTCONF returns them (Sodium augments them in odl-l3vpn). */
const adjacenciesOf = (vpnIf: Record<string, unknown>) =>
  (vpnIf['odl-l3vpn:adjacency'] ?? vpnIf.adjacency ?? []) as Record<string, string | string[] | undefined>[];

const COE_MODULES = ['k8s-node', 'pod', 'service', 'k8s-cluster'];

// Sodium (with the COE models) and Aluminium (none: the node subnets live in the node networks).
for (const profile of ['sodium', 'aluminium'] as const)
  describe(
    `end to end (${profile}): kube API simulator, ODL emulator, watcher, two nodes with real agents`,
    { skip: unavailable ?? false },
    () => {
      let sandbox: Sandbox;

      before(async () => {
        sandbox = await startSandbox({
          profile,
          cluster: CLUSTER,
          simulatedNodes: 2,
          gracePeriodMs: 1_000,
          ports: {
            kube: { port: 0, explicit: false },
            odl: { port: 0, explicit: false },
            watcherMetrics: { port: 0, explicit: false },
            agentMetrics: { port: 0, explicit: false },
          },
        });
      });

      after(async () => {
        await sandbox?.close();
      });

      it('wires every pod created through the API, consistently across Kubernetes, OVS and ODL', async () => {
        for (const p of PODS) {
          await sandbox.kube.request('POST', `/api/v1/namespaces/${p.namespace}/pods`, {
            body: {
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: { name: p.name, namespace: p.namespace },
              spec: { nodeName: p.node, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
            },
          });
        }
        const result = await sandbox.waitForConvergence({ timeoutMs: 60_000 });
        assert.ok(
          result.converged,
          `not converged: ${JSON.stringify(result.progress)} ${result.lastError ?? ''}`,
        );

        assert.equal(sandbox.cliSettings.profile, profile, 'the profile ODL serves');
        const vpnModule = vpnModuleOf(profile);
        for (const p of PODS) {
          const what = `${p.namespace}/${p.name}`;
          const node = CLUSTER.nodes.find((n) => n.name === p.node)!;
          const simulated = sandbox.nodes.find((n) => n.name === p.node)!;
          const pod = await sandbox.kube.request<V1Pod>(
            'GET',
            `/api/v1/namespaces/${p.namespace}/pods/${p.name}`,
          );
          const podIp = pod.status?.podIP;
          assert.ok(podIp, `${what} has an IP in its status`);
          assert.equal(pod.status?.hostIP, node.internalIp, `${what} hostIP`);

          // OVS: exactly one port for the pod, on its own node's bridge.
          const ifaceId = `${p.namespace}:${p.name}`;
          const ports = (await bridgePorts(simulated.ovs.dbSocket, simulated.bridge)).filter(
            (x) => x.externalIds['iface-id'] === ifaceId,
          );
          assert.equal(ports.length, 1, `${what}: one OVS port with iface-id ${ifaceId}`);
          const port = ports[0]!;
          assert.ok(port.ofport > 0, `${what}: port attached`);
          assert.equal(port.externalIds['pod-uid'], pod.metadata?.uid, `${what}: port carries the pod UID`);
          assert.equal(port.externalIds['ip-address'], podIp, `${what}: port ip-address = pod IP`);
          const attachedMac = port.externalIds['attached-mac'];
          assert.ok(attachedMac, `${what}: attached-mac set`);

          // The pod's own interface, seen inside its network namespace.
          const sandboxOfPod = sandbox.kubelets.get(p.node)?.get(p.namespace, p.name);
          assert.ok(sandboxOfPod?.netns, `${what}: the kubelet stand-in has its sandbox`);
          const [link] = JSON.parse(
            (await run('ip', ['-n', sandboxOfPod.netns.name, '-j', 'addr', 'show', 'dev', 'eth0'])).stdout,
          ) as { address: string; addr_info: { local: string }[] }[];
          assert.equal(link?.address, attachedMac, `${what}: eth0 MAC = attached-mac`);
          assert.ok(
            link?.addr_info.some((a) => a.local === podIp),
            `${what}: eth0 holds the pod IP`,
          );

          // ODL: the ietf-interface named like the iface-id, its elan-interface and vpn-interface.
          const iface = await odlEntry(sandbox, `ietf-interfaces:interfaces/interface/${enc(ifaceId)}`);
          assert.ok(iface, `${what}: ietf-interface ${ifaceId} in ODL`);
          assert.equal(iface.name, ifaceId);
          const elanIf = await odlEntry(sandbox, `elan:elan-interfaces/elan-interface/${enc(ifaceId)}`);
          assert.ok(elanIf, `${what}: elan-interface in ODL`);
          const [staticMac] = (elanIf['static-mac-entries'] ?? []) as {
            'mac-address': string;
            'ip-prefix'?: string;
          }[];
          assert.equal(staticMac?.['mac-address'], attachedMac, `${what}: elan static MAC = attached-mac`);
          assert.equal(staticMac?.['ip-prefix'], podIp, `${what}: elan static MAC's IP = pod IP`);
          const vpnIf = await odlEntry(sandbox, `${vpnModule}:vpn-interfaces/vpn-interface/${enc(ifaceId)}`);
          assert.ok(vpnIf, `${what}: vpn-interface in ODL`);
          const adjacencies = adjacenciesOf(vpnIf);
          const primary = adjacencies.find((a) => a.adjacency_type === 'primary-adjacency');
          assert.equal(primary?.ip_address, `${podIp}/32`, `${what}: adjacency IP = pod IP`);
          assert.equal(primary?.mac_address, attachedMac, `${what}: adjacency MAC = attached-mac`);

          // The pod's ELAN (its node × its namespace) and VPN (its namespace) exist.
          const elanName = elanIf['elan-instance-name'] as string;
          assert.equal(
            elanName,
            `${node.internalIp}:${p.namespace}`,
            `${what}: ELAN of its node and namespace`,
          );
          assert.ok(
            await odlEntry(sandbox, `elan:elan-instances/elan-instance/${enc(elanName)}`),
            `${what}: ELAN ${elanName} exists`,
          );
          const [vpnRef] = (vpnIf['vpn-instance-names'] ?? []) as { 'vpn-name': string }[];
          assert.equal(vpnRef?.['vpn-name'], vpnName(p.namespace), `${what}: VPN of its namespace`);
          assert.ok(
            await odlEntry(sandbox, `${vpnModule}:vpn-instances/vpn-instance/${enc(vpnName(p.namespace))}`),
            `${what}: VPN ${vpnName(p.namespace)} exists`,
          );
        }

        // Pods of one node reach each other (through br-int; see src/sandbox/datapath.ts for why
        // pods of different nodes cannot here).
        for (const node of CLUSTER.nodes) {
          const sandboxes = sandbox.kubelets.get(node.name)?.list() ?? [];
          assert.equal(sandboxes.length, PODS.filter((p) => p.node === node.name).length);
          for (const from of sandboxes) {
            for (const to of sandboxes) {
              if (from === to) continue;
              const answer = await ping(from, to.ips[0]!);
              assert.ok(
                answer.ok,
                `${from.pod.name} -> ${to.pod.name} (${to.ips[0]}) on ${node.name}: ${answer.error ?? ''}`,
              );
            }
          }
        }
      });

      it('pods of one node exchange TCP (HTTP GET) and UDP (echo); with TX checksum offload back on, that fails', async () => {
        for (const node of CLUSTER.nodes) {
          const traffic = await trafficWithinNode(node.name, sandbox.kubelets.get(node.name)?.list() ?? []);
          assert.equal(traffic.length, PODS.filter((p) => p.node === node.name).length - 1);
          for (const t of traffic) {
            const what = `${t.from.pod} -> ${t.to.pod} (${t.to.ip}) on ${node.name}`;
            assert.ok(t.tcp.ok, `${what} TCP: ${t.tcp.error ?? ''}`);
            assert.ok(t.udp.ok, `${what} UDP: ${t.udp.error ?? ''}`);
          }
        }
        // The agent's fix undone by hand on one pair: the same exchange must fail (the check can fail).
        const [from, to] = podPairsWithinNode(sandbox.kubelets.get(CLUSTER.nodes[0]!.name)?.list() ?? [])[0]!;
        const tx = (pod: WiredPod, onOff: 'on' | 'off') =>
          run('nsenter', [`--net=${pod.netns.path}`, 'ethtool', '-K', 'eth0', 'tx', onOff]);
        await tx(from, 'on');
        await tx(to, 'on');
        try {
          const broken = await exchangeTraffic(from.netns.path, to.netns.path, to.ip, { timeoutMs: 3_000 });
          assert.equal(broken.tcp.ok, false, `${from.pod} -> ${to.pod}: TCP must fail with offload on`);
          assert.equal(broken.udp.ok, false, `${from.pod} -> ${to.pod}: UDP must fail with offload on`);
        } finally {
          await tx(from, 'off');
          await tx(to, 'off');
        }
      });

      it('Services on: each node’s gateway in ODL, its host side reaches its pods, a Service routed through every gateway', async () => {
        for (const node of CLUSTER.nodes) {
          const name = gatewayName(node.name);
          const address = gatewayAddress(node.podCidr);
          const what = `gateway of ${node.name}`;
          assert.ok(
            await odlEntry(sandbox, `ietf-interfaces:interfaces/interface/${enc(name)}`),
            `${what}: ietf-interface`,
          );
          assert.ok(
            await odlEntry(sandbox, `elan:elan-instances/elan-instance/${enc(name)}`),
            `${what}: ELAN`,
          );
          const elanIf = await odlEntry(sandbox, `elan:elan-interfaces/elan-interface/${enc(name)}`);
          assert.equal(elanIf?.['elan-instance-name'], name, `${what}: elan-interface in its own ELAN`);
          const vpnIf = await odlEntry(
            sandbox,
            `${vpnModuleOf(profile)}:vpn-interfaces/vpn-interface/${enc(name)}`,
          );
          assert.ok(vpnIf, `${what}: vpn-interface`);
          const [vpnRef] = (vpnIf['vpn-instance-names'] ?? []) as { 'vpn-name': string }[];
          assert.equal(vpnRef?.['vpn-name'], GATEWAY_VPN, `${what}: in the gateway VPN`);
          const adjacencies = adjacenciesOf(vpnIf);
          const primary = adjacencies.find((a) => a.adjacency_type === 'primary-adjacency');
          assert.equal(
            primary?.ip_address,
            `${address}/32`,
            `${what}: primary adjacency = the subnet's 2nd address`,
          );
          // The Service's routes: extra routes with this gateway as next hop.
          for (const prefix of SERVICE.prefixes) {
            const route = adjacencies.find((a) => a.ip_address === prefix);
            assert.equal(
              route?.adjacency_type ?? 'extra-route',
              'extra-route',
              `${what}: ${prefix} an extra route`,
            );
            assert.deepEqual(route?.['next-hop-ip-list'], [address], `${what}: ${prefix} via ${address}`);
          }
          // The headless Service gets nothing.
          assert.equal(adjacencies.length, 1 + SERVICE.prefixes.length, `${what}: only the Service's routes`);
        }
        const dump = await sandbox.dump();
        assert.deepEqual(
          gatewayProblems(
            dump,
            CLUSTER.nodes.map((n) => n.name),
            SERVICE,
          ),
          [],
        );
        assert.deepEqual(sandbox.shownService, SERVICE);

        // The host side of each node (its network namespace) reaches its pods through the gateway.
        const dataPath = await sandbox.dataPath();
        for (const node of CLUSTER.nodes) {
          const host = dataPath.find((d) => d.node === node.name)?.host;
          assert.ok(host, `${node.name}: host side looked at`);
          assert.deepEqual(
            host.pings.map((p) => p.to.pod),
            PODS.filter((p) => p.node === node.name)
              .map((p) => `${p.namespace}/${p.name}`)
              .sort(),
            `${node.name}: the host pinged every pod on it`,
          );
          for (const p of host.pings)
            assert.ok(p.ok, `${node.name} host -> ${p.to.pod} ${p.to.ip}: ${p.error ?? ''}`);
          assert.ok(host.http?.tcp.ok, `${node.name} host HTTP GET: ${JSON.stringify(host.http)}`);
          // Pod, Service and node ranges are routed in the node's namespace through its gateway port...
          const simulated = sandbox.nodes.find((n) => n.name === node.name)!;
          const via = (await run('ip', ['-n', simulated.netns.name, 'route', 'get', '10.97.0.10'])).stdout;
          assert.match(
            via,
            /via \S+ dev veth[0-9a-f]{8}/,
            `${node.name}: Service range through the gateway port`,
          );
        }
        // ...and never in this machine's own namespace: nothing can leave through its default route.
        const own = (await run('ip', ['-4', 'route', 'show'])).stdout.split('\n');
        for (const range of [...CLUSTER.services!.cidrs, ...CLUSTER.services!.clusterCidrs])
          assert.ok(
            !own.some((l) => l.startsWith(range)),
            `${range} routed in the host namespace: ${own.join('; ')}`,
          );
      });

      it('leaves no port, lease, pod namespace or ODL object behind once the pods are deleted', async () => {
        const podNamespaces = [...sandbox.kubelets.values()]
          .flatMap((k) => k.list().map((s) => s.netns?.name))
          .filter(Boolean);
        assert.equal(podNamespaces.length, PODS.length);
        // A plain DELETE only marks each pod (Terminating): its kubelet stand-in then stops the
        // sandbox (CNI DEL) and deletes the pod with grace 0, as kubelet does.
        for (const p of PODS) {
          await sandbox.kube.request('DELETE', `/api/v1/namespaces/${p.namespace}/pods/${p.name}`);
        }
        await waitFor(
          async () => {
            for (const p of PODS) {
              const gone = await sandbox.kube
                .request('GET', `/api/v1/namespaces/${p.namespace}/pods/${p.name}`)
                .then(
                  () => false,
                  (err: unknown) => err instanceof KubeApiError && err.status === 404,
                );
              if (!gone) throw new Error(`pod ${p.namespace}/${p.name} still there`);
            }
            return true;
          },
          { timeoutMs: 30_000, what: 'the kubelet stand-ins to finish the pods deletion' },
        );

        for (const node of sandbox.nodes) {
          const ports = await bridgePorts(node.ovs.dbSocket, node.bridge);
          // The node's gateway port stays with the node.
          assert.deepEqual(
            ports.map((p) => p.externalIds['iface-id']),
            [gatewayName(node.name)],
            `${node.name}: no pod's OVS port left`,
          );
          const leases = (await readdir(node.leaseDir).catch(() => [] as string[])).filter((f) =>
            /^\d+\.\d+\.\d+\.\d+$/.test(f),
          );
          assert.deepEqual(leases, [], `${node.name}: no IPAM lease left`);
        }
        const listed = (await run('ip', ['netns', 'list'])).stdout;
        for (const ns of podNamespaces) assert.ok(!listed.includes(ns!), `pod namespace ${ns} removed`);

        // ODL: every pod object at once, the instances after their (1 s) grace period; the nodes stay.
        const owner = ownerContextOf(sandbox.cliSettings);
        await waitFor(
          async () => {
            const { state } = await readOdl(sandbox.restconf, sandbox.cliSettings);
            const left = (
              ['interface', 'elanInterface', 'vpnInterface', 'elanInstance', 'vpnInstance'] as const
            ).flatMap((kind) =>
              state
                .owned(kind, owner)
                .map((e) => state.table.spec(kind).nameOf(e))
                // The node gateways stay with their nodes.
                .filter((name) => !isGatewayName(name) && name !== GATEWAY_VPN)
                .map((name) => `${kind} ${name}`),
            );
            if (left.length > 0) throw new Error(`still in ODL: ${left.join(', ')}`);
            // The nodes' records stay: their networks (every release) and k8s-node entries (Sodium).
            assert.equal(
              state.owned('dhcpNetwork', owner).length,
              CLUSTER.nodes.length,
              'node networks stay',
            );
            if (profile === 'sodium')
              assert.equal(
                state.owned('k8sNode', owner).length,
                CLUSTER.nodes.length,
                'k8s-node entries stay',
              );
            return true;
          },
          { timeoutMs: 30_000, what: 'ODL to hold nothing of the deleted pods' },
        );
        // Nothing of ours at all beyond the nodes: not even foreign-looking leftovers.
        const after = await sandbox.dump();
        assert.deepEqual(after.vpns, []);
        assert.deepEqual(after.elansWithoutVpn, []);
        assert.deepEqual(after.interfacesWithoutElan, []);
        assert.deepEqual(
          after.gateways.map((g) => g.node),
          CLUSTER.nodes.map((n) => n.name),
          'the node gateways stay',
        );
        assert.deepEqual(
          after.nodeNetworks.map((n) => n.subnets).sort(),
          CLUSTER.nodes.map((n) => [n.podCidr]).sort(),
        );
        if (profile === 'aluminium')
          assert.deepEqual(
            Object.keys(sandbox.odl.counters().modules).filter((m) => COE_MODULES.includes(m)),
            [],
            'no request into a COE module',
          );
      });
    },
  );
