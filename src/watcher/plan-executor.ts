/**
 * Carries out a key's plan (src/netvirt/plan.ts) with the object writer: absent entries first,
 * dependants before what they need (the table's delete order), then present entries,
 * prerequisites first (its create order); `keep` entries are left as they are. The first name
 * odlcoe needs that a foreign object holds stops the key and is reported; an entry the order
 * does not allow yet is waited for (the core gets what it awaits made or removed, and wakes
 * the key when that changes), and the rest of the plan still runs.
 *
 * Instances (`grace` plans) are deleted only after their grace period, and only when they are
 * still unneeded after the entry was re-read (the plan is made again right before the delete).
 */
import type { Ref } from '../netvirt/kind.js';
import { refKey } from '../netvirt/kind.js';
import type { EntryPlan, KeyPlan } from '../netvirt/plan.js';
import type { BackendContext } from './backend.js';
import type { GracePeriods } from './grace-period.js';
import type { ObjectResult, ObjectWriter } from './object-writer.js';
import type { ReconcileOutcome, WriteGuard } from './reconcile.js';
import { reportCollision, reportUntranslatable } from './reports.js';

export interface PlanContext extends Pick<BackendContext, 'settings' | 'metrics' | 'logger' | 'events'> {
  writer: ObjectWriter;
  /** Kind order (the backend's table). */
  order: { createOrder: readonly string[]; deleteOrder: readonly string[] };
  grace: GracePeriods;
}

/** How soon to look again at a delete held back by a write in flight (one write). */
const ATTACH_RETRY_MS = 100;

export interface PlanRun {
  outcome: ReconcileOutcome;
  /** What happened to each entry the plan named, by `kind/name` (keep entries: none). */
  results: Map<string, ObjectResult>;
}

function ordered(plan: KeyPlan, order: PlanContext['order']): EntryPlan[] {
  const rank = (list: readonly string[], kind: string) => {
    const i = list.indexOf(kind);
    return i < 0 ? list.length : i;
  };
  const absent = plan.entries.filter((e) => e.want === 'absent');
  const present = plan.entries.filter((e) => e.want === 'present');
  // Stable sorts: entries of one kind keep the plan's order (e.g. older uids first).
  absent.sort((a, b) => rank(order.deleteOrder, a.kind) - rank(order.deleteOrder, b.kind));
  present.sort((a, b) => rank(order.createOrder, a.kind) - rank(order.createOrder, b.kind));
  return [...absent, ...present];
}

/**
 * The run of a plan that has nothing to do, decided from the cache alone (no I/O): no facts to
 * act on or report, no entry that is only kept, and every entry already as the plan wants it
 * (`ObjectWriter.settle`), nor an instance retiring. It leaves what running the plan would
 * have left (object states, the grace clock) and returns that run; undefined (nothing
 * recorded) when the plan has anything to do or report. runPlan begins with it, and the
 * watcher's pass over every key (a term's start, a resync) settles in-sync keys with it
 * without queueing them: one verdict for both, so they cannot disagree.
 */
export function settleInMemory(c: PlanContext, plan: KeyPlan): PlanRun | undefined {
  if (plan.facts.length > 0) return undefined;
  if (plan.entries.length > 0 && plan.entries.every((e) => e.want === 'keep')) return undefined;
  const settled = plan.entries.filter((e) => e.want !== 'keep');
  for (const e of settled)
    if (!c.writer.inSync(e.kind, e.name, e.want === 'present' ? e.desired : undefined)) return undefined;
  // Nothing of ours is to go, so an instance is needed: as runPlan's grace check records.
  if (plan.grace) c.grace.needed(plan.key);
  const results = new Map<string, ObjectResult>();
  for (const e of settled)
    results.set(refKey(e), c.writer.settle(e.kind, e.name, e.want === 'present' ? e.desired : undefined));
  return { outcome: { result: 'synced' }, results };
}

export async function runPlan(
  c: PlanContext,
  plan: KeyPlan,
  guard: WriteGuard,
  replan: () => KeyPlan,
): Promise<PlanRun> {
  const inMemory = settleInMemory(c, plan);
  if (inMemory) return inMemory;
  const results = new Map<string, ObjectResult>();
  const done = (outcome: ReconcileOutcome): PlanRun => ({ outcome, results });
  const untranslatable = plan.facts.find((f) => f.fact === 'untranslatable');
  if (untranslatable?.fact === 'untranslatable' && plan.involved)
    return done(reportUntranslatable(c, untranslatable.message, plan.involved));

  if (plan.grace) {
    const retiring = plan.entries.some((e) => e.want === 'absent' && c.writer.owns(e.kind, e.name));
    if (!retiring) c.grace.needed(plan.key);
    else {
      const remaining = c.grace.remaining(plan.key);
      if (remaining > 0) return done({ result: 'grace', retryAfterMs: remaining });
    }
  }

  const awaited: Ref[] = [];
  let foreignBlock: string | undefined;
  let retryShort = false;
  // Made again right before a delete: the cluster may have changed while ODL answered.
  const stillUnneeded = () => replan().entries.every((e) => e.want === 'absent');
  /** Records an entry's result; a collision ends the run (its report). */
  const take = (entry: EntryPlan, result: ObjectResult): PlanRun | undefined => {
    results.set(refKey(entry), result);
    if (result.state === 'foreign' && result.wanted && plan.involved)
      return done(reportCollision(c, entry.kind, entry.name, result.reason, plan.involved));
    if (result.state !== 'blocked') return undefined;
    if (result.foreign) foreignBlock ??= `${entry.kind} ${entry.name}: ${result.reason}`;
    else {
      if (result.awaits.length === 0) retryShort = true;
      awaited.push(...result.awaits);
    }
    return undefined;
  };
  const entries = ordered(plan, c.order);
  let next = 0;
  // Deletes one after another, dependants first.
  for (; next < entries.length && entries[next]!.want === 'absent'; next += 1) {
    const entry = entries[next]!;
    const result = await c.writer.converge(entry.kind, entry.name, undefined, guard, {
      deleteAllowed: true,
      ...(plan.grace ? { stillUnneeded } : {}),
    });
    const ended = take(entry, result);
    if (ended) return ended;
  }
  // Then every present entry at once, in create order: a create that needs an entry created
  // before it follows that create (the writer gives it `after`), so that a pod's three
  // interfaces share one YANG Patch rather than waiting for each other's answers. Every run is
  // waited for before any is looked at: none is left running behind a throw or a collision.
  const present = entries.slice(next);
  const answered = await Promise.allSettled(
    present.map((e) =>
      c.writer.converge(e.kind, e.name, e.want === 'present' ? e.desired : undefined, guard),
    ),
  );
  for (const [i, entry] of present.entries()) {
    const a = answered[i]!;
    if (a.status === 'rejected') throw a.reason;
    const ended = take(entry, a.value);
    if (ended) return ended;
  }
  if (plan.grace && [...results.values()].some((r) => r.state === 'written' && r.op === 'delete'))
    c.grace.needed(plan.key);

  if (foreignBlock) {
    c.logger.warn('kept or not written: entries odlcoe does not own are in the way', {
      key: plan.key,
      detail: foreignBlock,
    });
    return done({ result: 'foreign', retryAfterMs: c.settings.slowRetryMs });
  }
  if (awaited.length > 0 || retryShort) {
    c.logger.debug('waiting for other ODL entries', {
      key: plan.key,
      awaits: awaited.map(refKey).slice(0, 5),
    });
    return done({
      result: 'waiting',
      retryAfterMs:
        awaited.length > 0 ? c.settings.waitRetryMs : Math.min(ATTACH_RETRY_MS, c.settings.waitRetryMs),
      on: awaited,
    });
  }
  const partly = plan.facts.find((f) => f.fact === 'partly-deferred');
  if (partly?.fact === 'partly-deferred')
    c.logger.debug('part of the key deferred', { key: plan.key, ...partly.deferral });
  const refused = plan.facts.find((f) => f.fact === 'refused');
  if (refused?.fact === 'refused' && plan.involved)
    return done(reportUntranslatable(c, refused.message, plan.involved));
  const deferred = plan.facts.find((f) => f.fact === 'deferred');
  if (deferred?.fact === 'deferred') {
    // Desired state unknown (node or namespace not known yet): what exists is kept. The event
    // that resolves it enqueues this key again.
    c.logger.debug('plan deferred', { key: plan.key, ...deferred.deferral });
    return done({ result: 'deferred' });
  }
  if (plan.entries.length > 0 && plan.entries.every((e) => e.want === 'keep'))
    return done({ result: 'deferred' });
  return done({ result: 'synced' });
}
