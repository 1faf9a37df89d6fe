/**
 * The CNI ADD/DEL engine: what a pod's attachment to the node's bridge is made of, and how it
 * is made and unmade. src/agent/cni/ speaks the protocol (parses the request once, serialises
 * per sandbox, bounds it with a deadline) and calls this; the start-up reconcile and GC use
 * it to remove what no longer belongs.
 *
 * ADD, top-down (`add` → `wire`), each step timed under its metric name:
 *  1. validate the pod (namespace/name from CNI_ARGS) and the node's pod subnet;
 *  2. refuse a request for an older pod of the same name; remove what an older pod of the
 *     same name left on the bridge (`replaced_check`);
 *  3. lease an address from host-local (`ipam`) and create the veth pair (`veth_create`), at
 *     the same time; on a userspace datapath, turn the pod end's TX checksum offload off as
 *     soon as the pair exists (`checksum_offload`, src/agent/checksum-offload.ts);
 *  4. give the pod end its MAC, addresses and routes (`pod_config`): the MAC and the gateway
 *     follow the watcher's rules (src/netvirt/names.ts podMac, gatewayIp), see podAddressing;
 *  5. add the OVS port with the external_ids Genius binds it by (`ovs_add_port`) and wait
 *     until ovs-vswitchd attached it (`ovs_attach`);
 *  6. with `odl.operWait` on, wait until ODL reports the pod's interface operational
 *     (`odl_oper_wait`, src/agent/odl-oper-wait.ts);
 *  7. on any failure, undo every step this request took, newest first (`rollback`).
 * DEL removes the OVS port (only when it is this container's), then the veth and the lease.
 * CHECK verifies all of it; GC removes every attachment the runtime no longer lists.
 */
import type { Logger } from '../common/log.js';
import { errorMessage } from '../common/log.js';
import { NameError } from '../common/name-error.js';
import { validatePodRef } from '../k8s/names.js';
import { podMac } from '../netvirt/names.js';
import type { EventRecorder } from '../k8s/event-recorder.js';
import { EXTERNAL_ID, isExtraInterfacePort, isPodPort, podOfPort } from '../ovs/external-ids.js';
import type { Ovs, OvsPort } from '../ovs/ovs.js';
import type { AttachmentRecordWaiter } from './attachment-record.js';
import type { PodChecksumOffload } from './checksum-offload.js';
import { ExtraInterfaceAttacher, type PodRef } from './extra-interface.js';
import type { OdlOperWait } from './odl-oper-wait.js';
import { CNI_ERROR, CniError } from './cni/error.js';
import type { CniRequest } from './cni/request.js';
import type { CniResult } from './cni/result.js';
import type { HostLocalIpam, HostLocalLeaseStore, IpamResult } from './ipam.js';
import type { AgentMetrics, StepTimer } from './metrics.js';
import { podIfaceId, type IfaceNaming } from './iface-id.js';
import { hostVethName } from './names.js';
import {
  configurePodInterface,
  createVethPair,
  deleteHostVeth,
  deleteHostVethIfOwned,
  inspectPodInterface,
} from './netns.js';
import { defaultRoute, type PodSubnet } from './pod-subnet.js';
import { UndoStack } from './undo.js';

/** The pod subnet and the IPAM that hands out its addresses (absent until a subnet is known). */
export interface IpamState {
  subnet: PodSubnet;
  ipam: HostLocalIpam;
}

/** What the agent's pod informer knows; used to refuse requests for a pod that no longer exists. */
export interface PodView {
  hasSynced(): boolean;
  /** The UID of the pod now called namespace/name on this node, if the informer has it. */
  uidOf(namespace: string, name: string): string | undefined;
}

export interface PodAttacherOptions {
  ovs: Ovs;
  bridge: string;
  mtu: number;
  ipamState: () => IpamState | undefined;
  /**
   * host-local's lease files, usable before the subnet is known: DEL releases through it while
   * `ipamState` is absent. Without it such a DEL fails with "try again later".
   */
  leaseStore?: HostLocalLeaseStore;
  pods?: PodView;
  /** Turns TX checksum offload off on the pod's interface where the datapath needs it. */
  checksumOffload?: Pick<PodChecksumOffload, 'preparePodInterface'>;
  /** Holds the ADD until ODL reports the pod's interface operational (absent or `off`: no wait). */
  operWait?: Pick<OdlOperWait, 'mode' | 'wait'>;
  /** The iface-id scheme of the watcher's backend (iface-id.ts); default netvirt. */
  naming?: IfaceNaming;
  /**
   * Where an extra interface's ADD (a NetworkAttachmentDefinition's config, without `ipam`)
   * finds the watcher's allocation; absent: such ADDs are refused (code 7).
   */
  records?: AttachmentRecordWaiter;
  /** Warning Events on pods whose extra interface was refused. */
  events?: EventRecorder;
  metrics: AgentMetrics;
  logger: Logger;
}

function bareIp(cidr: string): string {
  return cidr.split('/')[0] ?? cidr;
}

/**
 * The prefix a pod holds its address with: IPv4 alone (`/32`, routed through the gateway that
 * NetVirt answers ARP for); IPv6 with the subnet's prefix, on-link, since NetVirt answers no
 * neighbour solicitation for a COE gateway and the watcher routes IPv4 only
 * (compatibility.md), so within its ELAN is as far as an IPv6 pod reaches.
 */
function podPrefix(address: string, subnet: PodSubnet): string {
  if (!address.includes(':')) return `${bareIp(address)}/32`;
  return address.includes('/') ? address : `${address}/${subnet.cidr.split('/')[1]}`;
}

/** What the pod end of an attachment is given (and the CNI result reports). */
export interface PodAddressing {
  /** `address/32` (IPv6: the subnet's prefix), with the gateway host-local named or the subnet's. */
  ips: { address: string; gateway: string }[];
  mac: string;
  /** First each next hop on-link (no `gw`), then the routes via them. */
  routes: { dst: string; gw?: string }[];
}

/**
 * The pod end's addresses, MAC and routes from host-local's allocation. The MAC is the one the
 * watcher writes into ODL for the pod's first address (elan static MAC, vpn adjacency), and
 * the default gateway the address ODL answers ARP for: both come from the one rule each
 * (netvirt podMac; the subnet's gateway, netvirt gatewayIp), never from a copy of it.
 *
 * The pod holds its IPv4 address alone (`/32`), not the node subnet: every packet leaves
 * through the gateway, which is the only address it ever resolves. With the subnet's prefix a
 * pod would take the node's other pods for on-link and ARP for them, and NetVirt answers ARP
 * for the subnet gateway only (vpnmanager's ArpResponderHandler, per interface), so such an
 * ARP reaches the pods of the same node×namespace ELAN and no one else: a pod of another
 * namespace on the same node, like the node gateway in its own ELAN, would never be reached.
 * Routed, all of them go through NetVirt's L3 pipeline, which knows every pod's /32.
 */
export function podAddressing(allocation: IpamResult, subnet: PodSubnet): PodAddressing {
  const ips = allocation.ips.map((ip) => ({
    address: podPrefix(ip.address, subnet),
    gateway: ip.gateway ?? subnet.gateway,
  }));
  const first = ips[0];
  if (!first) throw new CniError(CNI_ERROR.ipam, 'IPAM returned no address');
  const routed = (allocation.routes.length > 0 ? allocation.routes : [{ dst: defaultRoute(subnet) }]).map(
    (r) => ({
      dst: r.dst,
      gw: r.gw ?? subnet.gateway,
    }),
  );
  const nextHops = [...new Set(routed.map((r) => r.gw))]
    .filter((gw) => !gw.includes(':'))
    .map((gw) => ({ dst: `${gw}/32` }));
  return { ips, mac: podMac(bareIp(first.address)), routes: [...nextHops, ...routed] };
}

/**
 * The pod side of CNI: ADD wires a pod onto the bridge, DEL unwires it, CHECK verifies it,
 * GC and reconcile remove what no longer belongs. Each ADD either completes or leaves
 * nothing behind (every step it took is undone, newest first).
 */
export class PodAttacher {
  private readonly ovs: Ovs;
  private readonly bridge: string;
  private readonly logger: Logger;
  private readonly metrics: AgentMetrics;
  /** Extra interfaces (Multus attachments): extra-interface.ts. */
  private readonly extra: ExtraInterfaceAttacher | undefined;
  private readonly naming: IfaceNaming;

  constructor(private readonly options: PodAttacherOptions) {
    this.naming = options.naming ?? { backend: 'netvirt' };
    this.ovs = options.ovs;
    this.bridge = options.bridge;
    this.logger = options.logger;
    this.metrics = options.metrics;
    this.extra = options.records
      ? new ExtraInterfaceAttacher({
          ovs: options.ovs,
          bridge: options.bridge,
          mtu: options.mtu,
          records: options.records,
          ...(options.events ? { events: options.events } : {}),
          ...(options.checksumOffload ? { checksumOffload: options.checksumOffload } : {}),
          metrics: options.metrics,
          logger: options.logger,
          removeReplaced: (ifaceId, pod, containerId) =>
            this.removeReplacedAttachments(ifaceId, pod, containerId),
          deleteOwnPort: (portName, containerId) => this.deleteOwnPort(portName, containerId),
          ...(options.operWait ? { operWait: options.operWait } : {}),
        })
      : undefined;
  }

  private requireIpam(): IpamState {
    const state = this.options.ipamState();
    if (!state)
      throw new CniError(CNI_ERROR.tryAgainLater, 'the node pod subnet is not known yet (waiting for ODL)');
    return state;
  }

  async add(req: CniRequest, signal: AbortSignal): Promise<CniResult> {
    const { containerId, ifName, args } = req;
    if (!args.podNamespace || !args.podName) {
      throw new CniError(
        CNI_ERROR.invalidEnvironment,
        'CNI_ARGS lacks K8S_POD_NAMESPACE or K8S_POD_NAME',
        'odlcoe attaches Kubernetes pods: the OVS port is bound to the ODL interface <namespace>:<pod>',
      );
    }
    try {
      validatePodRef(args.podNamespace, args.podName);
    } catch (err) {
      throw new CniError(CNI_ERROR.invalidEnvironment, `CNI_ARGS: ${errorMessage(err)}`);
    }
    const pod: PodRef = {
      namespace: args.podNamespace,
      name: args.podName,
      ...(args.podUid ? { uid: args.podUid } : {}),
    };
    if (req.config.extra) {
      this.refuseReplacedPod(pod.namespace, pod.name, pod.uid);
      if (!this.extra)
        throw new CniError(
          CNI_ERROR.invalidNetworkConfig,
          'a network config without ipam is an extra interface (a NetworkAttachmentDefinition), and this agent serves none',
        );
      return this.extra.add(req, signal, pod);
    }
    const { subnet, ipam } = this.requireIpam();
    if (req.config.ipamSubnet !== undefined && req.config.ipamSubnet !== subnet.cidr) {
      throw new CniError(
        CNI_ERROR.invalidNetworkConfig,
        `network config subnet ${req.config.ipamSubnet} is not this node's pod subnet ${subnet.cidr}`,
        'the runtime holds a stale CNI config; the agent rewrites it',
      );
    }
    this.refuseReplacedPod(args.podNamespace, args.podName, args.podUid);
    const portName = hostVethName(containerId, ifName);
    // No look-up first (one OVSDB round trip less per ADD): a repeated ADD is refused by
    // host-local (duplicate allocation), and a device or port of this name that belongs to
    // another container makes createVethPair/addPort fail without touching it; the rollback
    // only ever undoes what this request itself created.
    const { podNamespace, podName, podUid } = args;
    const timer = this.metrics.stepTimer('ADD');
    try {
      await timer.time('replaced_check', () =>
        this.removeReplacedAttachments(
          podIfaceId(this.naming, podNamespace, podName),
          { namespace: podNamespace, name: podName, ...(podUid ? { uid: podUid } : {}) },
          containerId,
        ),
      );
      return await this.wire(req, signal, { subnet, ipam, portName, timer });
    } finally {
      this.logger.debug('ADD steps (ms)', { containerId, ifName, ...timer.steps });
    }
  }

  /**
   * The steps of an ADD after validation: lease an address while creating the veth pair,
   * configure the pod end, add the OVS port and wait until ovs-vswitchd attached it. On any
   * failure every step taken is undone, newest first.
   */
  private async wire(
    req: CniRequest,
    signal: AbortSignal,
    ctx: { subnet: PodSubnet; ipam: HostLocalIpam; portName: string; timer: StepTimer },
  ): Promise<CniResult> {
    const { containerId, ifName, netns, args } = req;
    const { subnet, ipam, portName, timer } = ctx;
    const undo = new UndoStack();
    let offloading: Promise<void> | undefined;
    const step = () => {
      if (signal.aborted)
        throw new CniError(CNI_ERROR.tryAgainLater, `ADD abandoned: ${errorMessage(signal.reason)}`);
    };
    try {
      step();
      // The address and the veth pair do not depend on each other: both at once. Each undo is
      // registered only for what succeeded, so a repeated ADD (host-local refuses the
      // duplicate, the veth exists) undoes nothing of the first one.
      const veth = timer.time('veth_create', () =>
        createVethPair({ netns, ifName, hostVeth: portName, mtu: this.options.mtu, owner: containerId }),
      );
      // Off the critical path: from the moment the pod end exists, while host-local and then
      // pod_config run; awaited before the port goes onto the bridge.
      const offload = this.options.checksumOffload;
      offloading = offload && veth.then(() => offload.preparePodInterface(netns, ifName, timer));
      offloading?.catch(() => undefined);
      const [leased, pair] = await Promise.allSettled([
        timer.time('ipam', () =>
          this.metrics.count(this.metrics.ipamErrors, 'add', () => ipam.add({ containerId, ifName, netns })),
        ),
        veth,
      ]);
      if (leased.status === 'fulfilled') {
        undo.push('release IP', () =>
          this.metrics.count(this.metrics.ipamErrors, 'del', () => ipam.del({ containerId, ifName, netns })),
        );
      }
      if (pair.status === 'fulfilled') undo.push('delete veth', () => deleteHostVeth(portName));
      if (leased.status === 'rejected') {
        throw new CniError(
          CNI_ERROR.ipam,
          `IPAM could not allocate an address: ${errorMessage(leased.reason)}`,
        );
      }
      if (pair.status === 'rejected') {
        throw new CniError(
          CNI_ERROR.podInterface,
          `could not create the pod interface: ${errorMessage(pair.reason)}`,
        );
      }
      const allocation = leased.value;
      step();
      const { ips, mac, routes } = podAddressing(allocation, subnet);

      await timer
        .time('pod_config', () =>
          configurePodInterface({
            netns,
            ifName,
            mac,
            addresses: ips.map((ip) => ({ cidr: ip.address })),
            routes,
          }),
        )
        .catch((err: unknown) => {
          throw new CniError(
            CNI_ERROR.podInterface,
            `could not configure the pod interface: ${errorMessage(err)}`,
          );
        });
      const link = { hostMac: pair.value.hostMac, podMac: mac };
      await offloading?.catch((err: unknown) => {
        throw new CniError(
          CNI_ERROR.podInterface,
          `could not turn TX checksum offload off on the pod interface: ${errorMessage(err)}`,
        );
      });
      step();

      const externalIds: Record<string, string> = {
        [EXTERNAL_ID.ifaceId]: podIfaceId(this.naming, args.podNamespace ?? '', args.podName ?? ''),
        [EXTERNAL_ID.pod]: `${args.podNamespace ?? ''}/${args.podName ?? ''}`,
        [EXTERNAL_ID.attachedMac]: link.podMac,
        [EXTERNAL_ID.ipAddress]: ips.map((ip) => bareIp(ip.address)).join(','),
        [EXTERNAL_ID.containerId]: containerId,
      };
      if (args.podUid) externalIds[EXTERNAL_ID.podUid] = args.podUid;
      await this.metrics
        .count(this.metrics.ovsErrors, 'add_port', () =>
          this.ovs.addPort(this.bridge, portName, externalIds, {
            onStep: (s, ms) => timer.record(s === 'insert' ? 'ovs_add_port' : 'ovs_attach', ms),
          }),
        )
        .catch((err: unknown) => {
          throw new CniError(
            CNI_ERROR.ovs,
            `could not add OVS port ${portName} to ${this.bridge}: ${errorMessage(err)}`,
          );
        });
      undo.push('delete OVS port', () => this.deleteOwnPort(portName, containerId));
      step();

      const operWait = this.options.operWait;
      if (operWait && operWait.mode !== 'off') {
        // The last step: the port exists, so Genius can bind it. A failure here (wait-and-fail
        // at the timeout, or the request's deadline) undoes the ADD like any other.
        await timer.time('odl_oper_wait', () => operWait.wait(externalIds[EXTERNAL_ID.ifaceId]!, signal));
        step();
      }

      return {
        interfaces: [
          { name: portName, mac: link.hostMac },
          { name: ifName, mac: link.podMac, sandbox: netns, mtu: this.options.mtu },
        ],
        ips: ips.map((ip) => ({ address: ip.address, gateway: ip.gateway, interface: 1 })),
        routes,
        dns: allocation.dns ?? {},
      };
    } catch (err) {
      await offloading?.catch(() => undefined);
      return undo.rollBack(err, { timer, logger: this.logger, log: { containerId, ifName } });
    }
  }

  /**
   * A request carrying an older pod's UID must not wire (or unwire) the pod that now has the
   * name. When the informer shows another UID under the name, either the request is late
   * (that pod is gone) or the informer lags (the pod is new); "try again later" is right for
   * both: a retry of a live pod succeeds once the informer has caught up.
   */
  private refuseReplacedPod(namespace: string, name: string, uid: string | undefined): void {
    const pods = this.options.pods;
    if (!uid || !pods?.hasSynced()) return;
    const current = pods.uidOf(namespace, name);
    if (current !== undefined && current !== uid) {
      throw new CniError(
        CNI_ERROR.tryAgainLater,
        `pod ${namespace}/${name} now has UID ${current}, the request is for UID ${uid}`,
        'a newer pod reuses the name; refusing to act for the older one',
      );
    }
  }

  /**
   * A pod re-created under the same name (a StatefulSet pod) must be the only port with its
   * iface-id (the pod's, iface-id.ts, or an extra interface's attachment name), or Genius may
   * bind the old one. Ports of that iface-id but another pod UID are removed once the informer
   * confirms the requesting UID is the current one.
   */
  private async removeReplacedAttachments(ifaceId: string, pod: PodRef, containerId: string): Promise<void> {
    const pods = this.options.pods;
    const { namespace, name, uid } = pod;
    if (!uid || !pods?.hasSynced() || pods.uidOf(namespace, name) !== uid) return;
    // Only the ports bound to this pod name, filtered by ovsdb-server: this runs on every ADD.
    const ports = await this.metrics.count(this.metrics.ovsErrors, 'list_ports', () =>
      this.ovs.listPorts(this.bridge, { withExternalIds: { [EXTERNAL_ID.ifaceId]: ifaceId } }),
    );
    for (const port of ports.filter(isPodPort)) {
      const ids = port.externalIds;
      const portUid = ids[EXTERNAL_ID.podUid];
      // Under coe-northbound the iface-id does not name the namespace: a pod of the same name in
      // another namespace has the same one (Sodium's renderer cannot tell them apart either).
      const ref = podOfPort(ids);
      if (
        ids[EXTERNAL_ID.ifaceId] !== ifaceId ||
        ref?.namespace !== namespace ||
        ref.name !== name ||
        !portUid ||
        portUid === uid ||
        ids[EXTERNAL_ID.containerId] === containerId
      )
        continue;
      this.logger.info('removing the attachment of a replaced pod', {
        port: port.name,
        pod: ifaceId,
        oldUid: portUid,
        uid,
      });
      await this.removePort(port);
    }
  }

  /** Deletes the OVS port of that name if it is `containerId`'s, checked by ovsdb-server in the same transaction. */
  private deleteOwnPort(portName: string, containerId: string) {
    return this.metrics.count(this.metrics.ovsErrors, 'del_port', () =>
      this.ovs.delPort(this.bridge, portName, { ifExternalIds: { [EXTERNAL_ID.containerId]: containerId } }),
    );
  }

  /**
   * DEL: everything of (container id, ifname), from those two alone; already gone is success.
   * The OVS port goes first (so nothing of the old pod is on the bridge once the address can
   * be handed out again); then the veth and the lease, which are independent, in parallel.
   * An extra interface's DEL has no lease to release; its port and veth are named after its
   * own ifname, so it never touches eth0 or another attachment.
   */
  async del(req: CniRequest): Promise<void> {
    const { containerId, ifName, netns } = req;
    const portName = hostVethName(containerId, ifName);
    const timer = this.metrics.stepTimer('DEL');
    try {
      // Removed only when its container-id is this container's, checked by ovsdb-server in
      // the removing transaction itself.
      const outcome = await timer.time('ovs_del_port', () => this.deleteOwnPort(portName, containerId));
      const results = await Promise.allSettled([
        // A 32-bit name collision: the port (and so the veth) is another container's. Leave them.
        // Without a port, the name proves nothing: the veth can be another container's (its ADD
        // between veth_create and ovs_add_port, or its row lost), so its owner tag decides.
        outcome === 'not-owned'
          ? Promise.resolve()
          : timer.time('veth_delete', () =>
              outcome === 'removed' ? deleteHostVeth(portName) : this.deleteOrphanVeth(portName, containerId),
            ),
        // An extra interface has no host-local lease (the watcher allocated its address).
        req.config.extra
          ? Promise.resolve()
          : timer.time('ipam', () => this.releaseLease({ containerId, ifName, netns })),
      ]);
      if (outcome === 'not-owned') {
        this.logger.warn('DEL: the port of this name belongs to another container; left alone', {
          port: portName,
          containerId,
        });
      }
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    } finally {
      this.logger.debug('DEL steps (ms)', { containerId, ifName, ...timer.steps });
    }
  }

  /** The host veth of a DEL that found no port: deleted only when tagged as this container's. */
  private async deleteOrphanVeth(portName: string, containerId: string): Promise<void> {
    const veth = await deleteHostVethIfOwned(portName, containerId);
    if (veth === 'not-owned' || veth === 'untagged') {
      this.logger.warn(
        veth === 'not-owned'
          ? "DEL: the veth of this name is another container's; left alone"
          : 'DEL: the veth of this name has no owner tag (made by an older agent?); left alone',
        { port: portName, containerId },
      );
    }
  }

  private async releaseLease(a: { containerId: string; ifName: string; netns?: string }): Promise<void> {
    const state = this.options.ipamState();
    const request = { containerId: a.containerId, ifName: a.ifName, ...(a.netns ? { netns: a.netns } : {}) };
    if (state) {
      await this.metrics.count(this.metrics.ipamErrors, 'del', () => state.ipam.del(request));
      return;
    }
    // No subnet known yet. Succeeding without releasing would leak the lease for good (the
    // runtime forgets a DEL it was told succeeded), so release by owner, or have it retried.
    const store = this.options.leaseStore;
    if (!store) {
      throw new CniError(
        CNI_ERROR.tryAgainLater,
        'the node pod subnet is not known yet (waiting for ODL): the IP lease cannot be released',
      );
    }
    await this.metrics.count(this.metrics.ipamErrors, 'del', () => store.release(request));
  }

  /** Removes an attachment found on the bridge: port, veth, and the leases of its container id. */
  async removePort(port: OvsPort): Promise<void> {
    const containerId = port.externalIds[EXTERNAL_ID.containerId];
    const outcome = await this.metrics.count(this.metrics.ovsErrors, 'del_port', () =>
      this.ovs.delPort(
        this.bridge,
        port.name,
        containerId ? { ifExternalIds: { [EXTERNAL_ID.containerId]: containerId } } : {},
      ),
    );
    // Replaced by another container's port since it was listed: nothing here is stale.
    if (outcome === 'not-owned') return;
    await deleteHostVeth(port.name);
    this.metrics.reconcileRemoved.inc({ kind: 'port' });
    const state = this.options.ipamState();
    if (!containerId || !state) return;
    const leases = await this.metrics.count(this.metrics.ipamErrors, 'list', () => state.ipam.leases());
    for (const lease of leases) {
      if (lease.containerId !== containerId || hostVethName(containerId, lease.ifName) !== port.name)
        continue;
      await this.metrics.count(this.metrics.ipamErrors, 'del', () =>
        state.ipam.del({ containerId, ifName: lease.ifName }),
      );
      this.metrics.reconcileRemoved.inc({ kind: 'lease' });
    }
  }

  /**
   * CHECK: the port exists, is attached and is this container's; the pod interface exists
   * with the MAC and addresses of prevResult; the addresses are still leased to it (eth0: an
   * extra interface's address is the watcher's, held in the pod's annotation, not a lease).
   */
  async check(req: CniRequest): Promise<void> {
    const { containerId, ifName, netns } = req;
    const portName = hostVethName(containerId, ifName);
    const port = await this.metrics.count(this.metrics.ovsErrors, 'get_port', () =>
      this.ovs.getPort(portName),
    );
    if (!port)
      throw new CniError(CNI_ERROR.ovs, `OVS port ${portName} of container ${containerId} is missing`);
    if (port.externalIds[EXTERNAL_ID.containerId] !== containerId) {
      throw new CniError(
        CNI_ERROR.ovs,
        `OVS port ${portName} belongs to container ${port.externalIds[EXTERNAL_ID.containerId] ?? '(none)'}`,
      );
    }
    if (port.error || port.ofport <= 0) {
      throw new CniError(
        CNI_ERROR.ovs,
        `OVS port ${portName} is not attached: ${port.error ?? `ofport ${port.ofport}`}`,
      );
    }
    const iface = await inspectPodInterface(netns, ifName).catch((err: unknown) => {
      throw new CniError(
        CNI_ERROR.podInterface,
        `cannot inspect ${ifName} in ${netns}: ${errorMessage(err)}`,
      );
    });
    if (!iface) throw new CniError(CNI_ERROR.podInterface, `interface ${ifName} is missing in ${netns}`);
    const expectedMac = port.externalIds[EXTERNAL_ID.attachedMac];
    if (expectedMac && iface.mac !== expectedMac) {
      throw new CniError(
        CNI_ERROR.podInterface,
        `interface ${ifName} has MAC ${iface.mac}, the OVS port says ${expectedMac}`,
      );
    }
    const prev = req.config.prevResult;
    const want = prev
      ? prev.ips.map((ip) => ip.address)
      : (port.externalIds[EXTERNAL_ID.ipAddress] ?? '').split(',').filter(Boolean);
    const have = new Set(iface.addresses.map((a) => bareIp(a)));
    for (const address of want) {
      if (!have.has(bareIp(address)))
        throw new CniError(CNI_ERROR.podInterface, `interface ${ifName} lacks address ${address}`);
    }
    if (prev) {
      const podIf = prev.interfaces.find((i) => i.name === ifName && i.sandbox !== undefined);
      if (podIf && podIf.mac && podIf.mac !== iface.mac) {
        throw new CniError(
          CNI_ERROR.podInterface,
          `interface ${ifName} has MAC ${iface.mac}, prevResult says ${podIf.mac}`,
        );
      }
      for (const route of prev.routes) {
        if (!iface.routes.some((r) => r.dst === route.dst && (route.gw === undefined || r.gw === route.gw))) {
          throw new CniError(
            CNI_ERROR.podInterface,
            `route ${route.dst}${route.gw ? ` via ${route.gw}` : ''} is missing in ${netns}`,
          );
        }
      }
    }
    if (req.config.extra) return;
    const state = this.requireIpam();
    const leases = await this.metrics.count(this.metrics.ipamErrors, 'list', () => state.ipam.leases());
    for (const address of want) {
      const ip = bareIp(address);
      if (!leases.some((l) => l.ip === ip && l.containerId === containerId && l.ifName === ifName)) {
        throw new CniError(
          CNI_ERROR.ipam,
          `address ${ip} is not leased to container ${containerId} ${ifName}`,
        );
      }
    }
  }

  /**
   * GC: removes every attachment (OVS port, lease) of the request's network that is not in
   * `valid` and not being worked on right now, continuing past failures; fails at the end if
   * anything could not be removed. GC is per network: odlcoe's own (eth0 ports and leases),
   * or a NetworkAttachmentDefinition's (the extra interfaces added with that CNI network name),
   * so the runtime's GC of one never removes the live attachments of another.
   */
  async gc(req: CniRequest, busy: (containerId: string) => boolean): Promise<void> {
    const valid = req.config.validAttachments ?? [];
    const extra = req.config.extra !== undefined;
    const ofNetwork = (port: OvsPort) =>
      extra
        ? isExtraInterfacePort(port) && port.externalIds[EXTERNAL_ID.cniNetwork] === req.config.name
        : !isExtraInterfacePort(port);
    const validPorts = new Set<string>();
    for (const a of valid) {
      try {
        validPorts.add(hostVethName(a.containerId, a.ifName));
      } catch (err) {
        if (!(err instanceof NameError)) throw err;
        // Not a name odlcoe could have made: it names no attachment of ours.
      }
    }
    const validKeys = new Set(valid.map((a) => `${a.containerId}/${a.ifName}`));
    const failures: string[] = [];
    const ports = await this.metrics.count(this.metrics.ovsErrors, 'list_ports', () =>
      this.ovs.listPorts(this.bridge),
    );
    for (const port of ports.filter((p) => isPodPort(p) && ofNetwork(p))) {
      const containerId = port.externalIds[EXTERNAL_ID.containerId] ?? '';
      if (validPorts.has(port.name) || busy(containerId)) continue;
      try {
        this.logger.info('GC: removing attachment', { port: port.name, containerId });
        await this.removePort(port);
      } catch (err) {
        failures.push(`port ${port.name}: ${errorMessage(err)}`);
      }
    }
    const state = extra ? undefined : this.options.ipamState();
    if (state) {
      const leases = await this.metrics.count(this.metrics.ipamErrors, 'list', () => state.ipam.leases());
      for (const lease of leases) {
        if (validKeys.has(`${lease.containerId}/${lease.ifName}`) || busy(lease.containerId)) continue;
        try {
          this.logger.info('GC: releasing lease', { ip: lease.ip, containerId: lease.containerId });
          await this.metrics.count(this.metrics.ipamErrors, 'del', () =>
            state.ipam.del({ containerId: lease.containerId, ifName: lease.ifName }),
          );
          this.metrics.reconcileRemoved.inc({ kind: 'lease' });
        } catch (err) {
          failures.push(`lease ${lease.ip}: ${errorMessage(err)}`);
        }
      }
    }
    if (failures.length > 0) {
      throw new CniError(
        CNI_ERROR.io,
        `GC could not remove ${failures.length} attachment(s)`,
        failures.join('; '),
      );
    }
  }
}
