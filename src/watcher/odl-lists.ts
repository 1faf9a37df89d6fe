/**
 * Reading the ODL lists a backend caches, whole or entry by entry, with each entry parsed into
 * its model object. Shared by the netvirt backend's `OdlState` and coe-northbound's
 * `CoeOdlCache`: an entry that does not parse as its model is reported by name and never
 * written or deleted (it is someone else's, or something odlcoe does not understand).
 */
import { errorMessage } from '../common/log.js';
import { netvirtPaths, parseK8sNodes, type K8sNode, type Profile } from '../netvirt/index.js';
import type { RestconfClient } from '../restconf/client.js';
import type { DataPath } from '../restconf/path.js';

/** One list: where it is, where one entry is, how an entry parses, and what names it. */
export interface ListSpec<T> {
  /** The list node, read whole at load. */
  list: DataPath;
  entry(name: string): DataPath;
  parse(entry: Record<string, unknown>): T;
  nameOf(entry: T): string;
  /** The key member of a raw entry (its name when it does not parse). */
  key: string;
}

/** `container` + `list`: the path of the list itself. */
export const listOf = (container: DataPath, list: string): DataPath => [...container, { name: list }];

/** The single entry a per-entry parse yields. */
export function one<T>(items: T[], what: string): T {
  const [first] = items;
  if (items.length !== 1 || first === undefined)
    throw new Error(`expected one ${what} entry, got ${items.length}`);
  return first;
}

/** The k8s-node entries, which both backends write (the node agent reads its subnet there). */
export function k8sNodesSpec(profile: Profile): ListSpec<K8sNode> {
  const p = netvirtPaths(profile);
  return {
    key: 'uid',
    list: listOf(p.k8sNodesInfo(), 'k8s-nodes'),
    entry: p.k8sNode,
    parse: (e) => one(parseK8sNodes({ 'k8s-nodes': [e] }), 'k8s-nodes'),
    nameOf: (e) => e.uid,
  };
}

/** An entry ODL holds that does not parse as its model. */
export interface Unparsed {
  name: string;
  error: string;
}

/** Reads a whole list (throws when ODL cannot be read). */
export async function readList<T>(
  client: RestconfClient,
  spec: ListSpec<T>,
): Promise<{ entries: Map<string, T>; unparsed: Unparsed[] }> {
  const entries = new Map<string, T>();
  const unparsed: Unparsed[] = [];
  for (const raw of await client.getEntries(spec.list)) {
    try {
      const parsed = spec.parse(raw);
      entries.set(spec.nameOf(parsed), parsed);
    } catch (err) {
      const key = raw[spec.key];
      unparsed.push({
        name: typeof key === 'string' ? key : JSON.stringify(raw).slice(0, 80),
        error: errorMessage(err),
      });
    }
  }
  return { entries, unparsed };
}

/** Reads one entry: parsed, absent, or present but not parseable. */
export async function readEntry<T>(
  client: RestconfClient,
  spec: ListSpec<T>,
  name: string,
): Promise<{ state: 'parsed'; entry: T } | { state: 'absent' } | { state: 'unparsed'; error: string }> {
  const [first] = await client.getEntries(spec.entry(name));
  if (first === undefined) return { state: 'absent' };
  try {
    return { state: 'parsed', entry: spec.parse(first) };
  } catch (err) {
    return { state: 'unparsed', error: errorMessage(err) };
  }
}
