/**
 * Maps a request path to what it names: a discovery document or a resource collection, object
 * or subresource, with the API server's path grammar:
 *
 *   /api/v1[/namespaces/<ns>]/<plural>[/<name>[/<subresource>]]
 *   /apis/<group>/<version>[/namespaces/<ns>]/<plural>[/<name>[/<subresource>]]
 */
import type { ResourceType } from './resources.js';
import { findResource } from './resources.js';
import { apiGroup, resourceList } from './discovery.js';
import { openApiDocument } from './openapi.js';
import { badRequest, notFoundPath } from './status.js';

export type Route =
  | { kind: 'version' }
  | { kind: 'core-versions' }
  | { kind: 'groups' }
  | { kind: 'document'; body: Record<string, unknown> }
  | { kind: 'openapi-v3-root' }
  | {
      kind: 'resource';
      resource: ResourceType;
      /** The namespace of the path; undefined for cluster-scoped types and all-namespaces lists. */
      namespace: string | undefined;
      name: string | undefined;
      subresource: string | undefined;
    };

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest(`malformed path segment "${segment}"`);
  }
}

/** The route for a path, or a 404 Status for paths the simulator does not serve. */
export function routePath(pathname: string): Route {
  const parts = pathname.split('/').filter((s) => s !== '');
  if (parts[0] === 'version' && parts.length === 1) return { kind: 'version' };
  if (parts[0] === 'openapi') {
    if (parts[1] === 'v3' && parts.length === 2) return { kind: 'openapi-v3-root' };
    const body = parts[1] === 'v3' ? openApiDocument(parts.slice(2).join('/')) : undefined;
    // /openapi/v2 and unknown documents: 404 (the simulator has no schemas).
    if (!body) throw notFoundPath();
    return { kind: 'document', body };
  }
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api') {
    if (parts.length === 1) return { kind: 'core-versions' };
    group = '';
    version = parts[1] as string;
    rest = parts.slice(2);
  } else if (parts[0] === 'apis') {
    if (parts.length === 1) return { kind: 'groups' };
    group = parts[1] as string;
    if (parts.length === 2) {
      const body = apiGroup(group);
      if (!body) throw notFoundPath();
      return { kind: 'document', body };
    }
    version = parts[2] as string;
    rest = parts.slice(3);
  } else {
    throw notFoundPath();
  }
  if (rest.length === 0) {
    const body = resourceList(group, version);
    if (!body) throw notFoundPath();
    return { kind: 'document', body };
  }
  const segments = rest.map(decode);
  let namespace: string | undefined;
  let resource: ResourceType | undefined;
  let tail: string[];
  const nested =
    segments[0] === 'namespaces' && segments.length >= 3
      ? findResource(group, version, segments[2] as string)
      : undefined;
  if (nested?.namespaced) {
    namespace = segments[1] as string;
    resource = nested;
    tail = segments.slice(3);
  } else {
    resource = findResource(group, version, segments[0] as string);
    tail = segments.slice(1);
    // A namespaced object needs its namespace in the path; only its collection may omit it.
    if (resource?.namespaced && tail.length > 0) throw notFoundPath();
  }
  if (!resource || tail.length > 2) throw notFoundPath();
  const [name, subresource] = tail;
  if (subresource !== undefined && !(subresource === 'status' && resource.statusSubresource))
    throw notFoundPath();
  if (name === '' || namespace === '') throw notFoundPath();
  return { kind: 'resource', resource, namespace, name, subresource };
}
