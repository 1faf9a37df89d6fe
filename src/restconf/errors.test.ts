import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bodySnippet, decodeErrorBody, RestconfError } from './errors.js';

describe('decodeErrorBody', () => {
  it('decodes ODL errors.error[] with every field', () => {
    const body = JSON.stringify({
      errors: {
        error: [
          {
            'error-type': 'protocol',
            'error-tag': 'unknown-element',
            'error-message': 'Schema node with name segmentation-idx was not found',
            'error-path': '/elan:elan-instances/elan-instance',
            'error-info': 'segmentation-idx',
          },
        ],
      },
    });
    assert.deepEqual(decodeErrorBody(body).details, [
      {
        errorType: 'protocol',
        errorTag: 'unknown-element',
        errorAppTag: undefined,
        errorMessage: 'Schema node with name segmentation-idx was not found',
        errorPath: '/elan:elan-instances/elan-instance',
        errorInfo: 'segmentation-idx',
      },
    ]);
  });

  it('accepts the RFC 8040 qualified ietf-restconf:errors and a single error object', () => {
    const body = JSON.stringify({
      'ietf-restconf:errors': { error: { 'error-type': 'application', 'error-tag': 'data-exists' } },
    });
    const [detail, ...rest] = decodeErrorBody(body).details;
    assert.equal(rest.length, 0);
    assert.equal(detail?.errorTag, 'data-exists');
    assert.equal(detail?.errorType, 'application');
  });

  it('keeps every error of a multi-error answer, and stringifies object error-info', () => {
    const body = JSON.stringify({
      errors: {
        error: [
          { 'error-tag': 'operation-failed', 'error-info': { shard: 'default-config', leader: null } },
          { 'error-tag': 'data-missing', 'error-message': 'second' },
        ],
      },
    });
    const { details } = decodeErrorBody(body);
    assert.equal(details.length, 2);
    assert.equal(details[0]?.errorInfo, '{"shard":"default-config","leader":null}');
    assert.equal(details[1]?.errorMessage, 'second');
  });

  it('decodes an XML errors document (content negotiation fell back to XML)', () => {
    const body =
      '<errors xmlns="urn:ietf:params:xml:ns:yang:ietf-restconf"><error><error-type>protocol</error-type>' +
      '<error-tag>malformed-message</error-tag><error-message>Error parsing input: a &lt;b&gt; &amp; c</error-message></error></errors>';
    const [detail] = decodeErrorBody(body).details;
    assert.equal(detail?.errorTag, 'malformed-message');
    assert.equal(detail?.errorMessage, 'Error parsing input: a <b> & c');
  });

  it('reduces an HTML page from a proxy to its title', () => {
    const body =
      '<html><head><title>502 Bad Gateway</title><style>body{color:red}</style></head><body><h1>Bad Gateway</h1>\n<hr>nginx</body></html>';
    assert.deepEqual(decodeErrorBody(body), { details: [], snippet: '502 Bad Gateway' });
  });

  it('strips tags and control characters from an HTML page without a title, and bounds its length', () => {
    const body = `<html><body><script>var x = 1;</script><p>Service\u0007 Unavailable</p>\r\n${'x'.repeat(500)}</body></html>`;
    const { snippet } = decodeErrorBody(body);
    assert.ok(snippet?.startsWith('Service Unavailable xxx'), snippet);
    assert.ok((snippet?.length ?? 0) <= 201);
    assert.ok(!snippet?.includes('var x'));
  });

  it('treats JSON without an errors member, truncated JSON, plain text and empty bodies as snippets', () => {
    assert.deepEqual(decodeErrorBody('{"message":"Unauthorized"}'), {
      details: [],
      snippet: '{"message":"Unauthorized"}',
    });
    assert.deepEqual(decodeErrorBody('{"errors":{"error":[{"error-tag"'), {
      details: [],
      snippet: '{"errors":{"error":[{"error-tag"',
    });
    assert.deepEqual(decodeErrorBody('upstream connect error or disconnect/reset before headers'), {
      details: [],
      snippet: 'upstream connect error or disconnect/reset before headers',
    });
    assert.deepEqual(decodeErrorBody('  \n'), { details: [] });
    assert.deepEqual(decodeErrorBody('{"errors":{"error":"oops"}}'), {
      details: [],
      snippet: '{"errors":{"error":"oops"}}',
    });
    assert.deepEqual(decodeErrorBody('[1,2]'), { details: [], snippet: '[1,2]' });
  });

  it('snippets a body with an empty title from its text', () => {
    assert.equal(bodySnippet('<html><title> </title><body>Forbidden</body></html>'), 'Forbidden');
  });
});

describe('RestconfError', () => {
  it('takes its fields from the first detail and says everything in its message', () => {
    const err = new RestconfError({
      method: 'PUT',
      url: 'http://odl:8181/restconf/config/elan:elan-instances/elan-instance/n1',
      status: 400,
      details: [
        {
          errorType: 'protocol',
          errorTag: 'unknown-element',
          errorMessage: 'no such node',
          errorPath: '/elan:x',
        },
      ],
      retryable: false,
      attempts: 1,
    });
    assert.equal(err.name, 'RestconfError');
    assert.equal(err.errorTag, 'unknown-element');
    assert.equal(err.errorType, 'protocol');
    assert.equal(err.errorPath, '/elan:x');
    assert.equal(err.mayHaveApplied, false);
    assert.equal(
      err.message,
      'PUT http://odl:8181/restconf/config/elan:elan-instances/elan-instance/n1: 400 unknown-element: no such node (at /elan:x)',
    );
  });

  it('names the network code and the attempt count when there is no status', () => {
    const err = new RestconfError({
      method: 'GET',
      url: 'http://odl/x',
      code: 'ECONNREFUSED',
      reason: 'connect ECONNREFUSED',
      retryable: true,
      attempts: 4,
    });
    assert.equal(err.message, 'GET http://odl/x: ECONNREFUSED connect ECONNREFUSED after 4 attempts');
    assert.equal(err.errorMessage, 'connect ECONNREFUSED');
    assert.equal(err.status, undefined);
  });
});
