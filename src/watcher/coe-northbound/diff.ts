/**
 * The owned-leaf diff for the COE entries: given the desired entry (translation) and the
 * actual one (parsed from ODL), decide what to write, in the `Decision` shape of the netvirt
 * diff. Every modelled leaf of a COE entry is odlcoe's (NetVirt reads these entries, it never
 * writes into them), so all of them are compared, in canonical spelling (IP literals, UUID and
 * MAC case, the order of lists whose order carries no meaning). Members odlcoe does not model
 * are carried forward verbatim in every write.
 *
 * Writes are whole-entry PUTs (ODL's `/restconf` refuses plain PATCH): the keyless lists
 * (`service-ports`, `endpoint-addresses`, `endpoint-ports`) can only be replaced whole anyway.
 */
import {
  canonicalIp,
  changedLeaves,
  diffK8sNode,
  coeEndpointsEntry,
  coePodEntry,
  coeServiceEntry,
  deleteOp,
  netvirtPaths,
  putOp,
  type CoeEndpoints,
  type CoePod,
  type CoeService,
  type Decision,
  type JsonObject,
  type OwnerContext,
  type Ownership,
  type Profile,
} from '../../netvirt/index.js';
import type { DataPath } from '../../restconf/path.js';
import type { EntryDiff } from '../object-writer.js';
import type { CoeEntries } from './odl-cache.js';
import { coeEndpointsOwnership, coePodOwnership, coeServiceOwnership } from './ownership.js';
import { compareIp } from './translate.js';

export interface CoeOwnerContext {
  clusterName: string;
  profile: Profile;
}

interface Spec<T> {
  path(uid: string): DataPath;
  ownership(actual: T): Ownership;
  owned(entry: T): Record<string, unknown>;
  body(entry: T): JsonObject;
}

interface Entry {
  uid: string;
  preserved?: JsonObject;
}

/** As the netvirt diff's: `uid` names the decision when neither side is given (a diff of nothing is `none`). */
export interface CoeDiffOptions {
  uid?: string;
}

function decide<T extends Entry>(
  spec: Spec<T>,
  desired: T | undefined,
  actual: T | undefined,
  opts: CoeDiffOptions,
): Decision {
  if (desired && actual && desired.uid !== actual.uid)
    throw new Error(`diff of different entries ${desired.uid} and ${actual.uid}`);
  const name = desired?.uid ?? actual?.uid ?? opts.uid ?? '';
  if (actual === undefined)
    return desired === undefined
      ? { action: 'none', name }
      : { action: 'create', name, writes: [putOp(spec.path(name), spec.body(desired))] };
  const ownership = spec.ownership(actual);
  if (ownership.owner === 'foreign')
    return { action: 'foreign', name, wanted: desired !== undefined, reason: ownership.reason };
  if (desired === undefined) return { action: 'delete-candidate', name, writes: [deleteOp(spec.path(name))] };
  const changed = changedLeaves(spec.owned(desired), spec.owned(actual));
  if (changed.length === 0) return { action: 'none', name };
  const merged: T = actual.preserved ? { ...desired, preserved: actual.preserved } : desired;
  return { action: 'update', name, changed, writes: [putOp(spec.path(name), spec.body(merged))] };
}

const ip = (value: string | undefined): string | undefined => {
  if (value === undefined) return undefined;
  try {
    return canonicalIp(value);
  } catch {
    return value;
  }
};
const lower = (value: string | undefined): string | undefined => value?.toLowerCase();
const ipSet = (values: readonly string[] | undefined): string[] | undefined =>
  values === undefined || values.length === 0
    ? undefined
    : [...new Set(values.map((v) => ip(v) ?? v))].sort(compareIp);
const nonEmpty = <T>(items: T[]): T[] | undefined => (items.length === 0 ? undefined : items);

export function diffCoePod(
  desired: CoePod | undefined,
  actual: CoePod | undefined,
  ctx: CoeOwnerContext,
  opts: CoeDiffOptions = {},
): Decision {
  const paths = netvirtPaths(ctx.profile);
  return decide<CoePod>(
    {
      path: paths.coePod,
      ownership: (a) => coePodOwnership(a, ctx.clusterName),
      owned: (e) => ({
        name: e.name,
        'cluster-id': lower(e.clusterId),
        'host-ip-address': ip(e.hostIpAddress),
        'network-NS': e.networkNs,
        'port-mac-address': lower(e.portMacAddress),
        // In order: NetVirt uses interface[0].
        interface: nonEmpty(
          e.interfaces.map((i) => ({
            uid: lower(i.uid),
            'ip-address': ip(i.ipAddress),
            'network-id': lower(i.networkId),
            'network-type': i.networkType,
          })),
        ),
      }),
      body: coePodEntry,
    },
    desired,
    actual,
    opts,
  );
}

export function diffCoeService(
  desired: CoeService | undefined,
  actual: CoeService | undefined,
  ctx: CoeOwnerContext,
  opts: CoeDiffOptions = {},
): Decision {
  const paths = netvirtPaths(ctx.profile);
  return decide<CoeService>(
    {
      path: paths.coeService,
      ownership: (a) => coeServiceOwnership(a, ctx.clusterName),
      owned: (e) => ({
        name: e.name,
        'cluster-id': lower(e.clusterId),
        'cluster-ip-address': ip(e.clusterIpAddress),
        'network-NS': e.networkNs,
        'external-ip-address': ipSet(e.externalIpAddresses),
        'load-balancer-IP': ip(e.loadBalancerIp),
        'ingress-ip-address': ipSet(e.ingressIpAddresses),
        // In spec order: the list is keyless, ODL keeps what it is given.
        'service-ports': nonEmpty(
          (e.servicePorts ?? []).map((p) => ({
            name: p.name,
            port: p.port,
            'target-port': p.targetPort,
            'node-port': p.nodePort,
          })),
        ),
      }),
      body: coeServiceEntry,
    },
    desired,
    actual,
    opts,
  );
}

/** `service` is the services entry ODL holds under the same uid: it carries the ownership. */
export function diffCoeEndpoints(
  desired: CoeEndpoints | undefined,
  actual: CoeEndpoints | undefined,
  service: CoeService | undefined,
  ctx: CoeOwnerContext,
  opts: CoeDiffOptions = {},
): Decision {
  const paths = netvirtPaths(ctx.profile);
  return decide<CoeEndpoints>(
    {
      path: paths.coeEndpoints,
      ownership: (a) => coeEndpointsOwnership(a, service, ctx.clusterName),
      owned: (e) => ({
        name: e.name,
        'network-NS': e.networkNs,
        'endpoint-addresses': nonEmpty(
          (e.endpointAddresses ?? [])
            .map((a) => ({ 'ip-address': ip(a.ipAddress), 'host-name': a.hostName, 'node-name': a.nodeName }))
            .sort((x, y) => compareIp(x['ip-address'] ?? '', y['ip-address'] ?? '')),
        ),
        'endpoint-ports': nonEmpty(
          (e.endpointPorts ?? [])
            .map((p) => ({ name: p.name, port: p.port }))
            .sort((x, y) => (x.port ?? -1) - (y.port ?? -1) || (x.name ?? '').localeCompare(y.name ?? '')),
        ),
      }),
      body: coeEndpointsEntry,
    },
    desired,
    actual,
    opts,
  );
}

/**
 * The diff of every COE kind, for the writer. An endpoints entry is owned through the services
 * entry of the same uid as the cache holds it (re-read before any update or delete); k8s-node
 * entries are diffed as by the netvirt backend.
 */
export function coeEntryDiff(
  cache: { get(kind: 'coeService', uid: string): CoeService | undefined },
  owner: OwnerContext,
): EntryDiff<CoeEntries> {
  return (kind, uid, desired, actual) => {
    const d = desired as never;
    const a = actual as never;
    switch (kind) {
      case 'coePod':
        return diffCoePod(d, a, owner, { uid });
      case 'coeService':
        return diffCoeService(d, a, owner, { uid });
      case 'coeEndpoints':
        return diffCoeEndpoints(d, a, cache.get('coeService', uid), owner, { uid });
      case 'k8sNode':
        return diffK8sNode(d, a, owner, { name: uid });
      default:
        throw new Error(`unknown COE kind ${String(kind)}`);
    }
  };
}
