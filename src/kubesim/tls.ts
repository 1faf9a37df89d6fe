/**
 * A throwaway self-signed serving certificate for the simulator's TLS mode, made with the
 * `openssl` binary (Node has no X.509 generator). TLS matters for two things: client-go (so
 * kubectl) sends credentials only over TLS, and odlcoe's own CA-verifying client path can
 * only be exercised against a TLS server.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ServingCertificate {
  /** PEM certificate; also the CA clients must trust (it signs itself). */
  cert: string;
  /** PEM private key. */
  key: string;
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: 30_000 }, (err, _stdout, stderr) => {
      if (err) reject(new Error(`${command} failed: ${stderr.trim() || err.message}`));
      else resolve();
    });
  });
}

/** A P-256 certificate valid for two days for localhost, 127.0.0.1, ::1 and `host` when it is an IP. */
export async function selfSignedCertificate(host: string): Promise<ServingCertificate> {
  const names = new Set(['DNS:localhost', 'IP:127.0.0.1', 'IP:::1']);
  if (isIP(host) !== 0) names.add(`IP:${host}`);
  else if (/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/i.test(host)) names.add(`DNS:${host}`);
  else throw new Error(`kubesim: cannot issue a certificate for host "${host}"`);
  const dir = await mkdtemp(join(tmpdir(), 'kubesim-tls-'));
  try {
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=kubesim',
      '-addext',
      `subjectAltName=${[...names].join(',')}`,
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ]);
    return { cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
