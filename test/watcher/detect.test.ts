/**
 * The `odlcoe-watcher` binary picks the release profile and optional models from ODL's module
 * list when it is not told, in both dialects, and refuses to start (exit 1, before touching
 * anything) when told a profile ODL contradicts, naming both.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Profile } from '../../src/netvirt/profile.js';
import type { Dialect } from '../../src/restconf/path.js';
import { stopPid } from '../helpers/processes.js';
import { startEnv, writeCount, type Env } from './testing.js';
import { baseArgs, startWatcherProcess, type WatcherProcess } from './watcher-process.js';

const untold = (args: string[]) => {
  const i = args.indexOf('--profile');
  return i < 0 ? args : [...args.slice(0, i), ...args.slice(i + 2)];
};

interface Logged {
  message?: string;
  profile?: string;
  detected?: boolean;
  optional?: string;
  dialect?: string;
  error?: string;
}
const entries = (w: WatcherProcess): Logged[] =>
  w.log.flatMap((l) => {
    try {
      return [JSON.parse(l) as Logged];
    } catch {
      return [];
    }
  });

describe('odlcoe-watcher detects the ODL release', { timeout: 120_000 }, () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  const world = async (profile: Profile, dialect: Dialect): Promise<{ env: Env; dir: string }> => {
    const env = await startEnv({ profile, dialect });
    const dir = mkdtempSync(join(tmpdir(), 'odlcoe-detect-'));
    env.sim.writeKubeconfig(join(dir, 'kubeconfig'));
    writeFileSync(join(dir, 'odl-password'), 'admin\n', { mode: 0o600 });
    cleanups.push(async () => {
      await env.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return { env, dir };
  };

  for (const [profile, dialect, optional] of [
    ['aluminium', 'rfc8040', 'acl, nat'],
    ['sodium', 'bierman02', 'coe, acl, nat'],
  ] as const) {
    it(`without a profile it picks ${profile} from the module list (${dialect})`, async () => {
      const { env, dir } = await world(profile, dialect);
      const w = startWatcherProcess([...untold(baseArgs(env, dir)), '--no-leader-elect'], {
        ODLCOE_CLUSTER_NAME: 'test',
      });
      cleanups.push(async () => {
        if (w.child.pid) await stopPid(w.child.pid);
      });
      await w.started(); // the models are logged before the ops server listens
      const line = entries(w).find((e) => e.message === 'ODL models');
      assert.deepEqual(
        {
          profile: line?.profile,
          detected: line?.detected,
          optional: line?.optional,
          dialect: line?.dialect,
        },
        { profile, detected: true, optional, dialect },
      );
    });
  }

  it('told a profile ODL contradicts, it refuses to start (exit 1) naming both, and writes nothing', async () => {
    const { env, dir } = await world('aluminium', 'rfc8040');
    const args = untold(baseArgs(env, dir));
    const w = startWatcherProcess([...args, '--profile', 'sodium', '--no-leader-elect'], {
      ODLCOE_CLUSTER_NAME: 'test',
    });
    assert.equal(await w.exited, 1, w.log.join('\n'));
    assert.match(
      w.log.join('\n'),
      /the profile is set to sodium, but ODL at http:\/\/127\.0\.0\.1:\d+ serves the aluminium models/,
    );
    assert.equal(writeCount(env), 0);
  });
});
