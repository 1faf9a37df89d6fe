/**
 * Which RESTCONF failures are worth another attempt, and which of them leave the outcome of a
 * write unknown. ODL answers 500 `operation-failed` or 503 while a shard has no leader (an
 * election takes up to 30 s) and 503 while its models load; a proxy in front of it adds 502
 * and 504. Every 4xx is the client's fault and final.
 */

export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([500, 502, 503, 504]);

/** Connection failures that a later attempt can overcome (restart, failover, DNS hiccup). */
const RETRYABLE_NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
]);

/**
 * Failures after which the request certainly never reached ODL's datastore: the connection
 * was never made, or ODL said it is unavailable. After anything else (a reset connection, a
 * timeout, a 500 whose commit may have gone through on another member, a gateway error)
 * a write may have been applied.
 */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EAI_AGAIN',
  'ENOTFOUND',
]);

export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status);
}

/** TLS verification failures and unknown errors are configuration problems: final. */
export function isRetryableNetworkCode(code: string): boolean {
  return RETRYABLE_NETWORK_CODES.has(code);
}

export function outcomeUnknownAfterNetworkError(code: string): boolean {
  return !NOT_SENT_CODES.has(code);
}

export function outcomeUnknownAfterStatus(status: number): boolean {
  return status !== 503;
}

/** Longest wait a server's Retry-After can impose on one attempt. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Parses Retry-After (delta-seconds or HTTP-date) into milliseconds from `now`, capped at
 * MAX_RETRY_AFTER_MS; undefined when absent or unparseable.
 */
export function retryAfterMs(header: string | undefined, now = Date.now()): number | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (value === '') return undefined;
  let ms: number;
  if (/^\d+$/.test(value)) {
    ms = Number(value) * 1000;
  } else {
    // An HTTP-date names its weekday and month; Date.parse alone would take "-1" as a year.
    if (!/^[A-Za-z]{3}, /.test(value)) return undefined;
    const at = Date.parse(value);
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}
