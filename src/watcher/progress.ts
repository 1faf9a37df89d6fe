/**
 * Convergence progress: while a pass (the start-up of a leader term, a resync) has keys to
 * settle, a structured log line every interval says how far it is (keys of the pass, settled,
 * pending; the ODL objects desired and applied as of each key's last reconcile), at what rate
 * keys settle and when they will all have at that rate; one line when the pass converged. The
 * same figures are gauges (names in common/convergence.ts, which odlcoectl reads).
 */
import { performance } from 'node:perf_hooks';
import { CONVERGENCE_METRICS, type ConvergencePass } from '../common/convergence.js';
import type { Logger } from '../common/log.js';
import { Gauge, metric, type Registry } from '../common/metrics.js';

/** The keys of a term: how many have settled since it began, how many are pending now. */
export interface ProgressSource {
  settled(): number;
  pending(): number;
}

export interface ProgressOptions {
  registry: Registry;
  logger: Logger;
  /** Between two progress lines; 0: no progress lines (the pass's end is still logged). */
  intervalMs: number;
  /** ODL objects the cluster needs and those ODL holds as needed (WatcherMetrics' totals). */
  objects(): { desired: number; applied: number };
  now?: () => number;
}

interface Pass {
  name: ConvergencePass;
  source: ProgressSource;
  startedAt: number;
  settledAtStart: number;
  /** The last progress line: when, and how many keys had settled then. */
  mark: { at: number; settled: number };
  ratePerSecond: number;
  timer: NodeJS.Timeout | undefined;
}

export interface ProgressLine {
  pass: ConvergencePass;
  keys: number;
  keysSettled: number;
  keysPending: number;
  objectsDesired: number;
  objectsApplied: number;
  objectsPending: number;
  /** Keys settled per second since the last line (the whole pass at its end). */
  ratePerSecond: number;
  /** null: nothing settled in the last interval. */
  etaSeconds: number | null;
  elapsedSeconds: number;
}

export class ConvergenceProgress {
  private pass: Pass | undefined;
  /** The last pass, after it ended (the gauges keep showing it). */
  private last: ProgressLine | undefined;
  private readonly now: () => number;

  constructor(private readonly options: ProgressOptions) {
    this.now = options.now ?? (() => performance.now());
    const figures = () => (this.pass ? this.line(this.pass) : this.last);
    const gauge = (name: string, help: string, labelNames: string[], collect: (g: Gauge) => void) =>
      metric(
        options.registry,
        name,
        () =>
          new Gauge({
            name,
            help,
            labelNames,
            registers: [],
            collect() {
              collect(this);
            },
          }),
      );
    gauge(
      CONVERGENCE_METRICS.keys,
      'Keys of the current (or last) convergence pass, by state',
      ['state'],
      (g) => {
        const f = figures();
        g.set({ state: 'total' }, f?.keys ?? 0);
        g.set({ state: 'settled' }, f?.keysSettled ?? 0);
        g.set({ state: 'pending' }, f?.keysPending ?? 0);
      },
    );
    gauge(CONVERGENCE_METRICS.rate, 'Keys settled per second over the last progress interval', [], (g) =>
      g.set(figures()?.ratePerSecond ?? 0),
    );
    gauge(
      CONVERGENCE_METRICS.eta,
      'Seconds until every pending key settles at that rate (-1: unknown)',
      [],
      (g) => g.set(this.pass ? (this.line(this.pass).etaSeconds ?? -1) : 0),
    );
    gauge(CONVERGENCE_METRICS.converging, '1 while a convergence pass runs, by pass', ['pass'], (g) => {
      for (const p of ['start-up', 'resync'] as const) g.set({ pass: p }, this.pass?.name === p ? 1 : 0);
    });
    gauge(
      CONVERGENCE_METRICS.elapsed,
      'Seconds since the current (or last) convergence pass began',
      [],
      (g) => g.set(figures()?.elapsedSeconds ?? 0),
    );
  }

  /**
   * A pass begins over `source` (a term's keys). A resync while a pass of the same term still
   * runs joins it: its keys are pending keys of that pass.
   */
  begin(name: ConvergencePass, source: ProgressSource): void {
    if (this.pass?.source === source) return;
    this.stop();
    const at = this.now();
    const settled = source.settled();
    const pass: Pass = {
      name,
      source,
      startedAt: at,
      settledAtStart: settled,
      mark: { at, settled },
      ratePerSecond: 0,
      timer: undefined,
    };
    if (this.options.intervalMs > 0) {
      pass.timer = setInterval(() => this.tick(pass), this.options.intervalMs);
      pass.timer.unref();
    }
    this.pass = pass;
  }

  /** Every key of the pass settled: one line, and the gauges show the pass as done. */
  converged(source: ProgressSource): void {
    const pass = this.pass;
    if (pass?.source !== source) return;
    this.stop();
    const line = this.line(pass);
    const seconds = line.elapsedSeconds;
    line.ratePerSecond = round(seconds > 0 ? line.keysSettled / seconds : line.keysSettled);
    line.etaSeconds = 0;
    this.last = line;
    this.options.logger.info('converged', { ...line });
  }

  /** The pass ends without converging (the term ended): no line. */
  stop(): void {
    if (this.pass?.timer) clearInterval(this.pass.timer);
    if (this.pass) this.last = this.line(this.pass);
    this.pass = undefined;
  }

  /** The progress line of the running pass (also what a tick logs). */
  tick(pass = this.pass): ProgressLine | undefined {
    if (!pass || pass !== this.pass) return undefined;
    const at = this.now();
    const settled = pass.source.settled();
    const seconds = (at - pass.mark.at) / 1000;
    if (seconds > 0) pass.ratePerSecond = (settled - pass.mark.settled) / seconds;
    pass.mark = { at, settled };
    const line = this.line(pass);
    this.options.logger.info('convergence progress', { ...line });
    return line;
  }

  private line(pass: Pass): ProgressLine {
    const settled = pass.source.settled() - pass.settledAtStart;
    const pending = pass.source.pending();
    const objects = this.options.objects();
    const rate = pass.ratePerSecond;
    return {
      pass: pass.name,
      keys: settled + pending,
      keysSettled: settled,
      keysPending: pending,
      objectsDesired: objects.desired,
      objectsApplied: objects.applied,
      objectsPending: Math.max(0, objects.desired - objects.applied),
      ratePerSecond: round(rate),
      etaSeconds: pending === 0 ? 0 : rate > 0 ? round(pending / rate) : null,
      elapsedSeconds: round((this.now() - pass.startedAt) / 1000),
    };
  }
}

const round = (n: number) => Math.round(n * 10) / 10;
