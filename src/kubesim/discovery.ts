/**
 * The legacy (unaggregated) discovery documents kubectl and client libraries read to map kinds
 * to paths. kubectl asks for aggregated discovery first and falls back to these when the
 * answer is plain `application/json`.
 */
import type { ResourceType } from './resources.js';
import { RESOURCE_TYPES, groupVersions } from './resources.js';

/** The version the simulator claims; kubectl's version skew policy accepts 1.31 to 1.33 clients. */
export const SERVER_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0-kubesim' } as const;

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function versionInfo(): Record<string, string> {
  return {
    ...SERVER_VERSION,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2025-01-01T00:00:00Z',
    goVersion: 'go1.23',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}

/** `/api`: the core group's versions. */
export function coreVersions(serverAddress: string): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupDocument(group: string): Record<string, unknown> {
  const versions = groupVersions()
    .filter((gv) => gv.group === group)
    .map((gv) => ({ groupVersion: `${group}/${gv.version}`, version: gv.version }));
  return { name: group, versions, preferredVersion: versions[0] };
}

/** `/apis`: every named group. */
export function groupList(without: ReadonlySet<string> = new Set()): Record<string, unknown> {
  const groups = [...new Set(groupVersions().map((gv) => gv.group))].filter(
    (g) => g !== '' && !without.has(g),
  );
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map(groupDocument) };
}

/** `/apis/<group>`, or undefined for a group the simulator does not serve. */
export function apiGroup(group: string): Record<string, unknown> | undefined {
  if (group === '' || !RESOURCE_TYPES.some((r) => r.group === group)) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupDocument(group) };
}

function apiResources(resource: ResourceType): Record<string, unknown>[] {
  const main: Record<string, unknown> = {
    name: resource.plural,
    singularName: resource.singular,
    namespaced: resource.namespaced,
    kind: resource.kind,
    verbs: VERBS,
  };
  if (resource.shortNames.length > 0) main.shortNames = resource.shortNames;
  if (resource.categories.length > 0) main.categories = resource.categories;
  if (!resource.statusSubresource) return [main];
  return [
    main,
    {
      name: `${resource.plural}/status`,
      singularName: '',
      namespaced: resource.namespaced,
      kind: resource.kind,
      verbs: ['get', 'patch', 'update'],
    },
  ];
}

/** `/api/v1` or `/apis/<group>/<version>`, or undefined when not served. */
export function resourceList(group: string, version: string): Record<string, unknown> | undefined {
  const served = RESOURCE_TYPES.filter((r) => r.group === group && r.version === version);
  if (served.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group === '' ? version : `${group}/${version}`,
    resources: served.flatMap(apiResources),
  };
}
