import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError } from '../common/config-file.js';
import { silentLogger } from '../common/log.js';
import { startEmulator, type Emulator } from '../emulator/server.js';
import { RestconfClient, RestconfError, type RestconfClientOptions } from './client.js';
import { capturingLogger, elanBody, elanPath } from './testing.js';

const AUTH = { kind: 'basic', user: 'admin', password: 'admin' } as const;

/** A self-signed certificate for 127.0.0.1 (it is its own CA), made with openssl. */
function selfSigned(dir: string, name: string): { certFile: string; keyFile: string } {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'pipe' },
  );
  return { certFile, keyFile };
}

describe('RestconfClient over TLS', () => {
  let dir: string;
  let emulator: Emulator;
  let serverCert: { certFile: string; keyFile: string };
  let otherCa: string;
  const clients: RestconfClient[] = [];
  const makeClient = (options: Partial<RestconfClientOptions>): RestconfClient => {
    const client = new RestconfClient({
      baseUrl: emulator.url,
      dialect: 'rfc8040',
      auth: AUTH,
      retry: { maxAttempts: 4, initialMs: 10, maxMs: 20 },
      ...options,
    });
    clients.push(client);
    return client;
  };
  const dataRequests = () => Object.values(emulator.counters().requests).reduce((a, b) => a + b, 0);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'odlcoe-restconf-tls-'));
    serverCert = selfSigned(dir, 'odl');
    otherCa = selfSigned(dir, 'other').certFile;
    emulator = await startEmulator({ port: 0, profile: 'sodium', tls: serverCert, logger: silentLogger() });
    assert.match(emulator.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  });
  after(async () => {
    for (const c of clients) c.close();
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('verifies by default: a certificate from an unknown CA fails at once, unretried', async () => {
    const before = dataRequests();
    const err = await makeClient({})
      .get(elanPath('t'))
      .then(
        () => assert.fail('expected a TLS failure'),
        (e: unknown) => e,
      );
    assert.ok(err instanceof RestconfError);
    assert.match(err.code ?? '', /SELF_SIGNED|UNABLE_TO_VERIFY|CERT/);
    assert.equal(err.retryable, false);
    assert.equal(err.attempts, 1);
    assert.equal(dataRequests(), before, 'no request reached the server');
  });

  it('rejects the server when caFile holds a different CA', async () => {
    const err = await makeClient({ tls: { caFile: otherCa } })
      .get(elanPath('t'))
      .then(
        () => assert.fail('expected a TLS failure'),
        (e: unknown) => e,
      );
    assert.ok(err instanceof RestconfError);
    assert.equal(err.retryable, false);
  });

  it('trusts the CA from caFile, over one kept-alive connection', async () => {
    const client = makeClient({ tls: { caFile: serverCert.certFile } });
    const before = emulator.counters().connections;
    assert.equal(await client.put(elanPath('t'), elanBody('t')), 'created');
    assert.equal((await client.getEntries(elanPath('t'))).length, 1);
    assert.equal(await client.delete(elanPath('t')), 'deleted');
    assert.equal(emulator.counters().connections - before, 1);
  });

  it('accepts any certificate with insecureSkipVerify, and warns about it at construction', async () => {
    const { logger, lines } = capturingLogger();
    const client = makeClient({ tls: { insecureSkipVerify: true }, logger });
    const warnings = lines
      .map((l) => JSON.parse(l) as { level: string; message: string })
      .filter((l) => l.level === 'warn');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]?.message ?? '', /verification .* DISABLED/);
    assert.equal(await client.get(elanPath('t')), undefined);
  });

  it('refuses an unreadable or non-PEM caFile at construction', () => {
    const notPem = join(dir, 'not-pem');
    writeFileSync(notPem, 'hello');
    assert.throws(
      () => makeClient({ tls: { caFile: join(dir, 'missing.pem') } }),
      (e: unknown) => e instanceof ConfigError && /missing\.pem: ENOENT/.test(e.message),
    );
    assert.throws(() => makeClient({ tls: { caFile: notPem } }), /holds no PEM certificate/);
  });
});
