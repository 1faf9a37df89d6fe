import { performance } from 'node:perf_hooks';
import type { KubeConfig } from '@kubernetes/client-node';
import { sleep } from '../common/backoff.js';
import type { Logger } from '../common/log.js';
import { createLogger, errorMessage } from '../common/log.js';
import { Gauge, Registry, metric } from '../common/metrics.js';
import { abortScope } from './abort-scope.js';
import { KubeApiError, KubeClient } from './kube-client.js';
import { LeaseLock, microTime } from './lease-lock.js';
import type { LeaderElectionRecord, ObservedRecord } from './lease-lock.js';

export interface LeaderElectorOptions {
  kubeConfig: KubeConfig;
  /** Namespace and name of the coordination.k8s.io/v1 Lease. */
  namespace: string;
  name: string;
  /** Unique per candidate (pod name, or host name plus a random suffix). */
  identity: string;
  /** How long a holder's claim stays valid after a candidate saw it change; default 15 s. */
  leaseDurationMs?: number;
  /** The leader gives up if it cannot renew for this long; default 10 s. */
  renewDeadlineMs?: number;
  /** Interval between acquire/renew attempts; default 2 s. */
  retryPeriodMs?: number;
  /** Leadership starts; `signal` aborts the moment it ends. */
  onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  /** Leadership ended (lost, or released by `stop()`); the signal has already aborted. */
  onStoppedLeading: () => void;
  /** A different holder appeared in the Lease (including this candidate). */
  onNewLeader?: (identity: string) => void;
  registry?: Registry;
  logger?: Logger;
}

type Attempt = 'ok' | 'held' | 'failed';

/**
 * Leader election on a Lease with client-go's semantics.
 *
 * - A candidate takes the Lease when it does not exist, has no holder, names this candidate,
 *   or has expired: its holder's `leaseDurationSeconds` passed, on the local monotonic clock,
 *   since this candidate last saw the record change. Remote timestamps are never compared
 *   with the local clock, so clock skew between nodes cannot cause two leaders.
 * - Writes are optimistic (resourceVersion): of two racing candidates, one gets 409.
 * - The leader renews every retry period. If it cannot renew within the renew deadline
 *   (which is shorter than the lease duration, so it stops before anyone else may start), or
 *   it sees another holder in the Lease, it loses leadership at once: the signal aborts and
 *   `onStoppedLeading` runs. It then campaigns again as a candidate (a standby keeps its
 *   caches warm).
 * - `stop()` aborts the signal, then releases the Lease (empty holder, 1 s duration, as
 *   client-go's ReleaseOnCancel) so a standby takes over without waiting out the lease.
 */
export class LeaderElector {
  /** Candidates wait retryPeriod × [1, 1 + JITTER_FACTOR] between attempts (client-go's JitterUntil). */
  static readonly JITTER_FACTOR = 1.2;

  private readonly lock: LeaseLock;
  private readonly identity: string;
  private readonly leaseDurationSeconds: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly gauge: Gauge<'lease'>;
  private readonly logger: Logger;
  private readonly stopping = new AbortController();
  private running: Promise<void> | undefined;
  private leading: AbortController | undefined;
  private observed: (ObservedRecord & { at: number }) | undefined;
  private reportedLeader = '';

  constructor(private readonly options: LeaderElectorOptions) {
    const { leaseDurationMs = 15_000, renewDeadlineMs = 10_000, retryPeriodMs = 2_000 } = options;
    if (!options.identity) throw new Error('leader election needs a non-empty identity');
    if (!(retryPeriodMs > 0)) throw new Error('retryPeriodMs must be positive');
    if (!(renewDeadlineMs > retryPeriodMs))
      throw new Error('renewDeadlineMs must be longer than retryPeriodMs');
    if (!(leaseDurationMs > renewDeadlineMs))
      throw new Error('leaseDurationMs must be longer than renewDeadlineMs');
    if (!Number.isInteger(leaseDurationMs / 1000)) {
      throw new Error(
        `leaseDurationMs must be whole seconds (a Lease stores seconds), got ${leaseDurationMs}`,
      );
    }
    this.identity = options.identity;
    this.leaseDurationSeconds = leaseDurationMs / 1000;
    this.renewDeadlineMs = renewDeadlineMs;
    this.retryPeriodMs = retryPeriodMs;
    this.lock = new LeaseLock(new KubeClient(options.kubeConfig), options.namespace, options.name);
    this.logger = (options.logger ?? createLogger('leader-election')).child({
      lease: this.lock.describe(),
      identity: this.identity,
    });
    this.gauge = metric(
      options.registry ?? new Registry(),
      'odlcoe_leader',
      () =>
        new Gauge({
          name: 'odlcoe_leader',
          help: '1 while this process holds the leader Lease.',
          labelNames: ['lease'],
          registers: [],
        }),
    );
    this.gauge.set({ lease: this.lock.describe() }, 0);
  }

  /** Campaigns (and leads) until `stop()`; resolves once stopped and the Lease released. */
  run(): Promise<void> {
    if (this.stopping.signal.aborted)
      return Promise.reject(new Error('leader elector was stopped; create a new one'));
    this.running ??= this.campaign();
    return this.running;
  }

  /** Stops leading (signal first), releases the Lease if held, and stops campaigning. */
  async stop(): Promise<void> {
    this.stopping.abort(new Error('leader elector stopped'));
    await this.running;
  }

  isLeader(): boolean {
    return this.leading !== undefined;
  }

  private async campaign(): Promise<void> {
    const stop = this.stopping.signal;
    this.logger.info('campaigning for leadership');
    while (!stop.aborted) {
      const attemptedAt = performance.now();
      if ((await this.attempt(stop, this.renewDeadlineMs)) !== 'ok') {
        const jitter = 1 + Math.random() * LeaderElector.JITTER_FACTOR;
        await sleep(this.retryPeriodMs * jitter, stop).catch(() => undefined);
        continue;
      }
      const signal = this.startLeading();
      const ended = await this.renew(attemptedAt, stop);
      this.stopLeading(signal, ended);
      if (ended === 'stopped') await this.release();
      this.callback('onStoppedLeading', () => this.options.onStoppedLeading());
    }
  }

  private startLeading(): AbortController {
    const leading = new AbortController();
    this.leading = leading;
    this.gauge.set({ lease: this.lock.describe() }, 1);
    this.logger.info('started leading');
    this.callback('onStartedLeading', () => this.options.onStartedLeading(leading.signal));
    return leading;
  }

  private stopLeading(leading: AbortController, why: string): void {
    leading.abort(new Error(`leadership ended: ${why}`));
    this.leading = undefined;
    this.gauge.set({ lease: this.lock.describe() }, 0);
    if (why === 'stopped') this.logger.info('stopped leading');
    else this.logger.error('lost leadership', { why });
  }

  /**
   * Renews until leadership ends. Returns why: `stopped`, `deadline` (no successful renewal
   * within renewDeadline of the last one), or `taken` (the Lease names another holder).
   */
  private async renew(lastRenewedAt: number, stop: AbortSignal): Promise<'stopped' | 'deadline' | 'taken'> {
    let wait = this.retryPeriodMs;
    for (;;) {
      const remaining = lastRenewedAt + this.renewDeadlineMs - performance.now();
      if (remaining <= 0) return 'deadline';
      try {
        await sleep(Math.min(wait, remaining), stop);
      } catch {
        return 'stopped';
      }
      const left = lastRenewedAt + this.renewDeadlineMs - performance.now();
      if (left <= 0) return 'deadline';
      const attemptedAt = performance.now();
      // The attempt may not outlive the deadline: a hung request must not keep us leading.
      const result = await this.attempt(stop, left);
      if (stop.aborted) return 'stopped';
      if (result === 'held') return 'taken';
      if (result === 'ok') {
        lastRenewedAt = attemptedAt;
        wait = this.retryPeriodMs;
      } else {
        // Retry sooner after a failure, still bounded by the deadline check above.
        wait = Math.max(1, Math.min(this.retryPeriodMs, this.renewDeadlineMs / 4));
      }
    }
  }

  /** One acquire/renew attempt under `stop` that may not outlive `deadlineMs`. */
  private async attempt(stop: AbortSignal, deadlineMs: number): Promise<Attempt> {
    const scope = abortScope(stop, deadlineMs);
    try {
      return await this.tryAcquireOrRenew(scope.signal);
    } finally {
      scope.dispose();
    }
  }

  /**
   * One attempt to acquire or renew (client-go's tryAcquireOrRenew). `held` means another
   * candidate holds a valid lease; `failed` is anything transient (conflict, network).
   */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<Attempt> {
    const now = Date.now();
    const desired: LeaderElectionRecord = {
      holderIdentity: this.identity,
      leaseDurationSeconds: this.leaseDurationSeconds,
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    };
    try {
      // Fast path for the leader: one optimistic write on top of the Lease it wrote last.
      if (
        this.leading &&
        this.observed?.record.holderIdentity === this.identity &&
        this.lock.hasCachedLease()
      ) {
        const { acquireTime, leaseTransitions } = this.observed.record;
        try {
          this.observe(await this.lock.update({ ...desired, acquireTime, leaseTransitions }, signal));
          return 'ok';
        } catch (err) {
          if (!(err instanceof KubeApiError && err.status === 409)) throw err;
          // Someone else wrote the Lease: read it and decide below.
        }
      }
      const current = await this.lock.get(signal);
      if (!current) {
        this.observe(await this.lock.create(desired, signal));
        this.logger.info('created lease');
        return 'ok';
      }
      this.observe(current);
      const holder = current.record.holderIdentity;
      if (holder !== '' && holder !== this.identity && this.observedLeaseValid()) return 'held';
      if (holder === this.identity) {
        desired.acquireTime = current.record.acquireTime || desired.acquireTime;
        desired.leaseTransitions = current.record.leaseTransitions;
      } else {
        desired.leaseTransitions = current.record.leaseTransitions + 1;
      }
      this.observe(await this.lock.update(desired, signal));
      if (holder !== this.identity)
        this.logger.info('took over lease', { previousHolder: holder || '(released)' });
      return 'ok';
    } catch (err) {
      if (signal.aborted && !this.stopping.signal.aborted) {
        this.logger.warn('lease request timed out', { error: errorMessage(err) });
      } else if (err instanceof KubeApiError && err.status === 409) {
        this.logger.debug('lost an optimistic write race on the lease', { error: err.message });
      } else if (!this.stopping.signal.aborted) {
        this.logger.warn('lease request failed', { error: errorMessage(err) });
      }
      return 'failed';
    }
  }

  /** Notes the record; the expiry clock restarts only when its content changed. */
  private observe(next: ObservedRecord): void {
    if (this.observed?.raw !== next.raw) this.observed = { ...next, at: performance.now() };
    const holder = next.record.holderIdentity;
    if (holder !== '' && holder !== this.reportedLeader) {
      this.reportedLeader = holder;
      this.logger.info('new leader observed', { leader: holder });
      const onNewLeader = this.options.onNewLeader;
      if (onNewLeader) this.callback('onNewLeader', () => onNewLeader(holder));
    }
  }

  private observedLeaseValid(): boolean {
    if (!this.observed) return false;
    return this.observed.at + this.observed.record.leaseDurationSeconds * 1000 > performance.now();
  }

  /** client-go's release: an empty holder and a 1 s duration, written over our own record. */
  private async release(): Promise<void> {
    if (this.observed?.record.holderIdentity !== this.identity) return;
    const now = Date.now();
    const record: LeaderElectionRecord = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: this.observed.record.leaseTransitions,
    };
    const scope = abortScope(undefined, this.renewDeadlineMs);
    try {
      try {
        this.observe(await this.lock.update(record, scope.signal));
      } catch (err) {
        // A renewal that stop() aborted on our side may still have been applied by the API
        // server, leaving our resourceVersion one behind: re-read, and release again only if
        // the Lease is still ours (a newer holder's record is never overwritten).
        if (!(err instanceof KubeApiError && err.status === 409)) throw err;
        const current = await this.lock.get(scope.signal);
        if (current) this.observe(current);
        if (current?.record.holderIdentity !== this.identity) return;
        this.observe(
          await this.lock.update(
            { ...record, leaseTransitions: current.record.leaseTransitions },
            scope.signal,
          ),
        );
      }
      this.logger.info('released lease');
    } catch (err) {
      // Not fatal: the standby takes over once the lease duration has passed.
      this.logger.warn('could not release lease', { error: errorMessage(err) });
    } finally {
      scope.dispose();
    }
  }

  private callback(name: string, fn: () => void | Promise<void>): void {
    try {
      const result = fn();
      if (result instanceof Promise) {
        result.catch((err: unknown) => this.logger.error(`${name} failed`, { error: errorMessage(err) }));
      }
    } catch (err) {
      this.logger.error(`${name} threw`, { error: errorMessage(err) });
    }
  }
}
