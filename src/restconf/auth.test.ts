import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError } from '../common/config-file.js';
import { authorizationHeader, loadRestconfAuth } from './auth.js';

describe('loadRestconfAuth', () => {
  let dir: string;
  let passwordFile: string;
  let tokenFile: string;
  let emptyFile: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'odlcoe-auth-'));
    passwordFile = join(dir, 'password');
    tokenFile = join(dir, 'token');
    emptyFile = join(dir, 'empty');
    writeFileSync(passwordFile, 'file-secret\n', { mode: 0o600 });
    writeFileSync(tokenFile, 'tok.en-123\n', { mode: 0o600 });
    writeFileSync(emptyFile, '\n', { mode: 0o600 });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a password file (trailing newline dropped) for the given user', () => {
    assert.deepEqual(loadRestconfAuth({ user: 'admin', passwordFile, env: {} }), {
      kind: 'basic',
      user: 'admin',
      password: 'file-secret',
    });
  });

  it('reads user and password from the environment', () => {
    assert.deepEqual(
      loadRestconfAuth({ env: { ODLCOE_ODL_USER: 'odl', ODLCOE_ODL_PASSWORD: 'env-secret' } }),
      {
        kind: 'basic',
        user: 'odl',
        password: 'env-secret',
      },
    );
  });

  it('prefers a file over the environment variable of the same kind, and an explicit user over ODLCOE_ODL_USER', () => {
    const env = { ODLCOE_ODL_USER: 'env-user', ODLCOE_ODL_PASSWORD: 'env-secret' };
    assert.deepEqual(loadRestconfAuth({ user: 'admin', passwordFile, env }), {
      kind: 'basic',
      user: 'admin',
      password: 'file-secret',
    });
  });

  it('reads a bearer token from a file or ODLCOE_ODL_TOKEN', () => {
    assert.deepEqual(loadRestconfAuth({ tokenFile, env: {} }), { kind: 'bearer', token: 'tok.en-123' });
    assert.deepEqual(loadRestconfAuth({ env: { ODLCOE_ODL_TOKEN: 'abc' } }), {
      kind: 'bearer',
      token: 'abc',
    });
  });

  it('returns undefined when nothing is configured (empty variables count as unset)', () => {
    assert.equal(loadRestconfAuth({ env: {} }), undefined);
    assert.equal(loadRestconfAuth({ env: { ODLCOE_ODL_PASSWORD: '', ODLCOE_ODL_TOKEN: '' } }), undefined);
  });

  it('refuses ambiguous or incomplete settings without revealing the secret', () => {
    const both = () =>
      loadRestconfAuth({ tokenFile, env: { ODLCOE_ODL_USER: 'admin', ODLCOE_ODL_PASSWORD: 'env-secret' } });
    assert.throws(
      both,
      (err: unknown) =>
        err instanceof ConfigError &&
        /both a bearer token/.test(err.message) &&
        !err.message.includes('env-secret'),
    );
    assert.throws(
      () => loadRestconfAuth({ passwordFile, env: {} }),
      (err: unknown) => err instanceof ConfigError && /no user/.test(err.message),
    );
    assert.throws(() => loadRestconfAuth({ user: 'admin', env: {} }), /no password/);
    assert.throws(
      () => loadRestconfAuth({ user: 'admin', passwordFile: emptyFile, env: {} }),
      /password from .*empty is empty/,
    );
    assert.throws(() => loadRestconfAuth({ user: 'ad:min', passwordFile, env: {} }), /contains ":"/);
    assert.throws(() => loadRestconfAuth({ env: { ODLCOE_ODL_TOKEN: 'two words' } }), /whitespace/);
  });

  it('names a missing file by path and error code only', () => {
    const missing = join(dir, 'missing');
    assert.throws(
      () => loadRestconfAuth({ user: 'admin', passwordFile: missing, env: {} }),
      new RegExp(`${missing}: ENOENT`),
    );
  });
});

describe('authorizationHeader', () => {
  it('builds basic (UTF-8) and bearer headers', () => {
    assert.equal(
      authorizationHeader({ kind: 'basic', user: 'admin', password: 'admin' }),
      'Basic YWRtaW46YWRtaW4=',
    );
    assert.equal(
      authorizationHeader({ kind: 'basic', user: 'ü', password: 'p:w' }),
      `Basic ${Buffer.from('ü:p:w').toString('base64')}`,
    );
    assert.equal(authorizationHeader({ kind: 'bearer', token: 'abc' }), 'Bearer abc');
  });
});
