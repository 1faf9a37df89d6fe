/**
 * `odlcoectl trace <namespace>/<pod>`: why does this pod have no network?
 *
 * Walks everything the pod's network is made of, in dependency order, compares each piece
 * with what it should be (computed by the same pure translation the watcher uses), and points
 * at the FIRST thing that is missing or disagrees, since everything after it usually follows
 * from it:
 *
 *   pod scheduled, has an IP → node subnet (k8s-node entry) → VPN → ELAN → ietf-interface →
 *   elan-interface → vpn-interface and its adjacency → OVS port → its external_ids
 *
 * Every step is still evaluated and shown (an operator fixing the first problem wants to know
 * what comes next). The OVS steps need the node's OVSDB; elsewhere they are skipped with a note.
 */
import { hostname } from 'node:os';
import type { V1Namespace, V1Node, V1Pod } from '@kubernetes/client-node';
import { errorMessage, silentLogger } from '../common/log.js';
import { CommandError } from '../agent/exec.js';
import { Ovs, type OvsPort } from '../agent/ovs.js';
import { EXTERNAL_ID } from '../agent/external-ids.js';
import { validateBridgeName, validatePodRef } from '../agent/names.js';
import { kubeletPodUid } from '../agent/pod-uid.js';
import type { KubeClient } from '../k8s/kube-client.js';
import {
  canonicalIp,
  cidrContains,
  diffElanInstance,
  diffElanInterface,
  diffInterface,
  diffK8sNode,
  diffVpnInstance,
  diffVpnInterface,
  elanInstanceName,
  gatewayIp,
  interfaceName,
  ModelValidationError,
  nodeInternalIp,
  parseCidr,
  podAddress,
  podHasAnyAddress,
  podMac,
  podNetworkEligibility,
  translateElanInstance,
  translateNode,
  translatePod,
  translateVpnInstance,
  vpnName,
  vpnRouteDistinguisher,
  type Decision,
  type OwnerContext,
  type PodNetwork,
} from '../netvirt/index.js';
import type { RestconfClient } from '../restconf/client.js';
import { OdlState, type OdlEntries, type OdlKind } from '../watcher/odl-state.js';
import { ownerContext } from './connect.js';
import { translateSettings } from './desired.js';
import { CliError, EXIT, type ExitCode } from './exit-codes.js';
import { kubePaths, readObject } from './kube-reader.js';
import { entryUrl, KIND_LABEL } from './odl-objects.js';
import { cell } from './render.js';
import type { CliSettings } from './settings.js';

export const TRACE_STEPS = [
  'pod',
  'node-subnet',
  'vpn-instance',
  'elan-instance',
  'ietf-interface',
  'elan-interface',
  'vpn-interface',
  'ovs-port',
  'ovs-external-ids',
] as const;
export type TraceStepName = (typeof TRACE_STEPS)[number];

/**
 * - `ok`: present and as it should be.
 * - `missing`, `mismatch`, `foreign` (the name is held by an object odlcoe does not own),
 *   `unparsed` (present but not in the model's shape): problems.
 * - `error`: could not be read (ODL or Kubernetes failed); the trace is incomplete.
 * - `skipped`: cannot be judged because something it depends on is absent.
 * - `not-checked`: deliberately not looked at (no OVSDB here, `--no-ovs`).
 */
export type StepStatus =
  'ok' | 'missing' | 'mismatch' | 'foreign' | 'unparsed' | 'error' | 'skipped' | 'not-checked';
const PROBLEMS: ReadonlySet<StepStatus> = new Set(['missing', 'mismatch', 'foreign', 'unparsed']);

export interface TraceStep {
  step: TraceStepName;
  status: StepStatus;
  /** What was looked at, e.g. `ietf-interface default:web-0`. */
  object: string | null;
  /** Where: the RESTCONF URL of an ODL entry, the API path of a Kubernetes object, the OVSDB socket. */
  path: string | null;
  message: string;
  /** Owned leaves that differ (mismatch only). */
  changed?: string[];
}

export type TraceVerdict = 'ok' | 'problem' | 'off-network' | 'incomplete';

export interface TraceReport {
  pod: string;
  node: string | null;
  ip: string | null;
  mac: string | null;
  verdict: TraceVerdict;
  /** The first step with a problem, in dependency order; null when there is none. */
  firstProblem: TraceStep | null;
  steps: TraceStep[];
  notes: string[];
}

export interface OvsCheckOptions {
  /** Skip the OVS steps (`--no-ovs`). */
  skip: boolean;
  /** OVSDB socket; undefined: the system one (ovs-vsctl's default). */
  dbSocket?: string;
  bridge: string;
}

/** `<namespace>/<pod>`, validated as Kubernetes names (they end up in URLs and OVSDB queries). */
export function parsePodRef(ref: string): { namespace: string; name: string } {
  const slash = ref.indexOf('/');
  if (slash <= 0 || slash === ref.length - 1 || ref.indexOf('/', slash + 1) >= 0)
    throw new CliError(`pod ${JSON.stringify(ref)} must be given as <namespace>/<pod>`, EXIT.usage);
  const namespace = ref.slice(0, slash);
  const name = ref.slice(slash + 1);
  try {
    validatePodRef(namespace, name);
  } catch (err) {
    throw new CliError(errorMessage(err), EXIT.usage);
  }
  return { namespace, name };
}

class Trace {
  readonly steps: TraceStep[] = [];
  readonly notes: string[] = [];

  add(
    step: TraceStepName,
    status: StepStatus,
    object: string | null,
    path: string | null,
    message: string,
    changed?: string[],
  ): void {
    const s: TraceStep = { step, status, object, path, message };
    if (changed && changed.length > 0) s.changed = changed;
    this.steps.push(s);
  }

  /** Marks every step not evaluated yet as skipped. */
  skipRest(reason: string): void {
    for (const step of TRACE_STEPS)
      if (!this.steps.some((s) => s.step === step)) this.add(step, 'skipped', null, null, reason);
  }
}

/** Reads single ODL entries (with the watcher's parsers) and judges them against the desired one. */
class OdlProbe {
  private readonly state: OdlState;

  constructor(
    private readonly client: RestconfClient,
    private readonly owner: OwnerContext,
  ) {
    this.state = new OdlState(client, owner.profile, silentLogger());
  }

  url(kind: OdlKind, name: string): string {
    return entryUrl(this.client, this.owner.profile, kind, name);
  }

  async read<K extends OdlKind>(
    kind: K,
    name: string,
  ): Promise<{ entry?: OdlEntries[K]; unparsed: boolean }> {
    const entry = await this.state.refresh(kind, name);
    return entry ? { entry, unparsed: false } : { unparsed: this.state.isUnparsed(kind, name) };
  }

  get<K extends OdlKind>(kind: K, name: string): OdlEntries[K] | undefined {
    return this.state.get(kind, name);
  }

  /**
   * One ODL step: read the entry, let `decide` compare it with what it should be, record the
   * verdict. Returns the entry (also when it differs) for later steps.
   */
  async step<K extends OdlKind>(
    trace: Trace,
    step: TraceStepName,
    kind: K,
    name: string,
    decide: (actual: OdlEntries[K] | undefined) => Decision,
    okMessage: (entry: OdlEntries[K]) => string,
  ): Promise<OdlEntries[K] | undefined> {
    const label = `${KIND_LABEL[kind]} ${name}`;
    const url = this.url(kind, name);
    let read: { entry?: OdlEntries[K]; unparsed: boolean };
    try {
      read = await this.read(kind, name);
    } catch (err) {
      trace.add(step, 'error', label, url, `cannot read ${label} from ODL: ${errorMessage(err)}`);
      return undefined;
    }
    if (read.unparsed) {
      trace.add(
        step,
        'unparsed',
        label,
        url,
        `${label} exists at ${url} but does not have the model's shape; odlcoe leaves it alone`,
      );
      return undefined;
    }
    const d = decide(read.entry);
    switch (d.action) {
      case 'create':
        trace.add(step, 'missing', label, url, `${label} is missing in ODL (${url})`);
        break;
      case 'foreign':
        trace.add(
          step,
          'foreign',
          label,
          url,
          `${label} exists at ${url} but is not owned by cluster ${this.owner.clusterName}: ${d.reason}`,
        );
        break;
      case 'update':
      case 'recreate':
        trace.add(
          step,
          'mismatch',
          label,
          url,
          `${label} at ${url} differs from what the pod needs in: ${d.changed.join(', ')}`,
          d.changed,
        );
        break;
      case 'none':
      case 'delete-candidate':
        if (read.entry) trace.add(step, 'ok', label, url, okMessage(read.entry));
        else trace.add(step, 'skipped', label, url, `${label}: nothing expected`);
        break;
    }
    return read.entry;
  }
}

interface PodFacts {
  pod: V1Pod;
  namespace?: V1Namespace;
  node?: V1Node;
  address?: string;
}

async function checkPod(
  trace: Trace,
  kube: KubeClient,
  ref: { namespace: string; name: string },
  timeoutMs: number,
): Promise<PodFacts | 'off-network' | undefined> {
  const opts = { timeoutMs };
  const podPath = kubePaths.pod(ref.namespace, ref.name);
  const label = `pod ${ref.namespace}/${ref.name}`;
  let pod: V1Pod | undefined;
  try {
    pod = await readObject<V1Pod>(kube, podPath, opts);
  } catch (err) {
    trace.add('pod', 'error', label, podPath, `cannot read ${label} from Kubernetes: ${errorMessage(err)}`);
    return undefined;
  }
  if (!pod) {
    trace.add('pod', 'missing', label, podPath, `${label} does not exist in Kubernetes`);
    return undefined;
  }
  const eligibility = podNetworkEligibility(pod);
  const nodeName = pod.spec?.nodeName;
  if (!eligibility.onNetwork) {
    if (!nodeName && pod.spec?.hostNetwork !== true) {
      trace.add(
        'pod',
        'missing',
        label,
        podPath,
        `${label} is not scheduled yet (no spec.nodeName): it has no node, hence no network yet`,
      );
      return undefined;
    }
    trace.add(
      'pod',
      'ok',
      label,
      podPath,
      `${label} ${eligibility.reason}: odlcoe gives it nothing in ODL or OVS by design`,
    );
    return 'off-network';
  }
  const facts: PodFacts = { pod };
  try {
    const [namespace, node] = await Promise.all([
      readObject<V1Namespace>(kube, kubePaths.namespace(ref.namespace), opts),
      readObject<V1Node>(kube, kubePaths.node(nodeName ?? ''), opts),
    ]);
    if (namespace) facts.namespace = namespace;
    if (node) facts.node = node;
  } catch (err) {
    trace.add(
      'pod',
      'error',
      label,
      podPath,
      `cannot read the pod's namespace or node: ${errorMessage(err)}`,
    );
    return undefined;
  }
  if (!facts.node) {
    trace.add(
      'pod',
      'missing',
      `node ${nodeName}`,
      kubePaths.node(nodeName ?? ''),
      `${label} is scheduled on node ${nodeName}, which does not exist`,
    );
    return facts;
  }
  if (!facts.namespace) {
    trace.add(
      'pod',
      'missing',
      `namespace ${ref.namespace}`,
      kubePaths.namespace(ref.namespace),
      `namespace ${ref.namespace} does not exist`,
    );
    return facts;
  }
  const address = podAddress(pod, ['ipv4']);
  if (address === undefined) {
    const why = podHasAnyAddress(pod)
      ? 'has no IPv4 address (odlcoe routes IPv4)'
      : 'has no IP address yet: the CNI ADD has not completed (see the node agent and kubelet events)';
    trace.add('pod', 'missing', label, podPath, `${label} on node ${nodeName} ${why}`);
    return facts;
  }
  facts.address = address;
  trace.add('pod', 'ok', label, podPath, `${label} runs on node ${nodeName} with IP ${address}`);
  return facts;
}

async function checkNodeSubnet(
  trace: Trace,
  odl: OdlProbe,
  facts: PodFacts,
  settings: CliSettings,
  owner: OwnerContext,
): Promise<string | undefined> {
  const node = facts.node;
  if (!node) {
    trace.add('node-subnet', 'skipped', null, null, 'the pod has no (known) node');
    return undefined;
  }
  const nodeName = node.metadata?.name ?? '?';
  const uid = node.metadata?.uid;
  if (!uid || !nodeInternalIp(node)) {
    trace.add(
      'node-subnet',
      'mismatch',
      `node ${nodeName}`,
      kubePaths.node(nodeName),
      `node ${nodeName} has no ${uid ? 'InternalIP address' : 'uid'}: odlcoe cannot name its ELANs or register it in ODL`,
    );
    return undefined;
  }
  let subnet: string | undefined;
  const entry = await odl.step(
    trace,
    'node-subnet',
    'k8sNode',
    uid,
    (actual) => {
      subnet =
        settings.subnetSource === 'podCIDR'
          ? node.spec?.podCIDR || undefined
          : actual?.podCidr?.trim() || undefined;
      return diffK8sNode(
        translateNode(node, ownedSubnet(settings, subnet), translateSettings(owner)),
        actual,
        owner,
      );
    },
    (e) => `k8s-node ${uid} (node ${nodeName}) pod-cidr ${cell(e.podCidr)}`,
  );
  const last = trace.steps[trace.steps.length - 1];
  if (!entry || last?.status !== 'ok' || !last) return subnet;
  const url = odl.url('k8sNode', uid);
  const object = `k8s-node ${uid}`;
  if (subnet === undefined) {
    const who =
      settings.subnetSource === 'odl'
        ? 'an ODL user must set it'
        : settings.subnetSource === 'podCIDR'
          ? `node ${nodeName} has no spec.podCIDR`
          : 'the watcher has not allocated one (is the cluster CIDR used up? see status)';
    Object.assign(last, {
      status: 'missing',
      message: `${object} (node ${nodeName}) has no pod-cidr at ${url}: the node's pod subnet is not assigned (${who}); the agent cannot configure IPAM`,
    });
    return undefined;
  }
  try {
    parseCidr(subnet);
  } catch (err) {
    Object.assign(last, {
      status: 'mismatch',
      message: `${object} pod-cidr is unusable: ${errorMessage(err)}`,
    });
    return undefined;
  }
  if (facts.address && !cidrContains(subnet, facts.address)) {
    Object.assign(last, {
      status: 'mismatch',
      message: `pod IP ${facts.address} is outside node ${nodeName}'s pod subnet ${subnet} (${url}): the pod was addressed from another subnet`,
    });
    return subnet;
  }
  last.message = `${object} (node ${nodeName}, ${nodeInternalIp(node)}) pod subnet ${subnet}, gateway ${gatewayIp(subnet)}`;
  return subnet;
}

/**
 * The pod-cidr the watcher writes into the entry: none in `odl` mode (an ODL user owns the
 * leaf), and none when it does not parse (reported separately below, not as a diff).
 */
function ownedSubnet(settings: CliSettings, subnet: string | undefined): string | undefined {
  if (settings.subnetSource === 'odl' || subnet === undefined) return undefined;
  try {
    parseCidr(subnet);
    return subnet;
  } catch {
    return undefined;
  }
}

async function checkOvs(
  trace: Trace,
  facts: PodFacts,
  ovsOpts: OvsCheckOptions,
  ifName: string,
  timeoutMs: number,
): Promise<void> {
  const where = ovsOpts.dbSocket ?? 'the system OVSDB';
  const nodeName = facts.pod.spec?.nodeName ?? '?';
  if (ovsOpts.skip) {
    trace.add('ovs-port', 'not-checked', null, null, 'skipped (--no-ovs)');
    trace.add('ovs-external-ids', 'not-checked', null, null, 'skipped (--no-ovs)');
    return;
  }
  const ovs = new Ovs({
    ...(ovsOpts.dbSocket !== undefined ? { dbSocket: ovsOpts.dbSocket } : {}),
    timeoutSeconds: Math.max(1, Math.min(10, Math.floor(timeoutMs / 1000))),
  });
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
}

function safeCanonical(ip: string): string {
  try {
    return canonicalIp(ip.trim());
  } catch {
    return ip;
  }
}

export async function runTrace(
  ref: { namespace: string; name: string },
  settings: CliSettings,
  client: RestconfClient,
  kube: KubeClient,
  ovsOpts: OvsCheckOptions,
): Promise<{ report: TraceReport; exitCode: ExitCode }> {
  validateBridgeName(ovsOpts.bridge);
  const owner = ownerContext(settings);
  const translate = translateSettings(owner);
  const trace = new Trace();
  const ifName = interfaceName(ref.namespace, ref.name);
  const odl = new OdlProbe(client, owner);

  const facts = await checkPod(trace, kube, ref, settings.timeoutMs);
  const report = (verdictOverride?: TraceVerdict) => finish(ref, trace, facts, verdictOverride);
  if (facts === 'off-network') {
    trace.skipRest('the pod is off the pod network by design');
    return report('off-network');
  }
  if (!facts) {
    trace.skipRest('the pod cannot be looked at');
    return report();
  }

  const subnet = await checkNodeSubnet(trace, odl, facts, settings, owner);

  const { node, namespace } = facts;
  if (!node || !namespace) {
    trace.skipRest(`the pod's ${node ? 'namespace' : 'node'} does not exist`);
    return report();
  }

  // VPN: the desired entry carries the RD the VPN already has (RDs are allocated once).
  const vpn = vpnName(ref.namespace);
  await odl.step(
    trace,
    'vpn-instance',
    'vpnInstance',
    vpn,
    (actual) => {
      // Missing: it needs creating, whatever RD the watcher will give it.
      if (!actual) return { action: 'create', name: vpn, writes: [] };
      const rd = vpnRouteDistinguisher(actual);
      if (rd === undefined) return diffVpnInstance(undefined, actual, owner);
      return diffVpnInstance(translateVpnInstance(namespace, rd, translate), actual, owner);
    },
    (v) => `vpn-instance ${vpn} (namespace ${ref.namespace}), rd ${cell(vpnRouteDistinguisher(v))}`,
  );
  fixVpnWithoutRd(trace, odl, vpn);

  const nodeIp = nodeInternalIp(node);
  let network: PodNetwork | undefined;
  if (nodeIp) {
    const elan = elanInstanceName(nodeIp, ref.namespace);
    await odl.step(
      trace,
      'elan-instance',
      'elanInstance',
      elan,
      (actual) => diffElanInstance(translateElanInstance(node, namespace, translate), actual, owner),
      (e) =>
        `elan-instance ${elan} (node ${node.metadata?.name}, namespace ${ref.namespace}), segment ${cell(e.segmentType)}`,
    );
    try {
      const t = translatePod(
        facts.pod,
        { node, namespace, ...(subnet !== undefined ? { nodeSubnet: subnet } : {}) },
        translate,
      );
      if (t.state === 'on-network') network = t.network;
      else
        trace.notes.push(
          `the pod's ODL objects cannot be computed: ${t.state === 'deferred' ? t.deferral.message : t.reason}`,
        );
    } catch (err) {
      if (!(err instanceof ModelValidationError)) throw err;
      trace.notes.push(`the pod's ODL objects cannot be computed: ${err.message}`);
    }
  } else {
    trace.add(
      'elan-instance',
      'skipped',
      null,
      null,
      'the node has no InternalIP, so the ELAN cannot be named',
    );
  }

  if (network) {
    const n = network;
    await odl.step(
      trace,
      'ietf-interface',
      'interface',
      ifName,
      (a) => diffInterface(n.interface, a, owner),
      (i) => `ietf-interface ${ifName}${i.parentInterface ? `, bound to ${i.parentInterface}` : ''}`,
    );
    await odl.step(
      trace,
      'elan-interface',
      'elanInterface',
      ifName,
      (a) => diffElanInterface(n.elanInterface, a, owner),
      (e) =>
        `elan-interface ${ifName} in ${e.elanInstanceName}${e.staticMacEntries?.[0] ? `, ${e.staticMacEntries[0].macAddress} ${cell(e.staticMacEntries[0].ipPrefix)}` : ''}`,
    );
    if (n.vpnInterface) {
      const desiredVpnIf = n.vpnInterface;
      await odl.step(
        trace,
        'vpn-interface',
        'vpnInterface',
        ifName,
        (a) => diffVpnInterface(desiredVpnIf, a, odl.get('interface', ifName), owner),
        (v) => {
          const adj = v.adjacencies.find((x) => x.adjacencyType === 'primary-adjacency');
          return `vpn-interface ${ifName} in ${v.vpnInstanceNames.map((x) => x.vpnName).join(', ')}, adjacency ${cell(adj?.ipAddress)} mac ${cell(adj?.macAddress)} gateway ${cell(adj?.subnetGatewayIp)}`;
        },
      );
    } else {
      trace.add(
        'vpn-interface',
        'skipped',
        `vpn-interface ${ifName}`,
        odl.url('vpnInterface', ifName),
        n.vpnInterfaceDeferred?.message ?? 'the pod has no IP yet, so it has no vpn-interface',
      );
    }
  }
  for (const step of ['ietf-interface', 'elan-interface', 'vpn-interface'] as const)
    if (!trace.steps.some((s) => s.step === step))
      trace.add(step, 'skipped', null, null, "the pod's objects cannot be computed");

  await checkOvs(trace, facts, ovsOpts, ifName, settings.timeoutMs);
  return report();
}

/** A VPN of ours without an RD cannot route: diffVpnInstance saw no desired entry and called it fine. */
function fixVpnWithoutRd(trace: Trace, odl: OdlProbe, vpn: string): void {
  const last = trace.steps[trace.steps.length - 1];
  const actual = odl.get('vpnInstance', vpn);
  if (
    last?.step === 'vpn-instance' &&
    last.status === 'ok' &&
    actual &&
    vpnRouteDistinguisher(actual) === undefined
  ) {
    last.status = 'mismatch';
    last.message = `vpn-instance ${vpn} at ${last.path ?? '?'} has no route distinguisher`;
    last.changed = ['route-distinguisher'];
  }
}

function finish(
  ref: { namespace: string; name: string },
  trace: Trace,
  facts: PodFacts | 'off-network' | undefined,
  verdictOverride?: TraceVerdict,
): { report: TraceReport; exitCode: ExitCode } {
  const steps = TRACE_STEPS.map((name) => trace.steps.find((s) => s.step === name)).filter(
    (s): s is TraceStep => s !== undefined,
  );
  const firstProblem = steps.find((s) => PROBLEMS.has(s.status)) ?? null;
  const firstError = steps.find((s) => s.status === 'error');
  // A problem found before any read failed is a definite answer; after one, it may be a consequence.
  const problemFirst =
    firstProblem !== null && (!firstError || steps.indexOf(firstProblem) < steps.indexOf(firstError));
  const verdict: TraceVerdict =
    verdictOverride ??
    (problemFirst ? 'problem' : firstError ? 'incomplete' : firstProblem ? 'problem' : 'ok');
  const pod = typeof facts === 'object' ? facts : undefined;
  const report: TraceReport = {
    pod: `${ref.namespace}/${ref.name}`,
    node: pod?.pod.spec?.nodeName ?? null,
    ip: pod?.address ?? null,
    mac: pod?.address ? podMac(pod.address) : null,
    verdict,
    firstProblem: verdict === 'problem' ? firstProblem : null,
    steps,
    notes: trace.notes,
  };
  const exitCode =
    verdict === 'problem' ? EXIT.problem : verdict === 'incomplete' ? EXIT.unavailable : EXIT.ok;
  return { report, exitCode };
}

const STATUS_TEXT: Record<StepStatus, string> = {
  ok: 'ok',
  missing: 'MISSING',
  mismatch: 'MISMATCH',
  foreign: 'FOREIGN',
  unparsed: 'UNPARSED',
  error: 'ERROR',
  skipped: 'skipped',
  'not-checked': 'not checked',
};

export function renderTrace(r: TraceReport): string {
  const head = `Trace of pod ${r.pod}${r.node ? ` on node ${r.node}` : ''}${r.ip ? `, IP ${r.ip}, MAC ${r.mac}` : ''}`;
  const width = Math.max(...TRACE_STEPS.map((s) => s.length));
  const lines = r.steps.map((s) => {
    const marker = r.firstProblem === s ? '>' : ' ';
    return `${marker} ${STATUS_TEXT[s.status].padEnd(11)} ${s.step.padEnd(width)}  ${s.message}`;
  });
  const out = [head, '', ...lines, ''];
  const unchecked = r.steps.filter((s) => s.status === 'not-checked').map((s) => s.step);
  if (r.verdict === 'ok' && unchecked.length === 0)
    out.push('OK: everything the pod network is made of is present and as it should be.');
  else if (r.verdict === 'ok')
    out.push(`OK as far as checked: no problem found (not checked: ${unchecked.join(', ')}).`);
  else if (r.verdict === 'off-network')
    out.push('The pod is off the pod network by design; nothing to check.');
  else if (r.verdict === 'incomplete')
    out.push('INCOMPLETE: some parts could not be read (see ERROR lines); no problem found before them.');
  else if (r.firstProblem) out.push(`FIRST PROBLEM (${r.firstProblem.step}): ${r.firstProblem.message}`);
  for (const n of r.notes) out.push(`note: ${n}`);
  return out.join('\n');
}
