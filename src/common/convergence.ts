/**
 * The watcher's convergence progress as its metrics endpoint exports it: the metric names the
 * watcher sets (src/watcher/progress.ts) and the reader odlcoectl uses on a scrape, so both
 * sides agree on one spelling.
 */
export const CONVERGENCE_METRICS = {
  /** Gauge, `state`: `total` (keys of the pass), `settled`, `pending`. */
  keys: 'odlcoe_watcher_convergence_keys',
  /** Gauge: keys settled per second over the last progress interval. */
  rate: 'odlcoe_watcher_convergence_rate',
  /** Gauge: seconds until every pending key settles at that rate; -1 when unknown. */
  eta: 'odlcoe_watcher_convergence_eta_seconds',
  /** Gauge, `pass`: 1 while a pass (`start-up`, `resync`) converges, else 0. */
  converging: 'odlcoe_watcher_converging',
  /** Gauge: seconds since the current (or last) pass began. */
  elapsed: 'odlcoe_watcher_convergence_elapsed_seconds',
} as const;

export type ConvergencePass = 'start-up' | 'resync';

export interface ConvergenceFigures {
  /** The pass running, or null when the last one converged (or none ran yet). */
  pass: ConvergencePass | null;
  total: number;
  settled: number;
  pending: number;
  ratePerSecond: number;
  /** null: no rate yet. */
  etaSeconds: number | null;
  elapsedSeconds: number;
}

/**
 * Reads the figures out of a Prometheus text exposition; undefined when the text holds none
 * (not a watcher, or one that has not led yet).
 */
export function readConvergence(exposition: string): ConvergenceFigures | undefined {
  const samples = new Map<string, number>();
  for (const line of exposition.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-z_]+)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (m) samples.set(`${m[1]}${m[2] ?? ''}`, Number(m[3]));
  }
  const keys = (state: string) => samples.get(`${CONVERGENCE_METRICS.keys}{state="${state}"}`);
  const total = keys('total');
  if (total === undefined) return undefined;
  const pass = (['start-up', 'resync'] as const).find(
    (p) => samples.get(`${CONVERGENCE_METRICS.converging}{pass="${p}"}`) === 1,
  );
  const eta = samples.get(CONVERGENCE_METRICS.eta) ?? -1;
  return {
    pass: pass ?? null,
    total,
    settled: keys('settled') ?? 0,
    pending: keys('pending') ?? 0,
    ratePerSecond: samples.get(CONVERGENCE_METRICS.rate) ?? 0,
    etaSeconds: eta < 0 ? null : eta,
    elapsedSeconds: samples.get(CONVERGENCE_METRICS.elapsed) ?? 0,
  };
}
