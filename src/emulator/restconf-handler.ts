import { decodeEntry, decodeValue, encodeDocument, parseJsonText, resolveMember } from './codec.js';
import type { Child, Instance } from './data.js';
import { mergeValue, type Datastore } from './datastore.js';
import { malformed, RestconfError } from './errors.js';
import type { OdlWriteBacks } from './odl-writebacks.js';
import { schemaPathOf, type SchemaNode, type SchemaRoot } from './schema.js';
import { formatDataUrl, parseDataUrl, type DataUrl, type Step } from './url.js';
import { applyPatch, readPatch } from './yang-patch.js';
import type { Profile } from '../netvirt/profile.js';

/**
 * RESTCONF data requests of both dialects, as ODL (Sodium/Aluminium) answers them:
 *
 * | operation                 | bierman02 `/restconf`     | RFC 8040 `/rests/data` |
 * |---------------------------|---------------------------|------------------------|
 * | GET                       | 200                       | 200                    |
 * | PUT creating              | 201                       | 201                    |
 * | PUT replacing             | 200                       | 204                    |
 * | POST (create in parent)   | 204 + Location            | 201 + Location         |
 * | POST of existing data     | 409 data-exists           | 409 data-exists        |
 * | PATCH (plain merge)       | 415 (only YANG-Patch)     | 200, creates if absent |
 * | PATCH (YANG Patch)        | 200 + yang-patch-status   | 200 + yang-patch-status |
 * | DELETE                    | 200                       | 204                    |
 * | GET/DELETE of missing     | 404 data-missing          | 404 data-missing       |
 */
export interface DataRequest {
  method: string;
  /** Path without the query string, still percent-encoded. */
  pathname: string;
  query: URLSearchParams;
  contentType: string | undefined;
  body: string;
}

export interface DataResponse {
  status: number;
  body?: string;
  location?: string;
  /** The accepted write, for the record file. */
  accepted?: { body: unknown };
  /** Edits this request applied (a single write: 1; a YANG Patch: its edits, or 0 when it failed). */
  edits?: number;
  contentType?: string;
  /**
   * A YANG Patch's edits, each as the single write it stands for (`POST` parent, `PUT` /
   * `PATCH` / `DELETE` entry), with the module of its target: the record file gets them one
   * line each when the patch applied, and the write counters count them by module.
   */
  patchEdits?: { method: string; url: string; body: unknown; module: string }[];
}

export interface HandlerOptions {
  profile: Profile;
  /** false: YANG Patch is refused with 415, as by a controller without it. */
  yangPatch: boolean;
}

/** YANG-Patch media types: both releases take the draft's, Aluminium's RFC 8040 also RFC 8072's. */
function patchMediaType(contentType: string | undefined): string | undefined {
  const type = contentType?.split(';')[0]!.trim().toLowerCase();
  return type === 'application/yang.patch+json' || type === 'application/yang-patch+json' ? type : undefined;
}

const JSON_TYPES = new Set(['application/json', 'application/yang.data+json', 'application/yang-data+json']);

export class RestconfHandler {
  constructor(
    private readonly schema: SchemaRoot,
    private readonly config: Datastore,
    private readonly operational: Datastore,
    private readonly writeBacks: OdlWriteBacks,
    private readonly options: HandlerOptions = { profile: 'sodium', yangPatch: true },
  ) {}

  handle(request: DataRequest): DataResponse {
    const url = parseDataUrl(this.schema, request.pathname);
    if (!url)
      throw new RestconfError('protocol', 'unknown-element', `No RESTCONF resource at ${request.pathname}`, {
        status: 404,
      });
    switch (request.method) {
      case 'GET':
        return this.get(url, request.query);
      case 'PUT':
        return this.write(url, request, 'put');
      case 'PATCH':
        if (patchMediaType(request.contentType)) return this.yangPatch(url, request);
        if (url.dialect === 'bierman02') {
          throw new RestconfError(
            'protocol',
            'operation-not-supported',
            '/restconf accepts PATCH only as YANG-Patch (application/yang.patch+json), which the emulator does not implement',
            { status: 415 },
          );
        }
        return this.write(url, request, 'merge');
      case 'POST':
        return this.post(url, request);
      case 'DELETE':
        return this.delete(url);
      default:
        throw methodNotAllowed(request.method);
    }
  }

  /** YANG Patch (see yang-patch.ts): 200 with the patch status, 400 for a document it cannot read. */
  private yangPatch(url: DataUrl, request: DataRequest): DataResponse {
    const type = patchMediaType(request.contentType)!;
    const accepted =
      this.options.yangPatch &&
      (type === 'application/yang.patch+json' ||
        (url.dialect === 'rfc8040' && this.options.profile !== 'sodium'));
    if (!accepted)
      throw new RestconfError('protocol', 'operation-not-supported', `Unsupported Media Type ${type}`, {
        status: 415,
      });
    this.requireConfig(url, 'PATCH');
    const { patchId, edits } = readPatch(this.schema, url.steps, request.body, url.dialect);
    const watches = edits.flatMap((e) => e.writes.map((w) => this.writeBacks.beforeWrite(w.steps)));
    const result = applyPatch(this.config, patchId, edits, url.dialect, (steps) =>
      formatDataUrl(url.dialect, steps),
    );
    if (result.applied > 0) for (const watch of watches) this.writeBacks.afterWrite(watch);
    const METHOD = { create: 'POST', replace: 'PUT', merge: 'PATCH', insert: 'POST', move: 'PATCH' } as const;
    const patchEdits = edits.flatMap((edit) =>
      edit.writes.map((w) => {
        const method =
          edit.operation === 'delete' || edit.operation === 'remove' ? 'DELETE' : METHOD[edit.operation];
        const steps = method === 'POST' ? w.steps.slice(0, -1) : w.steps;
        const module = w.steps[0]?.node.module ?? '';
        return { method, url: formatDataUrl(url.dialect, steps), body: w.raw ?? null, module };
      }),
    );
    return {
      status: 200,
      body: result.body,
      contentType: 'application/yang.patch-status+json',
      edits: result.applied,
      patchEdits,
    };
  }

  private get(url: DataUrl, query: URLSearchParams): DataResponse {
    if (url.steps.length === 0)
      throw new RestconfError(
        'protocol',
        'operation-not-supported',
        'The emulator does not serve a read of the whole datastore',
        { status: 405 },
      );
    let value: Child | undefined;
    if (url.dialect === 'bierman02') {
      value = (url.datastore === 'operational' ? this.operational : this.config).read(url.steps);
    } else {
      for (const name of query.keys()) {
        if (name !== 'content')
          throw new RestconfError(
            'protocol',
            'invalid-value',
            `Not allowed parameters for READ operation: [${name}] (the emulator supports only content)`,
          );
      }
      const content = query.get('content') ?? 'all';
      if (content === 'config') value = this.config.read(url.steps);
      else if (content === 'nonconfig') value = this.operational.read(url.steps);
      else if (content === 'all') value = this.readAll(url.steps);
      else throw new RestconfError('protocol', 'invalid-value', `Invalid content parameter: ${content}`);
    }
    if (value === undefined) {
      throw new RestconfError(
        'protocol',
        'data-missing',
        'Request could not be completed because the relevant data model content does not exist',
      );
    }
    const last = url.steps[url.steps.length - 1]!;
    return { status: 200, body: encodeDocument(last.node, value, url.dialect, last.key !== undefined) };
  }

  /** `content=all`: config and operational data merged (ODL merges the two reads). */
  private readAll(steps: readonly Step[]): Child | undefined {
    const config = this.config.read(steps);
    const state = this.operational.read(steps);
    if (config === undefined || state === undefined) return config ?? state;
    const last = steps[steps.length - 1]!;
    return mergeValue(last.node, config, state, last.key !== undefined);
  }

  private requireConfig(url: DataUrl, method: string): void {
    if (url.datastore === 'operational') throw methodNotAllowed(`${method} on /restconf/operational`);
    const target = url.steps[url.steps.length - 1]?.node;
    if (target && !target.config) {
      throw new RestconfError(
        'protocol',
        'unknown-element',
        `${schemaPathOf(target)} is config false (state data) and cannot be written`,
      );
    }
  }

  private parseBody(request: DataRequest): unknown {
    checkContentType(request.contentType);
    return parseJsonText(request.body);
  }

  /** PUT (replace) and RFC 8040 plain PATCH (merge) of the node the URL addresses. */
  private write(url: DataUrl, request: DataRequest, mode: 'put' | 'merge'): DataResponse {
    this.requireConfig(url, request.method);
    if (url.steps.length === 0)
      throw new RestconfError(
        'protocol',
        'operation-not-supported',
        'The emulator does not write the whole datastore',
        { status: 405 },
      );
    const json = this.parseBody(request);
    const last = url.steps[url.steps.length - 1]!;
    const value = decodeTarget(last, json);
    const watch = this.writeBacks.beforeWrite(url.steps);
    const { existed } =
      mode === 'put' ? this.config.put(url.steps, value) : this.config.merge(url.steps, value);
    this.writeBacks.afterWrite(watch);
    let status: number;
    if (mode === 'merge') status = 200;
    else if (!existed) status = 201;
    else status = url.dialect === 'bierman02' ? 200 : 204;
    return { status, accepted: { body: json }, edits: 1 };
  }

  /** POST: the URL names the parent, the body one new child (container, or one list entry). */
  private post(url: DataUrl, request: DataRequest): DataResponse {
    this.requireConfig(url, request.method);
    const parent = url.steps[url.steps.length - 1];
    if (
      parent &&
      (parent.node.kind === 'leaf' ||
        parent.node.kind === 'leaf-list' ||
        (parent.node.kind === 'list' && parent.key === undefined))
    ) {
      throw malformed('POST needs a container or a list entry as its target (the parent of the new data)');
    }
    const json = this.parseBody(request);
    if (typeof json !== 'object' || json === null || Array.isArray(json))
      throw malformed('Error parsing input: the body must be a JSON object');
    const members = Object.entries(json);
    if (members.length !== 1)
      throw malformed(`Error parsing input: a POST body holds exactly one member, found ${members.length}`);
    const [member, raw] = members[0]!;
    const children = parent
      ? (parent.node as SchemaNode & { kind: 'container' | 'list' }).children
      : this.schema.children;
    const child = resolveMember(
      children,
      member,
      parent?.node.module,
      parent ? schemaPathOf(parent.node) : '',
    );
    if (!parent && !member.includes(':'))
      throw malformed(`Error parsing input: the top-level member ${member} needs its module prefix`);
    let step: Step;
    let value: Child;
    if (child.kind === 'list' && child.keys.length > 0) {
      if (!Array.isArray(raw) || raw.length !== 1)
        throw malformed(
          `Error parsing input: POST creates one ${child.name} entry at a time (a one-element array)`,
        );
      const { key, entry } = decodeEntry(child, raw[0], schemaPathOf(child));
      step = {
        node: child,
        key,
        keyValues: child.keys.map((k) => entry.get(`${child.module}:${k}`)!) as Step['keyValues'],
      };
      value = entry;
    } else {
      step = { node: child };
      value = decodeValue(child, raw, '');
    }
    const steps = [...url.steps, step];
    const location = formatDataUrl(url.dialect, steps);
    const watch = this.writeBacks.beforeWrite(steps);
    this.config.create(steps, value, location);
    this.writeBacks.afterWrite(watch);
    return { status: url.dialect === 'bierman02' ? 204 : 201, location, accepted: { body: json }, edits: 1 };
  }

  private delete(url: DataUrl): DataResponse {
    this.requireConfig(url, 'DELETE');
    if (url.steps.length === 0)
      throw new RestconfError(
        'protocol',
        'operation-not-supported',
        'The emulator does not delete the whole datastore',
        { status: 405 },
      );
    const watch = this.writeBacks.beforeWrite(url.steps);
    this.config.delete(url.steps, formatDataUrl(url.dialect, url.steps));
    this.writeBacks.afterWrite(watch);
    return { status: url.dialect === 'bierman02' ? 200 : 204, accepted: { body: null }, edits: 1 };
  }
}

function methodNotAllowed(what: string): RestconfError {
  return new RestconfError('protocol', 'operation-not-supported', `Method not allowed: ${what}`, {
    status: 405,
  });
}

function checkContentType(contentType: string | undefined): void {
  if (contentType === undefined) return;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (!JSON_TYPES.has(type)) {
    throw new RestconfError(
      'protocol',
      'operation-not-supported',
      `Unsupported Media Type ${type}: send application/json, application/yang.data+json or application/yang-data+json`,
      { status: 415 },
    );
  }
}

/**
 * The body of a PUT/PATCH: one member named like the addressed node (`name` or
 * `module:name`), a one-element array for a list entry, and for an entry the same key as the URL.
 */
function decodeTarget(target: Step, json: unknown): Child {
  const node = target.node;
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw malformed('Error parsing input: the body must be a JSON object');
  const members = Object.keys(json);
  const member = members[0];
  if (members.length !== 1 || !member || (member !== node.name && member !== node.qname)) {
    throw malformed(
      `Error parsing input: the body must hold exactly one member named ${node.qname} (the last element of the URL), found ${members.join(', ') || 'none'}`,
    );
  }
  const raw = (json as Record<string, unknown>)[member];
  if (target.key === undefined || node.kind !== 'list') return decodeValue(node, raw, '');
  if (!Array.isArray(raw) || raw.length !== 1)
    throw malformed(`Error parsing input: ${node.qname} must be a one-element array holding the entry`);
  const { key, entry } = decodeEntry(node, raw[0], schemaPathOf(node));
  if (key !== target.key) {
    throw new RestconfError(
      'protocol',
      'invalid-value',
      `The value '${key}' for key of ${node.name} in the message body doesn't match the value '${target.key}' in the URI`,
    );
  }
  return entry satisfies Instance;
}
