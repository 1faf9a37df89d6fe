import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { programCommand } from './programs.js';
import { checkUnixPath, parseHostPort, relayTcp, relayUnix } from './relay.js';

describe('relays between TCP and unix sockets', () => {
  let dir: string;
  let server: Server;
  let port: number;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'odlcoe-relay-'));
    server = createServer((req, res) => res.end(`hello ${req.url}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  it('carries HTTP through tcp → unix → tcp, as for a simulated node', async () => {
    const path = join(dir, 'a.sock');
    const inner = await relayUnix(path, { kind: 'tcp', host: '127.0.0.1', port });
    const outer = await relayTcp({ host: '127.0.0.1', port: 0 }, { kind: 'unix', path });
    try {
      const res = await fetch(`http://127.0.0.1:${outer.port}/x?y=1`);
      assert.equal(await res.text(), 'hello /x?y=1');
    } finally {
      await outer.close();
      await inner.close();
    }
  });

  it('closes the client when the target is unreachable', async () => {
    const outer = await relayTcp(
      { host: '127.0.0.1', port: 0 },
      { kind: 'unix', path: join(dir, 'nobody.sock') },
    );
    try {
      await assert.rejects(fetch(`http://127.0.0.1:${outer.port}/`));
    } finally {
      await outer.close();
    }
  });

  it('validates addresses and socket paths', () => {
    assert.deepEqual(parseHostPort('127.0.0.1:6443'), { host: '127.0.0.1', port: 6443 });
    assert.deepEqual(parseHostPort('[::1]:80'), { host: '::1', port: 80 });
    assert.throws(() => parseHostPort('localhost:80'), /is not <ip>:<port>/);
    assert.throws(() => parseHostPort('127.0.0.1:70000'), /is not <ip>:<port>/);
    assert.throws(() => checkUnixPath('relative.sock'), /absolute/);
    assert.throws(() => checkUnixPath(`/${'x'.repeat(120)}`), /longer than 107 bytes/);
  });

  it('the relay process prints ready, relays, and exits when its parent goes (stdin closes)', async () => {
    const path = join(dir, 'b.sock');
    const cmd = programCommand('src/sandbox/relay-main', ['--unix-to-tcp', `${path}=127.0.0.1:${port}`]);
    const child = spawn(cmd.command, cmd.args, { cwd: cmd.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString();
          if (out.includes('ready\n')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`relay exited with ${code}`)));
      });
      const outer = await relayTcp({ host: '127.0.0.1', port: 0 }, { kind: 'unix', path });
      try {
        assert.equal(await (await fetch(`http://127.0.0.1:${outer.port}/z`)).text(), 'hello /z');
      } finally {
        await outer.close();
      }
      child.stdin.end();
      assert.equal(await exited, 0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('the relay process refuses bad arguments with exit code 2', async () => {
    const cmd = programCommand('src/sandbox/relay-main', ['--tcp-to-unix', 'nonsense']);
    const child = spawn(cmd.command, cmd.args, { cwd: cmd.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    assert.equal(code, 2);
    assert.match(err, /needs <from>=<to>/);
  });
});
