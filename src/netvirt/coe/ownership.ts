/**
 * Which COE entries are this cluster's. The COE models have no `description` leaf for an
 * `odlcoe:` marker, so ownership rides on what the models do have:
 *
 * - pods, services (and k8s-nodes, ../k8s-node.ts `k8sNodeOwnership`): `cluster-id` equals the
 *   cluster UUID, the name-based UUID of `odlcoe:<cluster name>`.
 * - endpoints: the model has no `cluster-id`. An endpoints entry is owned through the services
 *   entry with the same `uid` (odlcoe keys both by the Service's UID): it is ours exactly when
 *   that services entry exists and is ours. So the services entry is created before its
 *   endpoints entry and deleted after it; an endpoints entry whose services entry is missing or
 *   foreign is never touched.
 *
 * Anything else (another cluster's entries, entries written by ODL's own COE watcher, which
 * carry no cluster-id, hand-made ones) is foreign: never updated, never deleted.
 */
import { clusterUuid } from '../names.js';
import type { Ownership } from '../ownership.js';
import type { CoeEndpoints, CoePod, CoeService } from './model.js';

function byClusterId(clusterId: string | undefined, clusterName: string): Ownership {
  const expected = clusterUuid(clusterName);
  return clusterId?.toLowerCase() === expected
    ? { owner: 'ours' }
    : { owner: 'foreign', reason: `cluster-id ${clusterId ?? '(absent)'} is not ${expected}` };
}

export function coePodOwnership(pod: CoePod, clusterName: string): Ownership {
  return byClusterId(pod.clusterId, clusterName);
}

export function coeServiceOwnership(service: CoeService, clusterName: string): Ownership {
  return byClusterId(service.clusterId, clusterName);
}

/** `service` is the services entry ODL holds under the same uid (undefined: none). */
export function coeEndpointsOwnership(
  endpoints: CoeEndpoints,
  service: CoeService | undefined,
  clusterName: string,
): Ownership {
  if (!service || service.uid !== endpoints.uid)
    return { owner: 'foreign', reason: `no services entry ${endpoints.uid} to establish ownership` };
  const o = coeServiceOwnership(service, clusterName);
  return o.owner === 'ours'
    ? o
    : { owner: 'foreign', reason: `services entry ${endpoints.uid}: ${o.reason}` };
}
