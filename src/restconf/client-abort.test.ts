import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { silentLogger } from '../common/log.js';
import { startEmulator, type Emulator } from '../emulator/server.js';
import { RestconfClient, type RestconfClientOptions } from './client.js';
import { countsSince, elanBody, elanPath, rejection, waitFor } from './testing.js';

/**
 * A caller's abort signal (the watcher's leader term) ends a request at once: before its first
 * attempt, in flight, and while it waits to retry through an outage. No attempt reaches ODL
 * after the signal fired, so a write cannot land after the caller lost the right to write.
 */
const AUTH = { kind: 'basic', user: 'admin', password: 'admin' } as const;

function attemptsOf(method: string, counts: Record<string, number>): number {
  return Object.entries(counts)
    .filter(([key]) => key.startsWith(`${method} `))
    .reduce((sum, [, n]) => sum + n, 0);
}

describe('RestconfClient request abort', () => {
  let emulator: Emulator;
  const clients: RestconfClient[] = [];
  const makeClient = (options: Partial<RestconfClientOptions> = {}): RestconfClient => {
    const client = new RestconfClient({ baseUrl: emulator.url, dialect: 'rfc8040', auth: AUTH, ...options });
    clients.push(client);
    return client;
  };

  before(async () => {
    emulator = await startEmulator({ port: 0, profile: 'sodium', logger: silentLogger() });
  });
  afterEach(() => {
    emulator.faults.clear();
    for (const c of clients.splice(0)) c.close();
  });
  after(async () => {
    await emulator?.close();
  });

  it('stops a request retrying through a 503 outage, and no further attempt reaches ODL', async () => {
    // Waits of seconds between attempts: without the signal the PUT would retry on its own
    // through the whole outage and land once it ends.
    const client = makeClient({ retry: { maxAttempts: 10, initialMs: 2_000, maxMs: 15_000 } });
    const start = emulator.counters().requests;
    emulator.faults.outage(60, '503');
    const abort = new AbortController();
    const put = rejection(client.put(elanPath('stale'), elanBody('stale'), { signal: abort.signal }));
    await waitFor(
      () => attemptsOf('PUT', countsSince(start, emulator.counters().requests)) === 1,
      'the first PUT attempt to meet the outage',
    );
    abort.abort(new Error('leadership lost'));
    const err = await put;
    assert.equal(err.code, 'aborted');
    assert.equal(err.retryable, false);
    assert.equal(err.attempts, 1);
    assert.match(err.message, /aborted \(leadership lost\)/);
    assert.equal((err.cause as Error | undefined)?.message, 'leadership lost');
    // It gave up while the outage was still on, not after exhausting its attempts.
    const probe = makeClient({ retry: { maxAttempts: 1 } });
    assert.equal((await rejection(probe.get(elanPath('stale')))).status, 503, 'the outage is still on');

    // ODL recovers; a later request goes through, and the aborted PUT never comes back.
    emulator.faults.clear();
    assert.equal(await client.get(elanPath('stale')), undefined);
    const since = countsSince(start, emulator.counters().requests);
    assert.deepEqual(since, { 'PUT 503': 1, 'GET 503': 1, 'GET 404': 1 });
  });

  it('sends nothing when the signal has already fired', async () => {
    const client = makeClient();
    const start = emulator.counters().requests;
    const err = await rejection(
      client.delete(elanPath('gone'), { signal: AbortSignal.abort(new Error('term ended')) }),
    );
    assert.equal(err.code, 'aborted');
    assert.equal(err.attempts, 0);
    assert.equal(err.mayHaveApplied, false);
    await client.get(elanPath('gone'));
    assert.deepEqual(countsSince(start, emulator.counters().requests), { 'GET 404': 1 });
  });

  it('cuts off an attempt in flight and reports that it may have applied', async () => {
    // A server that takes requests and never answers: the attempt stays in flight.
    const received: string[] = [];
    const held: http.ServerResponse[] = [];
    const server = http.createServer((req, res) => {
      received.push(`${req.method} ${req.url}`);
      held.push(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const client = makeClient({
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        timeoutMs: 60_000,
      });
      const abort = new AbortController();
      const del = rejection(client.delete(elanPath('x'), { signal: abort.signal }));
      await waitFor(() => received.length === 1, 'the DELETE to arrive');
      abort.abort(new Error('leadership lost'));
      const err = await del;
      assert.equal(err.code, 'aborted');
      assert.equal(err.attempts, 1);
      assert.equal(err.mayHaveApplied, true, 'the DELETE was sent: ODL may have applied it');
      assert.equal(received.length, 1, 'no retry after the abort');
    } finally {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('takes a request waiting for a slot out of the queue', async () => {
    const received: string[] = [];
    const held: http.ServerResponse[] = [];
    const server = http.createServer((req, res) => {
      received.push(`${req.method} ${req.url}`);
      held.push(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const client = makeClient({
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        timeoutMs: 60_000,
        concurrency: 1,
      });
      const first = rejection(client.get(elanPath('a')));
      await waitFor(() => received.length === 1, 'the first request to take the only slot');
      const abort = new AbortController();
      const queued = rejection(client.put(elanPath('b'), elanBody('b'), { signal: abort.signal }));
      abort.abort(new Error('work queue stopped'));
      const err = await queued;
      assert.equal(err.code, 'aborted');
      assert.equal(err.attempts, 0);
      assert.equal(err.mayHaveApplied, false);
      client.close();
      assert.equal((await first).code, 'closed');
      assert.equal(received.length, 1, 'the queued PUT was never sent');
    } finally {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
