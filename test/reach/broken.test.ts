/**
 * The acceptance's broken case on what the watcher itself wrote: with a policy in force
 * (x/a accepts namespace y on TCP 80), `odlcoectl reach y/a x/a --port 80/tcp` is delivered
 * through the policy's ACL; the watcher is stopped (so nothing repairs ODL), that rule is
 * deleted by hand in ODL, and `reach` now exits 1 and names that ACL, as an operator sees it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ReachReport } from '../../src/cli/reach.js';
import { netvirtPaths } from '../../src/netvirt/index.js';
import { spawnCli } from '../cli/testing.js';
import {
  addPolicy,
  initialState,
  policy,
  watcherProgrammer,
  type WatcherProgrammer,
} from './matrix-harness.js';

describe('odlcoectl reach names the ACL whose rule was removed by hand (watcher-written ODL)', () => {
  let p: WatcherProgrammer;
  let dir: string;
  let flags: string[];

  before(async () => {
    p = await watcherProgrammer('aluminium', 'rfc8040');
    dir = await mkdtemp(join(tmpdir(), 'reach-broken-'));
    const kubeconfig = join(dir, 'kubeconfig');
    p.env.sim.writeKubeconfig(kubeconfig);
    const password = join(dir, 'password');
    await writeFile(password, 'admin\n', { mode: 0o600 });
    flags = ['--odl-url', p.env.emu.url, '--odl-user', 'admin', '--odl-password-file', password];
    flags.push(
      '--profile',
      'aluminium',
      '--dialect',
      'rfc8040',
      '--cluster-name',
      'test',
      '--kubeconfig',
      kubeconfig,
    );
  });
  after(async () => {
    await p?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ODLCOE_LOG_LEVEL: 'silent' };
  const reachJson = async () => {
    const r = await spawnCli([...flags, 'reach', 'y/a', 'x/a', '--port', '80/tcp', '-o', 'json'], env);
    return { code: r.code, report: JSON.parse(r.stdout) as ReachReport, stderr: r.stderr };
  };

  it('delivered while the rule is there; dropped, naming the ACL, once it is deleted by hand', async () => {
    const state = initialState();
    addPolicy(
      state,
      policy('x', 'a-80-from-y', {
        podSelector: { matchLabels: { pod: 'a' } },
        ingress: [
          {
            _from: [{ namespaceSelector: { matchLabels: { ns: 'y' } } }],
            ports: [{ protocol: 'TCP', port: 80 }],
          },
        ],
      }),
    );
    await p.program(state);
    const before = await reachJson();
    assert.equal(before.code, 0, JSON.stringify(before.report) + before.stderr);
    const last = before.report.path.at(-1)!;
    assert.equal(last.kind, 'acl', 'the last hop is the ACL that lets the packet in');
    const rule = /^rule (\S+) permits the ingress of x:a/.exec(last.note)?.[1];
    assert.ok(rule, `the hop names its rule: ${last.note}`);

    await p.stopWatcher();
    await p.env.odl.delete(netvirtPaths('aluminium').ace(last.name, rule));

    const after = await reachJson();
    assert.equal(after.code, 1, JSON.stringify(after.report) + after.stderr);
    assert.equal(after.report.verdict, 'dropped');
    const named = after.report.drop?.acls?.find((a) => a.acl === last.name);
    assert.ok(named, `the drop names ACL ${last.name}: ${JSON.stringify(after.report.drop)}`);
    assert.ok(named.exists && !named.rules.some((r) => r.rule === rule), 'the ACL is there, its rule is not');
    const human = await spawnCli([...flags, 'reach', 'y/a', 'x/a', '--port', '80/tcp'], env);
    assert.equal(human.code, 1);
    assert.match(human.stdout, new RegExp(`acl ${last.name}: no (live )?ingress rule`));
  });
});
