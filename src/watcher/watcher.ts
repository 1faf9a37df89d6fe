/**
 * The watcher's core: informers (always running, so a standby's caches are warm), leader
 * election, and per leader term a work queue that drives the backend's reconcilers.
 *
 * A leader term: read ODL (retrying until it answers) while every informer makes its first
 * sync (nothing is planned or deleted before both are done), start the workers, and go over every key the
 * cluster needs or ODL holds (start-up convergence and garbage collection are the same thing):
 * a key whose plan the caches show in sync is settled in place (no I/O), any other is queued;
 * then resync periodically (re-read ODL, the same pass: catches drift made by hand).
 * Losing the lease ends the term at once: the term's signal aborts (checked before every
 * write) and the queue shuts down without draining. SIGTERM drains with a bound, then
 * releases the lease.
 *
 * `startWatcher` is also the programmatic entry for the benchmark and the sandbox:
 * `ready()` (caches synced; as leader, ODL read and every key settled or queued), `idle()` (as leader:
 * every key reconciled and settled: nothing queued, running, failing or waiting for a
 * precondition; grace periods and slow retries of foreign names do not count), `close()`.
 */
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ConvergencePass } from '../common/convergence.js';
import { abortFanout, type AbortFanout } from '../common/abort-fanout.js';
import { Backoff, sleep } from '../common/backoff.js';
import { createLogger, errorMessage, type Logger } from '../common/log.js';
import { createRegistry, type Registry } from '../common/metrics.js';
import { startOpsServer, type OpsServer } from '../common/ops-server.js';
import { LeaderElector } from '../k8s/leader-election.js';
import { refKey, type Ref } from '../netvirt/kind.js';
import type { Profile } from '../netvirt/profile.js';
import { OdlModelsError, optionalModels, readModels, type OdlModels } from '../odl/models.js';
import { WorkQueue, type ReconcileResult } from '../queue/work-queue.js';
import {
  RestconfClient,
  RestconfError,
  type RestconfClientOptions,
  type RequestSample,
} from '../restconf/client.js';
import { restconfBatchMetrics, restconfMetrics } from '../restconf/metrics.js';
import type { Backend, BackendContext } from './backend.js';
import { ClusterView, type OptionalResource } from './cluster-view.js';
import { KubeApiError, KubeClient } from '../k8s/kube-client.js';
import { CoeNorthboundBackend } from './coe-northbound/backend.js';
import { KubeEventRecorder, type EventRecorder } from './events.js';
import { WatcherMetrics } from './metrics.js';
import { NetvirtBackend } from './netvirt-backend.js';
import { keyKind, type WriteGuard } from './reconcile.js';
import { ConvergenceProgress, type ProgressSource } from './progress.js';
import type { BackendName, WatcherSettings, WatcherSettingsInput } from '../config/watcher-settings.js';

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export interface WatcherOptions {
  /**
   * The profile, when given, must be what ODL serves (read from its module list at start-up:
   * a contradiction refuses to start); absent, it is the one ODL serves.
   */
  settings: WatcherSettingsInput;
  /** What ODL has, when already known (read by the caller): no module list is read then. */
  models?: OdlModels;
  kubeConfig: KubeConfig;
  /** RESTCONF connection; the dialect comes from the settings, metrics are hooked in here. */
  odl: Omit<RestconfClientOptions, 'dialect' | 'onRequest' | 'onBatch' | 'logger'>;
  /** Lease leader election; `false` (or absent): this instance always leads. */
  leaderElection?: LeaderElectionOptions | false;
  /** `/metrics`, `/healthz`, `/readyz`; absent: not served. Port 0 picks a free port. */
  ops?: { host?: string; port: number };
  registry?: Registry;
  logger?: Logger;
  /** Replaces the Kubernetes Event recorder (tests). */
  events?: EventRecorder;
  /** Informer watch timeouts in seconds (tests shorten them). */
  informerWatchTimeoutSeconds?: [number, number];
  /** Called when the watcher cannot go on (a leader term failed to start); main exits. */
  onFatal?: (err: Error) => void;
  /** Makes the backend instead of the `backend` setting (a backend with more kinds: tests). */
  backend?: (ctx: BackendContext) => Backend;
}

export interface CloseOptions {
  /**
   * `false` (default): SIGTERM semantics, drain the queue (bounded by the settings'
   * shutdownTimeoutMs), then release the lease. `true`: stop at once, as close to a crash as
   * an in-process watcher gets (writes in flight are cut, nothing is drained).
   */
  abrupt?: boolean;
}

export interface Watcher {
  ready(): Promise<void>;
  idle(): Promise<void>;
  close(options?: CloseOptions): Promise<void>;
  isLeader(): boolean;
  /** Re-read ODL and reconcile every key now (what the periodic resync does). */
  resync(): Promise<void>;
  readonly backend: Backend;
  readonly registry: Registry;
  readonly view: ClusterView;
  /** The watcher's own metrics and the per-object states behind its gauges. */
  readonly metrics: WatcherMetrics;
  /** The release and models ODL has, as detected at start-up. */
  readonly models: OdlModels;
  /** The settings in force (the profile detected when it was not told). */
  readonly settings: WatcherSettings;
  /** The ops server's port, when one is served. */
  readonly opsPort: number | undefined;
}

export function defaultIdentity(): string {
  return `${hostname()}_${process.pid}`;
}

/** How long the informers may fail before `/readyz` says Kubernetes is unreachable, and `/healthz` gives up. */
const KUBE_UNREADY_MS = 30_000;
const KUBE_DEAD_MS = 5 * 60_000;

/**
 * Abort listeners one reconcile can hold on the term's signal at once: a request's attempt and
 * its wait for a slot in the client's queue (p-queue), and a retry's sleep.
 */
const LISTENERS_PER_WORKER = 3;

/** `Term.changedAt` is not pruned below this size (pruning walks it). */
const MIN_CHANGED_AT_PRUNE = 4_096;

/**
 * A pass over every key yields to the event loop after this long (checked every
 * `SLICE_CHECK_EVERY` keys): a key is planned in well under a millisecond.
 */
const SLICE_MS = 20;
const SLICE_CHECK_EVERY = 32;

/** One leader term: its abort signal, its queue, and which keys are not settled yet. */
class Term {
  readonly abort = new AbortController();
  queue: WorkQueue | undefined;
  loaded = false;
  resyncTimer: NodeJS.Timeout | undefined;
  ending: Promise<void> | undefined;
  /** `lead`: settles once the term has its queue running, or has given up starting. */
  starting: Promise<void> | undefined;
  /** key → sequence of its latest add; a key is settled once a run that began after it ends settled. */
  private readonly pending = new Map<string, number>();
  private readonly runningSince = new Map<string, number>();
  private seq = 0;
  /** Keys that left `pending` (settled) in this term. */
  private settledKeys = 0;
  /** How far the term's keys are, for the convergence progress. */
  readonly keys: ProgressSource = {
    settled: () => this.settledKeys,
    pending: () => this.pending.size,
  };
  private idleWaiters: (() => void)[] = [];
  /** `kind/name` of an ODL entry → keys waiting for it to appear or go. */
  private readonly waitingFor = new Map<string, Set<string>>();
  /** `kind/name` → the change count when it last changed (a change during a reconcile counts). */
  private readonly changedAt = new Map<string, number>();
  /** Running key → the change count when its reconcile began (the `since` of its `waitFor`). */
  private readonly runningSinceChange = new Map<string, number>();
  /** `changedAt` is pruned when it reaches this size (doubling: amortised constant per change). */
  private pruneChangedAt = MIN_CHANGED_AT_PRUNE;
  /** ODL entry changes seen in this term. */
  changes = 0;

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  private shared: { queueSignal: AbortSignal; fanout: AbortFanout; signal: AbortSignal } | undefined;

  /**
   * The signal every reconcile of the term's queue writes under: it fires when the term or the
   * queue ends, which ends every reconcile at once (none is ever cut alone). The RESTCONF client
   * takes it into every request, so a write in flight or waiting for a retry stops there
   * instead of landing after another replica took over. One signal, not one per reconcile:
   * a controller per reconcile was a few percent of converging a cluster. Its listeners stay
   * few: the write batcher holds one however many edits wait, and the client's and its
   * queue's leave with their request (at most a few per worker in flight: `maxListeners`).
   */
  reconcileSignal(queueSignal: AbortSignal, maxListeners: number): AbortSignal {
    if (this.shared?.queueSignal !== queueSignal) {
      this.shared?.fanout.dispose();
      const fanout = abortFanout([this.signal, queueSignal]);
      const { signal } = fanout.child();
      setMaxListeners(maxListeners, signal);
      this.shared = { queueSignal, fanout, signal };
    }
    return this.shared.signal;
  }

  /** Passes over every key (`examineKeys`) running: the term is not idle before they end. */
  private passes = 0;

  /**
   * A pass over every key: each is settled in place when the backend finds it in sync (no
   * I/O), or queued. Runs in slices that yield to the event loop, so that health checks, the
   * lease and watch events are served meanwhile (an event's key is queued as usual; a key
   * already pending is left to its reconcile). Without `inSync` (an empty ODL) every key is
   * queued in one go, a few microseconds each: yielding there let the first writes land
   * meanwhile, and what they queue (a node's pods once its subnet is written) went ahead of
   * the instances those pods attach to, which the pass had not queued yet. Returns how many keys it went over, and how
   * many of them it queued. `started` runs once the pass counts (the term is not idle), before
   * any key is gone over.
   */
  async examine(
    keys: Iterable<string>,
    inSync: ((key: string) => boolean) | undefined,
    started: () => void,
  ): Promise<{ keys: number; queued: number }> {
    let seen = 0;
    let queued = 0;
    this.passes += 1;
    try {
      // Once the term cannot look idle, and before any key settles (the progress counts them).
      started();
      let sliceStarted = performance.now();
      for (const key of keys) {
        if (this.signal.aborted) break;
        seen += 1;
        if (!this.pending.has(key)) {
          if (inSync?.(key) === true) this.settledKeys += 1;
          else {
            this.add(key);
            queued += 1;
          }
        }
        if (
          inSync !== undefined &&
          seen % SLICE_CHECK_EVERY === 0 &&
          performance.now() - sliceStarted >= SLICE_MS
        ) {
          await new Promise((resolve) => setImmediate(resolve));
          sliceStarted = performance.now();
        }
      }
    } finally {
      this.passes -= 1;
    }
    this.checkIdle();
    return { keys: seen, queued };
  }

  add(key: string): void {
    if (!this.queue || this.signal.aborted) return;
    this.pending.set(key, ++this.seq);
    this.queue.add(key);
  }

  /**
   * `key` waits for `refs`: it runs again as soon as one of them changes, or at once if one
   * already changed after `since` (while the reconcile that decided to wait was running).
   */
  waitFor(key: string, refs: readonly Ref[], since: number): void {
    for (const ref of refs) {
      const k = refKey(ref);
      if ((this.changedAt.get(k) ?? 0) > since) {
        this.add(key);
        return;
      }
    }
    for (const ref of refs) {
      const k = refKey(ref);
      let set = this.waitingFor.get(k);
      if (!set) this.waitingFor.set(k, (set = new Set()));
      set.add(key);
    }
  }

  /** An ODL entry changed: the keys waiting for it run again. */
  wake(ref: Ref): void {
    const k = refKey(ref);
    this.changes += 1;
    this.changedAt.set(k, this.changes);
    if (this.changedAt.size >= this.pruneChangedAt) this.forgetOldChanges();
    const keys = this.waitingFor.get(k);
    if (!keys) return;
    this.waitingFor.delete(k);
    for (const key of keys) this.add(key);
  }

  /** `key`'s reconcile begins; returns the change count its `waitFor` compares against. */
  began(key: string): number {
    this.runningSince.set(key, this.pending.get(key) ?? this.seq);
    this.runningSinceChange.set(key, this.changes);
    return this.changes;
  }

  /**
   * Only a change after the `since` of a reconcile still running can matter to a `waitFor`:
   * older ones go, so the map does not hold every entry the term ever wrote (400,000 converging
   * 100,000 pods).
   */
  private forgetOldChanges(): void {
    let oldest = this.changes;
    for (const since of this.runningSinceChange.values()) oldest = Math.min(oldest, since);
    for (const [k, at] of this.changedAt) if (at <= oldest) this.changedAt.delete(k);
    this.pruneChangedAt = Math.max(MIN_CHANGED_AT_PRUNE, this.changedAt.size * 2);
  }

  ended(key: string, settled: boolean): void {
    const since = this.runningSince.get(key) ?? 0;
    this.runningSince.delete(key);
    this.runningSinceChange.delete(key);
    if (settled && (this.pending.get(key) ?? 0) <= since && this.pending.delete(key)) this.settledKeys += 1;
    this.checkIdle();
  }

  isIdle(): boolean {
    return this.loaded && this.passes === 0 && this.pending.size === 0;
  }

  idle(): Promise<void> {
    if (this.isIdle() || this.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  checkIdle(): void {
    if (!this.isIdle() && !this.signal.aborted) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}

/**
 * Reads ODL's module list until ODL answers (with backoff): the release profile and models the
 * watcher works with. A told profile that contradicts ODL, or an ODL without NetVirt, is fatal.
 */
export async function detectModels(
  client: RestconfClient,
  told: Profile | undefined,
  where: string,
  logger: Logger,
  signal?: AbortSignal,
): Promise<OdlModels> {
  const backoff = new Backoff({ initialMs: 500, maxMs: 30_000 });
  for (;;) {
    signal?.throwIfAborted();
    try {
      return await readModels(client, told, where, signal ? { signal } : {});
    } catch (err) {
      if (err instanceof OdlModelsError || signal?.aborted) throw err;
      const delayMs = backoff.next();
      logger.warn('cannot read ODL’s module list; retrying', { error: errorMessage(err), delayMs });
      await sleep(delayMs, signal);
    }
  }
}

export async function startWatcher(options: WatcherOptions): Promise<Watcher> {
  const logger = options.logger ?? createLogger('watcher');
  const registry = options.registry ?? createRegistry();
  const metrics = new WatcherMetrics(registry);
  const progress = new ConvergenceProgress({
    registry,
    logger,
    intervalMs: options.settings.progressIntervalMs,
    objects: () => metrics.objectTotals(),
  });
  const identity = options.leaderElection ? options.leaderElection.identity : defaultIdentity();

  let lastOdlAnswer: 'ok' | 'unreachable' | undefined;
  const recordRestconf = restconfMetrics(registry);
  const client = new RestconfClient({
    ...options.odl,
    dialect: options.settings.dialect,
    logger,
    onRequest: (sample: RequestSample) => {
      recordRestconf(sample);
      lastOdlAnswer = typeof sample.status === 'number' && sample.status < 500 ? 'ok' : 'unreachable';
    },
    onBatch: restconfBatchMetrics(registry),
  });
  let models: OdlModels;
  try {
    models =
      options.models ?? (await detectModels(client, options.settings.profile, options.odl.baseUrl, logger));
  } catch (err) {
    client.close();
    throw err;
  }
  const settings: WatcherSettings = { ...options.settings, profile: models.profile };
  logger.info('ODL models', {
    profile: models.profile,
    detected: models.source === 'odl',
    optional: optionalModels(models),
    dialect: settings.dialect,
  });
  const view = new ClusterView({
    kubeConfig: options.kubeConfig,
    registry,
    logger,
    ...(options.informerWatchTimeoutSeconds
      ? { watchTimeoutSeconds: options.informerWatchTimeoutSeconds }
      : {}),
  });
  const events = options.events ?? new KubeEventRecorder(options.kubeConfig, logger, identity);
  const kube = new KubeClient(options.kubeConfig);

  let term: Term | undefined;
  let closing = false;
  const backendContext: BackendContext = {
    settings,
    models,
    view,
    client,
    kube,
    events,
    metrics,
    enqueue: (key) => term?.add(key),
    logger,
  };
  const backend = options.backend?.(backendContext) ?? createBackend(settings.backend, backendContext);
  // Before the view starts: what it watches is fixed, and part of every term's sync gate.
  view.include(await servedResources(kube, backend.resources ?? [], logger));

  view.onChange((change) => {
    const t = term;
    if (!t?.queue) return;
    for (const key of backend.keysFor(change)) t.add(key);
  });
  // Ordering is declared in the kinds table and enforced by the writer; a key it held back
  // names what it waits for, and runs again when that entry changes (written by this watcher
  // or found changed on a re-read).
  backend.cache.onChange((change) => {
    const t = term;
    if (!t?.queue) return;
    t.wake(change.ref);
    for (const key of backend.keysForEntry(change)) t.add(key);
  });

  let readyWaiters: (() => void)[] = [];
  const isReady = () => view.hasSynced() && (!term || term.loaded);
  const checkReady = () => {
    if (!isReady()) return;
    const waiters = readyWaiters;
    readyWaiters = [];
    for (const w of waiters) w();
  };

  async function reconcileKey(
    t: Term,
    key: string,
    queueSignal: AbortSignal,
  ): Promise<ReconcileResult | void> {
    const guard: WriteGuard = {
      signal: t.reconcileSignal(queueSignal, settings.workers * LISTENERS_PER_WORKER + 16),
      check() {
        if (t.signal.aborted) throw t.signal.reason ?? new Error('leader term ended');
        if (queueSignal.aborted) throw queueSignal.reason ?? new Error('work queue stopped');
      },
    };
    const kind = keyKind(key);
    const stopTimer = metrics.reconcileDuration.startTimer({ kind });
    const since = t.began(key);
    try {
      const outcome = await backend.reconcile(key, guard);
      metrics.reconciles.inc({ kind, result: outcome.result });
      if (outcome.result === 'waiting' && outcome.on.length > 0) {
        // Get what it waits for made (or removed) by the keys that own it, and wake it after.
        t.waitFor(key, outcome.on, since);
        for (const ref of outcome.on) {
          const owner = backend.keyOfEntry(ref);
          if (owner !== undefined && owner !== key) t.add(owner);
        }
      }
      t.ended(key, outcome.result !== 'waiting');
      return 'retryAfterMs' in outcome ? { requeueAfterMs: outcome.retryAfterMs } : undefined;
    } catch (err) {
      metrics.reconciles.inc({ kind, result: 'error' });
      t.ended(key, false);
      if (err instanceof RestconfError && err.status !== undefined && err.status >= 400 && err.status < 500) {
        // A 4xx is not transient: the queue's per-key backoff keeps it from a hot loop.
        logger.warn('ODL refused a write', {
          key,
          status: err.status,
          errorTag: err.errorTag,
          error: err.message,
        });
      }
      throw err;
    } finally {
      stopTimer();
    }
  }

  async function loadUntilDone(t: Term, fresh: boolean): Promise<void> {
    const backoff = new Backoff({ initialMs: 500, maxMs: 30_000 });
    for (;;) {
      t.signal.throwIfAborted();
      try {
        await backend.load(fresh, t.signal);
        return;
      } catch (err) {
        if (t.signal.aborted) throw t.signal.reason;
        const delayMs = backoff.next();
        logger.warn('cannot read ODL state; retrying', { error: errorMessage(err), delayMs });
        await sleep(delayMs, t.signal);
      }
    }
  }

  async function resync(t: Term): Promise<void> {
    if (t.signal.aborted || !t.loaded) return;
    try {
      await backend.load(false, t.signal);
      const { keys, queued } = await examineKeys(t, 'resync');
      metrics.resyncs.inc({ result: 'ok' });
      logger.info('resync: ODL re-read, every key compared; those out of sync queued', { keys, queued });
    } catch (err) {
      metrics.resyncs.inc({ result: 'error' });
      if (!t.signal.aborted) logger.warn('resync failed; the next one retries', { error: errorMessage(err) });
    }
  }

  /**
   * A convergence pass: every key, settled in place when in sync, else queued (`Term.examine`),
   * its progress tracked from before the first key until every key settled.
   */
  function examineKeys(t: Term, pass: ConvergencePass): Promise<{ keys: number; queued: number }> {
    // On an empty ODL (a first start) no key can be in sync: planning each in memory first
    // would plan every key twice (once here, once in its reconcile).
    const inSync = backend.holdsNothing?.() ? undefined : backend.settleIfInSync?.bind(backend);
    return t.examine(
      backend.allKeys(),
      inSync &&
        ((key) => {
          if (!inSync(key)) return false;
          // Counted as the reconcile it stands for: one that found the key in sync.
          metrics.reconciles.inc({ kind: keyKind(key), result: 'synced' });
          return true;
        }),
      () => trackConvergence(t, pass),
    );
  }

  function trackConvergence(t: Term, pass: ConvergencePass): void {
    progress.begin(pass, t.keys);
    void t.idle().then(() => {
      if (!t.signal.aborted) progress.converged(t.keys);
    });
  }

  function scheduleResync(t: Term): void {
    if (settings.resyncPeriodMs <= 0 || t.signal.aborted) return;
    t.resyncTimer = setTimeout(() => {
      void resync(t).finally(() => scheduleResync(t));
    }, settings.resyncPeriodMs);
  }

  async function lead(t: Term): Promise<void> {
    logger.info('leader term starting: reading ODL while the caches sync');
    // Both only read, so ODL's lists are read while the informers list the cluster; nothing is
    // planned, queued or deleted before both are done.
    await Promise.all([view.waitForSync(t.signal), loadUntilDone(t, true)]);
    // The lease may have gone while ODL was read (a read does not stop for it): a term that has
    // ended starts no queue, or it would run beside the next term's.
    t.signal.throwIfAborted();
    const queue = new WorkQueue<string>({
      name: `watcher-${backend.name}`,
      workers: settings.workers,
      reconcile: (key, signal) => reconcileKey(t, key, signal),
      // The overall bound on retries (watcher-settings.ts says why these defaults).
      rateLimit: { perSecond: settings.retryRatePerSecond, burst: settings.retryBurst },
      registry,
      logger,
    });
    t.queue = queue;
    // Workers start on what the pass queues while it goes on; the term is not idle (nor
    // ready) before every key was looked at.
    queue.start();
    const { keys, queued } = await examineKeys(t, 'start-up');
    t.signal.throwIfAborted();
    t.loaded = true;
    logger.info('leader term started: every key compared, those out of sync queued', {
      keys,
      queued,
      workers: settings.workers,
    });
    scheduleResync(t);
    checkReady();
    t.checkIdle();
  }

  /**
   * Resolves when the last term has ended (its start settled, its queue stopped), so terms never
   * overlap.
   */
  let previousTermEnded: Promise<void> = Promise.resolve();

  function startTerm(leaderSignal?: AbortSignal): void {
    const t = new Term();
    const prior = previousTermEnded;
    term = t;
    leaderSignal?.addEventListener('abort', () => void endTerm(t, false), { once: true });
    t.starting = prior.then(() => lead(t));
    t.starting.catch((err: unknown) => {
      if (t.signal.aborted) return;
      // A leader that cannot work must not keep the lease: give up loudly.
      logger.error('leader term failed to start', { error: errorMessage(err) });
      void endTerm(t, false).then(() =>
        options.onFatal?.(err instanceof Error ? err : new Error(String(err))),
      );
    });
  }

  /** Ends a term: drain (SIGTERM) or abort at once (lost lease, abrupt close). */
  function endTerm(t: Term, drain: boolean): Promise<void> {
    if (!t.ending) {
      t.ending = endTermOnce(t, drain);
      previousTermEnded = t.ending;
    }
    return t.ending;
  }

  async function endTermOnce(t: Term, drain: boolean): Promise<void> {
    if (t.resyncTimer) clearTimeout(t.resyncTimer);
    progress.stop();
    if (drain && t.queue && !t.signal.aborted) {
      logger.info('draining the work queue', { timeoutMs: settings.shutdownTimeoutMs });
      await t.queue.shutdown({ drain: true, timeoutMs: settings.shutdownTimeoutMs });
    }
    t.abort.abort(new Error(drain ? 'watcher stopping' : 'leadership lost'));
    // A term still starting (reading ODL) stops at its next step; the next term waits for that.
    await t.starting?.catch(() => undefined);
    await t.queue?.shutdown({ drain: false });
    t.checkIdle();
    if (term === t) term = undefined;
    if (!closing) logger.warn('leader term ended; standing by');
    checkReady();
  }

  // The ops server first: if its port is taken, nothing else has started yet.
  let ops: OpsServer | undefined;
  if (options.ops) {
    ops = await startOpsServer({
      host: options.ops.host,
      port: options.ops.port,
      registry,
      logger,
      liveness: () => view.stalledMs() < KUBE_DEAD_MS,
      readiness: [
        { name: 'kubernetes', check: () => view.stalledMs() < KUBE_UNREADY_MS },
        { name: 'caches-synced', check: () => view.hasSynced() },
        // A standby does not talk to ODL; it is ready to take over with warm caches.
        { name: 'odl', check: () => !term || lastOdlAnswer !== 'unreachable' },
        { name: 'odl-state-loaded', check: () => !term || term.loaded },
      ],
    });
  }

  view.start();

  let elector: LeaderElector | undefined;
  if (options.leaderElection) {
    const le = options.leaderElection;
    elector = new LeaderElector({
      kubeConfig: options.kubeConfig,
      namespace: le.namespace,
      name: le.name,
      identity: le.identity,
      ...(le.leaseDurationMs !== undefined ? { leaseDurationMs: le.leaseDurationMs } : {}),
      ...(le.renewDeadlineMs !== undefined ? { renewDeadlineMs: le.renewDeadlineMs } : {}),
      ...(le.retryPeriodMs !== undefined ? { retryPeriodMs: le.retryPeriodMs } : {}),
      onStartedLeading: (signal) => startTerm(signal),
      onStoppedLeading: () => undefined,
      registry,
      logger,
    });
    void elector
      .run()
      .catch((err: unknown) => logger.error('leader election stopped', { error: errorMessage(err) }));
  } else {
    startTerm();
  }
  void view.waitForSync().then(checkReady, () => undefined);

  const isLeader = () => term !== undefined && !term.signal.aborted;
  const ready = () =>
    isReady() ? Promise.resolve() : new Promise<void>((resolve) => readyWaiters.push(resolve));

  return {
    backend,
    registry,
    view,
    metrics,
    opsPort: ops?.port,
    models,
    settings,
    isLeader,
    ready,
    async idle() {
      await ready();
      await term?.idle();
    },
    async resync() {
      if (term) await resync(term);
    },
    async close(closeOptions: CloseOptions = {}) {
      if (closing) return;
      closing = true;
      const t = term;
      if (closeOptions.abrupt) {
        // Cut writes in flight first: nothing more reaches ODL from this instance.
        client.close();
        if (t) await endTerm(t, false);
      } else if (t) {
        await endTerm(t, true);
      }
      await elector?.stop();
      await view.stop();
      client.close();
      if (events instanceof KubeEventRecorder) await events.flush();
      await ops?.close();
      for (const w of readyWaiters) w();
      readyWaiters = [];
      logger.info('watcher stopped');
    },
  };
}

/** The backends this build knows, by the name the `backend` setting gives. */
/**
 * The optional resources the API server serves. A CRD (NetworkAttachmentDefinitions) may not be
 * installed: then it is left out, once, with a log line saying what is off (an informer on a
 * path that is 404 would only fail forever). Any other answer keeps it: the informer retries.
 */
export async function servedResources(
  kube: KubeClient,
  wanted: readonly OptionalResource[],
  logger: Logger,
): Promise<OptionalResource[]> {
  const out: OptionalResource[] = [];
  for (const resource of wanted) {
    if (resource !== 'networkattachmentdefinitions') {
      out.push(resource);
      continue;
    }
    try {
      // A list of one: the informer's own request (and permission); 404 without the CRD.
      await kube.request('GET', '/apis/k8s.cni.cncf.io/v1/network-attachment-definitions', {
        query: { limit: 1 },
        timeoutMs: 10_000,
      });
      out.push(resource);
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) {
        logger.info(
          'the API server does not serve NetworkAttachmentDefinitions (k8s.cni.cncf.io/v1): extra networks are off; restart the watcher once the CRD is installed',
        );
        continue;
      }
      logger.warn('could not ask whether NetworkAttachmentDefinitions are served; watching them anyway', {
        error: errorMessage(err),
      });
      out.push(resource);
    }
  }
  return out;
}

export function createBackend(name: BackendName, ctx: BackendContext): Backend {
  switch (name) {
    case 'netvirt':
      return new NetvirtBackend(ctx);
    case 'coe-northbound':
      return new CoeNorthboundBackend(ctx);
    default:
      // Settings from a caller that bypassed watcher-config.ts's validation.
      throw new Error(
        `unknown backend ${JSON.stringify(name satisfies never)} (known: netvirt, coe-northbound)`,
      );
  }
}
