import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../common/config-file.js';
import { loadWatcherConfig, parseDuration } from './watcher-config.js';

const base = { odlUrl: 'http://odl:8181', profile: 'sodium', clusterName: 'prod' };
const fileBase = { clusterName: 'prod', odl: { url: 'http://odl:8181', profile: 'sodium' } };
const load = (flags: Record<string, unknown>, env: Record<string, string> = {}, file?: unknown) =>
  loadWatcherConfig({ flags, env, readFile: () => file, defaultIdentity: () => 'host_1' });

describe('watcher configuration', () => {
  it('parses durations', () => {
    assert.equal(parseDuration('250ms'), 250);
    assert.equal(parseDuration('1m30s'), 90_000);
    assert.equal(parseDuration('2h'), 7_200_000);
    assert.equal(parseDuration(5), 5000);
    assert.equal(parseDuration('10'), 10_000);
    assert.throws(() => parseDuration('5 minutes'), /not a duration/);
  });

  it('has defaults for everything but the cluster and ODL URL (the profile is read from ODL unless told)', () => {
    const c = load(base);
    assert.equal(c.settings.gracePeriodMs, 300_000);
    assert.equal(c.settings.resyncPeriodMs, 600_000);
    assert.equal(c.settings.subnetSource, 'odl');
    assert.equal(c.settings.dialect, 'rfc8040');
    assert.deepEqual(c.leaderElection, {
      enabled: true,
      namespace: 'kube-system',
      name: 'odlcoe-watcher',
      identity: 'host_1',
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
    });
    assert.deepEqual(c.metrics, { host: '0.0.0.0', port: 9090 });
    assert.equal(c.settings.backend, 'netvirt');
    assert.equal(c.settings.retryRatePerSecond, 50);
    assert.equal(c.settings.retryBurst, 500);
    assert.equal(c.settings.profile, 'sodium');
    assert.equal(load({ odlUrl: 'http://odl:8181', clusterName: 'prod' }).settings.profile, undefined);
    assert.throws(
      () => load({}),
      (err: Error) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, /--cluster-name/);
        assert.match(err.message, /--odl-url/);
        assert.doesNotMatch(err.message, /--profile/);
        return true;
      },
    );
  });

  it('flags override the environment, which overrides the file', () => {
    const file = {
      clusterName: 'from-file',
      workers: 2,
      gracePeriod: '1m',
      odl: { url: 'http://file', profile: 'aluminium' },
    };
    const fromFile = load({ config: 'w.yaml' }, {}, file);
    assert.equal(fromFile.settings.clusterName, 'from-file');
    assert.equal(fromFile.settings.workers, 2);
    assert.equal(fromFile.settings.gracePeriodMs, 60_000);
    const fromEnv = load(
      { config: 'w.yaml' },
      { ODLCOE_WORKERS: '3', ODLCOE_CLUSTER_NAME: 'from-env' },
      file,
    );
    assert.equal(fromEnv.settings.workers, 3);
    assert.equal(fromEnv.settings.clusterName, 'from-env');
    const fromFlags = load(
      { config: 'w.yaml', workers: '4', leaderElect: false },
      { ODLCOE_WORKERS: '3', ODLCOE_LEADER_ELECT: 'true' },
      file,
    );
    assert.equal(fromFlags.settings.workers, 4);
    assert.equal(fromFlags.leaderElection.enabled, false);
  });

  it('names the source of a bad value precisely', () => {
    assert.throws(() => load({ ...base, workers: '0' }), /flag --workers: .*>=1/);
    assert.throws(
      () => load(base, { ODLCOE_GRACE_PERIOD: 'soon' }),
      /environment variable ODLCOE_GRACE_PERIOD: .*not a duration/,
    );
    assert.throws(
      () => load({ config: 'w.yaml' }, {}, { odl: { urll: 'x' } }),
      /config file w\.yaml:\n {2}odl: Unrecognized key: "urll"/,
    );
    assert.throws(() => load({ ...base, profile: 'neon' }), /flag --profile/);
    assert.throws(() => load({ ...base, clusterName: 'Prod' }), /not a DNS-1123 label/);
    assert.throws(() => load({ ...base, routeTarget: 'x' }), /--route-target/);
  });

  it('checks the allocate settings together', () => {
    assert.throws(
      () => load({ ...base, subnetSource: 'allocate' }),
      /--cluster-cidr .* is required[\s\S]*--node-prefix-length .* is required/,
    );
    assert.throws(
      () => load({ ...base, subnetSource: 'allocate', clusterCidr: '10.244.0.0/16', nodePrefixLength: '8' }),
      /between 16 and 30/,
    );
    assert.throws(
      () => load({ ...base, clusterCidr: '10.244.0.0/16' }),
      /only meaningful with --subnet-source allocate/,
    );
    const c = load({
      ...base,
      subnetSource: 'allocate',
      clusterCidr: '10.244.0.0/16',
      nodePrefixLength: '24',
    });
    assert.equal(c.settings.clusterCidr, '10.244.0.0/16');
    assert.equal(c.settings.nodePrefixLength, 24);
  });

  it('selects the backend by name from the file, the environment or --backend', () => {
    assert.equal(
      load({ config: 'w.yaml' }, {}, { ...fileBase, backend: 'coe-northbound' }).settings.backend,
      'coe-northbound',
    );
    assert.equal(load(base, { ODLCOE_BACKEND: 'coe-northbound' }).settings.backend, 'coe-northbound');
    assert.equal(
      load({ ...base, backend: 'netvirt' }, { ODLCOE_BACKEND: 'coe-northbound' }).settings.backend,
      'netvirt',
    );
    assert.throws(() => load({ ...base, backend: 'coe' }), /flag --backend: .*netvirt.*coe-northbound/);
    assert.throws(() => load(base, { ODLCOE_BACKEND: 'ovn' }), /environment variable ODLCOE_BACKEND/);
    assert.throws(
      () => load({ config: 'w.yaml' }, {}, { ...fileBase, backend: 'neutron' }),
      /config file w\.yaml:\n {2}backend: /,
    );
  });

  it('takes the work queue’s retry rate limit from the file or the environment', () => {
    const fromFile = load(
      { config: 'w.yaml' },
      {},
      { ...fileBase, queue: { retryRatePerSecond: 5.5, retryBurst: 20 } },
    );
    assert.equal(fromFile.settings.retryRatePerSecond, 5.5);
    assert.equal(fromFile.settings.retryBurst, 20);
    const fromEnv = load(base, { ODLCOE_QUEUE_RETRY_RATE: '200', ODLCOE_QUEUE_RETRY_BURST: '2000' });
    assert.equal(fromEnv.settings.retryRatePerSecond, 200);
    assert.equal(fromEnv.settings.retryBurst, 2000);
    assert.throws(() => load(base, { ODLCOE_QUEUE_RETRY_RATE: '0' }), /ODLCOE_QUEUE_RETRY_RATE/);
    assert.throws(() => load(base, { ODLCOE_QUEUE_RETRY_BURST: '1.5' }), /ODLCOE_QUEUE_RETRY_BURST/);
    assert.throws(
      () => load({ config: 'w.yaml' }, {}, { ...fileBase, queue: { retryBurst: 0 } }),
      /config file w\.yaml:\n {2}queue\.retryBurst: /,
    );
  });
});
