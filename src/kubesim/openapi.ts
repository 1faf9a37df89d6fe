/**
 * A minimal OpenAPI v3 surface: no schemas, only the PATCH operation of each resource carrying
 * its group-version-kind and the `fieldValidation` query parameter. That is what kubectl reads
 * to decide that the server validates fields itself, so `kubectl create -f` works without
 * `--validate=false` and without kubectl downloading schemas (which the simulator has none of).
 * /openapi/v2 stays 404.
 */
import { SERVER_VERSION } from './discovery.js';
import { RESOURCE_TYPES, groupVersions } from './resources.js';

function gvPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

/** `/openapi/v3`: where each group-version's document lives. */
export function openApiRoot(): Record<string, unknown> {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const { group, version } of groupVersions()) {
    const path = gvPath(group, version);
    paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${SERVER_VERSION.gitVersion}` };
  }
  return { paths };
}

/** `/openapi/v3/<api/v1 | apis/group/version>`, or undefined when not served. */
export function openApiDocument(gvPathText: string): Record<string, unknown> | undefined {
  const gv = groupVersions().find(({ group, version }) => gvPath(group, version) === gvPathText);
  if (!gv) return undefined;
  const paths: Record<string, unknown> = {};
  for (const r of RESOURCE_TYPES) {
    if (r.group !== gv.group || r.version !== gv.version) continue;
    const prefix = `/${gvPath(r.group, r.version)}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.plural}`;
    const gvk = { group: r.group, version: r.version, kind: r.kind };
    const parameters = [
      { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } },
      { name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } },
    ];
    paths[prefix] = {
      post: {
        operationId: `create${r.kind}`,
        'x-kubernetes-action': 'post',
        'x-kubernetes-group-version-kind': gvk,
        parameters,
        responses: {},
      },
    };
    paths[`${prefix}/{name}`] = {
      put: {
        operationId: `replace${r.kind}`,
        'x-kubernetes-action': 'put',
        'x-kubernetes-group-version-kind': gvk,
        parameters,
        responses: {},
      },
      patch: {
        operationId: `patch${r.kind}`,
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': gvk,
        parameters,
        responses: {},
      },
    };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: SERVER_VERSION.gitVersion }, paths };
}
