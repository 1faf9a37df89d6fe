import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FaultState } from './faults.js';
import type { Emulator } from './server.js';
import { call, errorTag, eventually, startQuiet } from './testing.js';

const ELAN = '/rests/data/elan:elan-instances/elan-instance';
const body = (name: string) => ({ 'elan:elan-instance': [{ 'elan-instance-name': name }] });

describe('fault decisions', () => {
  it('follows the error rate with an injected random source and stays within the latency bounds', () => {
    let random = 0.2;
    const state = new FaultState(
      { latencyMs: 10, latencyJitterMs: 5, errorRate: 0.5, errorStatus: 503 },
      Date.now,
      () => random,
    );
    const hit = state.decide();
    assert.equal(hit.error?.status, 503);
    assert.equal(hit.delayMs, 11);
    random = 0.9;
    assert.equal(state.decide().error, undefined);
    assert.throws(() => state.set({ errorRate: 2 }), /errorRate/);
  });

  it('reports running outages and elections and forgets them on clear', () => {
    let now = 1_000_000;
    const state = new FaultState({}, () => now);
    state.unavailableFor(3);
    state.election(2, 50);
    assert.deepEqual(state.status().outage, { mode: '503', remainingSeconds: 3 });
    assert.equal(state.decide().error?.status, 503);
    now += 3000;
    assert.equal(state.status().outage, undefined);
    assert.equal(state.decide().error, undefined, 'the election ended after 2 s');
    state.election(5);
    state.clear();
    assert.equal(state.decide().error, undefined);
  });
});

describe('fault injection over HTTP', () => {
  let emu: Emulator;
  before(async () => {
    emu = await startQuiet();
  });
  after(() => emu.close());

  it('adds latency to data requests', async () => {
    emu.faults.set({ latencyMs: 200 });
    const start = Date.now();
    assert.equal((await call(emu.url, 'GET', `${ELAN}=none`)).status, 404);
    assert.ok(Date.now() - start >= 190, 'the answer came no sooner than the latency');
    emu.faults.clear();
  });

  it('answers a fraction of data requests with the configured error, without applying writes', async () => {
    emu.faults.set({ errorRate: 1, errorStatus: 503 });
    const put = await call(emu.url, 'PUT', `${ELAN}=e1`, body('e1'));
    assert.equal(put.status, 503);
    assert.ok(errorTag(put));
    assert.equal(
      (await call(emu.url, 'GET', '/odlcoe-emulator/ready')).status,
      200,
      'control endpoints are never faulted',
    );
    emu.faults.set({ errorRate: 1 });
    const err500 = await call(emu.url, 'GET', `${ELAN}=e1`);
    assert.equal(err500.status, 500);
    assert.equal(errorTag(err500), 'operation-failed');
    emu.faults.set({ errorRate: 0 });
    assert.equal((await call(emu.url, 'GET', `${ELAN}=e1`)).status, 404, 'the faulted PUT was not applied');
  });

  it('503 outage: data requests get 503 until it ends', async () => {
    emu.faults.outage(1, '503');
    const reply = await call(emu.url, 'GET', `${ELAN}=x`);
    assert.equal(reply.status, 503);
    const status = (await call(emu.url, 'GET', '/odlcoe-emulator/faults')).json() as {
      outage?: { mode: string };
    };
    assert.equal(status.outage?.mode, '503');
    await eventually(
      async () => ((await call(emu.url, 'GET', `${ELAN}=x`)).status === 404 ? true : undefined),
      15_000,
      'end of outage',
    );
  });

  it('election: 500 operation-failed after the delay, for the given time', async () => {
    emu.faults.election(1, 100);
    const start = Date.now();
    const reply = await call(emu.url, 'PUT', `${ELAN}=el`, body('el'));
    assert.ok(Date.now() - start >= 90);
    assert.equal(reply.status, 500);
    assert.equal(errorTag(reply), 'operation-failed');
    assert.match(reply.text, /no leader/);
    await eventually(
      async () => ((await call(emu.url, 'PUT', `${ELAN}=el`, body('el'))).status === 201 ? true : undefined),
      15_000,
      'end of election',
    );
  });

  it('refuse outage from the control endpoint: connections are refused, then the same port serves again', async () => {
    await call(emu.url, 'PUT', `${ELAN}=survivor`, body('survivor'));
    const put = await call(emu.url, 'PUT', '/odlcoe-emulator/faults', {
      outage: { seconds: 1, mode: 'refuse' },
    });
    assert.equal(put.status, 200);
    const refused = await eventually(
      async () => {
        try {
          await call(emu.url, 'GET', '/odlcoe-emulator/ready');
          return undefined;
        } catch (err) {
          return (err as NodeJS.ErrnoException).code;
        }
      },
      10_000,
      'refused connections',
    );
    assert.ok(['ECONNREFUSED', 'ECONNRESET'].includes(refused!), refused);
    await eventually(
      async () => ((await call(emu.url, 'GET', `${ELAN}=survivor`)).status === 200 ? true : undefined),
      15_000,
      'listening again',
    );
  });

  it('clear() ends a refuse outage at once', async () => {
    emu.faults.outage(600, 'refuse');
    await assert.rejects(call(emu.url, 'GET', '/odlcoe-emulator/ready'));
    emu.faults.clear();
    await eventually(
      async () => ((await call(emu.url, 'GET', '/odlcoe-emulator/ready')).status === 200 ? true : undefined),
      10_000,
      'listening after clear',
    );
  });

  it('PUT /odlcoe-emulator/faults validates its body, GET shows it, DELETE clears it', async () => {
    assert.equal((await call(emu.url, 'PUT', '/odlcoe-emulator/faults', { errorRate: 7 })).status, 400);
    assert.equal((await call(emu.url, 'PUT', '/odlcoe-emulator/faults', { colour: 1 })).status, 400);
    assert.equal(
      (await call(emu.url, 'PUT', '/odlcoe-emulator/faults', { outage: { seconds: 1, mode: 'sideways' } }))
        .status,
      400,
    );
    const set = await call(emu.url, 'PUT', '/odlcoe-emulator/faults', {
      latencyMs: 1,
      election: { seconds: 30, delayMs: 0 },
    });
    assert.equal(set.status, 200);
    const shown = (await call(emu.url, 'GET', '/odlcoe-emulator/faults')).json() as {
      settings: { latencyMs?: number };
      election?: unknown;
    };
    assert.equal(shown.settings.latencyMs, 1);
    assert.ok(shown.election);
    assert.equal((await call(emu.url, 'GET', `${ELAN}=x`)).status, 500);
    assert.equal((await call(emu.url, 'DELETE', '/odlcoe-emulator/faults')).status, 204);
    assert.equal((await call(emu.url, 'GET', `${ELAN}=x`)).status, 404);
  });

  it('counts TCP connections, so keep-alive can be checked', async () => {
    const before = emu.counters().connections;
    for (let i = 0; i < 20; i++) await call(emu.url, 'GET', `${ELAN}=x`);
    const opened = emu.counters().connections - before;
    assert.ok(opened >= 0 && opened <= 2, `20 sequential keep-alive requests opened ${opened} connections`);
  });
});
