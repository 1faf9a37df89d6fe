/**
 * A DEL served while the agent knows no pod subnet (started without its conflist, ODL not
 * answering yet) must still release the pod's host-local lease, or fail with "try again
 * later" so that the runtime retries it: answering success while the lease stays leaks the
 * address for good. Real host-local, real (userspace) OVS.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CNI_ERROR } from '../../src/agent/cni/error.js';
import { CniService } from '../../src/agent/cni/service.js';
import { HOST_LOCAL_PATH, HostLocalIpam, HostLocalLeaseStore } from '../../src/agent/ipam.js';
import { KeyedLock } from '../../src/agent/keyed-lock.js';
import { AgentMetrics } from '../../src/agent/metrics.js';
import { PodAttacher } from '../../src/agent/pod-attach.js';
import { silentLogger } from '../../src/common/log.js';
import { createRegistry } from '../../src/common/metrics.js';
import { Ovs } from '../../src/ovs/ovs.js';
import { startOvsSandbox, type OvsSandbox } from '../helpers/ovs-sandbox.js';

const NETWORK = 'odlcoe';
const BRIDGE = 'br-int';

describe('DEL while no pod subnet is known', () => {
  let sandbox: OvsSandbox;
  let ovs: Ovs;
  let dir = '';
  let dataDir = '';
  const metrics = new AgentMetrics(createRegistry('test_'));
  const logger = silentLogger();

  before(async () => {
    sandbox = await startOvsSandbox();
    ovs = new Ovs({ dbSocket: sandbox.dbSocket, timeoutSeconds: 10 });
    await ovs.ensureBridge(BRIDGE);
    dir = await mkdtemp(join(tmpdir(), 'odlcoe-del-no-subnet-'));
    dataDir = join(dir, 'networks');
  });
  after(async () => {
    await sandbox?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Leases an address for the container with the subnet the agent knew before it restarted. */
  async function lease(containerId: string, subnet: string, gateway: string): Promise<string> {
    const ipam = new HostLocalIpam({ dataDir, networkName: NETWORK, range: { subnet, gateway } });
    const result = await ipam.add({ containerId, ifName: 'eth0', netns: '/var/run/netns/gone' });
    const address = result.ips[0]?.address ?? '';
    return address.split('/')[0] ?? address;
  }

  function service(attacher: PodAttacher): CniService {
    return new CniService({
      attacher,
      lock: new KeyedLock(),
      metrics,
      logger,
      requestTimeoutMs: 20_000,
      addReadiness: () => 'the pod subnet is not known yet',
      status: () => Promise.resolve(),
    });
  }

  function del(svc: CniService, containerId: string) {
    return svc.handle(
      { CNI_COMMAND: 'DEL', CNI_CONTAINERID: containerId, CNI_IFNAME: 'eth0', CNI_NETNS: '' },
      // As the runtime sends it: the conflist's plugin, with its host-local ipam (a config
      // without ipam is a NetworkAttachmentDefinition's, whose DEL has no lease).
      JSON.stringify({ cniVersion: '1.0.0', name: NETWORK, type: 'odlcoe', ipam: { type: 'host-local' } }),
    );
  }

  const leasedIps = async (): Promise<string[]> =>
    (await new HostLocalLeaseStore({ dataDir, networkName: NETWORK }).leases()).map((l) => l.ip);

  it('releases the lease by its owner through host-local', async () => {
    const ip4 = await lease('c0ffee01', '10.11.1.0/24', '10.11.1.1');
    const ip6 = await lease('c0ffee01', 'fd00:11:1::/64', 'fd00:11:1::1');
    const other = await lease('c0ffee02', '10.11.1.0/24', '10.11.1.1');
    assert.deepEqual(await leasedIps(), [ip4, other, ip6]);
    const attacher = new PodAttacher({
      ovs,
      bridge: BRIDGE,
      mtu: 1450,
      ipamState: () => undefined,
      leaseStore: new HostLocalLeaseStore({ pluginPath: HOST_LOCAL_PATH, dataDir, networkName: NETWORK }),
      metrics,
      logger,
    });
    const svc = service(attacher);
    assert.deepEqual(await del(svc, 'c0ffee01'), {});
    // Both families of the deleted container are gone; the other container keeps its address.
    assert.deepEqual(await leasedIps(), [other]);
    assert.ok((await readdir(join(dataDir, NETWORK))).includes(other));
    // A repeated DEL (nothing leased any more) still succeeds.
    assert.deepEqual(await del(svc, 'c0ffee01'), {});
    assert.deepEqual(await del(svc, 'c0ffee02'), {});
    assert.deepEqual(await leasedIps(), []);
  });

  it('answers "try again later" rather than success when it cannot release', async () => {
    const ip = await lease('c0ffee03', '10.11.1.0/24', '10.11.1.1');
    const attacher = new PodAttacher({
      ovs,
      bridge: BRIDGE,
      mtu: 1450,
      ipamState: () => undefined,
      metrics,
      logger,
    });
    const answer = await del(service(attacher), 'c0ffee03');
    assert.equal('error' in answer ? answer.error.code : undefined, CNI_ERROR.tryAgainLater);
    assert.deepEqual(await leasedIps(), [ip]);
  });
});
