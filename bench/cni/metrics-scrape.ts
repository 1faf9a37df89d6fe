/**
 * The agent's step and request histograms, read from its /metrics endpoint the way
 * Prometheus would, so the bench's breakdown is exactly what an operator sees.
 */

/** One histogram series: cumulative bucket counts by upper bound, sum and count. */
export interface Series {
  buckets: Map<number, number>;
  sum: number;
  count: number;
}

/** Series by their label set, e.g. `command="ADD",step="ipam"`. */
export type Histograms = Map<string, Series>;

/** Fetches /metrics and keeps the histogram `name` (all its series). */
export async function scrapeHistogram(port: number, name: string): Promise<Histograms> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  if (!res.ok) throw new Error(`GET /metrics: HTTP ${res.status}`);
  return parseHistogram(await res.text(), name);
}

export function parseHistogram(text: string, name: string): Histograms {
  const out: Histograms = new Map();
  const series = (labels: string): Series => {
    let s = out.get(labels);
    if (!s) {
      s = { buckets: new Map(), sum: 0, count: 0 };
      out.set(labels, s);
    }
    return s;
  };
  const line = new RegExp(`^${name}_(bucket|sum|count)\\{([^}]*)\\} (\\S+)$`);
  for (const l of text.split('\n')) {
    const m = line.exec(l);
    if (!m) continue;
    const [, kind, rawLabels = '', value = ''] = m;
    const labels = rawLabels
      .split(',')
      .filter((kv) => !kv.startsWith('le='))
      .join(',');
    const s = series(labels);
    if (kind === 'sum') s.sum = Number(value);
    else if (kind === 'count') s.count = Number(value);
    else {
      const le = /le="([^"]+)"/.exec(rawLabels)?.[1] ?? '+Inf';
      s.buckets.set(le === '+Inf' ? Infinity : Number(le), Number(value));
    }
  }
  return out;
}

/** What happened between two scrapes. */
export function diff(after: Histograms, before: Histograms): Histograms {
  const out: Histograms = new Map();
  for (const [labels, a] of after) {
    const b = before.get(labels);
    const buckets = new Map<number, number>();
    for (const [le, n] of a.buckets) buckets.set(le, n - (b?.buckets.get(le) ?? 0));
    const count = a.count - (b?.count ?? 0);
    if (count > 0) out.set(labels, { buckets, sum: a.sum - (b?.sum ?? 0), count });
  }
  return out;
}

/** Prometheus' histogram_quantile: linear interpolation inside the bucket holding the rank. */
export function quantile(s: Series, q: number): number {
  const bounds = [...s.buckets.keys()].sort((x, y) => x - y);
  const rank = q * s.count;
  let prevBound = 0;
  let prevCount = 0;
  for (const bound of bounds) {
    const n = s.buckets.get(bound) ?? 0;
    if (n >= rank) {
      if (bound === Infinity) return prevBound;
      const inBucket = n - prevCount;
      return inBucket === 0 ? bound : prevBound + ((bound - prevBound) * (rank - prevCount)) / inBucket;
    }
    prevBound = bound;
    prevCount = n;
  }
  return prevBound;
}

/** The value of one label in a series key. */
export function label(key: string, name: string): string | undefined {
  return new RegExp(`(?:^|,)${name}="([^"]*)"`).exec(key)?.[1];
}
