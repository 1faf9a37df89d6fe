/**
 * The Open vSwitch side of a trace, on the pod's node: the port whose `iface-id` is the pod's
 * interface name, its name (Genius only matches `veth` + 8 hex digits), and its external_ids
 * against the pod's MAC, IP and UID. Elsewhere (no OVSDB reachable) the steps are not checked.
 * Resolves with the port and the OVSDB connection that found it, when exactly one was found.
 */
import { hostname } from 'node:os';
import { errorMessage } from '../../common/log.js';
import { CommandError } from '../../common/exec.js';
import { Ovs, type OvsPort } from '../../ovs/ovs.js';
import { EXTERNAL_ID, isExtraInterfacePort } from '../../ovs/external-ids.js';
import { kubeletPodUid } from '../../k8s/pod-uid.js';
import { canonicalIp, podMac } from '../../netvirt/names.js';
import { cell } from '../render.js';
import type { PodFacts } from './facts.js';
import type { Trace, TracePort } from './steps.js';

export interface OvsCheckOptions {
  /** Skip the OVS steps (`--no-ovs`). */
  skip: boolean;
  /** OVSDB socket; undefined: the system one (ovs-vsctl's default). */
  dbSocket?: string;
  bridge: string;
}

/** The OVSDB connection a trace reads through: the given socket, a deadline from odlcoectl's timeout. */
export function traceOvs(ovsOpts: OvsCheckOptions, timeoutMs: number): Ovs {
  return new Ovs({
    ...(ovsOpts.dbSocket !== undefined ? { dbSocket: ovsOpts.dbSocket } : {}),
    timeoutSeconds: Math.max(1, Math.min(10, Math.floor(timeoutMs / 1000))),
  });
}

export async function checkOvs(
  trace: Trace,
  facts: PodFacts,
  ovsOpts: OvsCheckOptions,
  ifName: string,
  timeoutMs: number,
): Promise<{ ovs: Ovs; port: OvsPort } | undefined> {
  const where = ovsOpts.dbSocket ?? 'the system OVSDB';
  const nodeName = facts.pod.spec?.nodeName ?? '?';
  if (ovsOpts.skip) {
    trace.add('ovs-port', 'not-checked', null, null, 'skipped (--no-ovs)');
    trace.add('ovs-external-ids', 'not-checked', null, null, 'skipped (--no-ovs)');
    return;
  }
  const ovs = traceOvs(ovsOpts, timeoutMs);
  let ports: OvsPort[];
  try {
    await ovs.ping();
  } catch (err) {
    const why =
      err instanceof CommandError && err.stderr.trim() !== ''
        ? err.stderr.trim().split('\n')[0]
        : errorMessage(err);
    const note = `OVS not checked: ${where} is not reachable here (${why}); run trace on node ${nodeName} to check its OVS port`;
    trace.add('ovs-port', 'not-checked', null, ovsOpts.dbSocket ?? null, note);
    trace.add('ovs-external-ids', 'not-checked', null, ovsOpts.dbSocket ?? null, 'see ovs-port');
    return;
  }
  const object = `OVS port with external_ids:iface-id=${ifName} on ${ovsOpts.bridge}`;
  try {
    ports = await ovs.listPorts(ovsOpts.bridge);
  } catch (err) {
    trace.add(
      'ovs-port',
      /not found/.test(errorMessage(err)) ? 'missing' : 'error',
      `bridge ${ovsOpts.bridge}`,
      ovsOpts.dbSocket ?? null,
      `cannot list the ports of ${ovsOpts.bridge} in ${where}: ${errorMessage(err)}`,
    );
    trace.skipRest('the OVS port could not be looked up');
    return;
  }
  const mine = ports.filter((p) => p.externalIds[EXTERNAL_ID.ifaceId] === ifName);
  trace.ovsPorts = podPorts(ports, mine, `${facts.pod.metadata?.namespace}/${facts.pod.metadata?.name}`);
  const here = hostname();
  if (mine.length === 0) {
    const hint =
      here !== nodeName
        ? ` (this host is ${here}, the pod runs on ${nodeName}: run trace there)`
        : ' (the CNI ADD did not attach it, or it was removed)';
    trace.add(
      'ovs-port',
      'missing',
      object,
      ovsOpts.dbSocket ?? null,
      `no ${object} in ${where}${hint}; Genius cannot bind ietf-interface ${ifName} without it`,
    );
    trace.add('ovs-external-ids', 'skipped', null, null, 'no OVS port');
    return;
  }
  if (mine.length > 1) {
    trace.add(
      'ovs-port',
      'mismatch',
      object,
      ovsOpts.dbSocket ?? null,
      `${mine.length} OVS ports claim iface-id ${ifName}: ${mine.map((p) => p.name).join(', ')}; Genius may bind the wrong one (a stale port of an earlier sandbox?)`,
    );
    trace.add('ovs-external-ids', 'skipped', null, null, 'ambiguous OVS port');
    return;
  }
  const port = mine[0] as OvsPort;
  const portLabel = `OVS port ${port.name}`;
  if (port.error || port.ofport < 0) {
    trace.add(
      'ovs-port',
      'mismatch',
      portLabel,
      ovsOpts.dbSocket ?? null,
      `${portLabel} is not attached: ${port.error ?? `ofport ${port.ofport}`}`,
    );
  } else if (!/^veth[0-9a-f]{8}$/.test(port.name)) {
    trace.add(
      'ovs-port',
      'mismatch',
      portLabel,
      ovsOpts.dbSocket ?? null,
      `${portLabel} is not named veth + 8 hex digits: Genius will prefix it with the switch id and not match ${ifName}`,
    );
  } else {
    trace.add(
      'ovs-port',
      'ok',
      portLabel,
      ovsOpts.dbSocket ?? null,
      `${portLabel} on ${ovsOpts.bridge}, ofport ${port.ofport}, iface-id ${ifName}`,
    );
  }

  const ids = port.externalIds;
  const wrong: string[] = [];
  if (facts.address) {
    const mac = podMac(facts.address);
    if ((ids[EXTERNAL_ID.attachedMac] ?? '').toLowerCase() !== mac)
      wrong.push(`attached-mac is ${ids[EXTERNAL_ID.attachedMac] ?? '(absent)'}, the pod's MAC is ${mac}`);
    const ips = (ids[EXTERNAL_ID.ipAddress] ?? '').split(',').filter(Boolean).map(safeCanonical);
    if (!ips.includes(facts.address))
      wrong.push(
        `ip-address is ${ids[EXTERNAL_ID.ipAddress] ?? '(absent)'}, the pod's IP is ${facts.address}`,
      );
  }
  // The UID kubelet passed to CNI: a static pod's own, which its mirror pod only annotates.
  const uid = kubeletPodUid(facts.pod);
  if (uid && ids[EXTERNAL_ID.podUid] !== uid)
    wrong.push(
      `pod-uid is ${ids[EXTERNAL_ID.podUid] ?? '(absent)'}, the pod's UID is ${uid} (a port of an earlier pod of the same name?)`,
    );
  if (wrong.length > 0)
    trace.add(
      'ovs-external-ids',
      'mismatch',
      portLabel,
      ovsOpts.dbSocket ?? null,
      `${portLabel} external_ids disagree: ${wrong.join('; ')}`,
      wrong.map((w) => w.split(' ')[0] ?? w),
    );
  else
    trace.add(
      'ovs-external-ids',
      'ok',
      portLabel,
      ovsOpts.dbSocket ?? null,
      `iface-id ${ifName}, attached-mac ${cell(ids[EXTERNAL_ID.attachedMac])}, ip-address ${cell(ids[EXTERNAL_ID.ipAddress])}, pod-uid ${cell(ids[EXTERNAL_ID.podUid])}`,
    );
  return { ovs, port };
}

/** The pod's own ports (`mine`) and its extra interfaces' ports, `eth0` first, then by interface name. */
function podPorts(all: readonly OvsPort[], mine: readonly OvsPort[], pod: string): TracePort[] {
  const extra = all.filter((p) => isExtraInterfacePort(p) && p.externalIds[EXTERNAL_ID.pod] === pod);
  const rows = [...mine, ...extra].map((p): TracePort => {
    const ids = p.externalIds;
    return {
      ifName: ids[EXTERNAL_ID.ifName] ?? 'eth0',
      port: p.name,
      ofport: p.ofport,
      error: p.error ?? null,
      ifaceId: ids[EXTERNAL_ID.ifaceId] ?? null,
      network: ids[EXTERNAL_ID.network] ?? null,
      mac: ids[EXTERNAL_ID.attachedMac] ?? null,
      ips: (ids[EXTERNAL_ID.ipAddress] ?? '').split(',').filter(Boolean),
    };
  });
  const rank = (r: TracePort) => (r.network === null ? 0 : 1);
  return rows.sort((a, b) => rank(a) - rank(b) || (a.ifName < b.ifName ? -1 : a.ifName > b.ifName ? 1 : 0));
}

function safeCanonical(ip: string): string {
  try {
    return canonicalIp(ip.trim());
  } catch {
    return ip;
  }
}
