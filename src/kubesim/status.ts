/**
 * Kubernetes `Status` failures. Every error the simulator answers is one of these, shaped
 * exactly as the API server shapes them, because clients branch on `code` and `reason`
 * (client-node's ListWatch relists only on code 410; leader election retries on 409).
 */

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'UnsupportedMediaType'
  | 'RequestEntityTooLarge'
  | 'TooManyRequests'
  | 'InternalError'
  | 'Timeout'
  | 'NotAcceptable';

export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { continue?: string; resourceVersion?: string };
  status: 'Failure' | 'Success';
  message: string;
  reason: StatusReason | '';
  details?: StatusDetails;
  code: number;
}

/** A failure that the HTTP layer answers as a `Status` body with `code` as the HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
    /** `metadata.continue` of the Status: the inconsistent-continue token of an expired list. */
    readonly continueToken?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toStatus(): Status {
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: this.continueToken === undefined ? {} : { continue: this.continueToken },
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) status.details = this.details;
    return status;
  }
}

/** What a resource is called in messages and `details`: `pods`, `leases.coordination.k8s.io`. */
export interface ResourceName {
  group: string;
  plural: string;
}

function qualified(resource: ResourceName): string {
  return resource.group === '' ? resource.plural : `${resource.plural}.${resource.group}`;
}

function objectDetails(resource: ResourceName, name: string): StatusDetails {
  return { name, group: resource.group, kind: resource.plural };
}

export function notFound(resource: ResourceName, name: string): ApiError {
  return new ApiError(
    404,
    'NotFound',
    `${qualified(resource)} "${name}" not found`,
    objectDetails(resource, name),
  );
}

export function alreadyExists(resource: ResourceName, name: string): ApiError {
  return new ApiError(
    409,
    'AlreadyExists',
    `${qualified(resource)} "${name}" already exists`,
    objectDetails(resource, name),
  );
}

/** The optimistic-concurrency failure: the caller's resourceVersion (or uid) is stale. */
export function conflict(
  resource: ResourceName,
  name: string,
  why = 'the object has been modified; please apply your changes to the latest version and try again',
): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(resource)} "${name}": ${why}`,
    objectDetails(resource, name),
  );
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

/** 422: the object itself is wrong; one cause per offending field, as the API server lists them. */
export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): ApiError {
  const list = causes.map((c) => `${c.field}: ${c.message}`).join(', ');
  return new ApiError(422, 'Invalid', `${kind} "${name}" is invalid: ${list}`, { name, group, kind, causes });
}

export function tooOldResourceVersion(requested: string, oldest: number): ApiError {
  return new ApiError(410, 'Expired', `too old resource version: ${requested} (${oldest})`);
}

export function tooLargeResourceVersion(requested: number, current: number): ApiError {
  return new ApiError(504, 'Timeout', `Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}

export function notFoundPath(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function methodNotAllowed(method: string): ApiError {
  return new ApiError(
    405,
    'MethodNotAllowed',
    `the server does not allow this method on the requested resource (${method})`,
    {},
  );
}

export function unauthorized(): ApiError {
  return new ApiError(401, 'Unauthorized', 'Unauthorized');
}

/** NamespaceLifecycle admission: no new objects in a namespace being deleted. */
export function namespaceTerminating(resource: ResourceName, namespace: string, name: string): ApiError {
  return new ApiError(
    403,
    'Forbidden',
    `${qualified(resource)} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
    {
      ...objectDetails(resource, name),
      causes: [
        {
          reason: 'NamespaceTerminating',
          message: `namespace ${namespace} is being terminated`,
          field: 'metadata.namespace',
        },
      ],
    },
  );
}

export function forbidden(message: string, details?: StatusDetails): ApiError {
  return new ApiError(403, 'Forbidden', message, details);
}
