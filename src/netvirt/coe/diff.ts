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
import { ip, ipSet, lower, nonEmpty, compareIp } from '../canonical.js';
import { decide, decisionName, type Decision, type DecisionSpec, type DiffOptions } from '../decision.js';
import type { JsonObject } from '../json.js';
import { netvirtPaths } from '../paths.js';
import type { Profile } from '../profile.js';
import { putOp } from '../write.js';
import {
  coeEndpointsEntry,
  coePodEntry,
  coeServiceEntry,
  type CoeEndpoints,
  type CoePod,
  type CoeService,
} from './model.js';
import { coeEndpointsOwnership, coePodOwnership, coeServiceOwnership } from './ownership.js';

export interface CoeOwnerContext {
  clusterName: string;
  profile: Profile;
}

/** As the netvirt diffs': `uid` names the decision when neither side is given (a diff of nothing is `none`). */
export interface CoeDiffOptions {
  uid?: string;
}

interface Entry {
  uid: string;
  preserved?: JsonObject;
}

/**
 * The shared decision for a COE entry: every modelled leaf is owned, and an update PUTs the
 * whole entry with the members odlcoe does not model carried forward.
 */
function coeDecide<T extends Entry>(
  spec: Pick<DecisionSpec<T>, 'path' | 'ownership' | 'owned'> & { body(entry: T): JsonObject },
  desired: T | undefined,
  actual: T | undefined,
  opts: CoeDiffOptions,
): Decision {
  const diffOpts: DiffOptions = opts.uid !== undefined ? { name: opts.uid } : {};
  return decide<T>(
    {
      path: spec.path,
      ownership: spec.ownership,
      owned: spec.owned,
      create: (d) => [putOp(spec.path(d.uid), spec.body(d))],
      update: (d, a) => {
        const merged: T = a.preserved ? { ...d, preserved: a.preserved } : d;
        return { action: 'update', writes: [putOp(spec.path(d.uid), spec.body(merged))] };
      },
    },
    decisionName(desired, actual, (e) => e.uid, diffOpts),
    desired,
    actual,
    false,
  );
}

export function diffCoePod(
  desired: CoePod | undefined,
  actual: CoePod | undefined,
  ctx: CoeOwnerContext,
  opts: CoeDiffOptions = {},
): Decision {
  const paths = netvirtPaths(ctx.profile);
  return coeDecide<CoePod>(
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
  return coeDecide<CoeService>(
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
  return coeDecide<CoeEndpoints>(
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
