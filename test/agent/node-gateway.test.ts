/**
 * The node gateway on a simulated node (a network namespace the test makes, its own userspace
 * OVS, the real agent process in it, as in the end-to-end test): the node's host side reaches
 * its pods through the gateway port (ping, and a TCP connect as an HTTP probe makes), and the
 * path comes back after an agent restart, an ovs-vswitchd restart and the port deleted by hand.
 * Every route the gateway adds lives in the node's namespace, never in the test's own.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { run } from '../../src/common/exec.js';
import { KubeClient } from '../../src/k8s/kube-client.js';
import { silentLogger } from '../../src/common/log.js';
import { gatewayPortName } from '../../src/agent/node-gateway.js';
import { NODE_GATEWAY_ID } from '../../src/ovs/node-gateway.js';
import { execInNetns } from '../../src/sandbox/netns.js';
import { CniPodRuntime, type PodSandbox } from '../../src/sandbox/pod-runtime.js';
import { exchangeTraffic } from '../../src/sandbox/pod-traffic.js';
import { dataPathUnavailableReason } from '../../src/sandbox/sandbox.js';
import { startSimulatedNode, type SimulatedNode } from '../../src/sandbox/simulated-node.js';
import { waitFor } from '../helpers/wait.js';
import { NODE_NAME, putNodeNetwork, startAgentSurroundings, type AgentSurroundings } from './testing.js';

const SUBNET = '10.11.1.0/24';
const SERVICES = { cidrs: ['10.96.0.0/12'], clusterCidrs: ['10.11.0.0/16'] };
const PORT = gatewayPortName(NODE_NAME);

const unavailable = await dataPathUnavailableReason();

async function readyz(node: SimulatedNode): Promise<{ status: number; body: string }> {
  const res = await fetch(`${node.agentUrl}/readyz`, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: await res.text() };
}

/** A ping from the node's host side; false (not a throw) when unanswered. */
async function hostPings(node: SimulatedNode, ip: string): Promise<boolean> {
  return execInNetns(node.netns.path, 'ping', ['-c', '1', '-W', '1', '-n', ip], 10_000).then(
    () => true,
    () => false,
  );
}

async function hostRoutes(node: SimulatedNode): Promise<string> {
  return execInNetns(node.netns.path, 'ip', ['-4', 'route', 'show', 'dev', PORT], 10_000).catch(
    (err: unknown) => String(err),
  );
}

describe('the node gateway on a simulated node', { skip: unavailable ?? false }, () => {
  let world: AgentSurroundings;
  let node: SimulatedNode;
  let runtime: CniPodRuntime;
  const pods: PodSandbox[] = [];

  /** Host → every pod: ping, and a TCP connect (HTTP GET) as kubelet's probes make. */
  async function assertHostReachesPods(what: string): Promise<void> {
    assert.equal(pods.length, 2, 'the pods were wired');
    for (const pod of pods) {
      const ip = pod.ips[0] ?? '';
      await waitFor(() => hostPings(node, ip), { timeoutMs: 60_000, what: `${what}: host pings ${ip}` });
      const traffic = await exchangeTraffic(node.netns.path, pod.netns?.path ?? '', ip, { port: 8080 });
      assert.ok(traffic.tcp.ok, `${what}: TCP from the host to ${ip}:8080: ${JSON.stringify(traffic.tcp)}`);
    }
  }

  async function portUuid(): Promise<string> {
    return (await node.ovs.vsctl(['get', 'Interface', PORT, '_uuid'])).trim();
  }

  before(async () => {
    world = await startAgentSurroundings({ profile: 'aluminium' });
    await putNodeNetwork(world.odl.url, SUBNET);
    const password = join(world.dir, 'odl-password');
    node = await startSimulatedNode({
      name: NODE_NAME,
      dir: join(world.dir, 'node'),
      kubeconfigPath: world.kubeconfig,
      kubePort: world.sim.port,
      odlUrl: world.odl.url,
      odlPort: world.odl.port,
      odlUser: 'admin',
      odlPasswordFile: password,
      odlDialect: 'bierman02',
      metricsPort: 0,
      logLevel: 'info',
      services: SERVICES,
      logger: silentLogger(),
    });
    runtime = new CniPodRuntime({ conflistPath: node.conflistPath, label: NODE_NAME });
  });

  after(async () => {
    for (const pod of pods) await runtime.remove(pod).catch(() => undefined);
    await node?.close();
    await world?.close();
  });

  it('makes the OVS internal port with the watcher’s iface-id, MAC and address, and routes', async () => {
    const ids = await node.ovs.vsctl(['get', 'Interface', PORT, 'external_ids']);
    assert.match(ids, /iface-id="?odlcoe-gw\.n1"?/);
    assert.match(ids, /attached-mac="0a:58:0a:0b:01:02"/);
    assert.match(ids, new RegExp(`${NODE_GATEWAY_ID}="?n1"?`));
    assert.equal((await node.ovs.vsctl(['get', 'Interface', PORT, 'type'])).trim(), 'internal');
    const addr = await execInNetns(node.netns.path, 'ip', ['-4', '-o', 'addr', 'show', 'dev', PORT], 10_000);
    assert.match(addr, /inet 10\.11\.1\.2\/32/, 'the gateway holds its address alone: its pods are routed');
    const link = await execInNetns(node.netns.path, 'ip', ['-o', 'link', 'show', 'dev', PORT], 10_000);
    assert.match(link, /mtu 1450/);
    assert.match(link, /0a:58:0a:0b:01:02/);
    // The userspace datapath without TSO: TX checksum offload off, as on pod interfaces.
    const features = await execInNetns(node.netns.path, 'ethtool', ['-k', PORT], 10_000);
    assert.match(features, /^tx-checksumming: off/m);
    const routes = await hostRoutes(node);
    assert.match(routes, /^10\.11\.1\.1 scope link/m);
    assert.match(routes, /^10\.11\.1\.0\/24 via 10\.11\.1\.1/m);
    assert.match(routes, /10\.11\.0\.0\/16 via 10\.11\.1\.1/);
    assert.match(routes, /10\.96\.0\.0\/12 via 10\.11\.1\.1/);
    // Nothing of the pod network is routed in the test's own namespace.
    const own = (await run('ip', ['-4', 'route', 'show'])).stdout.split('\n');
    assert.ok(!own.some((l) => l.startsWith('10.96.0.0/12') || l.includes(PORT)), own.join('\n'));
    const ready = await readyz(node);
    assert.equal(ready.status, 200, ready.body);
    assert.match(ready.body, /node-gateway/);
  });

  it('leaves the gateway address out of host-local’s range', async () => {
    const conflist = JSON.parse(await readFile(node.conflistPath, 'utf8')) as {
      plugins: { ipam: { ranges: { rangeStart?: string }[][] } }[];
    };
    assert.equal(conflist.plugins[0]?.ipam.ranges[0]?.[0]?.rangeStart, '10.11.1.3');
    const kc = new KubeConfig();
    kc.loadFromFile(world.kubeconfig);
    const kube = new KubeClient(kc);
    for (const name of ['web-1', 'web-2']) {
      const pod = await kube.request<{ metadata: { uid: string } }>(
        'POST',
        '/api/v1/namespaces/default/pods',
        {
          body: {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name, namespace: 'default' },
            spec: { nodeName: NODE_NAME, containers: [{ name: 'c', image: 'pause' }] },
          },
        },
      );
      pods.push(await runtime.add({ namespace: 'default', name, uid: pod.metadata.uid }));
    }
    for (const pod of pods) assert.notEqual(pod.ips[0], '10.11.1.2', 'a pod got the gateway address');
    assert.deepEqual(
      pods.map((p) => p.ips[0]),
      ['10.11.1.3', '10.11.1.4'],
    );
  });

  it('the host pings its pods and connects to their TCP ports through the gateway', async () => {
    await assertHostReachesPods('first start');
    // Routed, not on-link: the gateway port is in an ELAN of its own and NetVirt answers ARP
    // for the subnet gateway alone, so the host must never have resolved a pod itself.
    const neighbours = JSON.parse(
      await execInNetns(node.netns.path, 'ip', ['-j', 'neigh', 'show', 'dev', PORT], 10_000),
    ) as { dst: string }[];
    assert.deepEqual(
      neighbours.map((n) => n.dst),
      ['10.11.1.1'],
      `the host resolved only the pods' gateway: ${JSON.stringify(neighbours)}`,
    );
  });

  it('an agent restart keeps the port (no churn) and the path', async () => {
    const before = await portUuid();
    await node.restartAgent();
    assert.equal(await portUuid(), before, 'the port was re-created on restart');
    await assertHostReachesPods('after an agent restart');
  });

  it('comes back after ovs-vswitchd restarts (the device re-created without address or routes)', async () => {
    await node.ovs.stopVswitchd();
    await node.ovs.startVswitchd();
    await waitFor(async () => /10\.96\.0\.0\/12 via/.test(await hostRoutes(node)), {
      timeoutMs: 60_000,
      what: 'the gateway routes back after an OVS restart',
    });
    await assertHostReachesPods('after an OVS restart');
  });

  it('comes back after the port is deleted by hand', async () => {
    await node.ovs.vsctl(['del-port', node.bridge, PORT]);
    await waitFor(async () => (await readyz(node)).body.includes('node-gateway'), {
      timeoutMs: 10_000,
      what: 'readyz answering',
    });
    await waitFor(async () => /10\.96\.0\.0\/12 via/.test(await hostRoutes(node)), {
      timeoutMs: 60_000,
      what: 'the gateway back after its port was deleted',
    });
    await assertHostReachesPods('after the port was deleted by hand');
    assert.equal((await readyz(node)).status, 200);
  });
});
