import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { keptLogger } from '../helpers/kept-logger.js';
import { hostVethName } from '../../src/agent/names.js';
import { linkExists } from '../../src/agent/netns.js';
import {
  ATTACHMENTS_ANNOTATION,
  formatAttachments,
  type AttachmentRecord,
} from '../../src/netvirt/attachments.js';
import { podMac } from '../../src/netvirt/names.js';
import { Ovs } from '../../src/ovs/ovs.js';
import { createNetns, skipUnlessRoot, type TestNetns } from '../helpers/netns.js';
import { waitFor } from '../helpers/wait.js';
import { cniEnv, execShim, leaseIps, startTestNode, type TestNode } from './testing.js';

const skip = skipUnlessRoot();
const AUTH = `Basic ${Buffer.from('admin:admin').toString('base64')}`;

/** The pod's ietf-interface, as the watcher writes it. */
async function putPodInterface(odlUrl: string, name: string): Promise<void> {
  const res = await fetch(`${odlUrl}/rests/data/ietf-interfaces:interfaces/interface=${name}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: AUTH },
    body: JSON.stringify({
      'ietf-interfaces:interface': [
        { name, type: 'iana-if-type:l2vlan', enabled: true, 'odl-interface:l2vlan-mode': 'trunk' },
      ],
    }),
  });
  assert.ok([200, 201, 204].includes(res.status), `PUT interface ${name}: ${res.status}`);
}

/** The watcher's record of a pod's extra interface `net1` (odlcoe.io/attachments). */
async function writeNet1Record(
  node: TestNode,
  pod: string,
  interfaceName: string,
  ip: string,
): Promise<void> {
  const record: AttachmentRecord = {
    network: 'default/blue',
    interfaceName,
    ips: [`${ip}/24`],
    mac: podMac(ip),
    routes: [],
  };
  await node.kube.request('PATCH', `/api/v1/namespaces/default/pods/${pod}`, {
    body: {
      metadata: { annotations: { [ATTACHMENTS_ANNOTATION]: formatAttachments(new Map([['net1', record]])) } },
    },
    contentType: 'application/merge-patch+json',
  });
}

/** The shim called as Multus delegates an extra interface `net1` of an odlcoe NAD. */
function addNet1(node: TestNode, cid: string, ns: TestNetns, pod: string, uid: string) {
  const nad = { cniVersion: '1.0.0', name: 'blue', type: 'odlcoe', socket: node.config.cni.socket };
  return execShim(
    node.shim,
    { ...cniEnv('ADD', cid, ns.path, { name: pod, uid }), CNI_IFNAME: 'net1' },
    JSON.stringify(nad),
  );
}

async function operStatus(odlUrl: string, name: string): Promise<string | undefined> {
  const res = await fetch(
    `${odlUrl}/rests/data/ietf-interfaces:interfaces-state/interface=${name}?content=nonconfig`,
    { headers: { authorization: AUTH } },
  );
  if (res.status !== 200) return undefined;
  const body = (await res.json()) as Record<string, { 'oper-status'?: string }[]>;
  return body['ietf-interfaces:interface']?.[0]?.['oper-status'];
}

describe('CNI ADD waiting for ODL to see the port (odl.operWait)', { skip, timeout: 240_000 }, () => {
  const namespaces: TestNetns[] = [];
  const netns = async () => {
    const ns = await createNetns('odlcoe-oper');
    namespaces.push(ns);
    return ns;
  };
  after(async () => {
    for (const ns of namespaces) await ns.remove().catch(() => undefined);
  });

  describe('with an ODL that publishes the interface 500 ms after it is bound', () => {
    let node: TestNode;
    let ovs: Ovs;
    const log = keptLogger();
    before(async () => {
      node = await startTestNode({
        emulator: { fillParentInterface: true, operDelayMs: 500 },
        logger: log.logger,
      });
      ovs = new Ovs({ dbSocket: node.ovs.dbSocket });
      node.config.odl.operWait = 'wait-and-fail';
      node.config.odl.operWaitTimeoutSeconds = 30;
      await node.startAgent();
    });
    after(async () => {
      ovs?.close();
      await node?.stop();
    });

    it('answers the ADD only after ODL reports the interface up, and times the wait as odl_oper_wait', async () => {
      const ns = await netns();
      const uid = await node.createPod('pod-w');
      const port = hostVethName('cid-w', 'eth0');
      let answered = false;
      const adding = execShim(
        node.shim,
        cniEnv('ADD', 'cid-w', ns.path, { name: 'pod-w', uid }),
        await node.pluginConfig(),
      ).finally(() => {
        answered = true;
      });
      // The port is on the bridge while ODL has not even got the interface's config yet.
      await waitFor(async () => ((await ovs.getPort(port))?.ofport ?? 0) > 0, {
        timeoutMs: 30_000,
        what: 'the pod port to be attached',
      });
      assert.equal(answered, false, 'the ADD waits while ODL has no interface');
      assert.equal(await operStatus(node.odl.url, 'default:pod-w'), undefined);
      await putPodInterface(node.odl.url, 'default:pod-w');
      const out = await adding;
      assert.equal(out.code, 0, out.stdout + out.stderr);
      assert.equal(await operStatus(node.odl.url, 'default:pod-w'), 'up', 'answered after ODL published');
      const steps = log.events.find((e) => e.message === 'ADD steps (ms)' && e.containerId === 'cid-w');
      assert.equal(typeof steps?.odl_oper_wait, 'number', 'the wait is a step of the ADD');
    });

    it('an extra interface (Multus) waits for its own interface, the record’s name', async () => {
      const ns = await netns();
      const uid = await node.createPod('pod-x');
      const name = 'default:pod-x@net1';
      await writeNet1Record(node, 'pod-x', name, '10.60.0.5');
      let answered = false;
      const adding = addNet1(node, 'cid-x', ns, 'pod-x', uid).finally(() => {
        answered = true;
      });
      const port = hostVethName('cid-x', 'net1');
      await waitFor(async () => ((await ovs.getPort(port))?.ofport ?? 0) > 0, {
        timeoutMs: 30_000,
        what: 'the extra interface’s port to be attached',
      });
      assert.equal(answered, false, 'the ADD waits while ODL has no interface');
      await putPodInterface(node.odl.url, name);
      const out = await adding;
      assert.equal(out.code, 0, out.stdout + out.stderr);
      assert.equal(await operStatus(node.odl.url, name), 'up', 'answered after ODL published');
      const steps = log.events.find((e) => e.message === 'ADD steps (ms)' && e.containerId === 'cid-x');
      assert.equal(typeof steps?.odl_oper_wait, 'number', JSON.stringify(steps));
    });
  });

  describe('with an ODL that never publishes the interface', () => {
    let node: TestNode;
    let ovs: Ovs;
    const log = keptLogger();
    before(async () => {
      node = await startTestNode({
        emulator: { fillParentInterface: true, operStatus: false },
        logger: log.logger,
      });
      ovs = new Ovs({ dbSocket: node.ovs.dbSocket });
      node.config.odl.operWaitTimeoutSeconds = 2;
    });
    after(async () => {
      ovs?.close();
      await node?.stop();
    });
    /** An ADD through the shim for a new pod whose ietf-interface ODL has, by an agent in `mode`. */
    const addWith = async (mode: 'wait' | 'wait-and-fail', cid: string, pod: string) => {
      node.config.odl.operWait = mode;
      await node.startAgent();
      const ns = await netns();
      const uid = await node.createPod(pod);
      await putPodInterface(node.odl.url, `default:${pod}`);
      return execShim(node.shim, cniEnv('ADD', cid, ns.path, { name: pod, uid }), await node.pluginConfig());
    };

    it('wait-and-fail: the ADD fails at the timeout with code 105 and leaves nothing', async () => {
      const out = await addWith('wait-and-fail', 'cid-f', 'pod-f');
      assert.equal(out.code, 1, out.stdout + out.stderr);
      const error = out.json as { code: number; msg: string; details?: string };
      assert.equal(error.code, 105);
      assert.match(
        error.msg,
        /^ODL did not report interface default:pod-f operational within 2 s \(no interfaces-state entry\)$/,
      );
      const port = hostVethName('cid-f', 'eth0');
      assert.equal(await ovs.getPort(port), undefined, 'no OVS port');
      assert.equal(await linkExists(port), false, 'no veth');
      assert.deepEqual(await leaseIps(node), [], 'no lease');
      await node.stopAgent();
    });

    it('wait-and-fail: an extra interface ODL never reports fails with code 105 and leaves nothing', async () => {
      node.config.odl.operWait = 'wait-and-fail';
      await node.startAgent();
      const ns = await netns();
      const uid = await node.createPod('pod-xf');
      await writeNet1Record(node, 'pod-xf', 'default:pod-xf@net1', '10.60.0.6');
      const out = await addNet1(node, 'cid-xf', ns, 'pod-xf', uid);
      assert.equal(out.code, 1, out.stdout + out.stderr);
      const error = out.json as { code: number; msg: string };
      assert.equal(error.code, 105, out.stdout);
      assert.match(error.msg, /default:pod-xf@net1/);
      const port = hostVethName('cid-xf', 'net1');
      assert.equal(await ovs.getPort(port), undefined, 'no OVS port');
      assert.equal(await linkExists(port), false, 'no veth');
      await node.stopAgent();
    });

    it('wait: the ADD succeeds at the timeout with a warning', async () => {
      const out = await addWith('wait', 'cid-s', 'pod-s');
      assert.equal(out.code, 0, out.stdout + out.stderr);
      assert.ok(((await ovs.getPort(hostVethName('cid-s', 'eth0')))?.ofport ?? 0) > 0, 'the pod is wired');
      const warning = log.events.find((e) => e.level === 'warn' && e.interface === 'default:pod-s');
      assert.ok(warning, 'a warning names the interface');
      assert.match(warning.message, /did not report the pod interface operational/);
      assert.equal(warning.lastSeen, 'no interfaces-state entry');
    });
  });
});
