import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  isRetryableNetworkCode,
  isRetryableStatus,
  MAX_RETRY_AFTER_MS,
  outcomeUnknownAfterNetworkError,
  outcomeUnknownAfterStatus,
  retryAfterMs,
} from './retry-policy.js';

describe('retry policy', () => {
  it('retries 500, 502, 503 and 504 and nothing else', () => {
    for (const status of [500, 502, 503, 504]) assert.equal(isRetryableStatus(status), true, String(status));
    for (const status of [200, 201, 204, 301, 400, 401, 403, 404, 405, 409, 415, 429, 501, 505]) {
      assert.equal(isRetryableStatus(status), false, String(status));
    }
  });

  it('retries dropped and refused connections but not TLS verification failures', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EAI_AGAIN'])
      assert.equal(isRetryableNetworkCode(code), true, code);
    for (const code of [
      'DEPTH_ZERO_SELF_SIGNED_CERT',
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      'ERR_TLS_CERT_ALTNAME_INVALID',
      'ERR_UNKNOWN',
    ]) {
      assert.equal(isRetryableNetworkCode(code), false, code);
    }
  });

  it('knows which failures leave a write possibly applied', () => {
    assert.equal(outcomeUnknownAfterNetworkError('ECONNREFUSED'), false);
    assert.equal(outcomeUnknownAfterNetworkError('ECONNRESET'), true);
    assert.equal(outcomeUnknownAfterStatus(503), false);
    assert.equal(outcomeUnknownAfterStatus(500), true);
    assert.equal(outcomeUnknownAfterStatus(504), true);
  });

  it('parses Retry-After seconds and dates, caps it, and ignores garbage', () => {
    const now = Date.parse('2024-01-01T00:00:00Z');
    assert.equal(retryAfterMs('2', now), 2000);
    assert.equal(retryAfterMs(' 0 ', now), 0);
    assert.equal(retryAfterMs('Mon, 01 Jan 2024 00:00:05 GMT', now), 5000);
    assert.equal(retryAfterMs('Sun, 31 Dec 2023 23:00:00 GMT', now), 0);
    assert.equal(retryAfterMs('86400', now), MAX_RETRY_AFTER_MS);
    assert.equal(retryAfterMs('soon', now), undefined);
    assert.equal(retryAfterMs('-1', now), undefined);
    assert.equal(retryAfterMs(undefined, now), undefined);
  });
});
