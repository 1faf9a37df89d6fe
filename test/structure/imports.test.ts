/**
 * The import structure of src/ is part of the design (docs/architecture.md, "Code map"):
 * rooms on floors, imports pointing only down, adapters and models below the programs, and no
 * import circle. These tests read every source file's imports (TypeScript's own pre-processor:
 * static, type-only, re-exports and dynamic imports alike) so a change that breaks the shape
 * fails here, with the offending file named, instead of in a review.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Test files and test helpers may reach anything; the rules are for shipped code. */
const isShipped = (file: string) =>
  !/\.test\.ts$|[/-]testing\.ts$|test-support\.ts$|test-helpers\.ts$/.test(file);

function sources(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) sources(path, out);
    else if (entry.endsWith('.ts')) out.push(relative(root, path));
  }
  return out;
}

/** Relative imports of one file, resolved to repository paths (`.js` → `.ts`). */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
  return info.importedFiles
    .map((f) => f.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => relative(root, resolve(root, dirname(file), name)).replace(/\.js$/, '.ts'));
}

const shipped = sources(join(root, 'src')).filter(isShipped);
const graph = new Map(shipped.map((f) => [f, importsOf(f)]));

/** `src/<room>/...` → room. */
const roomOf = (file: string): string => (file.startsWith('src/') ? (file.split('/')[1] ?? file) : file);

/**
 * Which rooms each room may import from: the floors of docs/architecture.md. Shared code at
 * the bottom, clients and models above it, adapters above those, programs on top, the sandbox
 * (which runs all of them) above everything. odlcoectl sits beside the daemons, never on them.
 */
const BASE = ['common'];
const CLIENTS = [...BASE, 'restconf', 'k8s', 'queue'];
const MODEL = [...CLIENTS, 'netvirt'];
const ADAPTERS = [...MODEL, 'odl', 'ovs'];
/** The programs' shared settings declarations sit beside the adapters (odlcoectl reads the watcher's). */
const PROGRAM_BASE = [...ADAPTERS, 'config'];
const MAY_IMPORT: Record<string, readonly string[]> = {
  common: [],
  restconf: BASE,
  k8s: BASE,
  queue: BASE,
  kubesim: BASE,
  netvirt: ['common', 'restconf'],
  odl: MODEL,
  ovs: BASE,
  config: MODEL,
  emulator: MODEL,
  watcher: PROGRAM_BASE,
  agent: PROGRAM_BASE,
  cli: PROGRAM_BASE,
  sandbox: [...PROGRAM_BASE, 'watcher', 'agent', 'cli', 'emulator', 'kubesim'],
};

describe('import structure of src/', () => {
  it('every room is on a floor', () => {
    const rooms = [...new Set(shipped.map(roomOf))].filter((r) => !r.endsWith('.ts'));
    assert.deepEqual(
      rooms.filter((r) => MAY_IMPORT[r] === undefined),
      [],
      'a new directory under src/ needs its place in MAY_IMPORT and in docs/architecture.md',
    );
  });

  it('imports point only down: no room reaches into a room above it or beside it', () => {
    const wrong: string[] = [];
    for (const [file, imports] of graph) {
      const from = roomOf(file);
      for (const target of imports) {
        const to = roomOf(target);
        if (to === from) continue;
        if (!(MAY_IMPORT[from] ?? []).includes(to)) wrong.push(`${file} → ${target}`);
      }
    }
    assert.deepEqual(wrong, [], `imports against the floors:\n${wrong.join('\n')}`);
  });

  it('odlcoectl imports nothing from the watcher or the agent', () => {
    const wrong = [...graph]
      .filter(([file]) => file.startsWith('src/cli/'))
      .flatMap(([file, imports]) =>
        imports
          .filter((t) => t.startsWith('src/watcher/') || t.startsWith('src/agent/'))
          .map((t) => `${file} → ${t}`),
      );
    assert.deepEqual(wrong, [], wrong.join('\n'));
  });

  it('has no import circle, type-only imports included', () => {
    // Tarjan's strongly connected components over the file graph.
    let index = 0;
    const idx = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const circles: string[][] = [];
    const visit = (v: string) => {
      idx.set(v, index);
      low.set(v, index);
      index++;
      stack.push(v);
      onStack.add(v);
      for (const w of graph.get(v) ?? []) {
        if (!graph.has(w)) continue;
        if (!idx.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
      }
      if (low.get(v) === idx.get(v)) {
        const component: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          component.push(w);
        } while (w !== v);
        if (component.length > 1 || (graph.get(v) ?? []).includes(v)) circles.push(component.sort());
      }
    };
    for (const v of graph.keys()) if (!idx.has(v)) visit(v);
    assert.deepEqual(circles, [], circles.map((c) => c.join(' ↔ ')).join('\n'));
  });

  it('the CNI shim imports only node: built-ins (an empty Node process is its whole start-up cost)', () => {
    const shim = sources(join(root, 'cni')).filter(isShipped);
    assert.ok(shim.length > 0, 'the shim sources are found');
    const wrong = shim.flatMap((file) =>
      ts
        .preProcessFile(readFileSync(join(root, file), 'utf8'), true, true)
        .importedFiles.map((f) => f.fileName)
        .filter((name) => !name.startsWith('node:'))
        .map((name) => `${file} → ${name}`),
    );
    assert.deepEqual(wrong, [], wrong.join('\n'));
  });

  it('the rules can fail: the reader sees a known import and a known reach across floors', () => {
    // Guards the guard: if importsOf() silently read nothing, every rule above would pass.
    assert.ok(
      (graph.get('src/watcher/watcher.ts') ?? []).some((t) => t.startsWith('src/netvirt/')),
      'the watcher imports the model',
    );
    assert.ok(!MAY_IMPORT.netvirt?.includes('watcher'), 'the model may not import the watcher');
  });
});
