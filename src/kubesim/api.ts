/**
 * The resource API: turns one routed request (verb, path, query, body) into a store call and
 * its JSON answer, or hands the response to the watch hub.
 */
import type { ServerResponse } from 'node:http';
import { deleteRequestOf } from './deletion.js';
import { mediaType, negotiateJson, requireJson, unsupportedMediaType } from './media.js';
import type { Json } from './patch.js';
import { isPatchType } from './patch.js';
import type { KubeObject, ResourceType } from './resources.js';
import type { Route } from './route.js';
import { objectPredicate } from './selectors.js';
import type { ListResult, ObjectStore } from './store.js';
import { badRequest, methodNotAllowed, notFound } from './status.js';
import type { WatchHub } from './watch.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export type ResourceRoute = Extract<Route, { kind: 'resource' }>;

/** A JSON answer: status code and body. */
export interface Reply {
  code: number;
  body: unknown;
}

/** Go's strconv.ParseBool, which the API server uses for boolean query parameters. */
export function queryFlag(query: URLSearchParams, name: string): boolean {
  const value = query.get(name);
  if (value === null || value === '') return false;
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(value)) return false;
  throw badRequest(`${name}: invalid boolean value "${value}"`);
}

function queryInteger(query: URLSearchParams, name: string): number | undefined {
  const value = query.get(name);
  if (value === null || value === '') return undefined;
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw badRequest(`${name}: invalid value "${value}": must be a non-negative integer`);
  return Number(value);
}

/** The verb a method on a path means, as the API server's request-info resolver decides it. */
export function verbOf(route: ResourceRoute, method: string, query: URLSearchParams): Verb {
  const item = route.name !== undefined;
  const allNamespaces = route.resource.namespaced && route.namespace === undefined;
  switch (method) {
    case 'GET':
      if (queryFlag(query, 'watch')) return 'watch';
      return item ? 'get' : 'list';
    case 'POST':
      if (!item && !allNamespaces) return 'create';
      break;
    case 'PUT':
      if (item) return 'update';
      break;
    case 'PATCH':
      if (item) return 'patch';
      break;
    case 'DELETE':
      if (route.subresource !== undefined) break;
      if (item) return 'delete';
      if (!allNamespaces) return 'deletecollection';
      break;
  }
  throw methodNotAllowed(method);
}

function dryRun(query: URLSearchParams): boolean {
  const values = query.getAll('dryRun');
  for (const v of values)
    if (v !== 'All') throw badRequest(`dryRun: Unsupported value: "${v}": supported values: "All"`);
  return values.length > 0;
}

/** The list body: items without kind/apiVersion, as the API server serialises typed lists. */
export function listBody(resource: ResourceType, result: ListResult): Record<string, unknown> {
  const metadata: Record<string, unknown> = { resourceVersion: result.resourceVersion };
  if (result.continueToken !== undefined) metadata.continue = result.continueToken;
  if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount;
  const items = result.items.map(({ kind: _kind, apiVersion: _apiVersion, ...rest }) => rest);
  return { kind: `${resource.kind}List`, apiVersion: resource.apiVersion, metadata, items };
}

function parseJson(body: Buffer, what: string): Json {
  if (body.length === 0) throw badRequest(`${what}: the request body is empty`);
  try {
    return JSON.parse(body.toString('utf8')) as Json;
  } catch (err) {
    throw badRequest(
      `${what}: the request body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

export interface RequestInput {
  route: ResourceRoute;
  verb: Verb;
  query: URLSearchParams;
  contentType: string | undefined;
  /** The Accept header: the answer is JSON, so it must allow JSON (406 otherwise). */
  accept: string | undefined;
  body: () => Promise<Buffer>;
  /** Whether a watch opened now must go silent (fault injection). */
  silentWatch: boolean;
}

/**
 * Serves one resource request. Returns the JSON reply, or undefined when a watch took over the
 * response.
 */
export async function serveResource(
  store: ObjectStore,
  hub: WatchHub,
  input: RequestInput,
  response: ServerResponse,
): Promise<Reply | undefined> {
  const { route, verb, query } = input;
  const { resource, subresource } = route;
  const namespace = route.namespace ?? '';
  const name = route.name ?? '';
  negotiateJson(input.accept);
  switch (verb) {
    case 'get': {
      const obj = store.get(resource, namespace, name);
      if (!obj) throw notFound(resource, name);
      return { code: 200, body: obj };
    }
    case 'list': {
      const predicate = objectPredicate(
        resource,
        query.get('labelSelector') ?? undefined,
        query.get('fieldSelector') ?? undefined,
      );
      const result = store.list(resource, {
        namespace: route.namespace,
        predicate,
        limit: queryInteger(query, 'limit'),
        continueToken: query.get('continue') ?? undefined,
        resourceVersion: query.get('resourceVersion') ?? undefined,
        resourceVersionMatch: query.get('resourceVersionMatch') ?? undefined,
      });
      return { code: 200, body: listBody(resource, result) };
    }
    case 'watch': {
      const predicate = objectPredicate(
        resource,
        query.get('labelSelector') ?? undefined,
        query.get('fieldSelector') ?? undefined,
      );
      hub.open(
        {
          resource,
          namespace: route.namespace,
          name: route.name,
          predicate,
          resourceVersion: query.get('resourceVersion') ?? undefined,
          allowBookmarks: queryFlag(query, 'allowWatchBookmarks'),
          timeoutSeconds: queryInteger(query, 'timeoutSeconds'),
          sendInitialEvents: queryFlag(query, 'sendInitialEvents'),
          silent: input.silentWatch,
        },
        response,
      );
      return undefined;
    }
    case 'create': {
      requireJson(input.contentType);
      const body = parseJson(await input.body(), `create ${resource.plural}`);
      return { code: 201, body: store.create(resource, namespace, body, { dryRun: dryRun(query) }) };
    }
    case 'update': {
      requireJson(input.contentType);
      const body = parseJson(await input.body(), `update ${resource.plural}`);
      const status = subresource === 'status' ? 'status' : undefined;
      const { object, created } = store.update(resource, namespace, name, body, status, {
        dryRun: dryRun(query),
      });
      return { code: created ? 201 : 200, body: object };
    }
    case 'patch': {
      const type = mediaType(input.contentType);
      if (!isPatchType(type)) {
        throw unsupportedMediaType([
          'application/json-patch+json',
          'application/merge-patch+json',
          'application/strategic-merge-patch+json',
        ]);
      }
      const patch = parseJson(await input.body(), `patch ${resource.plural}`);
      const status = subresource === 'status' ? 'status' : undefined;
      return {
        code: 200,
        body: store.patch(resource, namespace, name, type, patch, status, { dryRun: dryRun(query) }),
      };
    }
    case 'delete': {
      const options = await deleteOptions(input);
      return {
        code: 200,
        body: store.delete(resource, namespace, name, options, {
          dryRun: dryRun(query),
          gracePeriodSeconds: deleteRequestOf(options, query).gracePeriodSeconds,
        }),
      };
    }
    case 'deletecollection': {
      const options = await deleteOptions(input);
      const predicate = objectPredicate(
        resource,
        query.get('labelSelector') ?? undefined,
        query.get('fieldSelector') ?? undefined,
      );
      const deleted: KubeObject[] = store.deleteCollection(resource, route.namespace, predicate, options, {
        dryRun: dryRun(query),
        gracePeriodSeconds: deleteRequestOf(options, query).gracePeriodSeconds,
      });
      return {
        code: 200,
        body: listBody(resource, { items: deleted, resourceVersion: String(store.resourceVersion) }),
      };
    }
  }
}

/** DeleteOptions from the body (optional; kubectl and client-node send one). */
async function deleteOptions(input: RequestInput): Promise<unknown> {
  const body = await input.body();
  if (body.length === 0) return undefined;
  requireJson(input.contentType);
  return parseJson(body, 'DeleteOptions');
}
