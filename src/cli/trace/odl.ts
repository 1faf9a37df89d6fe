/**
 * The ODL side of a trace: each entry the pod's network is made of, read one at a time and
 * judged against the plan the watcher would execute for its key (plan-netvirt.ts, over inputs
 * narrowed to this one pod, its node and its namespace). One function records each step's
 * verdict, once; a check beyond the owned-leaf diff (the node subnet's use, a VPN without a
 * route distinguisher) is part of the judgement, not a correction made after it.
 */
import type { V1Node } from '@kubernetes/client-node';
import { errorMessage } from '../../common/log.js';
import type { DhcpNetwork } from '../../netvirt/dhcp.js';
import type { KindContext } from '../../netvirt/kind.js';
import type { OdlEntries, OdlKind } from '../../netvirt/kinds.js';
import { elanKey, nodeNetworkKey, podKey, vpnKey } from '../../netvirt/keys.js';
import { networkSubnets, nodeNetworkName, nodeNetworkSummary } from '../../netvirt/node-network.js';
import { cidrContains, elanInstanceName, interfaceName, parseCidr, vpnName } from '../../netvirt/names.js';
import { nodeInternalIp } from '../../netvirt/kube.js';
import type { OwnerContext } from '../../netvirt/ownership.js';
import { vpnRouteDistinguisher } from '../../netvirt/ownership.js';
import { planElan, planPod, planVpn, type NetvirtPlanInputs } from '../../netvirt/plan-netvirt.js';
import { planNodeNetwork } from '../../netvirt/plan-node.js';
import type { EntryPlan, EntrySubnet, KeyPlan } from '../../netvirt/plan.js';
import { clusterPlanInputs } from '../../netvirt/translate-cluster.js';
import type { TranslateSettings } from '../../netvirt/translate-settings.js';
import type { OdlReader } from '../../odl/reader.js';
import { kubePaths } from '../kube-reader.js';
import { cell } from '../render.js';
import type { SubnetSource } from '../plan-inputs.js';
import type { PodFacts } from './facts.js';
import type { StepStatus, Trace, TraceStepName } from './steps.js';

/** A verdict beyond the owned-leaf diff, for an entry that is present and as planned. */
type Judge<T> = (entry: T) => { status: StepStatus; message: string; changed?: string[] } | undefined;

/** How one step judges its entry: the plan's entry (undefined: judge presence only), its description, and any further check. */
interface StepPlan<T> {
  planned: EntryPlan | undefined;
  describe: (entry: T) => string;
  judge?: Judge<T>;
}

/** Reads single ODL entries and records, per step, how each compares with its plan. */
export class OdlProbe {
  /** What was read, for diffs that look at another kind's entry (a vpn-interface's ietf-interface). */
  private readonly seen = new Map<string, unknown>();
  private readonly ctx: KindContext;

  constructor(
    private readonly reader: OdlReader,
    private readonly owner: OwnerContext,
  ) {
    this.ctx = { owner, get: (kind, name) => this.seen.get(`${kind}/${name}`) };
  }

  url(kind: OdlKind, name: string): string {
    return this.reader.entryUrl(kind, name);
  }

  /**
   * One ODL step: read the entry, plan it (some plans depend on what the entry holds: a node's
   * ODL-assigned subnet, a VPN's RD) and record its verdict, once. Returns the entry (also
   * when it differs) for later steps; undefined when it is absent, unparsed or unreadable.
   */
  async step<K extends OdlKind>(
    trace: Trace,
    step: TraceStepName,
    kind: K,
    name: string,
    planOf: (actual: OdlEntries[K] | undefined) => StepPlan<OdlEntries[K]>,
  ): Promise<OdlEntries[K] | undefined> {
    const spec = this.reader.table.spec(kind);
    const label = `${spec.label} ${name}`;
    const url = this.url(kind, name);
    const record = (status: StepStatus, message: string, changed?: string[]) =>
      trace.add(step, status, label, url, message, changed);
    let read;
    try {
      read = await this.reader.readEntry(kind, name);
    } catch (err) {
      record('error', `cannot read ${label} from ODL: ${errorMessage(err)}`);
      return undefined;
    }
    if (read.state === 'unparsed') {
      record(
        'unparsed',
        `${label} exists at ${url} but does not have the model's shape; odlcoe leaves it alone`,
      );
      return undefined;
    }
    const actual = read.state === 'parsed' ? (read.entry as OdlEntries[K]) : undefined;
    if (actual !== undefined) this.seen.set(`${kind}/${name}`, actual);
    const { planned, describe, judge } = planOf(actual);
    if (planned?.want === 'absent' || planned?.want === 'keep') {
      record('skipped', `${label}: ${planned.why}`);
      return actual;
    }
    if (!actual) {
      record('missing', `${label} is missing in ODL (${url})`);
      return undefined;
    }
    const desired = planned?.want === 'present' ? (planned.desired as OdlEntries[K]) : undefined;
    const d = spec.diff(desired, actual, this.ctx);
    if (d.action === 'foreign')
      record(
        'foreign',
        `${label} exists at ${url} but is not owned by cluster ${this.owner.clusterName}: ${d.reason}`,
      );
    else if (d.action === 'update' || d.action === 'recreate')
      record(
        'mismatch',
        `${label} at ${url} differs from what the pod needs in: ${d.changed.join(', ')}`,
        d.changed,
      );
    else {
      const extra = judge?.(actual);
      if (extra) record(extra.status, extra.message, extra.changed);
      else record('ok', describe(actual));
    }
    return actual;
  }
}

const entryOf = (plan: KeyPlan, kind: string): EntryPlan | undefined =>
  plan.entries.find((e) => e.kind === kind);

/**
 * The subnet the node's pods are addressed from: `spec.podCIDR` for that source, else the
 * subnet of the node's network in ODL (what the agent reads).
 */
function subnetOf(node: V1Node, network: DhcpNetwork | undefined, source: SubnetSource): string | undefined {
  const cidr = source === 'podCIDR' ? node.spec?.podCIDR : networkSubnets(network)[0];
  return cidr?.trim() || undefined;
}

/** What the watcher writes into the node's entry: nothing in `odl` mode, nor a subnet that does not parse. */
function entrySubnet(subnet: string | undefined, source: SubnetSource): EntrySubnet {
  if (source === 'odl' || subnet === undefined) return { kind: 'none' };
  try {
    parseCidr(subnet);
    return { kind: 'subnet', cidr: subnet };
  } catch {
    return { kind: 'none' };
  }
}

/** Why a node has no subnet, by source. */
function whoAssigns(source: SubnetSource, nodeName: string): string {
  if (source === 'odl') return 'an ODL user must create the node network';
  if (source === 'podCIDR') return `node ${nodeName} has no spec.podCIDR`;
  return 'the watcher has not allocated one (is the cluster CIDR used up? see status)';
}

/** Whether the node's subnet is usable for this pod, beyond its entry's owned leaves. */
function judgeSubnet(
  facts: PodFacts,
  node: V1Node,
  subnet: string | undefined,
  source: SubnetSource,
  url: string,
): Judge<DhcpNetwork> {
  const nodeName = node.metadata?.name ?? '?';
  return (entry) => {
    const object = `dhcp-network ${entry.networkId}`;
    if (subnet === undefined)
      return {
        status: 'missing',
        message: `${object} (node ${nodeName}) has no usable allocation-pool at ${url}: the node's pod subnet is not assigned (${whoAssigns(source, nodeName)}); the agent cannot configure IPAM`,
      };
    try {
      parseCidr(subnet);
    } catch (err) {
      return { status: 'mismatch', message: `${object} subnet is unusable: ${errorMessage(err)}` };
    }
    if (facts.address && !cidrContains(subnet, facts.address))
      return {
        status: 'mismatch',
        message: `pod IP ${facts.address} is outside node ${nodeName}'s pod subnet ${subnet} (${url}): the pod was addressed from another subnet`,
      };
    return undefined;
  };
}

/**
 * The ODL steps, node subnet to vpn-interface. Returns after recording every one of them
 * (skipped where a step cannot be judged).
 */
export async function checkOdl(
  trace: Trace,
  odl: OdlProbe,
  facts: PodFacts,
  settings: TranslateSettings,
  source: SubnetSource,
): Promise<void> {
  const { pod, node, namespace } = facts;
  const ns = pod.metadata?.namespace ?? '';
  const podName = pod.metadata?.name ?? '';
  const ifName = interfaceName(ns, podName);

  // Node subnet: the plan of the node's network key, over what the network holds now.
  let subnet: string | undefined;
  if (!node) trace.add('node-subnet', 'skipped', null, null, 'the pod has no (known) node');
  else {
    const nodeName = node.metadata?.name ?? '?';
    const uid = node.metadata?.uid;
    if (!uid || !nodeInternalIp(node))
      trace.add(
        'node-subnet',
        'mismatch',
        `node ${nodeName}`,
        kubePaths.node(nodeName),
        `node ${nodeName} has no ${uid ? 'InternalIP address' : 'uid'}: odlcoe cannot name its ELANs or register it in ODL`,
      );
    else {
      const network = nodeNetworkName(nodeName);
      const url = odl.url('dhcpNetwork', network);
      await odl.step(trace, 'node-subnet', 'dhcpNetwork', network, (current) => {
        subnet = subnetOf(node, current, source);
        const s = subnet;
        const plan = planNodeNetwork(nodeNetworkKey(nodeName), nodeName, {
          settings,
          k8sNodeModel: false,
          node: () => node,
          nodeByUid: () => node,
          nodeSubnet: () => s,
          nodeEntrySubnet: () => entrySubnet(s, source),
          subnetHolder: () => undefined,
          nodeNetworkSubnet: () => entrySubnet(s, source),
          networkHolder: () => undefined,
        });
        return {
          // `odl`: an ODL user's network, judged by presence and use only.
          planned: source === 'odl' ? undefined : entryOf(plan, 'dhcpNetwork'),
          describe: (e) =>
            `dhcp-network ${e.networkId} (node ${nodeName}, ${nodeInternalIp(node)}): ${nodeNetworkSummary(e)}`,
          judge: judgeSubnet(facts, node, s, source, url),
        };
      });
    }
  }

  if (!node || !namespace) {
    trace.skipRest(`the pod's ${node ? 'namespace' : 'node'} does not exist`);
    return;
  }

  // The plans of this pod's keys, over inputs that hold only it, its node and its namespace.
  // The VPN's RD is the one it has (RDs are allocated once): a VPN that has none is missing it.
  const vpn = vpnName(ns);
  let rd: string | undefined;
  const usable = entrySubnet(subnet, 'allocate');
  const inputs = (): NetvirtPlanInputs =>
    clusterPlanInputs(
      {
        nodes: [node],
        namespaces: [namespace],
        pods: [pod],
        routeDistinguishers: new Map(rd !== undefined ? [[ns, rd]] : []),
        nodeSubnets: new Map(usable.kind === 'subnet' ? [[node.metadata?.name ?? '', usable.cidr]] : []),
      },
      settings,
    );
  await odl.step(trace, 'vpn-instance', 'vpnInstance', vpn, (current) => {
    rd = current ? vpnRouteDistinguisher(current) : undefined;
    return {
      planned: rd === undefined ? undefined : entryOf(planVpn(vpnKey(vpn), vpn, inputs()), 'vpnInstance'),
      describe: (v) => `vpn-instance ${vpn} (namespace ${ns}), rd ${cell(vpnRouteDistinguisher(v))}`,
      judge: () =>
        rd === undefined
          ? {
              status: 'mismatch',
              message: `vpn-instance ${vpn} at ${odl.url('vpnInstance', vpn)} has no route distinguisher`,
              changed: ['route-distinguisher'],
            }
          : undefined,
    };
  });

  const nodeIp = nodeInternalIp(node);
  if (!nodeIp) {
    trace.add(
      'elan-instance',
      'skipped',
      null,
      null,
      'the node has no InternalIP, so the ELAN cannot be named',
    );
    for (const step of ['ietf-interface', 'elan-interface', 'vpn-interface'] as const)
      trace.add(step, 'skipped', null, null, "the pod's objects cannot be computed");
    return;
  }
  const elan = elanInstanceName(nodeIp, ns);
  await odl.step(trace, 'elan-instance', 'elanInstance', elan, () => ({
    planned: entryOf(planElan(elanKey(elan), elan, ns, inputs()), 'elanInstance'),
    describe: (e) =>
      `elan-instance ${elan} (node ${node.metadata?.name}, namespace ${ns}), segment ${cell(e.segmentType)}`,
  }));

  // The pod's plan needs no RD: plan it even when the VPN is missing.
  const podPlan = planPod(podKey(ns, podName), ns, podName, inputs());
  const deferred = podPlan.facts.find((f) => f.fact === 'deferred');
  if (deferred?.fact === 'deferred') {
    trace.notes.push(`the pod's ODL objects cannot be computed: ${deferred.deferral.message}`);
    for (const step of ['ietf-interface', 'elan-interface', 'vpn-interface'] as const)
      trace.add(step, 'skipped', null, null, "the pod's objects cannot be computed");
    return;
  }
  await odl.step(trace, 'ietf-interface', 'interface', ifName, () => ({
    planned: entryOf(podPlan, 'interface'),
    describe: (i) => `ietf-interface ${ifName}${i.parentInterface ? `, bound to ${i.parentInterface}` : ''}`,
  }));
  await odl.step(trace, 'elan-interface', 'elanInterface', ifName, () => ({
    planned: entryOf(podPlan, 'elanInterface'),
    describe: (e) =>
      `elan-interface ${ifName} in ${e.elanInstanceName}${e.staticMacEntries?.[0] ? `, ${e.staticMacEntries[0].macAddress} ${cell(e.staticMacEntries[0].ipPrefix)}` : ''}`,
  }));
  const vpnIf = entryOf(podPlan, 'vpnInterface');
  if (vpnIf?.want !== 'present')
    trace.add(
      'vpn-interface',
      'skipped',
      `vpn-interface ${ifName}`,
      odl.url('vpnInterface', ifName),
      vpnIf?.why ?? 'the pod has no vpn-interface',
    );
  else
    await odl.step(trace, 'vpn-interface', 'vpnInterface', ifName, () => ({
      planned: vpnIf,
      describe: (v) => {
        const adj = v.adjacencies.find((x) => x.adjacencyType === 'primary-adjacency');
        return `vpn-interface ${ifName} in ${v.vpnInstanceNames.map((x) => x.vpnName).join(', ')}, adjacency ${cell(adj?.ipAddress)} mac ${cell(adj?.macAddress)} gateway ${cell(adj?.subnetGatewayIp)}`;
      },
    }));
}
