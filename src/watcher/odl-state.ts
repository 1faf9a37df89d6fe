/**
 * The watcher's cache of ODL's config datastore for the lists the netvirt backend writes:
 * every entry (odlcoe's and foreign ones, which collisions are detected against), parsed into
 * model objects. Filled by `load` (start of a leader term, periodic resync), kept current by
 * the watcher's own writes, and re-read entry by entry (`refresh`) before any update or delete,
 * so that a write is always planned against what ODL holds now (ODL's own write-backs included).
 */
import type { Logger } from '../common/log.js';
import {
  netvirtPaths,
  parseElanInstances,
  parseElanInterfaces,
  parseInterfaces,
  parseVpnInstances,
  parseVpnInterfaces,
  type ElanInstance,
  type ElanInterface,
  type Interface,
  type K8sNode,
  type Profile,
  type VpnInstance,
  type VpnInterface,
} from '../netvirt/index.js';
import type { RestconfClient } from '../restconf/client.js';
import { k8sNodesSpec, listOf, one, readEntry, readList, type ListSpec } from './odl-lists.js';

export interface OdlEntries {
  interface: Interface;
  elanInstance: ElanInstance;
  elanInterface: ElanInterface;
  vpnInstance: VpnInstance;
  vpnInterface: VpnInterface;
  k8sNode: K8sNode;
}
export type OdlKind = keyof OdlEntries;
export const ODL_KINDS: readonly OdlKind[] = [
  'interface',
  'elanInstance',
  'elanInterface',
  'vpnInstance',
  'vpnInterface',
  'k8sNode',
];

type Specs = { [K in OdlKind]: ListSpec<OdlEntries[K]> };

function specs(profile: Profile): Specs {
  const p = netvirtPaths(profile);
  return {
    interface: {
      key: 'name',
      list: listOf(p.interfaces(), 'interface'),
      entry: p.interface,
      parse: (e) => one(parseInterfaces({ interface: [e] }), 'interface'),
      nameOf: (e) => e.name,
    },
    elanInstance: {
      key: 'elan-instance-name',
      list: listOf(p.elanInstances(), 'elan-instance'),
      entry: p.elanInstance,
      parse: (e) => one(parseElanInstances({ 'elan-instance': [e] }), 'elan-instance'),
      nameOf: (e) => e.name,
    },
    elanInterface: {
      key: 'name',
      list: listOf(p.elanInterfaces(), 'elan-interface'),
      entry: p.elanInterface,
      parse: (e) => one(parseElanInterfaces({ 'elan-interface': [e] }), 'elan-interface'),
      nameOf: (e) => e.name,
    },
    vpnInstance: {
      key: 'vpn-instance-name',
      list: listOf(p.vpnInstances(), 'vpn-instance'),
      entry: p.vpnInstance,
      parse: (e) => one(parseVpnInstances(profile, { 'vpn-instance': [e] }), 'vpn-instance'),
      nameOf: (e) => e.name,
    },
    vpnInterface: {
      key: 'name',
      list: listOf(p.vpnInterfaces(), 'vpn-interface'),
      entry: p.vpnInterface,
      parse: (e) => one(parseVpnInterfaces(profile, { 'vpn-interface': [e] }), 'vpn-interface'),
      nameOf: (e) => e.name,
    },
    k8sNode: k8sNodesSpec(profile),
  };
}

/** An entry ODL holds that does not parse: never written, never deleted, reported once per load. */
export interface UnparsedEntry {
  kind: OdlKind;
  name: string;
  error: string;
}

export class OdlState {
  private readonly specs: Specs;
  private readonly maps: { [K in OdlKind]: Map<string, OdlEntries[K]> } = {
    interface: new Map(),
    elanInstance: new Map(),
    elanInterface: new Map(),
    vpnInstance: new Map(),
    vpnInterface: new Map(),
    k8sNode: new Map(),
  };
  /** Names (by kind) that do not parse; treated as taken by someone else. */
  private readonly unparsed: { [K in OdlKind]: Set<string> } = {
    interface: new Set(),
    elanInstance: new Set(),
    elanInterface: new Set(),
    vpnInstance: new Set(),
    vpnInterface: new Set(),
    k8sNode: new Set(),
  };
  /** Write generation per `kind/name`: a load keeps entries the watcher wrote while it was reading. */
  private readonly touched = new Map<string, number>();
  private generation = 0;
  private loads = 0;

  constructor(
    private readonly client: RestconfClient,
    profile: Profile,
    private readonly logger: Logger,
  ) {
    this.specs = specs(profile);
  }

  /** Whether a complete load has succeeded (in this leader term). */
  get loaded(): boolean {
    return this.loads > 0;
  }

  get<K extends OdlKind>(kind: K, name: string): OdlEntries[K] | undefined {
    return this.maps[kind].get(name);
  }

  values<K extends OdlKind>(kind: K): IterableIterator<OdlEntries[K]> {
    return this.maps[kind].values();
  }

  names(kind: OdlKind): IterableIterator<string> {
    return this.maps[kind].keys();
  }

  size(kind: OdlKind): number {
    return this.maps[kind].size;
  }

  isUnparsed(kind: OdlKind, name: string): boolean {
    return this.unparsed[kind].has(name);
  }

  set<K extends OdlKind>(kind: K, entry: OdlEntries[K]): void {
    const name = this.specs[kind].nameOf(entry);
    this.maps[kind].set(name, entry);
    this.unparsed[kind].delete(name);
    this.touch(kind, name);
  }

  remove(kind: OdlKind, name: string): void {
    this.maps[kind].delete(name);
    this.unparsed[kind].delete(name);
    this.touch(kind, name);
  }

  /** Forgets everything (a new leader term must not trust what an earlier one saw). */
  clear(): void {
    for (const kind of ODL_KINDS) {
      this.maps[kind].clear();
      this.unparsed[kind].clear();
    }
    this.touched.clear();
    this.loads = 0;
  }

  /**
   * Reads every list. Entries the watcher wrote (or re-read) while the lists were being read
   * keep their newer cached value: the list answer may predate the write. Throws when a list
   * cannot be read; the cache is then unchanged.
   */
  async load(signal?: AbortSignal): Promise<UnparsedEntry[]> {
    const startedAt = this.generation;
    const read = new Map<OdlKind, { entries: Map<string, unknown>; unparsed: Set<string> }>();
    const problems: UnparsedEntry[] = [];
    for (const kind of ODL_KINDS) {
      signal?.throwIfAborted();
      const { entries, unparsed } = await readList<unknown>(
        this.client,
        this.specs[kind] as ListSpec<unknown>,
      );
      for (const u of unparsed) problems.push({ kind, ...u });
      read.set(kind, { entries, unparsed: new Set(unparsed.map((u) => u.name)) });
    }
    for (const kind of ODL_KINDS) {
      const fresh = read.get(kind);
      if (!fresh) continue;
      const map = this.maps[kind] as Map<string, unknown>;
      const keep = new Map<string, unknown>();
      for (const [name, entry] of map) if (this.touchedSince(kind, name, startedAt)) keep.set(name, entry);
      const touchedAbsent = [...this.touched.keys()]
        .filter((k) => k.startsWith(`${kind}/`) && (this.touched.get(k) ?? 0) > startedAt)
        .map((k) => k.slice(kind.length + 1));
      map.clear();
      for (const [name, entry] of fresh.entries) map.set(name, entry);
      // Written or re-read during the load: the cached state (present or absent) is newer.
      for (const name of touchedAbsent) if (!keep.has(name)) map.delete(name);
      for (const [name, entry] of keep) map.set(name, entry);
      this.unparsed[kind] = fresh.unparsed;
    }
    // Only writes newer than this load matter to the next one.
    for (const [k, generation] of this.touched) if (generation <= startedAt) this.touched.delete(k);
    this.loads += 1;
    this.logger.info('read ODL state', {
      ...Object.fromEntries(ODL_KINDS.map((k) => [k, this.maps[k].size])),
      unparsed: problems.length,
    });
    return problems;
  }

  /** Re-reads one entry from ODL into the cache and returns it (undefined when ODL has none). */
  async refresh<K extends OdlKind>(kind: K, name: string): Promise<OdlEntries[K] | undefined> {
    const read = await readEntry(this.client, this.specs[kind], name);
    switch (read.state) {
      case 'absent':
        this.remove(kind, name);
        return undefined;
      case 'parsed':
        this.set(kind, read.entry);
        return read.entry;
      case 'unparsed':
        this.maps[kind].delete(name);
        this.unparsed[kind].add(name);
        this.touch(kind, name);
        this.logger.warn('ODL entry does not parse; it is left alone', { kind, name, error: read.error });
        return undefined;
    }
  }

  private touch(kind: OdlKind, name: string): void {
    this.generation += 1;
    this.touched.set(`${kind}/${name}`, this.generation);
  }

  private touchedSince(kind: OdlKind, name: string, generation: number): boolean {
    return (this.touched.get(`${kind}/${name}`) ?? 0) > generation;
  }
}
