import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError } from '../common/config-file.js';
import { runCli } from './program.js';
import { DEFAULT_LEASE, resolveSettings } from './settings.js';

const dir = mkdtempSync(join(tmpdir(), 'odlcoectl-settings-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** A watcher config file (src/config/watcher-config.ts schema): odlcoectl takes its settings from it. */
const WATCHER_FILE = `
clusterName: prod
odl:
  url: http://odl.example:8181
  profile: aluminium
  dialect: bierman02
  user: admin
  passwordFile: /etc/odlcoe/odl/password
  timeout: 45s
vpn:
  routeTarget: "65001:9"
  rdAdministrator: "65001"
subnets:
  source: allocate
  clusterCidr: 10.200.0.0/16
  nodePrefixLength: 24
leaderElection:
  namespace: odlcoe-system
  name: odlcoe-leader
  leaseDuration: 15s
workers: 8
`;

describe('odlcoectl settings', () => {
  it("are the watcher's: its config file gives odlcoectl everything it needs", () => {
    const s = resolveSettings({ config: file('watcher.yaml', WATCHER_FILE) }, {});
    assert.equal(s.clusterName, 'prod');
    assert.equal(s.profile, 'aluminium');
    assert.deepEqual(s.odl, {
      url: 'http://odl.example:8181',
      dialect: 'bierman02',
      user: 'admin',
      passwordFile: '/etc/odlcoe/odl/password',
      insecureSkipVerify: false,
      // The watcher's write batching, as the file leaves it (the default).
      batchMaxEdits: 1,
      batchWindow: 5,
    });
    assert.equal(s.routeTarget, '65001:9');
    assert.equal(s.rdAdministrator, '65001');
    assert.equal(s.subnetSource, 'allocate');
    assert.deepEqual(s.lease, { namespace: 'odlcoe-system', name: 'odlcoe-leader' });
  });

  it('flags beat the environment, which beats the file (ODLCOE_CONFIG names the file)', () => {
    const config = file('watcher2.yaml', WATCHER_FILE);
    const env = {
      ODLCOE_CONFIG: config,
      ODLCOE_CLUSTER_NAME: 'from-env',
      ODLCOE_ODL_URL: 'http://env:8181',
      ODLCOE_PROFILE: 'sodium',
    };
    const s = resolveSettings({ clusterName: 'from-flag', leaseName: 'flag-lease' }, env);
    assert.equal(s.clusterName, 'from-flag');
    assert.equal(s.odl.url, 'http://env:8181');
    assert.equal(s.profile, 'sodium');
    assert.deepEqual(s.lease, { namespace: 'odlcoe-system', name: 'flag-lease' });
  });

  it('default what the watcher defaults; require what it requires', () => {
    const s = resolveSettings({ clusterName: 'c1', odlUrl: 'http://odl:8181', profile: 'sodium' }, {});
    assert.equal(s.odl.dialect, 'rfc8040');
    assert.deepEqual(s.lease, DEFAULT_LEASE);
    assert.equal(s.subnetSource, 'odl');
    assert.equal(s.output, 'human');
    assert.equal(s.timeoutMs, 30_000);
    assert.throws(
      () => resolveSettings({}, {}),
      (err: Error) =>
        err instanceof ConfigError &&
        /^invalid settings \(shared with the watcher\)/.test(err.message) &&
        /--cluster-name .* is required/.test(err.message) &&
        /--odl-url .* is required/.test(err.message) &&
        // The profile is read from ODL's module list unless told.
        !/--profile/.test(err.message),
    );
  });

  it('reject bad values precisely, naming the flag or key', () => {
    const base = { odlUrl: 'http://odl:8181', profile: 'sodium' };
    assert.throws(
      () => resolveSettings({ ...base, clusterName: 'Prod_1' }, {}),
      /--cluster-name: cluster name: "Prod_1" is not a DNS-1123 label/,
    );
    assert.throws(
      () => resolveSettings({ ...base, clusterName: 'c', timeout: '0' }, {}),
      /--timeout "0" must be a whole number/,
    );
    assert.throws(
      () => resolveSettings({ ...base, clusterName: 'c', profile: 'neon' }, {}),
      /flag --profile/,
    );
    assert.throws(
      () => resolveSettings({ ...base, clusterName: 'c', output: 'yaml' }, {}),
      /-o\/--output "yaml" is not one of human, json/,
    );
    const bad = file('bad.yaml', 'odl:\n  url: http://odl:8181\n  profiel: sodium\n');
    assert.throws(
      () => resolveSettings({ config: bad, clusterName: 'c' }, {}),
      (err: Error) => err instanceof ConfigError && /odl/.test(err.message) && /profiel/.test(err.message),
    );
  });

  it('usage errors exit 2 before contacting anything; an ODL command needs the ODL URL', async () => {
    const io = () => {
      const out = { stdout: '', stderr: '' };
      return {
        out,
        io: { stdout: (t: string) => (out.stdout += t), stderr: (t: string) => (out.stderr += t), env: {} },
      };
    };
    const a = io();
    assert.equal(await runCli(['dump'], a.io), 2);
    assert.match(a.out.stderr, /--cluster-name \(ODLCOE_CLUSTER_NAME, clusterName\) is required/);
    const b = io();
    assert.equal(await runCli(['--cluster-name', 'c', '--profile', 'sodium', 'dump', '-o', 'json'], b.io), 2);
    assert.match(b.out.stderr, /--odl-url .* is required/);
    assert.match(JSON.parse(b.out.stdout).error as string, /--odl-url .* is required/);
    const c = io();
    assert.equal(await runCli(['--output', 'yaml', 'dump'], c.io), 2);
    assert.match(c.out.stderr, /Allowed choices are human, json/);
    const d = io();
    assert.equal(
      await runCli(
        [
          '--cluster-name',
          'c',
          '--profile',
          'sodium',
          '--odl-url',
          'http://odl:8181',
          'gc',
          '--dry-run',
          '--yes',
        ],
        d.io,
      ),
      2,
    );
    const e = io();
    assert.equal(await runCli(['--help'], e.io), 0);
    assert.match(e.out.stdout, /status.*\n.*dump|Commands:/s);
  });
});
