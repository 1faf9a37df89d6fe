/**
 * Media types, as the API server negotiates them, for a server that speaks JSON only. A body
 * in another format (kubectl sends protobuf for `kubectl create namespace x`) is 415
 * UnsupportedMediaType naming what is accepted; an `Accept` header is honoured clause by
 * clause, so `application/vnd.kubernetes.protobuf, application/json` gets JSON, and one that
 * allows nothing the server can write (protobuf, YAML or Table only) is 406 NotAcceptable.
 */
import { ApiError } from './status.js';

export const JSON_MEDIA_TYPE = 'application/json';

/** The media type of a Content-Type header, lower case, without parameters. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

export function unsupportedMediaType(accepted: readonly string[]): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

/** A request body must be JSON (an absent Content-Type is read as JSON, as client-go's default). */
export function requireJson(contentType: string | undefined): void {
  const type = mediaType(contentType);
  if (type !== '' && type !== JSON_MEDIA_TYPE && type !== '*/*')
    throw unsupportedMediaType([JSON_MEDIA_TYPE]);
}

interface AcceptClause {
  type: string;
  params: Map<string, string>;
  q: number;
  index: number;
}

function parseAccept(header: string): AcceptClause[] {
  const clauses: AcceptClause[] = [];
  header.split(',').forEach((part, index) => {
    const [head, ...rest] = part.split(';');
    const type = (head ?? '').trim().toLowerCase();
    if (type === '') return;
    const params = new Map<string, string>();
    let q = 1;
    for (const p of rest) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const key = p.slice(0, eq).trim().toLowerCase();
      const value = p
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      if (key === 'q') q = Number.isFinite(Number(value)) ? Number(value) : 0;
      else params.set(key, value);
    }
    clauses.push({ type, params, q, index });
  });
  // Highest quality first; equal ones in the client's order.
  return clauses.sort((a, b) => b.q - a.q || a.index - b.index);
}

/**
 * Checks that the client accepts JSON as the simulator writes it. A clause asking for a
 * conversion (`as=Table`, `as=PartialObjectMetadata`) is one the simulator cannot serve, so
 * it falls through to the next clause, as the API server does for conversions it lacks.
 */
export function negotiateJson(accept: string | undefined): void {
  if (accept === undefined || accept.trim() === '') return;
  for (const clause of parseAccept(accept)) {
    if (clause.q <= 0) continue;
    if (clause.type !== JSON_MEDIA_TYPE && clause.type !== 'application/*' && clause.type !== '*/*') continue;
    if (clause.params.has('as')) continue;
    return;
  }
  throw new ApiError(406, 'NotAcceptable', `only the following media types are accepted: ${JSON_MEDIA_TYPE}`);
}
