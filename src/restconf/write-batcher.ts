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
 */
import type { Logger } from '../common/log.js';
import { RestconfError, type RestconfErrorDetail } from './errors.js';
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

interface Pending {
  write: BatchedWrite<unknown>;
  signal: AbortSignal | undefined;
  resolve(value: unknown): void;
  reject(err: unknown): void;
  settled: boolean;
  onAbort?: () => void;
  /** While its batch is in flight: what its caller aborting means to that batch. */
  inFlight?: () => void;
}

export class WriteBatcher {
  private open: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private refused = false;

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

  submit<T>(write: BatchedWrite<T>, signal?: AbortSignal): Promise<T> {
    if (this.refused || signal?.aborted) return write.single();
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = {
        write: write as BatchedWrite<unknown>,
        signal,
        resolve: resolve as (value: unknown) => void,
        reject,
        settled: false,
      };
      if (signal) {
        // Aborted while waiting for its batch: it leaves the batch, and the single write
        // (which checks the signal first) rejects it as a single write would. Aborted while
        // its batch is in flight: the batch is told. One listener per edit for both, from
        // here until it settles: add/removeEventListener were a good part of a batched write.
        pending.onAbort = () => {
          pending.inFlight?.();
          const at = this.open.indexOf(pending);
          if (at === -1) return;
          this.open.splice(at, 1);
          this.finish(pending, () => write.single());
        };
        signal.addEventListener('abort', pending.onAbort, { once: true });
      }
      this.open.push(pending);
      if (this.open.length >= this.options.maxEdits) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.options.windowMs);
    });
  }

  /** Sends the open batch now (also on close: its requests then fail as closed). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.open;
    this.open = [];
    if (batch.length > 0) void this.run(batch);
  }

  private finish(pending: Pending, outcome: () => unknown): void {
    if (pending.settled) return;
    pending.settled = true;
    if (pending.onAbort) pending.signal?.removeEventListener('abort', pending.onAbort);
    Promise.resolve().then(outcome).then(pending.resolve, pending.reject);
  }

  /** Sends `batch` as one patch (a lone edit as its single write) and settles every edit. */
  private async run(batch: Pending[]): Promise<void> {
    const live: Pending[] = [];
    for (const p of batch) {
      if (p.settled) continue;
      if (p.signal?.aborted) this.finish(p, () => p.write.single());
      else live.push(p);
    }
    if (live.length === 0) return;
    if (live.length === 1 || this.refused) {
      for (const p of live) this.finish(p, () => p.write.single());
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
      for (const p of live) this.finish(p, () => Promise.reject(err));
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
      for (const p of live) this.finish(p, () => p.write.single());
      return;
    }
    const status = answer.status === 200 ? parsePatchStatus(answer.body) : undefined;
    if (status?.ok) {
      this.onBatch?.({ edits: live.length, result: 'ok' });
      for (const p of live) this.finish(p, () => p.write.settle({ ok: true }));
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
      this.finish(culprit, () =>
        culprit.write.settle({
          ok: false,
          errors: outcome.errors,
          attempts: answer.attempts,
          mayHaveApplied: answer.mayHaveApplied,
        }),
      );
      // Nothing of this patch was applied: the others go again, in their order.
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
