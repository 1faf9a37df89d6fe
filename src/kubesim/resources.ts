/**
 * The resource types the simulator serves, with the facts discovery, routing, field selectors
 * and the write paths need about each. Adding a type is one entry here.
 */

/** A stored Kubernetes object: plain JSON with at least `metadata`. */
export type KubeObject = Record<string, unknown> & { metadata: ObjectMeta };

export interface ObjectMeta {
  name: string;
  namespace?: string;
  generateName?: string;
  uid: string;
  resourceVersion: string;
  generation?: number;
  creationTimestamp: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [field: string]: unknown;
}

/** Reads one field-selector field of an object as the string the API server compares. */
type FieldGetter = (obj: KubeObject) => string;

export interface ResourceType {
  group: string;
  version: string;
  /** `v1` or `<group>/<version>`, as objects carry it. */
  apiVersion: string;
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /**
   * The type has a `status` subresource: writes to the main resource keep the stored status and
   * writes to `/status` change nothing else, as the API server's strategies do.
   */
  statusSubresource: boolean;
  /** PUT of a missing object creates it (the API server allows it for these types). */
  createOnUpdate: boolean;
  /** Field-selector fields beyond `metadata.name` and `metadata.namespace`. */
  fields: Record<string, FieldGetter>;
  /** Names must be DNS-1123 labels (63 characters) rather than subdomains. */
  labelNames: boolean;
}

function field(obj: KubeObject, ...path: string[]): unknown {
  let at: unknown = obj;
  for (const step of path) {
    if (typeof at !== 'object' || at === null || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[step];
  }
  return at;
}

/** A string field as the API server's field-label conversion renders it (missing → ""). */
function text(...path: string[]): FieldGetter {
  return (obj) => {
    const value = field(obj, ...path);
    return typeof value === 'string' ? value : '';
  };
}

/** A boolean field rendered as "true"/"false" (missing → "false"). */
function flag(...path: string[]): FieldGetter {
  return (obj) => String(field(obj, ...path) === true);
}

interface Definition {
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  statusSubresource?: boolean;
  createOnUpdate?: boolean;
  fields?: Record<string, FieldGetter>;
  labelNames?: boolean;
}

function define(d: Definition): ResourceType {
  return {
    group: d.group,
    version: d.version,
    apiVersion: d.group === '' ? d.version : `${d.group}/${d.version}`,
    plural: d.plural,
    singular: d.singular,
    kind: d.kind,
    namespaced: d.namespaced,
    shortNames: d.shortNames ?? [],
    categories: d.categories ?? [],
    statusSubresource: d.statusSubresource ?? false,
    createOnUpdate: d.createOnUpdate ?? false,
    fields: d.fields ?? {},
    labelNames: d.labelNames ?? false,
  };
}

export const RESOURCE_TYPES: readonly ResourceType[] = [
  define({
    group: '',
    version: 'v1',
    plural: 'namespaces',
    singular: 'namespace',
    kind: 'Namespace',
    namespaced: false,
    shortNames: ['ns'],
    statusSubresource: true,
    labelNames: true,
    fields: { 'status.phase': text('status', 'phase') },
  }),
  define({
    group: '',
    version: 'v1',
    plural: 'nodes',
    singular: 'node',
    kind: 'Node',
    namespaced: false,
    shortNames: ['no'],
    statusSubresource: true,
    fields: { 'spec.unschedulable': flag('spec', 'unschedulable') },
  }),
  define({
    group: '',
    version: 'v1',
    plural: 'pods',
    singular: 'pod',
    kind: 'Pod',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    statusSubresource: true,
    fields: {
      'spec.nodeName': text('spec', 'nodeName'),
      'spec.restartPolicy': text('spec', 'restartPolicy'),
      'spec.schedulerName': text('spec', 'schedulerName'),
      'spec.serviceAccountName': text('spec', 'serviceAccountName'),
      'spec.hostNetwork': flag('spec', 'hostNetwork'),
      'status.phase': text('status', 'phase'),
      'status.podIP': text('status', 'podIP'),
      'status.nominatedNodeName': text('status', 'nominatedNodeName'),
    },
  }),
  define({
    group: '',
    version: 'v1',
    plural: 'services',
    singular: 'service',
    kind: 'Service',
    namespaced: true,
    shortNames: ['svc'],
    categories: ['all'],
    statusSubresource: true,
    createOnUpdate: true,
    labelNames: true,
    fields: { 'spec.clusterIP': text('spec', 'clusterIP'), 'spec.type': text('spec', 'type') },
  }),
  define({
    group: '',
    version: 'v1',
    plural: 'endpoints',
    singular: 'endpoints',
    kind: 'Endpoints',
    namespaced: true,
    shortNames: ['ep'],
    createOnUpdate: true,
  }),
  define({
    group: '',
    version: 'v1',
    plural: 'events',
    singular: 'event',
    kind: 'Event',
    namespaced: true,
    shortNames: ['ev'],
    createOnUpdate: true,
    fields: {
      'involvedObject.kind': text('involvedObject', 'kind'),
      'involvedObject.namespace': text('involvedObject', 'namespace'),
      'involvedObject.name': text('involvedObject', 'name'),
      'involvedObject.uid': text('involvedObject', 'uid'),
      'involvedObject.apiVersion': text('involvedObject', 'apiVersion'),
      'involvedObject.resourceVersion': text('involvedObject', 'resourceVersion'),
      'involvedObject.fieldPath': text('involvedObject', 'fieldPath'),
      reason: text('reason'),
      reportingComponent: text('reportingComponent'),
      source: text('source', 'component'),
      type: text('type'),
    },
  }),
  define({
    group: 'discovery.k8s.io',
    version: 'v1',
    plural: 'endpointslices',
    singular: 'endpointslice',
    kind: 'EndpointSlice',
    namespaced: true,
    fields: { addressType: text('addressType') },
  }),
  define({
    group: 'networking.k8s.io',
    version: 'v1',
    plural: 'networkpolicies',
    singular: 'networkpolicy',
    kind: 'NetworkPolicy',
    namespaced: true,
    shortNames: ['netpol'],
  }),
  // The Network Plumbing Working Group's CRD as Multus installs it: namespaced, `net-attach-def`,
  // `spec.config` a JSON string (the CRD's schema checks only that it is a string).
  define({
    group: 'k8s.cni.cncf.io',
    version: 'v1',
    plural: 'network-attachment-definitions',
    singular: 'network-attachment-definition',
    kind: 'NetworkAttachmentDefinition',
    namespaced: true,
    shortNames: ['net-attach-def'],
  }),
  define({
    group: 'coordination.k8s.io',
    version: 'v1',
    plural: 'leases',
    singular: 'lease',
    kind: 'Lease',
    namespaced: true,
    createOnUpdate: true,
  }),
];

/** The resource served at `<group>/<version>/<plural>`, if any. */
export function findResource(group: string, version: string, plural: string): ResourceType | undefined {
  return RESOURCE_TYPES.find((r) => r.group === group && r.version === version && r.plural === plural);
}

/** The resource whose objects carry this `apiVersion` and `kind`, if any. */
export function resourceForKind(apiVersion: string, kind: string): ResourceType | undefined {
  return RESOURCE_TYPES.find((r) => r.apiVersion === apiVersion && r.kind === kind);
}

/** Every group/version served, core first, as discovery lists them. */
export function groupVersions(): { group: string; version: string }[] {
  const seen = new Map<string, { group: string; version: string }>();
  for (const r of RESOURCE_TYPES) seen.set(r.apiVersion, { group: r.group, version: r.version });
  return [...seen.values()];
}

export const NAMESPACE_TYPE: ResourceType = RESOURCE_TYPES[0] as ResourceType;
