import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { Emulator } from './server.js';
import { call, startQuiet } from './testing.js';

const run = promisify(execFile);

describe('TLS', () => {
  const dir = mkdtempSync(join(tmpdir(), 'odlcoe-emulator-tls-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  let emu: Emulator;
  let ca: Buffer;

  before(async () => {
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]);
    ca = readFileSync(certFile);
    emu = await startQuiet({ tls: { certFile, keyFile } });
  });
  after(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves RESTCONF over HTTPS with the given certificate', async () => {
    assert.match(emu.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const put = await call(
      emu.url,
      'PUT',
      '/rests/data/elan:elan-instances/elan-instance=t1',
      { 'elan:elan-instance': [{ 'elan-instance-name': 't1' }] },
      { ca },
    );
    assert.equal(put.status, 201);
    assert.equal(
      (await call(emu.url, 'GET', '/rests/data/elan:elan-instances/elan-instance=t1', undefined, { ca }))
        .status,
      200,
    );
  });

  it('is refused by a client that verifies against the system CAs', async () => {
    await assert.rejects(call(emu.url, 'GET', '/odlcoe-emulator/ready'), /self[- ]signed|certificate/i);
  });

  it('fails to start with a clear error when the key file is missing', async () => {
    await assert.rejects(
      startQuiet({ tls: { certFile, keyFile: join(dir, 'missing.pem') } }),
      /cannot read TLS key .*missing\.pem: ENOENT/,
    );
  });
});
