/**
 * A pod's extra interface (`net1`, ...): what Multus delegates to odlcoe for a
 * NetworkAttachmentDefinition whose config has `"type": "odlcoe"`. The watcher allocates its
 * addresses and MAC cluster-wide and records them in the pod (attachment-record.ts); the agent
 * wires exactly that, never allocating anything itself:
 *  1. wait for the interface's record (`attachment_wait`); a refused allocation fails the ADD
 *     with its reason (code 106) and a Warning Event on the pod, before anything is made, and
 *     so does a timeout (code 11);
 *  2. remove what an older pod of the same name left under the record's iface-id (`replaced_check`);
 *  3. create the veth pair (`veth_create`, host end `hostVethName(containerId, ifName)`, so it
 *     never shares a name with the pod's eth0 port), checksum offload as for eth0;
 *  4. give the pod end the record's MAC, addresses and routes (`pod_config`): the default route
 *     only where the record has one (`default-route`);
 *  5. add the OVS port with iface-id = the record's interface name (`ovs_add_port`, `ovs_attach`);
 *     with `odl.operWait` on, then wait until ODL reports that interface operational
 *     (`odl_oper_wait`, as for eth0: src/agent/odl-oper-wait.ts);
 *  6. on any failure undo every step taken, newest first (`rollback`).
 * DEL and CHECK are the pod's own (pod-attach.ts) without the host-local lease; nothing here
 * ever touches eth0 or another attachment.
 */
import ipaddr from 'ipaddr.js';
import type { EventRecorder } from '../k8s/event-recorder.js';
import type { Logger } from '../common/log.js';
import { errorMessage } from '../common/log.js';
import {
  isAttachmentFailure,
  type AttachmentAllocation,
  type AttachmentFailure,
  type AttachmentRecord,
} from '../netvirt/attachments.js';
import { EXTERNAL_ID } from '../ovs/external-ids.js';
import type { Ovs } from '../ovs/ovs.js';
import type { AttachmentRecordWaiter } from './attachment-record.js';
import type { OdlOperWait } from './odl-oper-wait.js';
import type { PodChecksumOffload } from './checksum-offload.js';
import { CNI_ERROR, CniError } from './cni/error.js';
import type { CniRequest, ExtraInterfaceConfig } from './cni/request.js';
import type { CniResult } from './cni/result.js';
import type { AgentMetrics, StepTimer } from './metrics.js';
import { hostVethName } from './names.js';
import { configurePodInterface, createVethPair, deleteHostVeth, validatePodAddressing } from './netns.js';
import { UndoStack } from './undo.js';

/**
 * The Event reason an extra interface's failure is reported under, on the pod:
 * `ExtraInterface` + the refusal's reason in CamelCase (`ExtraInterfaceIpTaken`,
 * `ExtraInterfaceMalformedMac`, `ExtraInterfaceTimeout`, ...). One reason per cause, since
 * Events of one object and reason are aggregated into one.
 */
export function extraInterfaceEventReason(reason: string): string {
  return `ExtraInterface${reason
    .split('-')
    .map((w) => (w ? `${w[0]?.toUpperCase()}${w.slice(1)}` : ''))
    .join('')}`;
}

/** The pod a request is for, as CNI_ARGS name it (validated). */
export interface PodRef {
  namespace: string;
  name: string;
  uid?: string;
}

export interface ExtraInterfaceOptions {
  ovs: Ovs;
  bridge: string;
  mtu: number;
  records: AttachmentRecordWaiter;
  events?: EventRecorder;
  checksumOffload?: Pick<PodChecksumOffload, 'preparePodInterface'>;
  metrics: AgentMetrics;
  logger: Logger;
  /** Removes ports of an older pod of the same name bound to `ifaceId` (pod-attach.ts). */
  removeReplaced(ifaceId: string, pod: PodRef, containerId: string): Promise<void>;
  /** Deletes the OVS port `portName` if it is `containerId`'s. */
  deleteOwnPort(portName: string, containerId: string): Promise<unknown>;
  /** Holds the ADD until ODL reports the interface operational (absent or `off`: no wait). */
  operWait?: Pick<OdlOperWait, 'mode' | 'wait'>;
}

/**
 * Why `record` is not (yet) what the request's static `ips`/`mac` ask for; undefined when it
 * is, or when the request asks for none. An edited `k8s.v1.cni.cncf.io/networks` the watcher
 * has not caught up with must not wire yesterday's address.
 */
export function staticRequestMismatch(
  record: AttachmentRecord,
  wanted: ExtraInterfaceConfig,
): string | undefined {
  if (isAttachmentFailure(record)) return undefined;
  if (wanted.ips) {
    const have = record.ips.map(bareIp).sort();
    const want = wanted.ips.map(bareIp).sort();
    if (have.join(',') !== want.join(','))
      return `has ips ${record.ips.join(', ')}, the request asks for ${wanted.ips.join(', ')}`;
  }
  if (wanted.mac && wanted.mac.toLowerCase() !== record.mac)
    return `has MAC ${record.mac}, the request asks for ${wanted.mac}`;
  return undefined;
}

/** `10.1.0.5/24` or `10.1.0.5` → `10.1.0.5`, in the one canonical form ipaddr.js prints. */
function bareIp(address: string): string {
  const ip = address.split('/')[0] ?? address;
  return ipaddr.isValid(ip) ? ipaddr.parse(ip).toString() : ip;
}

/** The CNI result's gateway of `ip`: the next hop of the record's default route of its family. */
function gatewayOf(ip: string, routes: AttachmentAllocation['routes']): string | undefined {
  const v6 = ip.includes(':');
  return routes.find((r) => r.gw !== undefined && r.dst === (v6 ? '::/0' : '0.0.0.0/0'))?.gw;
}

export class ExtraInterfaceAttacher {
  constructor(private readonly options: ExtraInterfaceOptions) {}

  async add(req: CniRequest, signal: AbortSignal, pod: PodRef): Promise<CniResult> {
    const { containerId, ifName } = req;
    const wanted = req.config.extra ?? {};
    const { metrics, logger } = this.options;
    const timer = metrics.stepTimer('ADD');
    try {
      const { record, podUid } = await timer
        .time('attachment_wait', () =>
          this.options.records.wait(
            { ...pod, ifName, mismatch: (r) => staticRequestMismatch(r, wanted) },
            signal,
          ),
        )
        .catch((err: unknown) => {
          if (err instanceof CniError && err.code === CNI_ERROR.tryAgainLater && !signal.aborted)
            this.report(pod, 'timeout', err.message);
          throw err;
        });
      const owner = { ...pod, ...(podUid ? { uid: podUid } : {}) };
      if (isAttachmentFailure(record)) throw this.refused(owner, ifName, record);
      this.checkRecord(owner, ifName, record);
      await timer.time('replaced_check', () =>
        this.options.removeReplaced(record.interfaceName, owner, containerId),
      );
      return await this.wire(req, signal, { record, pod: owner, timer });
    } finally {
      logger.debug('ADD steps (ms)', { containerId, ifName, ...timer.steps });
    }
  }

  /** A record the watcher wrote but the kernel would refuse: refused before anything is made. */
  private checkRecord(pod: PodRef, ifName: string, record: AttachmentAllocation): void {
    try {
      validatePodAddressing({
        mac: record.mac,
        addresses: record.ips.map((cidr) => ({ cidr })),
        routes: record.routes,
      });
    } catch (err) {
      const message = `the allocation of ${ifName} (network ${record.network}) is unusable: ${errorMessage(err)}`;
      this.report(pod, 'unusable', message);
      throw new CniError(CNI_ERROR.attachment, message);
    }
  }

  private refused(pod: PodRef, ifName: string, record: AttachmentFailure): CniError {
    const { reason, message } = record.error;
    const text = `${ifName} on network ${record.network} refused: ${reason}: ${message}`;
    this.report(pod, reason, text);
    return new CniError(CNI_ERROR.attachment, text, `reason: ${reason}`);
  }

  /** The Warning Event on the pod and the refusal metric. */
  private report(pod: PodRef, reason: string, message: string): void {
    this.options.metrics.extraInterfaceRefusals.inc({ reason });
    this.options.events?.warning(
      { kind: 'Pod', name: pod.name, namespace: pod.namespace, ...(pod.uid ? { uid: pod.uid } : {}) },
      extraInterfaceEventReason(reason),
      message,
    );
  }

  private async wire(
    req: CniRequest,
    signal: AbortSignal,
    ctx: { record: AttachmentAllocation; pod: PodRef; timer: StepTimer },
  ): Promise<CniResult> {
    const { containerId, ifName, netns } = req;
    const { record, pod, timer } = ctx;
    const { ovs, bridge, logger } = this.options;
    const portName = hostVethName(containerId, ifName);
    const mtu = req.config.mtu ?? this.options.mtu;
    const undo = new UndoStack();
    const step = () => {
      if (signal.aborted)
        throw new CniError(CNI_ERROR.tryAgainLater, `ADD abandoned: ${errorMessage(signal.reason)}`);
    };
    try {
      step();
      const pair = await timer
        .time('veth_create', () =>
          createVethPair({ netns, ifName, hostVeth: portName, mtu, owner: containerId }),
        )
        .catch((err: unknown) => {
          throw new CniError(CNI_ERROR.podInterface, `could not create ${ifName}: ${errorMessage(err)}`);
        });
      undo.push('delete veth', () => deleteHostVeth(portName));
      await this.options.checksumOffload?.preparePodInterface(netns, ifName, timer).catch((err: unknown) => {
        throw new CniError(
          CNI_ERROR.podInterface,
          `could not turn TX checksum offload off on ${ifName}: ${errorMessage(err)}`,
        );
      });
      step();
      await timer
        .time('pod_config', () =>
          configurePodInterface({
            netns,
            ifName,
            mac: record.mac,
            addresses: record.ips.map((cidr) => ({ cidr })),
            routes: record.routes,
          }),
        )
        .catch((err: unknown) => {
          const defaultRoute = record.routes.some((r) => r.dst === '0.0.0.0/0' || r.dst === '::/0');
          throw new CniError(
            CNI_ERROR.podInterface,
            `could not configure ${ifName}: ${errorMessage(err)}`,
            defaultRoute && /File exists/.test(errorMessage(err))
              ? 'the record asks for the default route and the pod has one already: with `default-route`, Multus removes the cluster network’s default route before it calls odlcoe'
              : undefined,
          );
        });
      step();
      const externalIds: Record<string, string> = {
        [EXTERNAL_ID.ifaceId]: record.interfaceName,
        [EXTERNAL_ID.attachedMac]: record.mac,
        [EXTERNAL_ID.ipAddress]: record.ips.map(bareIp).join(','),
        [EXTERNAL_ID.containerId]: containerId,
        [EXTERNAL_ID.network]: record.network,
        [EXTERNAL_ID.pod]: `${pod.namespace}/${pod.name}`,
        [EXTERNAL_ID.ifName]: ifName,
        [EXTERNAL_ID.cniNetwork]: req.config.name,
        ...(pod.uid ? { [EXTERNAL_ID.podUid]: pod.uid } : {}),
      };
      await this.options.metrics
        .count(this.options.metrics.ovsErrors, 'add_port', () =>
          ovs.addPort(bridge, portName, externalIds, {
            onStep: (s, ms) => timer.record(s === 'insert' ? 'ovs_add_port' : 'ovs_attach', ms),
          }),
        )
        .catch((err: unknown) => {
          throw new CniError(
            CNI_ERROR.ovs,
            `could not add OVS port ${portName} to ${bridge}: ${errorMessage(err)}`,
          );
        });
      undo.push('delete OVS port', () => this.options.deleteOwnPort(portName, containerId));
      step();
      const operWait = this.options.operWait;
      if (operWait && operWait.mode !== 'off') {
        // As for eth0: the last step, the port exists so Genius can bind it; wait-and-fail at the
        // timeout (or the request's deadline) undoes the ADD like any other failure.
        await timer.time('odl_oper_wait', () => operWait.wait(record.interfaceName, signal));
        step();
      }
      logger.info('extra interface wired', {
        pod: `${pod.namespace}/${pod.name}`,
        ifName,
        network: record.network,
        port: portName,
        ips: record.ips,
      });
      return {
        interfaces: [
          { name: portName, mac: pair.hostMac },
          { name: ifName, mac: record.mac, sandbox: netns, mtu },
        ],
        ips: record.ips.map((address) => {
          const gateway = gatewayOf(address, record.routes);
          return { address, interface: 1, ...(gateway ? { gateway } : {}) };
        }),
        routes: record.routes.map((r) => ({ ...r })),
        dns: {},
      };
    } catch (err) {
      return undo.rollBack(err, { timer, logger, log: { containerId, ifName } });
    }
  }
}
