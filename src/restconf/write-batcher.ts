/**
 * Coalesces concurrent writes into YANG-Patch requests: one HTTP request and one ODL
 * transaction for many edits. Each caller still awaits its own edit and gets what the single
 * write would have given it (the same result, or a RestconfError with the same status and
 * error tag), so code written for single writes keeps its meaning.
 *
 * - A batch opens with its first edit and is sent after `windowMs` or at `maxEdits` edits.
 *   Edits keep their arrival order inside a patch, and ODL applies them in that order.
 * - ODL applies a patch atomically and stops at the first failing edit: when the answer names
 *   the failing edit, only that caller gets its error, and the others (none of which was
 *   applied) are sent again as a new patch, in order. An answer that names no edit (a failed
 *   commit, a refused document) splits the batch in two halves sent one after the other,
 *   until the culprit stands alone; a batch of one is sent as the single write itself.
 * - Transient failures (5xx, timeouts, dropped connections) are retried by the client's retry
 *   policy with the whole patch.
 * - Every caller's abort signal cuts its own edit: an edit aborted before its batch is sent
 *   leaves the batch; a batch in flight is cut off once every one of its callers aborted, and
 *   no edit of an aborted caller is sent again.
 * - A server that refuses the YANG-Patch media type or method (415, 405) is remembered: every
 *   write goes single from then on.
 * - An edit can follow others (`after`: the promises of writes it needs applied first, an
 *   instance before its interface). It joins the open batch behind them when they are in it,
 *   so that one patch carries both in order; otherwise it waits until they were answered.
 *   When one of them fails (its own error, its caller gone, a patch that failed whole), the
 *   edit is not sent and rejects with PrerequisiteNotWritten, and so do the edits behind it:
 *   ODL never receives an edit without what it was to follow.
 */
import type { Logger } from '../common/log.js';
import { PrerequisiteNotWritten, RestconfError, type RestconfErrorDetail } from './errors.js';
import { parsePatchStatus, type PatchEdit } from './yang-patch.js';

export interface BatchOptions {
  /** A batch is sent once it holds this many edits (≥ 2; 1 turns batching off). */
  maxEdits: number;
  /** …or this long after its first edit arrived. */
  windowMs: number;
}

/** One YANG-Patch request, for metrics. */
export interface BatchSample {
  /** Edits in the patch. */
  edits: number;
  /** `ok`: all applied; `edit-failed`: ODL named a failing edit; `failed`: the patch failed as a whole; `refused`: the server does not take YANG Patch. */
  result: 'ok' | 'edit-failed' | 'failed' | 'refused';
}

/** An edit's outcome inside a patch ODL answered. */
export type EditOutcome =
  { ok: true } | { ok: false; errors: RestconfErrorDetail[]; attempts: number; mayHaveApplied: boolean };

/** One write as the batcher sees it. */
export interface BatchedWrite<T> {
  edit: Omit<PatchEdit, 'editId'>;
  /** The caller's result for this outcome (throws the RestconfError a single write would). */
  settle(outcome: EditOutcome): T;
  /** The same write as its own request. */
  single(): Promise<T>;
}

/** What the batcher needs from the client. */
export interface PatchTransport {
  /**
   * Sends a YANG-Patch document with the client's retry policy; returns the final answer, or
   * throws the RestconfError a failed request gets (retries exhausted, aborted, closed).
   */
  send(
    body: string,
    signal: AbortSignal,
  ): Promise<{ status: number; body: string; attempts: number; mayHaveApplied: boolean }>;
}

/** One edit as the batcher holds it (a class: every edit has the same shape). */
class Pending {
  settled = false;
  /** Known as soon as it is decided (before its caller hears): applied, or not (and never will be). */
  result: 'applied' | 'failed' | undefined = undefined;
  /** What `submit` returned for it. */
  promise: Promise<unknown> | undefined = undefined;
  /** While its batch is in flight: what its caller aborting means to that batch. */
  inFlight: (() => void) | undefined = undefined;
  resolve: (value: unknown) => void = () => undefined;
  reject: (err: unknown) => void = () => undefined;

  constructor(
    readonly write: BatchedWrite<unknown>,
    readonly signal: AbortSignal | undefined,
    /** The open batch it joined (`WriteBatcher.batchSeq`). */
    readonly batch: number,
    /** Edits of this batcher it must follow (same patch, earlier; or applied before). */
    readonly after: readonly Pending[] | undefined,
  ) {}
}

/** Resolves once every one of `writes` succeeded; rejects with PrerequisiteNotWritten when one did not. */
export async function afterWrites(writes: readonly Promise<unknown>[]): Promise<void> {
  const settled = await Promise.allSettled(writes);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed)
    throw new PrerequisiteNotWritten(
      `a write it was to follow failed: ${failed.reason instanceof Error ? failed.reason.message : String(failed.reason)}`,
    );
}

export class WriteBatcher {
  private open: Pending[] = [];
  /** Numbers the open batch, so that an edit can tell whether what it follows is in it. */
  private batchSeq = 0;
  private timer: NodeJS.Timeout | undefined;
  private refused = false;
  /**
   * The edit behind each promise `submit` returned, for `after`, until it settles (a write
   * settled since is waited for as any other promise would be: it is answered already).
   */
  private readonly edits = new Map<Promise<unknown>, Pending>();
  /**
   * The edits not settled yet by their caller's signal, with the one abort listener each
   * signal has, however many edits share it (a reconcile's signal is often a whole term's):
   * add/removeEventListener per edit were a good part of a batched write.
   */
  private readonly bySignal = new Map<AbortSignal, { edits: Set<Pending>; listener: () => void }>();

  constructor(
    private readonly options: BatchOptions,
    private readonly transport: PatchTransport,
    private readonly document: (edits: readonly PatchEdit[]) => string,
    private readonly logger: Logger,
    private readonly onBatch?: (sample: BatchSample) => void,
  ) {}

  /** Whether the server refused YANG Patch (every write goes single since). */
  get patchRefused(): boolean {
    return this.refused;
  }

  /**
   * `after`: writes `write` must follow (promises this batcher or the client returned); see the
   * class comment.
   */
  submit<T>(
    write: BatchedWrite<T>,
    signal?: AbortSignal,
    after: readonly Promise<unknown>[] = [],
  ): Promise<T> {
    if (this.refused || signal?.aborted)
      return after.length > 0 ? afterWrites(after).then(() => write.single()) : write.single();
    let deps: Pending[] | undefined;
    const waits: Promise<unknown>[] = [];
    for (const promise of after) {
      const dep = this.edits.get(promise);
      if (dep?.result === 'applied') continue;
      if (dep?.result === 'failed')
        return Promise.reject(new PrerequisiteNotWritten('a write it was to follow failed'));
      // In the open batch: this edit goes behind it, in the same patch.
      if (dep && !dep.settled && dep.batch === this.batchSeq) (deps ??= []).push(dep);
      else waits.push(promise);
    }
    // Sent already (or not one of ours): its answer first, then this edit, in a later patch.
    if (waits.length > 0)
      return afterWrites(waits).then(() =>
        this.submit(
          write,
          signal,
          after.filter((p) => this.edits.has(p)),
        ),
      );
    const pending = new Pending(write as BatchedWrite<unknown>, signal, this.batchSeq, deps);
    const promise = new Promise<T>((resolve, reject) => {
      pending.resolve = resolve as (value: unknown) => void;
      pending.reject = reject;
    });
    pending.promise = promise;
    this.edits.set(promise, pending);
    if (signal) this.watch(signal, pending);
    this.open.push(pending);
    if (this.open.length >= this.options.maxEdits) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.options.windowMs);
    return promise;
  }

  /** Hears `signal` abort for `pending` until it settles. */
  private watch(signal: AbortSignal, pending: Pending): void {
    let watched = this.bySignal.get(signal);
    if (!watched) {
      const edits = new Set<Pending>();
      const listener = () => {
        this.bySignal.delete(signal);
        for (const p of [...edits]) this.aborted(p);
      };
      watched = { edits, listener };
      this.bySignal.set(signal, watched);
      signal.addEventListener('abort', listener, { once: true });
    }
    watched.edits.add(pending);
  }

  private unwatch(signal: AbortSignal, pending: Pending): void {
    const watched = this.bySignal.get(signal);
    if (!watched?.edits.delete(pending) || watched.edits.size > 0) return;
    this.bySignal.delete(signal);
    signal.removeEventListener('abort', watched.listener);
  }

  /**
   * Its caller aborted. Waiting for its batch: it leaves the batch, and the single write (which
   * checks the signal first) rejects it as a single write would. In a batch in flight: the
   * batch is told.
   */
  private aborted(pending: Pending): void {
    pending.inFlight?.();
    const at = this.open.indexOf(pending);
    if (at === -1) return;
    this.open.splice(at, 1);
    // The single write rejects at once (its signal fired): never applied.
    pending.result = 'failed';
    void this.finish(pending, () => pending.write.single());
  }

  /** Sends the open batch now (also on close: its requests then fail as closed). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.open;
    this.open = [];
    this.batchSeq += 1;
    if (batch.length > 0) void this.run(batch);
  }

  /** Settles `pending` with `outcome` (once); resolves when its caller has been told. */
  private finish(pending: Pending, outcome: () => unknown): Promise<void> {
    if (pending.settled) return Promise.resolve();
    pending.settled = true;
    if (pending.promise) this.edits.delete(pending.promise);
    if (pending.signal) this.unwatch(pending.signal, pending);
    const ok = (value: unknown) => {
      pending.result ??= 'applied';
      pending.resolve(value);
    };
    const failed = (err: unknown) => {
      pending.result = 'failed';
      pending.reject(err);
    };
    // Most outcomes are known at once (a patch's answer): told without a promise of their own.
    let value: unknown;
    try {
      value = outcome();
    } catch (err) {
      failed(err);
      return Promise.resolve();
    }
    if (value instanceof Promise) return value.then(ok, failed);
    ok(value);
    return Promise.resolve();
  }

  /** Tells `p` it was not sent: something it was to follow was not applied. */
  private withdraw(p: Pending): Promise<void> {
    p.result = 'failed';
    return this.finish(p, () =>
      Promise.reject(new PrerequisiteNotWritten('a write it was to follow was not applied')),
    );
  }

  /**
   * Each edit as its own single write: all at once, except that an edit that follows another
   * of them waits for that one's answer (its write must not overtake it, and is not sent when
   * that one failed). Resolves once every edit was answered, so that a bisection's second half
   * goes after its first.
   */
  private async singles(live: readonly Pending[]): Promise<void> {
    const answers = new Map<Pending, Promise<void>>();
    for (const p of live) {
      const first = (p.after ?? []).flatMap((d) => answers.get(d) ?? []);
      answers.set(
        p,
        first.length === 0
          ? this.finish(p, () => p.write.single())
          : Promise.all(first).then(() =>
              p.after!.every((d) => d.result === 'applied')
                ? this.finish(p, () => p.write.single())
                : this.withdraw(p),
            ),
      );
    }
    await Promise.all(answers.values());
  }

  /** Sends `batch` as one patch (a lone edit as its single write) and settles every edit. */
  private async run(batch: Pending[]): Promise<void> {
    const live: Pending[] = [];
    // What goes in this patch so far: an edit may follow those (they come first in it).
    const sent = new Set<Pending>();
    for (const p of batch) {
      if (p.settled) continue;
      if (p.signal?.aborted) {
        p.result = 'failed';
        void this.finish(p, () => p.write.single());
      } else if (p.after?.some((d) => d.result !== 'applied' && !sent.has(d))) this.withdraw(p);
      else {
        live.push(p);
        sent.add(p);
      }
    }
    if (live.length === 0) return;
    if (live.length === 1 || this.refused) {
      await this.singles(live);
      return;
    }

    const edits = live.map((p, i) => ({ ...p.write.edit, editId: String(i + 1) }));
    // Cut the request off only once every caller has gone.
    const cut = new AbortController();
    const stillWanted = () => {
      if (live.every((p) => p.signal?.aborted === true))
        cut.abort(live[0]!.signal!.reason ?? new Error('every writer of the batch aborted'));
    };
    for (const p of live) p.inFlight = stillWanted;
    let answer: Awaited<ReturnType<PatchTransport['send']>>;
    try {
      answer = await this.transport.send(this.document(edits), cut.signal);
    } catch (err) {
      this.onBatch?.({ edits: live.length, result: 'failed' });
      for (const p of live) {
        p.result = 'failed';
        void this.finish(p, () => Promise.reject(err));
      }
      return;
    } finally {
      for (const p of live) p.inFlight = undefined;
    }

    if (answer.status === 415 || answer.status === 405) {
      this.onBatch?.({ edits: live.length, result: 'refused' });
      if (!this.refused) {
        this.refused = true;
        this.logger.warn('ODL refuses YANG Patch; writing one request per edit from now on', {
          status: answer.status,
        });
      }
      await this.singles(live);
      return;
    }
    const status = answer.status === 200 ? parsePatchStatus(answer.body) : undefined;
    if (status?.ok) {
      this.onBatch?.({ edits: live.length, result: 'ok' });
      for (const p of live) {
        p.result = 'applied';
        void this.finish(p, () => p.write.settle({ ok: true }));
      }
      return;
    }
    const failed = status
      ? edits.findIndex((e) => {
          const s = status.edits.get(e.editId);
          return s !== undefined && !s.ok;
        })
      : -1;
    if (status && failed !== -1) {
      this.onBatch?.({ edits: live.length, result: 'edit-failed' });
      const culprit = live[failed]!;
      const outcome = status.edits.get(edits[failed]!.editId) as Extract<EditOutcome, { ok: false }>;
      culprit.result = 'failed';
      void this.finish(culprit, () =>
        culprit.write.settle({
          ok: false,
          errors: outcome.errors,
          attempts: answer.attempts,
          mayHaveApplied: answer.mayHaveApplied,
        }),
      );
      // Nothing of this patch was applied: the others go again, in their order (those that
      // were to follow the culprit are withdrawn).
      await this.run(live.filter((p) => p !== culprit));
      return;
    }
    // The patch failed as a whole and names no edit: halve it until the culprit is alone.
    this.onBatch?.({ edits: live.length, result: 'failed' });
    const half = Math.ceil(live.length / 2);
    await this.run(live.slice(0, half));
    await this.run(live.slice(half));
  }
}

/** The RestconfError a single write answered with `errors` would have thrown. */
export function editError(
  method: string,
  url: string,
  outcome: Extract<EditOutcome, { ok: false }>,
  statusOf: (tag: string | undefined) => number,
): RestconfError {
  return new RestconfError({
    method,
    url,
    status: statusOf(outcome.errors[0]?.errorTag),
    details: outcome.errors,
    retryable: false,
    attempts: outcome.attempts,
    mayHaveApplied: outcome.mayHaveApplied,
  });
}
