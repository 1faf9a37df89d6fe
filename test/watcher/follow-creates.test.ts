/**
 * A create follows the creates of ours in flight it needs: with batched writes, a first start
 * over a cluster writes each pod's interface, elan-interface and vpn-interface behind the ELAN
 * and VPN instances they attach to (in the same YANG Patch, or in a later one), instead of
 * being turned away as `blocked` and reconciled again once the instances exist.
 *
 * The emulator's write record is replayed to check the order ODL applied the writes in, and
 * its request numbers say which writes shared one patch.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import type { RecordedWrite } from '../../src/emulator/record-file.js';
import { RestconfClient } from '../../src/restconf/client.js';
import type { Dialect } from '../../src/restconf/path.js';
import type { Watcher } from '../../src/watcher/watcher.js';
import {
  createNamespace,
  createNode,
  createPod,
  metricValue,
  readOdl,
  startEnv,
  startTestWatcher,
  waitFor,
  type Env,
} from './testing.js';

const BATCH = { maxEdits: 50, windowMs: 5 };
const NODES = [
  { name: 'node-a', ip: '192.168.1.1', cidr: '10.244.1.0/24', prefix: '10.244.1.' },
  { name: 'node-b', ip: '192.168.1.2', cidr: '10.244.2.0/24', prefix: '10.244.2.' },
];
const NAMESPACES = ['alpha', 'beta'];
/** Pods per namespace, spread over the nodes in turn. */
const PODS_PER_NAMESPACE = 4;

type Entry = Record<string, unknown>;

/** A recorded create or replace: its list (`elan-interface`, …) and entry; undefined otherwise. */
function written(w: RecordedWrite): { list: string; entry: Entry } | undefined {
  if (w.status >= 300 || w.method === 'DELETE' || w.method === 'PATCH') return undefined;
  const [member, value] = Object.entries((w.body ?? {}) as Entry)[0] ?? [];
  if (member === undefined || !Array.isArray(value)) return undefined;
  return { list: member.slice(member.indexOf(':') + 1), entry: value[0] as Entry };
}

const entryName = (e: Entry): string =>
  String(e.name ?? e['elan-instance-name'] ?? e['vpn-instance-name'] ?? e['network-id'] ?? '');

/**
 * Replays the record: every elan-interface and vpn-interface written before its instance or
 * its ietf interface (one line per violation).
 */
function writtenBeforeTheirPrerequisites(record: readonly RecordedWrite[]): string[] {
  const present = new Set<string>();
  const violations: string[] = [];
  const need = (what: string, by: string) => {
    if (!present.has(what)) violations.push(`${by} before ${what}`);
  };
  for (const w of record) {
    const x = written(w);
    if (!x) continue;
    const name = entryName(x.entry);
    if (x.list === 'elan-interface') {
      need(`interface/${name}`, `elan-interface ${name}`);
      need(`elan-instance/${String(x.entry['elan-instance-name'])}`, `elan-interface ${name}`);
    }
    if (x.list === 'vpn-interface') {
      need(`interface/${name}`, `vpn-interface ${name}`);
      for (const v of (x.entry['vpn-instance-names'] ?? []) as Entry[])
        need(`vpn-instance/${String(v['vpn-name'])}`, `vpn-interface ${name}`);
    }
    present.add(`${x.list}/${name}`);
  }
  return violations;
}

async function recordOf(file: string): Promise<RecordedWrite[]> {
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as RecordedWrite);
}

/** Nodes, namespaces and their pods (with IPs), before the watcher starts; the pods' names. */
async function populate(env: Env): Promise<string[]> {
  for (const n of NODES) await createNode(env, n.name, n.ip, n.cidr);
  const pods: string[] = [];
  for (const ns of NAMESPACES) {
    await createNamespace(env, ns);
    for (let i = 0; i < PODS_PER_NAMESPACE; i += 1) {
      const node = NODES[i % NODES.length]!;
      await createPod(env, ns, `p${i}`, node.name, { ip: `${node.prefix}${10 + i}` });
      pods.push(`${ns}:p${i}`);
    }
  }
  return pods;
}

describe('a create follows the creates in flight it needs (batched writes)', () => {
  let cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    cleanups = [];
  });

  /** An environment recording ODL's writes, populated; the record file and the pods. */
  const start = async (dialect: Dialect) => {
    const dir = await mkdtemp(join(tmpdir(), 'odlcoe-follow-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const recordFile = join(dir, 'writes.jsonl');
    const env = await startEnv({ profile: 'sodium', dialect, emulator: { recordFile } });
    cleanups.push(() => env.close());
    const pods = await populate(env);
    return { env, recordFile, pods };
  };
  /**
   * `workers`: with the tests' 4, the pods run after the instances' creates were answered; with
   * 16, while those are in flight (their interfaces follow them).
   */
  const run = async (env: Env, workers: number): Promise<Watcher> => {
    const w = await startTestWatcher(env, { workers }, {}, BATCH);
    cleanups.push(() => w.close());
    return w;
  };

  for (const [dialect, workers] of [
    ['rfc8040', 4],
    ['bierman02', 4],
    ['rfc8040', 16],
    ['bierman02', 16],
  ] as const) {
    it(`a first start writes each pod once, behind its instances, its interfaces in one patch (${dialect}, ${workers} workers)`, async () => {
      const { env, recordFile, pods } = await start(dialect);
      const w = await run(env, workers);
      await waitFor(async () => (await readOdl(env))['vpn-interface'].length === pods.length, {
        what: `all ${pods.length} pods attached`,
        timeoutMs: 30_000,
      });
      await w.idle();
      await env.emu.close(); // flushes the record

      // (1) Each pod's entries created once, never updated: none was turned away to wait for an
      // instance being created and written again.
      for (const kind of ['interface', 'elanInterface', 'vpnInterface']) {
        const writes = (op: string) =>
          metricValue(w.registry, 'odlcoe_watcher_odl_writes_total', { kind, op });
        assert.equal(await writes('create'), pods.length, `${kind} creates`);
        assert.equal(await writes('update'), 0, `${kind} updates`);
      }
      const reconciles = await metricValue(w.registry, 'odlcoe_watcher_reconciles_total', { kind: 'pod' });
      const synced = await metricValue(w.registry, 'odlcoe_watcher_reconciles_total', {
        kind: 'pod',
        result: 'synced',
      });
      assert.equal(synced, reconciles, 'every pod reconcile synced (none waited)');
      // With 4 workers the pods run after their nodes' entries were written: once each. With 16
      // they run meanwhile, and the write of a node's network queues that node's pods again
      // (a reconcile that finds them in sync, without I/O).
      if (workers === 4) assert.equal(reconciles, pods.length, 'one reconcile per pod');
      else assert.ok(reconciles <= 2 * pods.length, `at most two reconciles per pod (${reconciles})`);

      // (2) ODL never got an interface before what it refers to.
      const record = await recordOf(recordFile);
      assert.deepEqual(writtenBeforeTheirPrerequisites(record), []);

      // (3) A pod's three interfaces rode one YANG Patch.
      for (const pod of pods) {
        const requests = record.flatMap((r) => {
          const x = written(r);
          return x &&
            ['interface', 'elan-interface', 'vpn-interface'].includes(x.list) &&
            entryName(x.entry) === pod
            ? [{ list: x.list, request: r.request }]
            : [];
        });
        assert.deepEqual(
          requests.map((r) => r.list),
          ['interface', 'elan-interface', 'vpn-interface'],
          `${pod}'s interfaces, once each, in order`,
        );
        assert.equal(new Set(requests.map((r) => r.request)).size, 1, `${pod}'s interfaces in one request`);
      }
      assert.ok(
        new Set(record.map((r) => r.request)).size < record.length,
        'fewer requests than writes (they were batched)',
      );
    });
  }

  it('an instance whose create is refused in its patch leaves its pods’ elan-interfaces unwritten', async () => {
    const { env, recordFile, pods } = await start('rfc8040');
    // node-a's ELAN of namespace alpha is created by someone else right after the watcher read
    // ODL: its own create of it then meets 409 inside a patch, and the entry is foreign.
    const collided = `${NODES[0]!.ip}:alpha`;
    const affected = pods.filter((p, i) => p.startsWith('alpha:') && i % NODES.length === 0);
    let armed = true;
    const origGetEntries = RestconfClient.prototype.getEntries;
    RestconfClient.prototype.getEntries = async function (
      this: RestconfClient,
      ...args: Parameters<RestconfClient['getEntries']>
    ) {
      const entries = await origGetEntries.apply(this, args);
      const last = args[0][args[0].length - 1];
      if (armed && this !== env.odl && last?.name === 'elan-instance' && last.keys === undefined) {
        armed = false;
        await env.odl.post([{ module: 'elan', name: 'elan-instances' }], {
          'elan:elan-instance': [
            {
              'elan-instance-name': collided,
              'segment-type': 'elan:segment-type-vxlan',
              'segmentation-id': 4242,
              description: 'another controller',
            },
          ],
        });
      }
      return entries;
    } as RestconfClient['getEntries'];
    cleanups.push(async () => {
      RestconfClient.prototype.getEntries = origGetEntries;
    });

    // 16 workers: the pods' interfaces follow the ELAN's create in flight, and are withdrawn.
    const w = await run(env, 16);
    const attached = pods.length - affected.length;
    await waitFor(async () => (await readOdl(env))['elan-interface'].length === attached, {
      what: `the ${attached} pods outside ${collided} attached`,
      timeoutMs: 30_000,
    });
    await w.idle();
    assert.equal(armed, false, 'the foreign ELAN was created after the watcher read ODL');

    const odl = await readOdl(env);
    const instance = odl['elan-instance'].find((e) => e['elan-instance-name'] === collided);
    assert.equal(instance?.description, 'another controller', 'the foreign ELAN is left as it was');
    const interfaces = odl['elan-interface'].map((e) => String(e.name));
    for (const pod of affected) assert.ok(!interfaces.includes(pod), `${pod} has no elan-interface`);
    // Reported as needed and not applied (waiting for the name to be free).
    assert.equal(
      (await metricValue(w.registry, 'odlcoe_watcher_objects_desired', { kind: 'elanInterface' })) -
        (await metricValue(w.registry, 'odlcoe_watcher_objects_applied', { kind: 'elanInterface' })),
      affected.length,
      'elan-interfaces needed and not applied',
    );
    await env.emu.close();
    const record = await recordOf(recordFile);
    assert.deepEqual(writtenBeforeTheirPrerequisites(record), []);
    const refused = record.filter((r) => {
      const x = written(r);
      return x?.list === 'elan-interface' && affected.includes(entryName(x.entry));
    });
    assert.deepEqual(refused, [], 'no elan-interface of the collided ELAN was ever written');
  });
});
