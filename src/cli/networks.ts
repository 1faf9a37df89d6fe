/**
 * `odlcoectl network list|get|create|update|delete`: odlcoe's extra networks as
 * NetworkAttachmentDefinitions (the seed's QueryVL, CreateVL, UpdateVL and DeleteVL). The NAD is
 * the network: these commands only read and write NADs and read the pods' attachment records;
 * the watcher makes the ELAN, VPN and interfaces in ODL. A config is validated here with the
 * watcher's own rules (netvirt/network-config.ts) before anything is written, so a refused
 * network never reaches the cluster.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { KubeApiError, type KubeClient } from '../k8s/kube-client.js';
import { isAttachmentFailure } from '../netvirt/attachments.js';
import { cidrContains } from '../netvirt/names.js';
import {
  NAD_API_VERSION,
  NAD_KIND,
  NAD_PLURAL,
  ODLCOE_CNI_TYPE,
  readNetworkDefinition,
  type NetworkAttachmentDefinition,
} from '../netvirt/network-config.js';
import { networkInstanceName } from '../netvirt/network-names.js';
import { podAttachments } from '../netvirt/plan-network.js';
import { attachmentVpnName } from '../netvirt/translate-network.js';
import { CliError, EXIT } from './exit-codes.js';
import { listAll, readObject, type ReadOptions } from './kube-reader.js';
import { cell, indent, table } from './render.js';

const seg = encodeURIComponent;
const nadsPath = (namespace?: string) =>
  namespace === undefined
    ? `/apis/${NAD_API_VERSION}/${NAD_PLURAL}`
    : `/apis/${NAD_API_VERSION}/namespaces/${seg(namespace)}/${NAD_PLURAL}`;
const nadPath = (namespace: string, name: string) => `${nadsPath(namespace)}/${seg(name)}`;

/** `<namespace>/<name>`, as every network command names a network. */
export function parseNetworkRef(ref: string): { namespace: string; name: string } {
  const [namespace, name, ...rest] = ref.split('/');
  if (!namespace || !name || rest.length > 0)
    throw new CliError(`${JSON.stringify(ref)} is not <namespace>/<name>`, EXIT.usage);
  return { namespace, name };
}

export interface NetworkAttachmentView {
  pod: string;
  interface: string;
  interfaceName?: string;
  ips?: string[];
  mac?: string;
  error?: string;
}

export interface NetworkView {
  namespace: string;
  name: string;
  /** `valid`, or `invalid` with `problem` (the Event the watcher records on the NAD says the same). */
  state: 'valid' | 'invalid';
  problem?: string;
  routing?: string;
  /** The ELAN its attachments join: odlcoe's own, or one made in ODL. */
  elan?: string;
  elanMadeInOdl?: boolean;
  vpn?: string;
  subnets?: { cidr: string; gateway?: string; exclude: string[] }[];
  routes?: { dst: string; gw?: string }[];
  attachments: NetworkAttachmentView[];
}

/** The NADs' views (odlcoe's only), with the pods' attachment records on each. */
export function networkViews(
  nads: readonly NetworkAttachmentDefinition[],
  pods: readonly V1Pod[],
): NetworkView[] {
  const byNetwork = new Map<string, NetworkAttachmentView[]>();
  for (const pod of pods) {
    let records;
    try {
      records = podAttachments(pod);
    } catch {
      continue;
    }
    for (const [ifname, r] of records) {
      const v: NetworkAttachmentView = {
        pod: `${pod.metadata?.namespace ?? '?'}/${pod.metadata?.name ?? '?'}`,
        interface: ifname,
      };
      if (isAttachmentFailure(r)) v.error = `${r.error.reason}: ${r.error.message}`;
      else Object.assign(v, { interfaceName: r.interfaceName, ips: r.ips, mac: r.mac });
      byNetwork.set(r.network, [...(byNetwork.get(r.network) ?? []), v]);
    }
  }
  const out: NetworkView[] = [];
  for (const nad of nads) {
    const namespace = nad.metadata?.namespace ?? '';
    const name = nad.metadata?.name ?? '';
    const def = readNetworkDefinition(nad);
    if (def.state === 'foreign-plugin') continue;
    const attachments = byNetwork.get(`${namespace}/${name}`) ?? [];
    if (def.state === 'invalid') {
      out.push({ namespace, name, state: 'invalid', problem: def.message, attachments });
      continue;
    }
    const n = def.network;
    const view: NetworkView = {
      namespace,
      name,
      state: 'valid',
      routing: n.routing,
      elan: n.elan ?? networkInstanceName(namespace, name),
      elanMadeInOdl: n.elan !== undefined,
      subnets: n.subnets.map((s) => ({
        cidr: s.cidr,
        ...(s.gateway ? { gateway: s.gateway } : {}),
        exclude: rawExcludes(nad, s.cidr),
      })),
      routes: n.routes,
      attachments,
    };
    const vpn = attachmentVpnName(n);
    if (vpn !== undefined) view.vpn = vpn;
    out.push(view);
  }
  return out.sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
}

/** The exclusions as written (the parsed form is numeric ranges). */
function rawExcludes(nad: NetworkAttachmentDefinition, cidr: string): string[] {
  const config = JSON.parse(nad.spec?.config ?? '{}') as {
    subnets?: { cidr?: string; exclude?: string[] }[];
  };
  return config.subnets?.find((s) => s.cidr === cidr)?.exclude ?? [];
}

export async function readNetworks(kube: KubeClient, namespace: string | undefined, opts: ReadOptions) {
  const [nads, pods] = await Promise.all([
    listAll<NetworkAttachmentDefinition>(kube, nadsPath(namespace), opts).catch((err: unknown) => {
      if (err instanceof KubeApiError && err.status === 404)
        throw new CliError(
          'the API server does not serve NetworkAttachmentDefinitions (k8s.cni.cncf.io/v1): install the Multus CRD first',
          EXIT.unavailable,
        );
      throw err;
    }),
    listAll<V1Pod>(kube, '/api/v1/pods', opts),
  ]);
  return networkViews(nads, pods);
}

export function renderNetworkList(views: readonly NetworkView[]): string {
  if (views.length === 0) return 'no odlcoe networks';
  return table(
    ['NETWORK', 'STATE', 'ROUTING', 'SUBNETS', 'ELAN', 'ATTACHED'],
    views.map((v) => [
      `${v.namespace}/${v.name}`,
      v.state,
      cell(v.routing),
      cell(v.subnets?.map((s) => s.cidr).join(',')),
      cell(v.elan && v.elanMadeInOdl ? `${v.elan} (made in ODL)` : v.elan),
      String(v.attachments.filter((a) => !a.error).length),
    ]),
  );
}

export function renderNetwork(v: NetworkView): string {
  const lines = [`network ${v.namespace}/${v.name}: ${v.state}${v.problem ? ` (${v.problem})` : ''}`];
  if (v.state === 'valid') {
    const vpnOwner = v.routing === 'namespace' ? ` (namespace ${v.namespace}'s)` : '';
    lines.push(`  routing  ${cell(v.routing)}${v.vpn ? `, VPN ${v.vpn}${vpnOwner}` : ''}`);
    lines.push(
      `  ELAN     ${cell(v.elan)}${v.elanMadeInOdl ? ' (made in ODL, never written by odlcoe)' : ''}`,
    );
    for (const s of v.subnets ?? [])
      lines.push(
        `  subnet   ${s.cidr}${s.gateway ? ` gateway ${s.gateway}` : ''}${s.exclude.length ? ` exclude ${s.exclude.join(',')}` : ''}`,
      );
    for (const r of v.routes ?? []) lines.push(`  route    ${r.dst}${r.gw ? ` via ${r.gw}` : ''}`);
  }
  if (v.attachments.length === 0) lines.push('  no attachments');
  else
    lines.push(
      indent(
        table(
          ['POD', 'INTERFACE', 'ODL INTERFACE', 'IPS', 'MAC', 'ERROR'],
          v.attachments.map((a) => [
            a.pod,
            a.interface,
            cell(a.interfaceName),
            cell(a.ips?.join(',')),
            cell(a.mac),
            cell(a.error),
          ]),
        ),
      ),
    );
  return lines.join('\n');
}

/** What `create` and `update` may set (absent: unchanged on update). */
export interface NetworkFlags {
  subnet?: string[];
  gateway?: string[];
  exclude?: string[];
  routing?: string;
  route?: string[];
  clearRoutes?: boolean;
  elan?: string;
}

type Config = Record<string, unknown> & {
  subnets?: { cidr: string; gateway?: string; exclude?: string[] }[];
};

/** The config with the flags applied: subnets (with their gateways and exclusions), routing, routes, ELAN. */
export function applyNetworkFlags(base: Config, flags: NetworkFlags, name: string): Config {
  const config: Config = {
    ...base,
    cniVersion: base.cniVersion ?? '1.0.0',
    name: base.name ?? name,
    type: ODLCOE_CNI_TYPE,
  };
  if (flags.subnet !== undefined) {
    const subnets = flags.subnet.map(
      (cidr) => ({ cidr }) as { cidr: string; gateway?: string; exclude?: string[] },
    );
    const owner = (what: string, ip: string) => {
      const s = subnets.find((x) => containsLoosely(x.cidr, ip));
      if (!s) throw new CliError(`--${what} ${ip} is in none of the given --subnet ranges`, EXIT.usage);
      return s;
    };
    for (const gw of flags.gateway ?? []) owner('gateway', gw).gateway = gw;
    for (const x of flags.exclude ?? []) {
      const s = owner('exclude', x.split('/')[0] ?? x);
      s.exclude = [...(s.exclude ?? []), x];
    }
    config.subnets = subnets;
  } else if (flags.gateway !== undefined || flags.exclude !== undefined)
    throw new CliError('--gateway and --exclude go with --subnet (give every subnet again)', EXIT.usage);
  if (flags.routing !== undefined) config.routing = flags.routing;
  if (flags.elan !== undefined) config.elan = flags.elan;
  if (flags.clearRoutes) delete config.routes;
  if (flags.route !== undefined)
    config.routes = flags.route.map((r) => {
      const [dst = '', gw] = r.split(',');
      return gw === undefined ? { dst } : { dst, gw };
    });
  return config;
}

/** Whether `ip` is in `cidr`; a bad CIDR or address is left for the validation to name. */
function containsLoosely(cidr: string, ip: string): boolean {
  try {
    return cidrContains(cidr, ip);
  } catch {
    return false;
  }
}

/** Refuses a config the watcher would refuse, with the watcher's message. */
function validate(namespace: string, name: string, config: Config): void {
  const def = readNetworkDefinition({
    metadata: { namespace, name, uid: 'not-yet-created' },
    spec: { config: JSON.stringify(config) },
  });
  if (def.state === 'invalid') throw new CliError(`refused, nothing written: ${def.message}`, EXIT.usage);
}

export async function createNetwork(
  kube: KubeClient,
  ref: { namespace: string; name: string },
  flags: NetworkFlags,
  opts: ReadOptions,
): Promise<NetworkView> {
  if (!flags.subnet?.length) throw new CliError('create needs at least one --subnet', EXIT.usage);
  const config = applyNetworkFlags({}, flags, ref.name);
  validate(ref.namespace, ref.name, config);
  await kube.request('POST', nadsPath(ref.namespace), {
    body: {
      apiVersion: NAD_API_VERSION,
      kind: NAD_KIND,
      metadata: { name: ref.name, namespace: ref.namespace },
      spec: { config: JSON.stringify(config) },
    },
    timeoutMs: opts.timeoutMs,
  });
  return getNetwork(kube, ref, opts);
}

export async function updateNetwork(
  kube: KubeClient,
  ref: { namespace: string; name: string },
  flags: NetworkFlags,
  opts: ReadOptions,
): Promise<NetworkView> {
  const nad = await readNad(kube, ref, opts);
  let base: Config;
  try {
    base = JSON.parse(nad.spec?.config ?? '{}') as Config;
  } catch {
    throw new CliError(
      `${ref.namespace}/${ref.name}: spec.config is not JSON; fix it with kubectl`,
      EXIT.usage,
    );
  }
  if (readNetworkDefinition(nad).state === 'foreign-plugin')
    throw new CliError(`${ref.namespace}/${ref.name} is not an odlcoe network`, EXIT.usage);
  const config = applyNetworkFlags(base, flags, ref.name);
  validate(ref.namespace, ref.name, config);
  // The resourceVersion makes a concurrent change fail (409) instead of being overwritten.
  await kube.request('PUT', nadPath(ref.namespace, ref.name), {
    body: { ...nad, spec: { ...nad.spec, config: JSON.stringify(config) } },
    timeoutMs: opts.timeoutMs,
  });
  return getNetwork(kube, ref, opts);
}

export async function deleteNetwork(
  kube: KubeClient,
  ref: { namespace: string; name: string },
  force: boolean,
  opts: ReadOptions,
): Promise<NetworkView> {
  const view = await getNetwork(kube, ref, opts);
  const attached = view.attachments.filter((a) => !a.error);
  if (attached.length > 0 && !force)
    throw new CliError(
      `refusing to delete: ${attached.length} pod interface(s) are attached (${attached
        .slice(0, 5)
        .map((a) => `${a.pod} ${a.interface}`)
        .join(
          ', ',
        )}${attached.length > 5 ? ', ...' : ''}); their ODL interfaces would be removed. Use --force to delete anyway.`,
      EXIT.refused,
    );
  await kube.request('DELETE', nadPath(ref.namespace, ref.name), { timeoutMs: opts.timeoutMs });
  return view;
}

async function readNad(kube: KubeClient, ref: { namespace: string; name: string }, opts: ReadOptions) {
  const nad = await readObject<NetworkAttachmentDefinition>(kube, nadPath(ref.namespace, ref.name), opts);
  if (!nad) throw new CliError(`no NetworkAttachmentDefinition ${ref.namespace}/${ref.name}`, EXIT.problem);
  return nad;
}

export async function getNetwork(
  kube: KubeClient,
  ref: { namespace: string; name: string },
  opts: ReadOptions,
): Promise<NetworkView> {
  const nad = await readNad(kube, ref, opts);
  const pods = await listAll<V1Pod>(kube, '/api/v1/pods', opts);
  const [view] = networkViews([nad], pods);
  if (!view)
    throw new CliError(
      `${ref.namespace}/${ref.name} is not an odlcoe network (its type is another plugin's)`,
      EXIT.problem,
    );
  return view;
}
