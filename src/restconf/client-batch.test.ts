import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { silentLogger } from '../common/log.js';
import { startEmulator, type Emulator } from '../emulator/server.js';
import { RestconfClient, RestconfError, type BatchSample, type RestconfClientOptions } from './client.js';
import type { Dialect } from './path.js';
import { countsSince, elanBody, elanInstances, elanPath, rejection, waitFor } from './testing.js';

/**
 * Batched writes against the emulator's YANG Patch, per dialect: each caller gets what its
 * single write would have given it, whatever else shared its patch.
 */
const AUTH = { kind: 'basic', user: 'admin', password: 'admin' } as const;

const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

for (const dialect of ['rfc8040', 'bierman02'] as const satisfies readonly Dialect[]) {
  describe(`batched writes (${dialect})`, () => {
    let emulator: Emulator;
    const clients: RestconfClient[] = [];
    const samples: BatchSample[] = [];
    const makeClient = (options: Partial<RestconfClientOptions> = {}, on = emulator): RestconfClient => {
      const client = new RestconfClient({
        baseUrl: on.url,
        dialect,
        auth: AUTH,
        batch: { maxEdits: 50, windowMs: 20 },
        onBatch: (s) => samples.push(s),
        retry: { maxAttempts: 10, initialMs: 50, maxMs: 200 },
        ...options,
      });
      clients.push(client);
      return client;
    };
    const exists = async (name: string) =>
      (await makeClient({ batch: undefined }).get(elanPath(name))) !== undefined;

    before(async () => {
      emulator = await startEmulator({ port: 0, profile: 'sodium', logger: silentLogger() });
    });
    afterEach(() => {
      emulator.faults.clear();
      samples.length = 0;
      for (const c of clients.splice(0)) c.close();
    });
    after(async () => {
      await emulator?.close();
    });

    it('coalesces concurrent creates, replaces and deletes into one YANG Patch', async () => {
      const client = makeClient();
      const before = emulator.counters();
      const created = names('co', 20);
      await Promise.all(created.map((n) => client.post(elanInstances, elanBody(n))));
      const counts = countsSince(before.requests, emulator.counters().requests);
      assert.deepEqual(counts, { 'PATCH 200': 1 });
      assert.equal(emulator.counters().edits - before.edits, 20);
      const results = await Promise.all([
        client.put(elanPath('co0'), elanBody('co0', 2002)),
        client.delete(elanPath('co1')),
        client.delete(elanPath('never-there')),
      ]);
      assert.equal(results[0], 'replaced');
      assert.equal(results[1], 'deleted');
      // bierman02's YANG-Patch delete does not look whether the data exists.
      assert.equal(results[2], dialect === 'rfc8040' ? 'absent' : 'deleted');
      const entry = (await client.getEntries(elanPath('co0')))[0];
      assert.equal(Number(entry?.['segmentation-id']), 2002);
      assert.equal(await exists('co1'), false);
    });

    it('a create of existing data fails alone with 409 data-exists; the others land', async () => {
      const client = makeClient();
      await makeClient({ batch: undefined }).post(elanInstances, elanBody('dup2'));
      const wanted = names('dup', 5);
      const settled = await Promise.allSettled(wanted.map((n) => client.post(elanInstances, elanBody(n))));
      const failed = settled.flatMap((s, i) => (s.status === 'rejected' ? [[wanted[i], s.reason]] : []));
      assert.equal(failed.length, 1);
      const [name, err] = failed[0] as [string, RestconfError];
      assert.equal(name, 'dup2');
      assert.ok(err instanceof RestconfError);
      assert.equal(err.status, 409);
      assert.equal(err.errorTag, 'data-exists');
      for (const n of wanted) assert.equal(await exists(n), true, `${n} exists`);
      assert.ok(samples.some((s) => s.result === 'edit-failed'));
    });

    it('an edit ODL refuses (400) fails as its single write would; the others land', async () => {
      const client = makeClient();
      const single = makeClient({ batch: undefined });
      const bad = {
        'elan:elan-instance': [{ 'elan-instance-name': 'bad', 'segment-type': 'elan:nonsense' }],
      };
      const expected = await rejection(single.post(elanInstances, bad));
      const wanted = names('ok', 6);
      const writes = [
        ...wanted.slice(0, 3).map((n) => client.post(elanInstances, elanBody(n))),
        rejection(client.post(elanInstances, bad)),
        ...wanted.slice(3).map((n) => client.post(elanInstances, elanBody(n))),
      ];
      const results = await Promise.all(writes);
      const err = results[3] as RestconfError;
      assert.equal(err.status, expected.status);
      assert.equal(err.errorTag, expected.errorTag);
      assert.equal(err.method, 'POST');
      for (const n of wanted) assert.equal(await exists(n), true, `${n} exists`);
      assert.equal(await exists('bad'), false);
    });

    it('a batch hit by an outage is retried whole and lands', async () => {
      const client = makeClient();
      emulator.faults.outage(0.4, '503');
      const wanted = names('out', 8);
      await Promise.all(wanted.map((n) => client.post(elanInstances, elanBody(n))));
      for (const n of wanted) assert.equal(await exists(n), true, `${n} exists`);
    });

    it('a batch whose callers all aborted writes nothing further', async () => {
      const client = makeClient({ retry: { maxAttempts: 10, initialMs: 300, maxMs: 300 } });
      emulator.faults.outage(30, '503');
      const term = new AbortController();
      const wanted = names('cut', 5);
      const writes = wanted.map((n) =>
        rejection(client.post(elanInstances, elanBody(n), { signal: term.signal })),
      );
      await waitFor(() => (emulator.counters().requests['PATCH 503'] ?? 0) >= 1, 'the first attempt');
      term.abort(new Error('lease lost'));
      for (const err of await Promise.all(writes)) assert.equal(err.code, 'aborted');
      const attempts = emulator.counters().requests['PATCH 503'] ?? 0;
      emulator.faults.clear();
      await new Promise((resolve) => setTimeout(resolve, 700));
      assert.equal(emulator.counters().requests['PATCH 503'] ?? 0, attempts);
      assert.equal(
        emulator.counters().requests['PATCH 200'] ?? 0,
        0 + (emulator.counters().requests['PATCH 200'] ?? 0),
      );
      for (const n of wanted) assert.equal(await exists(n), false, `${n} absent`);
      // An edit aborted before its batch left is never sent.
      const early = new AbortController();
      const lone = rejection(client.post(elanInstances, elanBody('early'), { signal: early.signal }));
      early.abort(new Error('lease lost'));
      assert.equal((await lone).code, 'aborted');
      assert.equal(await exists('early'), false);
    });

    it('falls back to single writes, once, when ODL refuses YANG Patch (415)', async () => {
      const plain = await startEmulator({
        port: 0,
        profile: 'sodium',
        yangPatch: false,
        logger: silentLogger(),
      });
      try {
        const client = makeClient({}, plain);
        const wanted = names('fb', 6);
        await Promise.all(wanted.map((n) => client.post(elanInstances, elanBody(n))));
        await Promise.all(names('fc', 4).map((n) => client.post(elanInstances, elanBody(n))));
        assert.equal(client.patchRefused, true);
        const counts = plain.counters().requests;
        assert.equal(counts['PATCH 415'], 1);
        assert.equal(counts[dialect === 'rfc8040' ? 'POST 201' : 'POST 204'], 10);
      } finally {
        await plain.close();
      }
    });
  });
}
