/**
 * RESTCONF errors as ODL reports them, decoded into one error type the rest of odlcoe can
 * branch on (`errorTag === 'data-exists'`, `retryable`) without parsing messages.
 */

/** One entry of a RESTCONF `errors.error[]` list. */
export interface RestconfErrorDetail {
  errorType?: string;
  errorTag?: string;
  errorAppTag?: string;
  errorMessage?: string;
  errorPath?: string;
  errorInfo?: string;
}

/** What an error response body said, whatever its format. */
export interface DecodedErrorBody {
  /** The RESTCONF errors found (JSON or XML `errors` document); empty when there were none. */
  details: RestconfErrorDetail[];
  /** A short, single-line excerpt of a body that held no RESTCONF errors (HTML from a proxy, plain text). */
  snippet?: string;
}

const SNIPPET_LENGTH = 200;

/**
 * Decodes an error response body. ODL answers `{"errors":{"error":[...]}}` on both dialects;
 * RFC 8040 servers may qualify it as `ietf-restconf:errors`, some ODL versions send a single
 * `error` object instead of a list, XML comes back when content negotiation fell through, and
 * a proxy or load balancer in front of ODL answers with HTML. None of that may throw here:
 * this runs on the error path, where a second failure would hide the first.
 */
export function decodeErrorBody(body: string): DecodedErrorBody {
  const text = body.trim();
  if (text === '') return { details: [] };
  if (text.startsWith('{')) {
    const fromJson = detailsFromJson(text);
    if (fromJson.length > 0) return { details: fromJson };
  } else if (text.startsWith('<') && /<errors[\s>]/.test(text)) {
    const fromXml = detailsFromXml(text);
    if (fromXml.length > 0) return { details: fromXml };
  }
  return { details: [], snippet: bodySnippet(text) };
}

function detailsFromJson(text: string): RestconfErrorDetail[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return [];
  }
  if (!isObject(doc)) return [];
  const errorsKey = Object.keys(doc).find((k) => k === 'errors' || k.endsWith(':errors'));
  const errors = errorsKey === undefined ? undefined : doc[errorsKey];
  if (!isObject(errors)) return [];
  const list = errors.error ?? errors['ietf-restconf:error'];
  const entries = Array.isArray(list) ? list : list === undefined ? [] : [list];
  return entries.filter(isObject).map((e) => ({
    errorType: leafText(e['error-type']),
    errorTag: leafText(e['error-tag']),
    errorAppTag: leafText(e['error-app-tag']),
    errorMessage: leafText(e['error-message']),
    errorPath: leafText(e['error-path']),
    errorInfo: leafText(e['error-info']),
  }));
}

function detailsFromXml(text: string): RestconfErrorDetail[] {
  const blocks = text.match(/<error[\s>][\s\S]*?<\/error>/g) ?? [];
  return blocks.map((block) => ({
    errorType: xmlLeaf(block, 'error-type'),
    errorTag: xmlLeaf(block, 'error-tag'),
    errorAppTag: xmlLeaf(block, 'error-app-tag'),
    errorMessage: xmlLeaf(block, 'error-message'),
    errorPath: xmlLeaf(block, 'error-path'),
    errorInfo: xmlLeaf(block, 'error-info'),
  }));
}

function xmlLeaf(block: string, name: string): string | undefined {
  const match = new RegExp(`<${name}(?:\\s[^>]*)?>([\\s\\S]*?)</${name}>`).exec(block);
  if (!match?.[1]) return undefined;
  return (
    decodeXmlEntities(
      match[1]
        .replace(/<[^>]*>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    ) || undefined
  );
}

function decodeXmlEntities(value: string): string {
  return value
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&amp;/g, '&');
}

/** error-info is `anydata`: a string on ODL, an object elsewhere. Either way it becomes text. */
function leafText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/** A one-line excerpt: the HTML title when there is one, otherwise the text without tags. */
export function bodySnippet(body: string): string {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(body)?.[1];
  const source = title && title.trim() !== '' ? title : body.replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ');
  const flat = [...source.replace(/<[^>]*>/g, ' ')]
    .map((ch) => (ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f ? ' ' : ch))
    .join('')
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length > SNIPPET_LENGTH ? `${flat.slice(0, SNIPPET_LENGTH)}…` : flat;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export interface RestconfErrorInit {
  method: string;
  url: string;
  status?: number;
  /** Network error code (`ECONNREFUSED`, `ECONNRESET`, a TLS code) or `timeout`. */
  code?: string;
  details?: RestconfErrorDetail[];
  /** Text for errors that carry no RESTCONF error document (network failures, odd bodies). */
  reason?: string;
  retryable: boolean;
  attempts: number;
  mayHaveApplied?: boolean;
}

/**
 * A failed RESTCONF request. The `error*` fields come from the first RESTCONF error in the
 * response; `details` holds all of them. `retryable` says whether the failure was transient
 * (5xx, timeout, connection error) even when the client has given up retrying it;
 * `mayHaveApplied` says whether an earlier attempt of this request may have changed ODL's
 * data (it timed out or lost its connection after sending), so a caller that needs to know
 * must read the data back.
 */
export class RestconfError extends Error {
  override name = 'RestconfError';
  readonly method: string;
  readonly url: string;
  readonly status?: number;
  readonly code?: string;
  readonly errorType?: string;
  readonly errorTag?: string;
  readonly errorMessage?: string;
  readonly errorPath?: string;
  readonly errorInfo?: string;
  readonly details: readonly RestconfErrorDetail[];
  readonly retryable: boolean;
  readonly attempts: number;
  readonly mayHaveApplied: boolean;

  constructor(init: RestconfErrorInit) {
    super(errorText(init));
    const first = init.details?.[0];
    this.method = init.method;
    this.url = init.url;
    this.status = init.status;
    this.code = init.code;
    this.errorType = first?.errorType;
    this.errorTag = first?.errorTag;
    this.errorMessage = first?.errorMessage ?? init.reason;
    this.errorPath = first?.errorPath;
    this.errorInfo = first?.errorInfo;
    this.details = init.details ?? [];
    this.retryable = init.retryable;
    this.attempts = init.attempts;
    this.mayHaveApplied = init.mayHaveApplied ?? false;
  }
}

function errorText(init: RestconfErrorInit): string {
  const outcome = init.status !== undefined ? `${init.status}` : (init.code ?? 'failed');
  const described = (init.details ?? []).map((d) => {
    const head = [d.errorTag, d.errorMessage].filter(Boolean).join(': ');
    const where = d.errorPath ? ` (at ${d.errorPath})` : '';
    return `${head || 'error'}${where}`;
  });
  const reason = described.length > 0 ? described.join('; ') : (init.reason ?? '');
  const tries = init.attempts > 1 ? ` after ${init.attempts} attempts` : '';
  return `${init.method} ${init.url}: ${outcome}${reason ? ` ${reason}` : ''}${tries}`;
}

/**
 * A write that was to follow other writes (`RequestOptions.after`) was not sent, because one of
 * them failed or was withdrawn: nothing of it reached ODL. The caller decides again from what
 * ODL holds (usually: wait for that prerequisite).
 */
export class PrerequisiteNotWritten extends Error {
  override name = 'PrerequisiteNotWritten';
}
