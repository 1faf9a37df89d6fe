import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, afterEach, before, describe, it } from 'node:test';
import { silentLogger } from '../common/log.js';
import { createRegistry } from '../common/metrics.js';
import { startEmulator, type Emulator } from '../emulator/server.js';
import { authorizationHeader } from './auth.js';
import { RestconfClient, type RequestSample, type RestconfClientOptions } from './client.js';
import { restconfMetrics } from './metrics.js';
import {
  capturingLogger,
  countsSince,
  elanBody,
  elanInstances,
  elanPath,
  rejection,
  waitFor,
} from './testing.js';

/**
 * Retries, timeouts, the concurrency cap and keep-alive, against the emulator's fault
 * injection (refused connections, 503 outages, 500 shard elections, latency).
 */
const AUTH = { kind: 'basic', user: 'admin', password: 'admin' } as const;
/** Fast retries so outages of a second are ridden out in many small steps. */
const FAST_RETRY = { maxAttempts: 60, initialMs: 20, maxMs: 200 };

describe('RestconfClient under faults', () => {
  let emulator: Emulator;
  const clients: RestconfClient[] = [];
  const makeClient = (options: Partial<RestconfClientOptions> = {}): RestconfClient => {
    const client = new RestconfClient({
      baseUrl: emulator.url,
      dialect: 'rfc8040',
      auth: AUTH,
      retry: FAST_RETRY,
      ...options,
    });
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

  it('retries through a refused-connection outage and then succeeds', async () => {
    const samples: RequestSample[] = [];
    const client = makeClient({ onRequest: (s) => samples.push(s) });
    await client.get(elanPath('warm'));
    emulator.faults.outage(1, 'refuse');
    assert.equal(await client.put(elanPath('r1'), elanBody('r1')), 'created');
    const statuses = samples.slice(1).map((s) => s.status);
    assert.ok(statuses.includes('network'), `expected refused attempts, got ${statuses.join(',')}`);
    assert.equal(statuses[statuses.length - 1], 201);
    assert.deepEqual(
      samples.slice(1).map((s) => s.attempt),
      statuses.map((_, i) => i + 1),
    );
  });

  it('retries through a 503 outage, logs each retry without secrets, and counts retries in metrics', async () => {
    const samples: RequestSample[] = [];
    const registry = createRegistry();
    const metrics = restconfMetrics(registry);
    const { logger, lines } = capturingLogger();
    const client = makeClient({
      logger,
      onRequest: (s) => {
        samples.push(s);
        metrics(s);
      },
    });
    emulator.faults.outage(1, '503');
    assert.equal(await client.put(elanPath('r2'), elanBody('r2', 4242)), 'created');
    const unavailable = samples.filter((s) => s.status === 503).length;
    assert.ok(unavailable >= 1, 'the outage was seen');
    assert.equal(samples[samples.length - 1]?.status, 201);

    const retries = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.message === 'RESTCONF request failed, retrying');
    assert.equal(retries.length, unavailable);
    assert.deepEqual(
      retries[0] && {
        level: retries[0].level,
        attempt: retries[0].attempt,
        failure: retries[0].failure,
        method: retries[0].method,
      },
      {
        level: 'warn',
        attempt: 1,
        failure: 'status 503',
        method: 'PUT',
      },
    );
    const logged = lines.join('\n');
    assert.doesNotMatch(logged, new RegExp(authorizationHeader(AUTH).split(' ')[1]!.replace(/[+/=]/g, '.')));
    assert.doesNotMatch(logged, /4242/, 'bodies are never logged');

    const text = await registry.metrics();
    assert.match(
      text,
      new RegExp(
        `odlcoe_restconf_request_duration_seconds_count\\{method="PUT",path="elan:elan-instances/elan-instance=\\{key\\}",status="503"\\} ${unavailable}`,
      ),
    );
    assert.match(
      text,
      new RegExp(
        `odlcoe_restconf_retries_total\\{method="PUT",path="elan:elan-instances/elan-instance=\\{key\\}"\\} ${unavailable}`,
      ),
    );
  });

  it('retries through a shard-leader election (500 operation-failed) and then succeeds', async () => {
    const samples: RequestSample[] = [];
    const client = makeClient({ onRequest: (s) => samples.push(s) });
    emulator.faults.election(1, 20);
    assert.equal(await client.delete(elanPath('r2')), 'deleted');
    assert.ok(
      samples.some((s) => s.status === 500),
      'the election was seen',
    );
    assert.equal(samples[samples.length - 1]?.status, 204);
  });

  it('gives up after maxAttempts with the last error, retryable, and marks a write whose outcome is unknown', async () => {
    const client = makeClient({ retry: { maxAttempts: 3, initialMs: 10, maxMs: 20 } });
    emulator.faults.election(60, 0);
    const before = emulator.counters().requests;
    const err = await rejection(client.put(elanPath('r3'), elanBody('r3')));
    assert.equal(err.status, 500);
    assert.equal(err.errorTag, 'operation-failed');
    assert.equal(err.retryable, true);
    assert.equal(err.attempts, 3);
    assert.equal(err.mayHaveApplied, true, 'a 500 may hide a commit that went through');
    assert.match(err.message, /after 3 attempts$/);
    assert.deepEqual(countsSince(before, emulator.counters().requests), { 'PUT 500': 3 });

    emulator.faults.clear();
    emulator.faults.outage(60, '503');
    const unavailable = await rejection(client.put(elanPath('r3'), elanBody('r3')));
    assert.equal(unavailable.status, 503);
    assert.equal(unavailable.mayHaveApplied, false, 'ODL did not take a request it answered 503');
  });

  it('times out an attempt slower than timeoutMs, retries it, then fails with a retryable timeout', async () => {
    const samples: RequestSample[] = [];
    const client = makeClient({
      timeoutMs: 100,
      retry: { maxAttempts: 3, initialMs: 10, maxMs: 20 },
      onRequest: (s) => samples.push(s),
    });
    emulator.faults.set({ latencyMs: 1_000 });
    const err = await rejection(client.get(elanPath('slow')));
    assert.equal(err.code, 'timeout');
    assert.equal(err.retryable, true);
    assert.equal(err.attempts, 3);
    assert.equal(err.status, undefined);
    assert.equal(err.mayHaveApplied, false, 'a read changes nothing');
    assert.deepEqual(
      samples.map((s) => [s.status, s.attempt]),
      [
        ['timeout', 1],
        ['timeout', 2],
        ['timeout', 3],
      ],
    );
  });

  it('a POST retried after a timeout meets its own first write: 409 data-exists with mayHaveApplied', async () => {
    const samples: RequestSample[] = [];
    // Attempt 1 times out but the emulator still applies it after its latency; the fault is
    // cleared once the timeout is seen, and the backoff (at least 1.5 s) lets that write land
    // before attempt 2 arrives.
    const client = makeClient({
      timeoutMs: 100,
      retry: { maxAttempts: 2, initialMs: 3_000, maxMs: 3_000 },
      onRequest: (s) => {
        samples.push(s);
        if (s.status === 'timeout') emulator.faults.clear();
      },
    });
    emulator.faults.set({ latencyMs: 300 });
    const err = await rejection(client.post(elanInstances, elanBody('p1')));
    assert.equal(err.errorTag, 'data-exists');
    assert.equal(err.status, 409);
    assert.equal(err.mayHaveApplied, true);
    assert.equal(err.attempts, 2);
    assert.deepEqual(
      samples.map((s) => s.status),
      ['timeout', 409],
    );
    // The entry is there: the first attempt created it.
    assert.equal((await client.getEntries(elanPath('p1'))).length, 1);
  });

  it('keeps at most `concurrency` attempts in flight, on as many connections', async () => {
    const intervals: { start: number; end: number }[] = [];
    const cap = 3;
    const client = makeClient({
      concurrency: cap,
      onRequest: (s) => {
        const end = performance.now();
        intervals.push({ start: end - s.seconds * 1000, end });
      },
    });
    emulator.faults.set({ latencyMs: 150 });
    const connectionsBefore = emulator.counters().connections;
    await Promise.all(Array.from({ length: 12 }, (_, i) => client.put(elanPath(`c${i}`), elanBody(`c${i}`))));
    assert.equal(intervals.length, 12);
    assert.equal(maxOverlap(intervals), cap);
    assert.ok(emulator.counters().connections - connectionsBefore <= cap, 'one connection per slot at most');
  });

  it('without a tight cap the same burst does overlap (the measurement can see it)', async () => {
    const intervals: { start: number; end: number }[] = [];
    const client = makeClient({
      concurrency: 12,
      onRequest: (s) => {
        const end = performance.now();
        intervals.push({ start: end - s.seconds * 1000, end });
      },
    });
    emulator.faults.set({ latencyMs: 150 });
    await Promise.all(Array.from({ length: 12 }, (_, i) => client.delete(elanPath(`c${i}`))));
    assert.ok(maxOverlap(intervals) > 3, `overlap ${maxOverlap(intervals)}`);
  });

  it('keeps connections alive: 100 sequential requests use one connection, a concurrent burst no more than the cap', async () => {
    const client = makeClient({ concurrency: 4 });
    const first = emulator.counters().connections;
    for (let i = 0; i < 50; i += 1) {
      await client.put(elanPath(`k${i % 5}`), elanBody(`k${i % 5}`));
      await client.get(elanPath(`k${i % 5}`));
    }
    assert.equal(emulator.counters().connections - first, 1);
    const second = emulator.counters().connections;
    await Promise.all(Array.from({ length: 200 }, (_, i) => client.get(elanPath(`k${i % 5}`))));
    assert.ok(
      emulator.counters().connections - second <= 3,
      'the idle connection is reused; at most 3 more for a cap of 4',
    );
  });

  it('close() ends a request that waits for its next retry', async () => {
    const samples: RequestSample[] = [];
    const client = makeClient({
      retry: { maxAttempts: 5, initialMs: 30_000, maxMs: 30_000 },
      onRequest: (s) => samples.push(s),
    });
    emulator.faults.outage(60, '503');
    const pending = rejection(client.put(elanPath('z'), elanBody('z')));
    await waitFor(() => samples.length === 1, 'the first attempt');
    client.close();
    const err = await pending;
    assert.equal(err.code, 'closed');
    assert.equal(err.attempts, 1);
  });
});

/** The largest number of intervals open at once (touching intervals do not overlap). */
function maxOverlap(intervals: { start: number; end: number }[]): number {
  // A millisecond of slack: start/end come from two clock reads around the same instant.
  const slackMs = 1;
  let max = 0;
  for (const probe of intervals) {
    const at = probe.start + slackMs;
    const open = intervals.filter((i) => i.start <= at && i.end > at).length;
    max = Math.max(max, open);
  }
  return max;
}
