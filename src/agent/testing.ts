/**
 * What the tests of the agent's engine share (not part of the build: tsconfig.build.json
 * excludes testing.ts): a node's dataplane without the agent around it. A private userspace
 * Open vSwitch with a netdev bridge, Debian's host-local over a pod subnet in a temp dir, fresh
 * network namespaces as pods, and requests parsed from the CNI environment exactly as the CNI
 * service parses them. close() removes what the tests made (namespaces, the host ends of their
 * veths, the temp dir) and stops OVS by pid.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { silentLogger } from '../common/log.js';
import { createRegistry } from '../common/metrics.js';
import { Ovs } from '../ovs/ovs.js';
import { createNetns, type TestNetns } from '../../test/helpers/netns.js';
import { startOvsSandbox, type OvsSandbox } from '../../test/helpers/ovs-sandbox.js';
import { parseCniRequest, type CniRequest } from './cni/request.js';
import { HostLocalIpam, HostLocalLeaseStore, type IpamLease } from './ipam.js';
import { AgentMetrics } from './metrics.js';
import { hostVethName } from './names.js';
import { deleteHostVeth } from './netns.js';
import { PodAttacher, type IpamState, type PodAttacherOptions } from './pod-attach.js';
import { parsePodSubnet } from './pod-subnet.js';

export const NETWORK = 'odlcoe';
export const SUBNET = '10.11.1.0/24';

export interface TestPod {
  name: string;
  namespace: string;
  uid: string;
}

export interface AttachFixture {
  sandbox: OvsSandbox;
  ovs: Ovs;
  bridge: string;
  ipamState: IpamState;
  metrics: AgentMetrics;
  /** A PodAttacher on this node; `options` replace the defaults (e.g. `ipamState`, `pods`). */
  attacher(options?: Partial<PodAttacherOptions>): PodAttacher;
  /** A fresh network namespace, removed by close(). */
  netns(): Promise<TestNetns>;
  /** A container id the test owns: its host veth is removed by close(). */
  containerId(): string;
  /** A runtime's request, parsed as the CNI service parses it. */
  request(
    command: 'ADD' | 'DEL' | 'CHECK' | 'GC',
    containerId: string,
    netns: string,
    pod?: TestPod,
    config?: Record<string, unknown>,
  ): CniRequest;
  /** host-local's leases in the data dir. */
  leases(): Promise<IpamLease[]>;
  close(): Promise<void>;
}

let pods = 0;

/** A pod as the informer would know it: a unique name and UID. */
export function testPod(namespace = 'default'): TestPod {
  pods += 1;
  return { name: `pod-${pods}`, namespace, uid: `uid-${randomBytes(6).toString('hex')}` };
}

/** Inside a describe: the fixture, started before the suite's tests and closed after them. */
export function useAttachFixture(): AttachFixture {
  const node = {} as AttachFixture;
  before(async () => {
    Object.assign(node, await startAttachFixture());
  });
  after(async () => {
    await node.close?.();
  });
  return node;
}

export async function startAttachFixture(): Promise<AttachFixture> {
  const closers: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
  };
  try {
    const dir = await mkdtemp(join(tmpdir(), 'odlcoe-attach-'));
    closers.push(() => rm(dir, { recursive: true, force: true }));
    const sandbox = await startOvsSandbox();
    closers.push(() => sandbox.stop());
    const ovs = new Ovs({ dbSocket: sandbox.dbSocket, timeoutSeconds: 10 });
    closers.push(async () => ovs.close());
    const bridge = `brat${randomBytes(3).toString('hex')}`;
    await ovs.ensureBridge(bridge, { datapathType: 'netdev' });
    const subnet = parsePodSubnet(SUBNET);
    const dataDir = join(dir, 'ipam');
    const ipamState: IpamState = {
      subnet,
      ipam: new HostLocalIpam({
        dataDir,
        networkName: NETWORK,
        range: { subnet: subnet.cidr, gateway: subnet.gateway },
        routes: [{ dst: '0.0.0.0/0' }],
      }),
    };
    const metrics = new AgentMetrics(createRegistry('test_'));
    const namespaces: TestNetns[] = [];
    const containers: string[] = [];
    closers.push(async () => {
      for (const ns of namespaces) await ns.remove().catch(() => undefined);
      for (const id of containers) await deleteHostVeth(hostVethName(id, 'eth0')).catch(() => undefined);
    });
    return {
      sandbox,
      ovs,
      bridge,
      ipamState,
      metrics,
      attacher: (options = {}) =>
        new PodAttacher({
          ovs,
          bridge,
          mtu: 1400,
          ipamState: () => ipamState,
          leaseStore: new HostLocalLeaseStore({ dataDir, networkName: NETWORK }),
          metrics,
          logger: silentLogger(),
          ...options,
        }),
      async netns() {
        const ns = await createNetns('odlcoe-attach');
        namespaces.push(ns);
        return ns;
      },
      containerId() {
        const id = randomBytes(32).toString('hex');
        containers.push(id);
        return id;
      },
      request(command, containerId, netns, pod, config = {}) {
        const args = pod
          ? `IgnoreUnknown=1;K8S_POD_NAMESPACE=${pod.namespace};K8S_POD_NAME=${pod.name};K8S_POD_UID=${pod.uid}`
          : '';
        return parseCniRequest(
          {
            CNI_COMMAND: command,
            CNI_CONTAINERID: containerId,
            CNI_NETNS: netns,
            CNI_IFNAME: 'eth0',
            CNI_ARGS: args,
          },
          // odlcoe's own conflist always carries host-local ipam (without it, a config is a
          // NetworkAttachmentDefinition's, for an extra interface).
          JSON.stringify({
            cniVersion: '1.1.0',
            name: NETWORK,
            type: 'odlcoe',
            ipam: { type: 'host-local', ranges: [[{ subnet: subnet.cidr }]] },
            ...config,
          }),
        );
      },
      leases: () => ipamState.ipam.leases(),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
