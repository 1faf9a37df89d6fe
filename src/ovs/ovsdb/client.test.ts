import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../../../test/helpers/wait.js';
import { OvsdbClient, OvsdbConnectionError, OvsdbRpcError, OvsdbTransactionError } from './client.js';
import { JsonStreamParser } from './json-stream.js';

// The protocol corner cases a real ovsdb-server shows only under conditions a test cannot
// arrange (an inactivity probe, a wedged server, answers out of order), against a scripted
// JSON-RPC peer on a real unix socket. Behaviour against the real ovsdb-server is covered by
// test/agent/ovsdb.test.ts.

interface Request {
  id: unknown;
  method: string;
  params: unknown[];
}

describe('OvsdbClient against a scripted peer', () => {
  let dir: string;
  let socketPath: string;
  let server: Server;
  const connections: Socket[] = [];
  /** What the peer does with each request; set per test. */
  let onRequest: (req: Request, conn: Socket) => void = () => undefined;
  const received: unknown[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'odlcoe-ovsdb-'));
    socketPath = join(dir, 'db.sock');
    server = createServer((conn) => {
      connections.push(conn);
      const parser = new JsonStreamParser();
      conn.on('data', (chunk: Buffer) => {
        for (const m of parser.push(chunk)) {
          received.push(m);
          const msg = m as Request & { result?: unknown };
          if (typeof msg.method === 'string') onRequest(msg, conn);
        }
      });
      conn.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  });

  after(async () => {
    for (const c of connections) c.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  const answer = (conn: Socket, id: unknown, result: unknown, error: unknown = null) =>
    conn.write(JSON.stringify({ id, result, error }));

  it('matches answers to requests by id, in whatever order they come', async () => {
    const held: Request[] = [];
    onRequest = (req, conn) => {
      held.push(req);
      if (held.length === 3) for (const r of held.reverse()) answer(conn, r.id, [{ rows: [r.params[1]] }]);
    };
    const client = new OvsdbClient({ socketPath });
    try {
      const results = await Promise.all(
        [1, 2, 3].map((n) => client.transact('Open_vSwitch', [{ op: 'comment', comment: String(n) }])),
      );
      assert.deepEqual(
        results.map((r) => r[0]?.rows?.[0]),
        ['1', '2', '3'].map((comment) => ({ op: 'comment', comment })),
      );
      assert.equal(connections.length, 1, 'one connection carries every request');
    } finally {
      client.close();
    }
  });

  it('answers the server inactivity probe (echo)', async () => {
    received.length = 0;
    onRequest = (req, conn) => {
      if (req.method === 'transact') {
        conn.write(JSON.stringify({ id: 'echo', method: 'echo', params: ['probe'] }));
        answer(conn, req.id, [{}]);
      }
    };
    const client = new OvsdbClient({ socketPath });
    try {
      await client.transact('Open_vSwitch', [{ op: 'comment', comment: 'x' }]);
      await waitFor(() => received.some((m) => (m as { id?: unknown }).id === 'echo'));
      assert.deepEqual(
        received.find((m) => (m as { id?: unknown }).id === 'echo'),
        { id: 'echo', result: ['probe'], error: null },
      );
    } finally {
      client.close();
    }
  });

  it('reports operation errors with their index, and RPC errors', async () => {
    onRequest = (req, conn) => {
      if (req.params[0] === 'nope') answer(conn, req.id, null, 'unknown database');
      else answer(conn, req.id, [{}, { error: 'timed out', details: '"wait" timed out' }, null]);
    };
    const client = new OvsdbClient({ socketPath });
    try {
      const ops = [
        { op: 'comment', comment: 'a' },
        { op: 'wait', timeout: 0 },
        { op: 'comment', comment: 'b' },
      ];
      await assert.rejects(
        client.transact('Open_vSwitch', ops),
        (err: unknown) =>
          err instanceof OvsdbTransactionError && err.index === 1 && err.error === 'timed out',
      );
      await assert.rejects(client.transact('nope', ops), (err: unknown) => err instanceof OvsdbRpcError);
    } finally {
      client.close();
    }
  });

  it('fails a request the server does not answer in time, and starts afresh', async () => {
    let silent = true;
    onRequest = (req, conn) => {
      if (!silent) answer(conn, req.id, [{}]);
    };
    const before = connections.length;
    const client = new OvsdbClient({ socketPath, requestTimeoutMs: 200 });
    try {
      await assert.rejects(
        client.transact('Open_vSwitch', [{ op: 'comment', comment: 'x' }]),
        (err: unknown) =>
          err instanceof OvsdbConnectionError && err.maybeSent && /within 0.2 s/.test(err.message),
      );
      // A read is not sent again after a timeout: that would only double the wait.
      const sent = received.length;
      await assert.rejects(
        client.transact('Open_vSwitch', [{ op: 'select', table: 'Bridge', where: [] }], { readOnly: true }),
        (err: unknown) => err instanceof OvsdbConnectionError && err.timedOut,
      );
      assert.equal(received.length, sent + 1);
      silent = false;
      await client.transact('Open_vSwitch', [{ op: 'comment', comment: 'y' }]);
      assert.equal(connections.length, before + 3, 'each wedged connection was replaced');
    } finally {
      client.close();
    }
  });

  it('retries a read once when the connection breaks under it, but not a write', async () => {
    let drops = 0;
    onRequest = (req, conn) => {
      if (drops < 1) {
        drops++;
        conn.destroy();
        return;
      }
      answer(conn, req.id, [{ rows: [] }]);
    };
    const client = new OvsdbClient({ socketPath });
    try {
      const [r] = await client.transact('Open_vSwitch', [{ op: 'select', table: 'Bridge', where: [] }], {
        readOnly: true,
      });
      assert.deepEqual(r, { rows: [] });
      drops = 0;
      await assert.rejects(
        client.transact('Open_vSwitch', [{ op: 'insert', table: 'Bridge', row: {} }]),
        (err: unknown) => err instanceof OvsdbConnectionError && err.maybeSent,
      );
    } finally {
      client.close();
    }
  });

  it('fails at once when nothing listens, and after close()', async () => {
    const client = new OvsdbClient({ socketPath: join(dir, 'absent.sock') });
    await assert.rejects(
      client.request('echo', []),
      /cannot connect to ovsdb-server at .*absent.sock: ENOENT/,
    );
    client.close();
    await assert.rejects(client.request('echo', []), /closed/);
    assert.throws(() => new OvsdbClient({ socketPath: 'relative.sock' }), /absolute path/);
  });
});
