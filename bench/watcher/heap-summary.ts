/**
 * Summarises a V8 heap snapshot of the watcher (the benchmark writes one with
 * `--heap-snapshot <file>`): own size by constructor, and the dominator tree down to the
 * structures that hold at least `--min` MB, each named by the field it hangs from
 * (`EntryStore.dependantsOf`, `Map.table`, ...), so that "rest" has names.
 *
 *   node --max-old-space-size=4096 --import tsx bench/watcher/heap-summary.ts <file.heapsnapshot>
 *     [--min 1] [--depth 14] [--top 25]
 */
import { parseArgs } from 'node:util';
import { dominators, edgeLabel, readHeapSnapshot, type HeapSnapshot } from '../common/heap-snapshot.js';
import { MIB } from '../common/memory.js';

const { values, positionals } = parseArgs({
  options: {
    min: { type: 'string', default: '1' },
    depth: { type: 'string', default: '14' },
    top: { type: 'string', default: '25' },
  },
  allowPositionals: true,
  strict: true,
});
const file = positionals[0];
const minMb = Number(values.min);
const maxDepth = Number(values.depth);
const top = Number(values.top);
if (file === undefined || positionals.length !== 1)
  throw new Error('usage: heap-summary.ts <file.heapsnapshot>');
if (!(minMb > 0) || !Number.isInteger(maxDepth) || !Number.isInteger(top))
  throw new Error('--min must be a positive number of MB, --depth and --top integers');

const started = Date.now();
const s = readHeapSnapshot(file);
const { idom, retained } = dominators(s);
const mb = (bytes: number) => `${(bytes / MIB).toFixed(1)} MB`;

function nodeLabel(snap: HeapSnapshot, v: number): string {
  const type = snap.nodeTypes[snap.type[v]!] ?? '?';
  const name = snap.strings[snap.name[v]!] ?? '';
  if (type === 'object' || type === 'native') return name;
  if (type === 'string' || type === 'concatenated string' || type === 'sliced string') return '(string)';
  if (type === 'closure') return `${name || '(anonymous)'}()`;
  return `(${type}${name ? ` ${name.slice(0, 40)}` : ''})`;
}

// Own size by constructor (or node type).
const byCtor = new Map<string, { count: number; bytes: number }>();
let total = 0;
for (let v = 0; v < s.nodeCount; v += 1) {
  if (idom[v] === -1) continue;
  const label = nodeLabel(s, v);
  const row = byCtor.get(label) ?? { count: 0, bytes: 0 };
  row.count += 1;
  row.bytes += s.selfSize[v]!;
  byCtor.set(label, row);
  total += s.selfSize[v]!;
}
process.stdout.write(
  `${file}: ${s.nodeCount} nodes, reachable ${mb(total)}; analysed in ${((Date.now() - started) / 1000).toFixed(1)} s\n\n` +
    `Own size by constructor (top ${top})\n`,
);
for (const [label, row] of [...byCtor].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top))
  process.stdout.write(`  ${mb(row.bytes).padStart(10)}  ${String(row.count).padStart(9)}  ${label}\n`);

// The dominator tree, children sorted by what they retain.
const children = new Map<number, number[]>();
for (let v = 1; v < s.nodeCount; v += 1) {
  const d = idom[v]!;
  if (d < 0 || retained[v]! < minMb * MIB) continue;
  const list = children.get(d) ?? [];
  list.push(v);
  children.set(d, list);
}
/** The field `v` hangs from in its dominator, when the dominator refers to it directly. */
function via(v: number): string {
  const d = idom[v]!;
  for (let e = s.firstEdge[d]!; e < s.firstEdge[d + 1]!; e += 1)
    if (s.edgeTo[e] === v) return `.${edgeLabel(s, e)}`;
  return ' (indirect)';
}
process.stdout.write(`\nRetained size, dominator tree (≥ ${minMb} MB, depth ≤ ${maxDepth})\n`);
const walk = (v: number, depth: number) => {
  for (const c of (children.get(v) ?? []).sort((a, b) => retained[b]! - retained[a]!)) {
    process.stdout.write(
      `  ${mb(retained[c]!).padStart(10)}  ${'  '.repeat(depth)}${via(c)} → ${nodeLabel(s, c)}\n`,
    );
    if (depth < maxDepth) walk(c, depth + 1);
  }
};
walk(0, 0);

// Strings are shared (names, keys, values), so no one structure dominates them: each string's
// bytes are split evenly over its retainers, named by the field (through a Map's or an array's
// backing store, by the field that holds the Map or array).
const stringTypes = new Set(
  ['string', 'concatenated string', 'sliced string'].map((t) => s.nodeTypes.indexOf(t)),
);
const weak = s.edgeTypes.indexOf('weak');
const retainers = new Map<number, number[]>(); // string node → edges into it
for (let v = 0; v < s.nodeCount; v += 1)
  for (let e = s.firstEdge[v]!; e < s.firstEdge[v + 1]!; e += 1) {
    const w = s.edgeTo[e]!;
    if (s.edgeType[e] === weak || !stringTypes.has(s.type[w]!) || idom[w] === -1) continue;
    const list = retainers.get(w) ?? [];
    list.push(e);
    retainers.set(w, list);
  }
const edgeFrom = new Uint32Array(s.firstEdge[s.nodeCount]!);
for (let v = 0; v < s.nodeCount; v += 1)
  for (let e = s.firstEdge[v]!; e < s.firstEdge[v + 1]!; e += 1) edgeFrom[e] = v;
/** The first strong edge into `v` (its holder), or -1. */
const firstRetainer = (() => {
  const first = new Int32Array(s.nodeCount).fill(-1);
  for (let e = 0; e < edgeFrom.length; e += 1)
    if (s.edgeType[e] !== weak && first[s.edgeTo[e]!] === -1) first[s.edgeTo[e]!] = e;
  return (v: number) => first[v]!;
})();
const holderLabel = (e: number): string => {
  let from = edgeFrom[e]!;
  let label = `${nodeLabel(s, from)}.${edgeLabel(s, e)}`;
  // Backing stores and element arrays: name them by what holds them, up to three levels.
  for (let up = 0; up < 3 && /^\((array|hidden|object shape)/.test(nodeLabel(s, from)); up += 1) {
    const into = firstRetainer(from);
    if (into < 0) break;
    from = edgeFrom[into]!;
    label = `${nodeLabel(s, from)}.${edgeLabel(s, into)}[]`;
  }
  return label.replace(/\.\d+\[\]/g, '.<n>[]');
};
const byHolder = new Map<string, number>();
let stringBytes = 0;
for (const [w, edges] of retainers) {
  const share = s.selfSize[w]! / edges.length;
  stringBytes += s.selfSize[w]!;
  for (const e of edges) byHolder.set(holderLabel(e), (byHolder.get(holderLabel(e)) ?? 0) + share);
}
process.stdout.write(
  `\nStrings (${mb(stringBytes)}) by holder, each string split over its holders (top ${top})\n`,
);
for (const [label, bytes] of [...byHolder].sort((a, b) => b[1] - a[1]).slice(0, top))
  process.stdout.write(`  ${mb(bytes).padStart(10)}  ${label}\n`);
