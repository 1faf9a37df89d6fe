import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { isAddressInUse, parsePort, startOnPort } from './ports.js';

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

describe('startOnPort', () => {
  let taken: Server;
  let takenPort: number;
  const opened: Server[] = [];

  before(async () => {
    taken = await listen(0);
    takenPort = (taken.address() as AddressInfo).port;
  });

  after(async () => {
    for (const s of [taken, ...opened]) await new Promise<void>((resolve) => s.close(() => resolve()));
  });

  it('falls back to a free port when a default port is taken', async () => {
    let fellBack: number | undefined;
    const server = await startOnPort(
      'test',
      { port: takenPort, explicit: false },
      listen,
      (p) => (fellBack = p),
    );
    opened.push(server);
    assert.equal(fellBack, takenPort);
    assert.notEqual((server.address() as AddressInfo).port, takenPort);
  });

  it('refuses to replace a port the user chose', async () => {
    await assert.rejects(
      startOnPort('kube API', { port: takenPort, explicit: true }, listen),
      /kube API: port \d+ is already in use/,
    );
  });

  it('passes other errors through', async () => {
    await assert.rejects(
      startOnPort('x', { port: 1, explicit: false }, () => Promise.reject(new Error('boom'))),
      /boom/,
    );
  });

  it('recognises EADDRINUSE, raw or wrapped', () => {
    assert.equal(isAddressInUse(Object.assign(new Error('x'), { code: 'EADDRINUSE' })), true);
    assert.equal(
      isAddressInUse(new Error('cannot listen on 127.0.0.1:8181: listen EADDRINUSE: address already in use')),
      true,
    );
    assert.equal(isAddressInUse(new Error('EACCES')), false);
  });

  it('parses port flags', () => {
    assert.equal(parsePort('0', '--x'), 0);
    assert.equal(parsePort('8181', '--x'), 8181);
    assert.throws(() => parsePort('65536', '--odl-port'), /--odl-port "65536" must be a port number/);
    assert.throws(() => parsePort('-1', '--odl-port'), /must be a port number/);
  });
});
