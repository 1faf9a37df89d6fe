/**
 * An instance's retire against a pod attaching to it: the retire decides "unneeded, nothing
 * refers to it" from caches and then awaits ODL before its DELETE; a pod scheduled in that
 * window must not get an interface onto the instance that is then deleted under it.
 *
 * The window is opened deterministically: the watcher's re-read of the instance (the retire's
 * first request for that one entry) is held until the new pod has either written its interface
 * or been told to wait. The emulator's write log is then replayed to check that no instance was
 * ever deleted while an interface referred to it, and the pod must end up attached.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import type { DataPath } from '../../src/restconf/path.js';
import { RestconfClient } from '../../src/restconf/client.js';
import { WatcherMetrics } from '../../src/watcher/metrics.js';
import {
  createNamespace,
  createNode,
  createPod,
  deletePod,
  readOdl,
  setPodIp,
  startEnv,
  startTestWatcher,
  waitFor,
} from './testing.js';

type InstanceList = 'elan-instance' | 'vpn-instance';

interface Recorded {
  method: string;
  url: string;
  status: number;
  body: Record<string, unknown> | null;
}

const cases: {
  list: InstanceList;
  instance: string;
  interfaceList: 'elan-interface' | 'vpn-interface';
  interfaceKind: 'elanInterface' | 'vpnInterface';
  refersTo: (entry: Record<string, unknown>, instance: string) => boolean;
}[] = [
  {
    list: 'elan-instance',
    instance: '192.168.1.1:alpha',
    interfaceList: 'elan-interface',
    interfaceKind: 'elanInterface',
    refersTo: (e, instance) => e['elan-instance-name'] === instance,
  },
  {
    list: 'vpn-instance',
    instance: 'alpha',
    interfaceList: 'vpn-interface',
    interfaceKind: 'vpnInterface',
    refersTo: (e, instance) =>
      Array.isArray(e['vpn-instance-names']) &&
      e['vpn-instance-names'].some((v: Record<string, unknown>) => v['vpn-name'] === instance),
  },
];

/**
 * Replays the write log: the interfaces that refer to `instance` at each DELETE of it. Every
 * entry of the result is one violation (a DELETE while those interfaces referred to it).
 */
function deletesUnderReferrers(
  log: Recorded[],
  list: InstanceList,
  instance: string,
  interfaceList: string,
  refersTo: (entry: Record<string, unknown>, instance: string) => boolean,
): string[][] {
  const referrers = new Set<string>();
  const violations: string[][] = [];
  for (const w of log) {
    if (w.status >= 300) continue;
    const url = decodeURIComponent(w.url);
    if (w.method === 'DELETE') {
      if (url.endsWith(`/${list}=${instance}`) && referrers.size > 0) violations.push([...referrers]);
      const m = new RegExp(`/${interfaceList}=([^/]+)$`).exec(url);
      if (m?.[1]) referrers.delete(m[1]);
      continue;
    }
    for (const [member, value] of Object.entries(w.body ?? {})) {
      if (!member.endsWith(`:${interfaceList}`) || !Array.isArray(value)) continue;
      for (const entry of value as Record<string, unknown>[]) {
        const name = String(entry.name);
        if (refersTo(entry, instance)) referrers.add(name);
        else referrers.delete(name);
      }
    }
  }
  return violations;
}

describe('instance retire against a pod attaching to it', () => {
  let cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    cleanups = [];
  });

  for (const tc of cases) {
    it(`does not delete the ${tc.list} under an interface written while it retires`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'odlcoe-instance-race-'));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      const recordFile = join(dir, 'writes.jsonl');
      const env = await startEnv({ profile: 'sodium', dialect: 'rfc8040', emulator: { recordFile } });
      cleanups.push(() => env.close());
      const w = await startTestWatcher(env, { gracePeriodMs: 300 });
      cleanups.push(() => w.close());

      // The new pod's interface was told to wait (the pod reconcile reports it pending).
      let hookRunning = false;
      let p2Pending = false;
      const origObjectState = WatcherMetrics.prototype.objectState;
      WatcherMetrics.prototype.objectState = function (this: WatcherMetrics, kind, name, state) {
        if (hookRunning && kind === tc.interfaceKind && name === 'alpha:p2' && state === 'pending')
          p2Pending = true;
        origObjectState.call(this, kind, name, state);
      };
      cleanups.push(async () => {
        WatcherMetrics.prototype.objectState = origObjectState;
      });

      let armed = false;
      let hookDone = false;
      let onHook: () => Promise<void> = async () => undefined;
      const origGetEntries = RestconfClient.prototype.getEntries;
      RestconfClient.prototype.getEntries = async function (
        this: RestconfClient,
        ...args: Parameters<RestconfClient['getEntries']>
      ) {
        const path: DataPath = args[0];
        const last = path[path.length - 1];
        if (armed && this !== env.odl && last?.name === tc.list && last.keys !== undefined) {
          armed = false;
          await onHook();
        }
        return origGetEntries.apply(this, args);
      } as RestconfClient['getEntries'];
      cleanups.push(async () => {
        RestconfClient.prototype.getEntries = origGetEntries;
      });

      await createNode(env, 'node-a', '192.168.1.1', '10.244.1.0/24');
      await createNamespace(env, 'alpha');
      await w.ready();
      await createPod(env, 'alpha', 'p1', 'node-a');
      await setPodIp(env, 'alpha', 'p1', '10.244.1.2');
      await waitFor(async () => (await readOdl(env))['vpn-interface'].length === 1, {
        what: 'p1 attached',
        timeoutMs: 20_000,
      });
      await w.idle();

      // While the retire's re-read is outstanding: a new pod in the same namespace and node.
      onHook = async () => {
        hookRunning = true;
        await createPod(env, 'alpha', 'p2', 'node-a');
        await setPodIp(env, 'alpha', 'p2', '10.244.1.3');
        await waitFor(
          async () => p2Pending || (await readOdl(env))[tc.interfaceList].some((e) => e.name === 'alpha:p2'),
          { what: `p2's ${tc.interfaceList} written or waiting`, timeoutMs: 20_000 },
        );
        hookDone = true;
      };
      armed = true;
      await deletePod(env, 'alpha', 'p1');

      await waitFor(async () => hookDone, {
        what: `the retire of the ${tc.list} to re-read it`,
        timeoutMs: 20_000,
      });
      // p2 ends up attached, to an instance that exists.
      await waitFor(
        async () => {
          const odl = await readOdl(env);
          const ifs = odl[tc.interfaceList].filter((e) => e.name === 'alpha:p2');
          const instances = odl[tc.list].map((e) => e[`${tc.list}-name`]);
          return (
            ifs.length === 1 &&
            instances.includes(tc.instance) &&
            !odl[tc.interfaceList].some((e) => e.name === 'alpha:p1')
          );
        },
        { what: `p2 attached to ${tc.list} ${tc.instance}`, timeoutMs: 20_000 },
      );
      await w.idle();

      const log = (await readFile(recordFile, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Recorded);
      assert.deepEqual(
        deletesUnderReferrers(log, tc.list, tc.instance, tc.interfaceList, tc.refersTo),
        [],
        `${tc.list} ${tc.instance} was deleted while interfaces referred to it`,
      );
    });
  }
});
