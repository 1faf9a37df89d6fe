/**
 * RESTCONF errors as OpenDaylight reports them: an HTTP status derived from the error-tag
 * (ODL's `RestconfError.ErrorTag` table, where `data-missing` is 404) and the body
 * `{"errors":{"error":[{"error-type","error-tag","error-message","error-info"?}]}}`.
 * Sodium and Aluminium use this unqualified `errors` member on both `/restconf` and
 * `/rests` (the RFC 8040 writer starts in the ietf-restconf namespace, so it never prefixes).
 */
export type ErrorType = 'protocol' | 'application' | 'rpc' | 'transport';

export type ErrorTag =
  | 'in-use'
  | 'invalid-value'
  | 'too-big'
  | 'missing-attribute'
  | 'bad-attribute'
  | 'unknown-attribute'
  | 'bad-element'
  | 'unknown-element'
  | 'unknown-namespace'
  | 'access-denied'
  | 'lock-denied'
  | 'resource-denied'
  | 'data-exists'
  | 'data-missing'
  | 'operation-not-supported'
  | 'operation-failed'
  | 'malformed-message'
  | 'resource-denied-transport';

const STATUS_OF_TAG: Record<ErrorTag, number> = {
  'in-use': 409,
  'invalid-value': 400,
  'too-big': 413,
  'missing-attribute': 400,
  'bad-attribute': 400,
  'unknown-attribute': 400,
  'bad-element': 400,
  'unknown-element': 400,
  'unknown-namespace': 400,
  'access-denied': 403,
  'lock-denied': 409,
  'resource-denied': 409,
  'data-exists': 409,
  'data-missing': 404,
  'operation-not-supported': 501,
  'operation-failed': 500,
  'malformed-message': 400,
  'resource-denied-transport': 503,
};

export class RestconfError extends Error {
  override name = 'RestconfError';
  readonly status: number;
  readonly errorInfo: string | undefined;

  constructor(
    readonly errorType: ErrorType,
    readonly errorTag: ErrorTag,
    message: string,
    options: { status?: number; errorInfo?: string } = {},
  ) {
    super(message);
    this.status = options.status ?? STATUS_OF_TAG[errorTag];
    this.errorInfo = options.errorInfo;
  }

  /** The JSON body ODL sends with this error. */
  body(): string {
    const error: Record<string, string> = {
      'error-type': this.errorType,
      'error-tag': this.errorTag,
      'error-message': this.message,
    };
    if (this.errorInfo !== undefined) error['error-info'] = this.errorInfo;
    return JSON.stringify({ errors: { error: [error] } });
  }
}

/** 400 `malformed-message`: the body is not JSON or not shaped like the addressed node. */
export function malformed(message: string): RestconfError {
  return new RestconfError('protocol', 'malformed-message', message);
}

/** 400 `invalid-value`: a value breaks its type, range, length or pattern. */
export function invalidValue(message: string): RestconfError {
  return new RestconfError('protocol', 'invalid-value', message);
}

/** 400 `unknown-element`: a member the model does not have (or has only as config false). */
export function unknownElement(message: string): RestconfError {
  return new RestconfError('protocol', 'unknown-element', message);
}
