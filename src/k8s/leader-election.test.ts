import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, afterEach, before, describe, it } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { silentLogger } from '../common/log.js';
import { Registry } from '../common/metrics.js';
import type { KubeSim } from '../kubesim/server.js';
import type { KubeClient } from './kube-client.js';
import { startSimApi } from '../../test/helpers/kube-api.js';
import { waitFor } from '../../test/helpers/wait.js';
import { LeaderElector } from './leader-election.js';
import type { LeaderElectorOptions } from './leader-election.js';
import { microTime } from './lease-lock.js';

interface LeaseObject {
  metadata: { resourceVersion: string };
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/** One candidate with a record of what happened to it. */
class Candidate {
  readonly elector: LeaderElector;
  signal: AbortSignal | undefined;
  started = 0;
  stopped = 0;
  readonly leaders: string[] = [];
  running: Promise<void> | undefined;

  constructor(
    readonly identity: string,
    options: Omit<LeaderElectorOptions, 'identity' | 'onStartedLeading' | 'onStoppedLeading'>,
    onChange: () => void,
  ) {
    this.elector = new LeaderElector({
      ...options,
      identity,
      onStartedLeading: (signal) => {
        this.signal = signal;
        this.started += 1;
        onChange();
      },
      onStoppedLeading: () => {
        this.stopped += 1;
        onChange();
      },
      onNewLeader: (leader) => this.leaders.push(leader),
    });
  }

  run(): void {
    this.running = this.elector.run();
  }
}

describe('leader election on a Lease in the Kubernetes simulator', () => {
  let sim: KubeSim;
  let kubeConfig: KubeConfig;
  let api: KubeClient;
  let candidates: Candidate[] = [];
  const children: ChildProcess[] = [];
  /** The most candidates that ever led at the same moment. */
  let maxConcurrentLeaders = 0;
  let leaseName = '';
  let leaseCounter = 0;

  const leasePath = () => `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/${leaseName}`;
  const readLease = () => api.request<LeaseObject>('GET', leasePath());
  const track = () => {
    const leading = candidates.filter((c) => c.elector.isLeader()).length;
    maxConcurrentLeaders = Math.max(maxConcurrentLeaders, leading);
  };
  const candidate = (identity: string, timing: Partial<LeaderElectorOptions> = {}) => {
    const c = new Candidate(
      identity,
      {
        kubeConfig,
        namespace: 'kube-system',
        name: leaseName,
        leaseDurationMs: 2000,
        renewDeadlineMs: 1500,
        retryPeriodMs: 300,
        registry: new Registry(),
        logger: silentLogger(),
        ...timing,
      },
      track,
    );
    candidates.push(c);
    return c;
  };

  before(async () => {
    ({ sim, kubeConfig, api } = await startSimApi());
    await api
      .request('POST', '/api/v1/namespaces', {
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } },
      })
      .catch((err: { status?: number }) => {
        if (err.status !== 409) throw err;
      });
  });

  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    await Promise.all(candidates.map((c) => c.elector.stop()));
    candidates = [];
    sim.fault({ action: 'clear' });
  });

  after(async () => {
    await sim?.close();
  });

  const freshLease = () => {
    leaseCounter += 1;
    leaseName = `odlcoe-watcher-${leaseCounter}`;
    maxConcurrentLeaders = 0;
  };

  it('of two candidates exactly one leads, and the other takes over soon after a release', async () => {
    freshLease();
    // A long lease: a standby that had to wait for it to expire would take 30 s; the release
    // lets it take over at its next retry.
    const timing = { leaseDurationMs: 30_000, renewDeadlineMs: 20_000, retryPeriodMs: 300 };
    const a = candidate('a', timing);
    const b = candidate('b', timing);
    a.run();
    b.run();
    await waitFor(() => a.elector.isLeader() || b.elector.isLeader(), {
      what: 'a leader',
    });
    const [leader, standby] = a.elector.isLeader() ? [a, b] : [b, a];
    // Several renewals later, still one leader and the standby knows who it is.
    const renewedBefore = (await readLease()).spec.renewTime;
    await waitFor(async () => (await readLease()).spec.renewTime !== renewedBefore, {
      what: 'two renewals',
    });
    assert.equal(standby.elector.isLeader(), false);
    await waitFor(() => standby.leaders.includes(leader.identity), {
      what: 'the standby to see the leader',
    });

    const stoppedAt = Date.now();
    await leader.elector.stop();
    assert.equal(leader.signal?.aborted, true);
    assert.equal(leader.stopped, 1);
    await waitFor(() => standby.elector.isLeader(), { what: 'the standby to take over', timeoutMs: 25_000 });
    assert.ok(Date.now() - stoppedAt < 30_000, 'took over before the released lease would have expired');
    assert.equal((await readLease()).spec.holderIdentity, standby.identity);
    assert.equal(maxConcurrentLeaders, 1);
    assert.equal(standby.leaders.at(-1), standby.identity);
  });

  it('the standby takes over within the lease duration after the leader dies without releasing', async () => {
    freshLease();
    // The first candidate is a separate process, killed with SIGKILL while it leads.
    const elector = fileURLToPath(new URL('./leader-election.ts', import.meta.url));
    const code = `
      import { KubeConfig } from '@kubernetes/client-node';
      import { LeaderElector } from ${JSON.stringify(elector)};
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromString(process.env.KUBECONFIG_YAML);
      const e = new LeaderElector({ kubeConfig, namespace: 'kube-system', name: process.env.LEASE_NAME, identity: 'doomed',
        leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 300, logger: undefined,
        onStartedLeading: () => console.log('leading'), onStoppedLeading: () => console.log('stopped') });
      e.run();`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      env: {
        ...process.env,
        KUBECONFIG_YAML: sim.kubeconfig(),
        LEASE_NAME: leaseName,
        ODLCOE_LOG_LEVEL: 'silent',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await waitFor(() => output.includes('leading'), { what: 'the child to lead', timeoutMs: 30_000 });

    const standby = candidate('standby');
    standby.run();
    await waitFor(() => standby.leaders.includes('doomed'), {
      what: 'the standby to see the child lead',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const lease = await readLease();
    assert.equal(lease.spec.holderIdentity, 'doomed', 'a killed leader releases nothing');
    await waitFor(() => standby.elector.isLeader(), { what: 'the standby to take over' });
    const taken = await readLease();
    assert.equal(taken.spec.holderIdentity, 'standby');
    assert.equal(taken.spec.leaseTransitions, (lease.spec.leaseTransitions ?? 0) + 1);
  });

  it('a leader whose Lease is taken by someone else stops at once', async () => {
    freshLease();
    const a = candidate('a');
    a.run();
    await waitFor(() => a.elector.isLeader(), { what: 'a to lead' });
    const signal = a.signal;
    assert.ok(signal && !signal.aborted);
    // An intruder overwrites the Lease with its own, fresh claim.
    const lease = await readLease();
    await api.request('PUT', leasePath(), {
      body: {
        ...lease,
        spec: {
          ...lease.spec,
          holderIdentity: 'intruder',
          renewTime: microTime(Date.now()),
          leaseDurationSeconds: 2,
        },
      },
    });
    await waitFor(() => signal.aborted, { what: 'a to notice' });
    assert.equal(a.elector.isLeader(), false);
    assert.equal(a.stopped, 1);
    assert.ok(a.leaders.includes('intruder'));
    // The intruder never renews: once its claim expires on a's clock, a leads again.
    await waitFor(() => a.started === 2, { what: 'a to lead again' });
    assert.equal((await readLease()).spec.holderIdentity, 'a');
  });

  it('a leader that cannot renew within the renew deadline aborts its signal', async () => {
    freshLease();
    const a = candidate('a');
    a.run();
    await waitFor(() => a.elector.isLeader(), { what: 'a to lead' });
    const signal = a.signal;
    assert.ok(signal && !signal.aborted);
    // Every request now takes longer than the renew deadline.
    sim.fault({ action: 'latency', ms: 2500 });
    await waitFor(() => signal.aborted, { what: 'the deadline to pass', timeoutMs: 15_000 });
    assert.equal(a.elector.isLeader(), false);
    assert.equal(a.stopped, 1);
    sim.fault({ action: 'clear' });
    await waitFor(() => a.elector.isLeader(), {
      what: 'a to lead again once the API server answers',
    });
  });

  it('rejects timings that could let two leaders overlap', () => {
    const base = {
      kubeConfig,
      namespace: 'kube-system',
      name: 'x',
      identity: 'me',
      onStartedLeading: () => undefined,
      onStoppedLeading: () => undefined,
    };
    assert.throws(
      () => new LeaderElector({ ...base, leaseDurationMs: 2000, renewDeadlineMs: 2000, retryPeriodMs: 300 }),
      /leaseDurationMs/,
    );
    assert.throws(
      () => new LeaderElector({ ...base, renewDeadlineMs: 1000, retryPeriodMs: 1000 }),
      /renewDeadlineMs/,
    );
    assert.throws(
      () => new LeaderElector({ ...base, leaseDurationMs: 2500, renewDeadlineMs: 1500, retryPeriodMs: 300 }),
      /whole seconds/,
    );
    assert.throws(() => new LeaderElector({ ...base, identity: '' }), /identity/);
    assert.throws(() => new LeaderElector({ ...base, namespace: 'Bad_NS' }), /namespace/);
  });
});
