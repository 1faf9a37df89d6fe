/**
 * The last step of a trace, on the pod's node: whether the pod interface's TX checksum offload
 * is what the bridge's datapath needs (off on a userspace datapath without userspace TSO; see
 * src/ovs/datapath.ts). Found from the OVS port's host veth: its peer is the pod's interface,
 * in the pod's network namespace.
 */
import { errorMessage } from '../../common/log.js';
import { podOffloadPolicy } from '../../ovs/datapath.js';
import type { Ovs, OvsPort } from '../../ovs/ovs.js';
import { txChecksumOffload, vethPeer, type VethPeer } from '../../ovs/pod-interface.js';
import type { OvsCheckOptions } from './ovs.js';
import type { Trace } from './steps.js';

const STEP = 'checksum-offload';

export async function checkChecksumOffload(
  trace: Trace,
  ovsOpts: OvsCheckOptions,
  found: { ovs: Ovs; port: OvsPort } | undefined,
): Promise<void> {
  const where = ovsOpts.dbSocket ?? null;
  if (!found) {
    const ovsChecked = trace.steps.find((s) => s.step === 'ovs-port')?.status !== 'not-checked';
    trace.add(
      STEP,
      ovsChecked ? 'skipped' : 'not-checked',
      null,
      null,
      ovsChecked ? 'no OVS port' : 'see ovs-port',
    );
    return;
  }
  const { ovs, port } = found;
  let policy;
  try {
    policy = podOffloadPolicy(await ovs.datapath(ovsOpts.bridge));
  } catch (err) {
    trace.add(
      STEP,
      'error',
      `bridge ${ovsOpts.bridge}`,
      where,
      `cannot read the datapath of ${ovsOpts.bridge}: ${errorMessage(err)}`,
    );
    return;
  }
  const object = `pod end of ${port.name}`;
  if (policy.txChecksum === 'leave') {
    trace.add(STEP, 'ok', object, where, `TX checksum offload may stay on: ${policy.why}`);
    return;
  }
  let peer: VethPeer | undefined;
  try {
    peer = await vethPeer(port.name);
  } catch (err) {
    trace.add(
      STEP,
      'not-checked',
      object,
      where,
      `the pod end of ${port.name} could not be found: ${errorMessage(err)}`,
    );
    return;
  }
  if (!peer || peer.where === 'unnamed') {
    const why = !peer
      ? `${port.name} is not a veth in this network namespace (run trace in the host network namespace of the pod's node)`
      : `the pod end of ${port.name} is in a network namespace without a name under /run/netns (id ${peer.netnsId})`;
    trace.add(STEP, 'not-checked', object, where, `TX checksum offload not checked: ${why}`);
    return;
  }
  const label = peer.where === 'netns' ? `${peer.ifName} in network namespace ${peer.netns}` : peer.ifName;
  let state: 'on' | 'off';
  try {
    state = await txChecksumOffload(peer.where === 'netns' ? peer.netnsPath : undefined, peer.ifName);
  } catch (err) {
    trace.add(
      STEP,
      'not-checked',
      label,
      where,
      `TX checksum offload of ${label} not read: ${errorMessage(err)}`,
    );
    return;
  }
  if (state === 'off') {
    trace.add(STEP, 'ok', label, where, `TX checksum offload is off on ${label}, as needed: ${policy.why}`);
    return;
  }
  trace.add(
    STEP,
    'mismatch',
    label,
    where,
    `TX checksum offload is on for ${label}, and ${policy.why}: the pod's TCP and UDP carry bad checksums and are dropped ` +
      `(ping still works). The agent turns it off during ADD; re-create the pod, or run \`ethtool -K ${peer.ifName} tx off\` in its network namespace`,
    ['tx-checksumming'],
  );
}
