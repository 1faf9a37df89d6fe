/**
 * Reads a V8 heap snapshot (`v8.writeHeapSnapshot`, `.heapsnapshot` JSON) and computes what each
 * object retains, so that a benchmark can say which structure of a process holds its heap.
 *
 * The file is scanned, not `JSON.parse`d whole: at 30,000 pods it is several hundred MB, past
 * V8's longest string. Nodes and edges go into typed arrays (outside the JavaScript heap); only
 * the header and the strings table are parsed as JSON.
 *
 * Retained size is the sum of the objects an object dominates (every path from the roots to them
 * passes through it), as DevTools computes it; weak edges do not keep anything alive. Dominators
 * by the iterative algorithm of Cooper, Harvey and Kennedy ("A simple, fast dominance
 * algorithm"), over the reverse postorder of a depth-first walk from the root.
 */
import { readFileSync } from 'node:fs';

interface Meta {
  node_fields: string[];
  node_types: [string[], ...unknown[]];
  edge_fields: string[];
  edge_types: [string[], ...unknown[]];
}

export interface HeapSnapshot {
  nodeCount: number;
  /** Per node: its type (index into `nodeTypes`), name (index into `strings`) and own size. */
  type: Uint8Array;
  name: Uint32Array;
  selfSize: Float64Array;
  /** Outgoing edges of node i: firstEdge[i] .. firstEdge[i + 1] - 1. */
  firstEdge: Uint32Array;
  edgeType: Uint8Array;
  /** A property name (index into `strings`) or an element index, by edge type. */
  edgeName: Uint32Array;
  edgeTo: Uint32Array;
  nodeTypes: string[];
  edgeTypes: string[];
  strings: string[];
}

/** The index just past `marker` in `buf`, searching from `from`. */
function after(buf: Buffer, marker: string, from = 0): number {
  const at = buf.indexOf(marker, from, 'latin1');
  if (at < 0) throw new Error(`heap snapshot: no ${marker} section`);
  return at + marker.length;
}

/** Reads `count` unsigned integers of a JSON number array starting at `pos` into `out`. */
function readInts(buf: Buffer, pos: number, out: Float64Array): number {
  let n = 0;
  let value = 0;
  let inNumber = false;
  for (let i = pos; i < buf.length; i += 1) {
    const c = buf[i]!;
    if (c >= 48 && c <= 57) {
      value = value * 10 + (c - 48);
      inNumber = true;
    } else {
      if (inNumber) {
        if (n >= out.length) throw new Error('heap snapshot: more numbers than its header announced');
        out[n++] = value;
        value = 0;
        inNumber = false;
      }
      if (c === 93 /* ] */) return n;
    }
  }
  throw new Error('heap snapshot: unterminated number array');
}

export function readHeapSnapshot(file: string): HeapSnapshot {
  const buf = readFileSync(file);
  const nodesAt = after(buf, '"nodes":[');
  const header = JSON.parse(
    `${buf.toString('utf8', 0, nodesAt - '"nodes":['.length).replace(/,\s*$/, '')}}`,
  ) as { snapshot: { meta: Meta; node_count: number; edge_count: number } };
  const { meta, node_count: nodeCount, edge_count: edgeCount } = header.snapshot;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const field = (fields: string[], f: string) => {
    const i = fields.indexOf(f);
    if (i < 0) throw new Error(`heap snapshot: no ${f} field`);
    return i;
  };
  const nodes = new Float64Array(nodeCount * nf);
  if (readInts(buf, nodesAt, nodes) !== nodes.length) throw new Error('heap snapshot: node count differs');
  const edges = new Float64Array(edgeCount * ef);
  if (readInts(buf, after(buf, '"edges":[', nodesAt), edges) !== edges.length)
    throw new Error('heap snapshot: edge count differs');
  const stringsAt = after(buf, '"strings":[') - 1;
  const stringsEnd = buf.lastIndexOf(']');
  const strings = JSON.parse(buf.toString('utf8', stringsAt, stringsEnd + 1)) as string[];

  const [fType, fName, fSize, fEdges] = ['type', 'name', 'self_size', 'edge_count'].map((f) =>
    field(meta.node_fields, f),
  ) as [number, number, number, number];
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => field(meta.edge_fields, f)) as [
    number,
    number,
    number,
  ];
  const s: HeapSnapshot = {
    nodeCount,
    type: new Uint8Array(nodeCount),
    name: new Uint32Array(nodeCount),
    selfSize: new Float64Array(nodeCount),
    firstEdge: new Uint32Array(nodeCount + 1),
    edgeType: new Uint8Array(edgeCount),
    edgeName: new Uint32Array(edgeCount),
    edgeTo: new Uint32Array(edgeCount),
    nodeTypes: meta.node_types[0],
    edgeTypes: meta.edge_types[0],
    strings,
  };
  let e = 0;
  for (let i = 0; i < nodeCount; i += 1) {
    s.type[i] = nodes[i * nf + fType]!;
    s.name[i] = nodes[i * nf + fName]!;
    s.selfSize[i] = nodes[i * nf + fSize]!;
    s.firstEdge[i] = e;
    e += nodes[i * nf + fEdges]!;
  }
  s.firstEdge[nodeCount] = e;
  for (let j = 0; j < edgeCount; j += 1) {
    s.edgeType[j] = edges[j * ef + eType]!;
    s.edgeName[j] = edges[j * ef + eName]!;
    s.edgeTo[j] = edges[j * ef + eTo]! / nf;
  }
  return s;
}

/** The name of an edge: a property name, or `[i]` for an element or hidden slot. */
export function edgeLabel(s: HeapSnapshot, edge: number): string {
  const t = s.edgeTypes[s.edgeType[edge]!];
  return t === 'element' || t === 'hidden' ? `[${s.edgeName[edge]}]` : (s.strings[s.edgeName[edge]!] ?? '?');
}

export interface Dominators {
  /** Immediate dominator of each node (the root's is itself); unreachable nodes: -1. */
  idom: Int32Array;
  retained: Float64Array;
}

const bump = (a: Uint32Array | Float64Array, i: number, by: number) => {
  a[i] = a[i]! + by;
};

/** Immediate dominators and retained sizes, from node 0 (the snapshot's synthetic root). */
export function dominators(s: HeapSnapshot): Dominators {
  const n = s.nodeCount;
  const weak = s.edgeTypes.indexOf('weak');
  const strong = (e: number) => s.edgeType[e] !== weak;
  // Postorder by an explicit-stack depth-first walk.
  const order = new Int32Array(n).fill(-1); // node → postorder number
  const post = new Int32Array(n); // postorder number → node
  const stackNode = new Int32Array(n);
  const stackEdge = new Uint32Array(n);
  const visited = new Uint8Array(n);
  let top = 0;
  let count = 0;
  stackNode[0] = 0;
  stackEdge[0] = s.firstEdge[0]!;
  visited[0] = 1;
  while (top >= 0) {
    const v = stackNode[top]!;
    const e = stackEdge[top]!;
    if (e < s.firstEdge[v + 1]!) {
      stackEdge[top] = e + 1;
      const w = s.edgeTo[e]!;
      if (strong(e) && !visited[w]) {
        visited[w] = 1;
        top += 1;
        stackNode[top] = w;
        stackEdge[top] = s.firstEdge[w]!;
      }
    } else {
      order[v] = count;
      post[count++] = v;
      top -= 1;
    }
  }
  // Predecessors (strong edges between reachable nodes), as compressed rows.
  const predStart = new Uint32Array(n + 1);
  for (let v = 0; v < n; v += 1)
    if (visited[v])
      for (let e = s.firstEdge[v]!; e < s.firstEdge[v + 1]!; e += 1)
        if (strong(e)) bump(predStart, s.edgeTo[e]! + 1, 1);
  for (let v = 0; v < n; v += 1) bump(predStart, v + 1, predStart[v]!);
  const preds = new Uint32Array(predStart[n]!);
  const fill = predStart.slice(0, n);
  for (let v = 0; v < n; v += 1)
    if (visited[v])
      for (let e = s.firstEdge[v]!; e < s.firstEdge[v + 1]!; e += 1)
        if (strong(e)) {
          const w = s.edgeTo[e]!;
          preds[fill[w]!] = v;
          bump(fill, w, 1);
        }
  // Iterate to a fixed point, over postorder numbers (the root has the highest).
  const idom = new Int32Array(count).fill(-1);
  const root = count - 1;
  idom[root] = root;
  const intersect = (a: number, b: number) => {
    while (a !== b) {
      while (a < b) a = idom[a]!;
      while (b < a) b = idom[b]!;
    }
    return a;
  };
  for (let changed = true; changed;) {
    changed = false;
    for (let i = root - 1; i >= 0; i -= 1) {
      const v = post[i]!;
      let d = -1;
      for (let p = predStart[v]!; p < predStart[v + 1]!; p += 1) {
        const u = order[preds[p]!]!;
        if (u < 0 || idom[u] === -1) continue;
        d = d === -1 ? u : intersect(u, d);
      }
      if (d !== -1 && idom[i] !== d) {
        idom[i] = d;
        changed = true;
      }
    }
  }
  const out = new Int32Array(n).fill(-1);
  const retained = new Float64Array(n);
  for (let i = 0; i < count; i += 1) {
    const v = post[i]!;
    out[v] = post[idom[i]!]!;
    retained[v] = s.selfSize[v]!;
  }
  // Postorder puts every node before its dominator: one pass adds each into its dominator.
  for (let i = 0; i < root; i += 1) {
    const v = post[i]!;
    bump(retained, out[v]!, retained[v]!);
  }
  return { idom: out, retained };
}
