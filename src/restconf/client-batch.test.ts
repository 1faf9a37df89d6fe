import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { silentLogger } from '../common/log.js';
import type { RecordedWrite } from '../emulator/record-file.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '../emulator/server.js';
import {
  PrerequisiteNotWritten,
  RestconfClient,
  RestconfError,
  type BatchSample,
  type RestconfClientOptions,
} from './client.js';
import type { Dialect } from './path.js';
import {
  countsSince,
  elanBody,
  elanInstances,
  elanInterfaceBody,
  elanInterfacePath,
  elanInterfaces,
  elanPath,
  rejection,
  waitFor,
} from './testing.js';

/**
 * Batched writes against the emulator's YANG Patch, per dialect: each caller gets what its
 * single write would have given it, whatever else shared its patch.
 */
const AUTH = { kind: 'basic', user: 'admin', password: 'admin' } as const;

const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** The key of the entry a recorded write created or replaced (`name` or `elan-instance-name`). */
function recordedName(w: RecordedWrite): string | undefined {
  const list = Object.values((w.body ?? {}) as Record<string, unknown>)[0];
  const entry = (Array.isArray(list) ? list[0] : undefined) as Record<string, unknown> | undefined;
  const name = entry?.name ?? entry?.['elan-instance-name'];
  return typeof name === 'string' ? name : undefined;
}

/** Why `promise` rejected; fails the test when it resolves or rejects with something else. */
async function notWritten(promise: Promise<unknown>): Promise<PrerequisiteNotWritten> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof PrerequisiteNotWritten, `expected PrerequisiteNotWritten, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the write not to be sent');
}

/** A promise settled by the test: a write of something else that `after` can wait for. */
function deferred(): { promise: Promise<void>; resolve(): void; reject(err: Error): void } {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** The record file's writes so far (the emulator appends each line after answering). */
function recordedWrites(file: string): RecordedWrite[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as RecordedWrite);
}

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
    const interfaceExists = async (name: string) =>
      (await makeClient({ batch: undefined }).get(elanInterfacePath(name))) !== undefined;
    /** Write requests since `before` (the test's own reads left out). */
    const writesSince = (before: Record<string, number>): Record<string, number> =>
      Object.fromEntries(
        Object.entries(countsSince(before, emulator.counters().requests)).filter(
          ([k]) => !k.startsWith('GET '),
        ),
      );
    const dir = mkdtempSync(join(tmpdir(), 'odlcoe-client-batch-'));
    const recordFile = join(dir, 'record.jsonl');
    /**
     * The recorded writes of entries named `prefix…`, once there are `count` of them (the
     * emulator appends each line after answering, so the file can lag the answer).
     */
    const recorded = async (prefix: string, count: number, file = recordFile): Promise<RecordedWrite[]> => {
      const mine = () => recordedWrites(file).filter((w) => recordedName(w)?.startsWith(prefix));
      await waitFor(() => mine().length >= count, `${count} recorded writes of ${prefix}…`);
      return mine();
    };
    /** An emulator of its own for one test, recording to `<name>.jsonl`. */
    const recordingEmulator = async (name: string, options: Partial<EmulatorOptions>) => {
      const file = join(dir, `${name}.jsonl`);
      const started = await startEmulator({
        port: 0,
        profile: 'sodium',
        recordFile: file,
        logger: silentLogger(),
        ...options,
      });
      return { emulator: started, file };
    };

    before(async () => {
      emulator = await startEmulator({ port: 0, profile: 'sodium', recordFile, logger: silentLogger() });
    });
    afterEach(() => {
      emulator.faults.clear();
      samples.length = 0;
      for (const c of clients.splice(0)) c.close();
    });
    after(async () => {
      await emulator?.close();
      rmSync(dir, { recursive: true, force: true });
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
    // `after`: an edit that must follow others (an interface behind its instance's create).

    it('an edit that follows a create in the open batch rides the same patch, behind it', async () => {
      const client = makeClient();
      const before = emulator.counters();
      const instance = client.post(elanInstances, elanBody('fa'));
      const unrelated = client.post(elanInstances, elanBody('fa-other'));
      const dependent = client.post(elanInterfaces, elanInterfaceBody('fa-if', 'fa'), { after: [instance] });
      const next = client.post(elanInterfaces, elanInterfaceBody('fa-if2', 'fa'), { after: [dependent] });
      await Promise.all([instance, unrelated, dependent, next]);
      assert.deepEqual(countsSince(before.requests, emulator.counters().requests), { 'PATCH 200': 1 });
      const record = await recorded('fa', 4);
      assert.deepEqual(
        record.map(recordedName),
        ['fa', 'fa-other', 'fa-if', 'fa-if2'],
        'in the order submitted',
      );
      assert.equal(new Set(record.map((w) => w.request)).size, 1, 'one request for all four');
      assert.equal(await exists('fa'), true);
      assert.equal(await interfaceExists('fa-if'), true);
      assert.equal(await interfaceExists('fa-if2'), true);
    });

    for (const refusal of ['409', '400'] as const) {
      it(`an edit whose prerequisite fails in the patch (${refusal}) is not sent, nor what follows it`, async () => {
        const client = makeClient();
        const instance = `fp${refusal}`;
        const body =
          refusal === '409'
            ? elanBody(instance)
            : { 'elan:elan-instance': [{ 'elan-instance-name': instance, 'segment-type': 'elan:nonsense' }] };
        // 409: the create meets data that exists (another writer's), an error of its own edit.
        // 400: a value the schema refuses fails the whole patch (ODL reads the document first);
        // the batcher halves it down to single writes, where the dependent waits for it.
        if (refusal === '409') await makeClient({ batch: undefined }).post(elanInstances, elanBody(instance));
        const prerequisite = client.post(elanInstances, body);
        const dependent = client.post(elanInterfaces, elanInterfaceBody(`${instance}-if`, instance), {
          after: [prerequisite],
        });
        const transitive = client.post(elanInterfaces, elanInterfaceBody(`${instance}-if2`, instance), {
          after: [dependent],
        });
        const unrelated = [
          client.post(elanInstances, elanBody(`${instance}-ok`)),
          client.post(elanInterfaces, elanInterfaceBody(`${instance}-ok-if`, `${instance}-ok`)),
        ];
        const [err, withdrawn] = await Promise.all([
          rejection(prerequisite),
          notWritten(dependent),
          notWritten(transitive),
          ...unrelated,
        ]);
        assert.equal(err.status, Number(refusal));
        assert.match(withdrawn.message, /was to follow/);
        const patchResult = refusal === '409' ? 'edit-failed' : 'failed';
        assert.ok(
          samples.some((x) => x.result === patchResult),
          `a patch ${patchResult}: ${JSON.stringify(samples)}`,
        );
        assert.equal(await exists(`${instance}-ok`), true);
        assert.equal(await interfaceExists(`${instance}-ok-if`), true);
        assert.equal(await interfaceExists(`${instance}-if`), false, 'the dependent was not written');
        assert.equal(await interfaceExists(`${instance}-if2`), false, 'nor what followed it');
        const record = await recorded(`${instance}-`, 2);
        assert.deepEqual(record.map(recordedName), [`${instance}-ok`, `${instance}-ok-if`]);
      });
    }

    it('an edit that follows a patch in flight waits for its answer, then goes', async () => {
      // Each edit costs 20 ms to commit (serialised, as on a shard leader): the prerequisite's
      // patch of 10 edits is answered ~200 ms after it applied, long after a dependent sent at
      // once would have been applied.
      const { emulator: slow, file } = await recordingEmulator('inflight', { costs: { editMs: 20 } });
      try {
        const client = makeClient({ batch: { maxEdits: 10, windowMs: 20 } }, slow);
        const editsBefore = slow.counters().edits;
        // Ten edits fill the batch: it is sent at once.
        const instance = client.post(elanInstances, elanBody('fi'));
        const fillers = names('fi-f', 9).map((n) => client.post(elanInstances, elanBody(n)));
        const dependent = client.post(elanInterfaces, elanInterfaceBody('fi-if', 'fi'), {
          after: [instance],
        });
        let appliedWhenAnswered = -1;
        void instance.then(() => {
          appliedWhenAnswered = slow.counters().edits - editsBefore;
        });
        await Promise.all([instance, ...fillers, dependent]);
        assert.equal(appliedWhenAnswered, 10, 'nothing but the first patch applied when it was answered');
        const record = await recorded('fi', 11, file);
        const request = (name: string) => record.find((w) => recordedName(w) === name)?.request;
        assert.ok(request('fi-if')! > request('fi')!, 'the dependent came in a later request');
      } finally {
        await slow.close();
      }
    });

    it('an edit that follows a patch in flight is not sent when that patch fails its edit', async () => {
      await makeClient({ batch: undefined }).post(elanInstances, elanBody('fj'));
      const client = makeClient({ batch: { maxEdits: 2, windowMs: 20 } });
      emulator.faults.set({ latencyMs: 200 });
      const before = emulator.counters();
      // Two edits fill the batch: sent at once, then held 200 ms; the create meets 409.
      const instance = client.post(elanInstances, elanBody('fj'));
      const filler = client.post(elanInstances, elanBody('fj-other'));
      const dependent = client.post(elanInterfaces, elanInterfaceBody('fj-if', 'fj'), { after: [instance] });
      const [refused] = await Promise.all([rejection(instance), filler, notWritten(dependent)]);
      assert.equal(refused.status, 409);
      emulator.faults.clear();
      assert.equal(await interfaceExists('fj-if'), false);
      // The patch (answered 200 with the create's 409 in its status), then the filler again
      // alone: nothing for the dependent.
      assert.deepEqual(writesSince(before.requests), {
        'PATCH 200': 1,
        [dialect === 'rfc8040' ? 'POST 201' : 'POST 204']: 1,
      });
    });

    it('edits that follow a patch that failed whole (outage) are withdrawn; nothing is written', async () => {
      const client = makeClient({
        batch: { maxEdits: 2, windowMs: 20 },
        retry: { maxAttempts: 2, initialMs: 50, maxMs: 50 },
      });
      emulator.faults.outage(30, '503');
      const instance = client.post(elanInstances, elanBody('fw'));
      const sameBatch = client.post(elanInstances, elanBody('fw-other'));
      // The batch left (two edits fill it): this one waits for its answer.
      const dependent = client.post(elanInterfaces, elanInterfaceBody('fw-if', 'fw'), { after: [instance] });
      const transitive = client.post(elanInterfaces, elanInterfaceBody('fw-if2', 'fw'), {
        after: [dependent],
      });
      const [first, second] = await Promise.all([
        rejection(instance),
        rejection(sameBatch),
        notWritten(dependent),
        notWritten(transitive),
      ]);
      assert.equal(first.status, 503);
      assert.equal(second.status, 503);
      emulator.faults.clear();
      for (const n of ['fw', 'fw-other']) assert.equal(await exists(n), false, `${n} absent`);
      for (const n of ['fw-if', 'fw-if2']) assert.equal(await interfaceExists(n), false, `${n} absent`);
    });

    it('edits that follow an aborted caller are withdrawn, in the open batch or behind it', async () => {
      const client = makeClient({ retry: { maxAttempts: 10, initialMs: 300, maxMs: 300 } });
      // Aborted while its batch is open: the edit behind it in that batch is withdrawn.
      const early = new AbortController();
      const lone = client.post(elanInstances, elanBody('fx'), { signal: early.signal });
      const behind = client.post(elanInterfaces, elanInterfaceBody('fx-if', 'fx'), { after: [lone] });
      const unrelated = client.post(elanInstances, elanBody('fx-other'));
      early.abort(new Error('lease lost'));
      const [aborted] = await Promise.all([rejection(lone), notWritten(behind), unrelated]);
      assert.equal(aborted.code, 'aborted');
      assert.equal(await interfaceExists('fx-if'), false);
      assert.deepEqual((await recorded('fx', 1)).map(recordedName), ['fx-other']);

      // Aborted while its patch is retried through an outage: what waited for it is withdrawn.
      emulator.faults.outage(30, '503');
      const term = new AbortController();
      const instance = client.post(elanInstances, elanBody('fy'), { signal: term.signal });
      const filler = client.post(elanInstances, elanBody('fy-other'), { signal: term.signal });
      await waitFor(() => (emulator.counters().requests['PATCH 503'] ?? 0) >= 1, 'the first attempt');
      const dependent = client.post(elanInterfaces, elanInterfaceBody('fy-if', 'fy'), { after: [instance] });
      term.abort(new Error('lease lost'));
      const [cut, cutToo] = await Promise.all([
        rejection(instance),
        rejection(filler),
        notWritten(dependent),
      ]);
      assert.equal(cut.code, 'aborted');
      assert.equal(cutToo.code, 'aborted');
      emulator.faults.clear();
      assert.equal(await exists('fy'), false);
      assert.equal(await interfaceExists('fy-if'), false);
    });

    it('after a 415, an edit that follows another goes single once that one was written', async () => {
      const { emulator: plain, file } = await recordingEmulator('fallback', { yangPatch: false });
      try {
        await makeClient({ batch: undefined }, plain).post(elanInstances, elanBody('fz-dup'));
        const client = makeClient({}, plain);
        // One batch, refused with 415: every edit goes single; each dependent behind its own.
        const instance = client.post(elanInstances, elanBody('fz'));
        const dup = client.post(elanInstances, elanBody('fz-dup'));
        const dependent = client.post(elanInterfaces, elanInterfaceBody('fz-if', 'fz'), {
          after: [instance],
        });
        const next = client.post(elanInterfaces, elanInterfaceBody('fz-if2', 'fz'), { after: [dependent] });
        const orphan = client.post(elanInterfaces, elanInterfaceBody('fz-dup-if', 'fz-dup'), {
          after: [dup],
        });
        const [, refused] = await Promise.all([
          instance,
          rejection(dup),
          dependent,
          next,
          notWritten(orphan),
        ]);
        assert.equal(refused.status, 409);
        assert.equal(client.patchRefused, true);
        const record = await recorded('fz', 4, file);
        assert.deepEqual(record.map(recordedName), ['fz-dup', 'fz', 'fz-if', 'fz-if2']);
        // Once refused, `after` still holds for single writes.
        const later = client.post(elanInterfaces, elanInterfaceBody('fz-if3', 'fz'), { after: [dup] });
        await notWritten(later);
        const posts = plain.counters().requests[dialect === 'rfc8040' ? 'POST 201' : 'POST 204'];
        assert.equal(posts, 4, 'no POST for an edit whose prerequisite failed');
      } finally {
        await plain.close();
      }
    });

    it('without batching, a write with `after` is sent once those succeeded, never when one failed', async () => {
      const client = makeClient({ batch: undefined });
      const before = emulator.counters();
      const gate = deferred();
      const dependent = client.post(elanInterfaces, elanInterfaceBody('fs-if', 'fs'), {
        after: [gate.promise],
      });
      await client.post(elanInstances, elanBody('fs'));
      // The instance was written; the interface still waits for the gate.
      assert.equal(await interfaceExists('fs-if'), false);
      gate.resolve();
      await dependent;
      assert.equal(await interfaceExists('fs-if'), true);

      const failing = deferred();
      const refused = client.post(elanInterfaces, elanInterfaceBody('fs-if2', 'fs'), {
        after: [failing.promise],
      });
      failing.reject(new Error('its instance was refused'));
      assert.match((await notWritten(refused)).message, /its instance was refused/);
      const created = dialect === 'rfc8040' ? 'POST 201' : 'POST 204';
      assert.deepEqual(
        writesSince(before.requests),
        { [created]: 2 },
        'the instance and the first interface, nothing else',
      );
      assert.equal(await interfaceExists('fs-if2'), false);
    });
  });
}
