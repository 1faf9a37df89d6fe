/**
 * The watcher's cache of what ODL holds, for the kinds its backend writes: every entry
 * (odlcoe's and foreign ones, which collisions are detected against), parsed into model
 * objects. Filled by `load` (start of a leader term, periodic resync), kept current by the
 * watcher's own writes, and re-read entry by entry (`refresh`) before any update or delete, so
 * that a write is always planned against what ODL holds now (ODL's own write-backs included).
 *
 * One rule for a load racing writes: a list answer may predate a write made while the lists
 * were being read, so entries written or re-read during a load keep their newer cached state.
 *
 * Every change made after a load (a write, a re-read that found something new) is announced
 * to `onChange` listeners: the watcher wakes keys waiting for that entry, and a backend maps
 * it to the keys whose plan reads it (a node's subnet read from ODL → its pods).
 */
import { canonicalJson } from '../netvirt/decision.js';
import type { Ref } from '../netvirt/kind.js';
import type { Logger } from '../common/log.js';
import { EntryStore, type UnparsedEntry } from '../odl/entry-store.js';
import type { KindRead, OdlReader } from '../odl/reader.js';

export interface EntryChange {
  ref: Ref;
  /** Undefined: absent (or unparsed) before / after. */
  before: unknown;
  after: unknown;
}

export class EntryCache extends EntryStore {
  /**
   * Write generation per `kind/name`, of the changes made while a load was reading: that load
   * keeps them. Recorded only then, so that it does not grow with every write between loads
   * (400,000 of them converging 100,000 pods).
   */
  private readonly touched = new Map<string, number>();
  private generation = 0;
  /** Loads reading now. */
  private reading = 0;
  private loads = 0;
  private readonly listeners: ((change: EntryChange) => void)[] = [];

  constructor(
    private readonly reader: OdlReader,
    private readonly logger: Logger,
  ) {
    super(reader.table);
  }

  /** Whether a complete load has succeeded (in this leader term). */
  get loaded(): boolean {
    return this.loads > 0;
  }

  onChange(listener: (change: EntryChange) => void): void {
    this.listeners.push(listener);
  }

  override set(kind: string, entry: unknown): void {
    const name = this.table.spec(kind).nameOf(entry);
    const before = this.get(kind, name);
    super.set(kind, entry);
    this.touch(kind, name);
    this.announce(kind, name, before, entry);
  }

  override remove(kind: string, name: string): void {
    const before = this.get(kind, name);
    super.remove(kind, name);
    this.touch(kind, name);
    this.announce(kind, name, before, undefined);
  }

  override setUnparsed(kind: string, name: string): void {
    const before = this.get(kind, name);
    super.setUnparsed(kind, name);
    this.touch(kind, name);
    this.announce(kind, name, before, undefined);
  }

  /** Forgets everything (a new leader term must not trust what an earlier one saw). */
  override clear(): void {
    super.clear();
    this.touched.clear();
    this.loads = 0;
  }

  /**
   * Reads every list. Entries the watcher wrote (or re-read) while the lists were being read
   * keep their newer cached value. Throws when a list cannot be read; the cache is then
   * unchanged.
   */
  async load(signal?: AbortSignal): Promise<UnparsedEntry[]> {
    const startedAt = this.generation;
    // Every list read before any is taken in (a failed read leaves the cache as it was). Read
    // into plain maps, not a snapshot store: that indexed every entry once more only to be
    // copied here and indexed again, which at 100,000 pods was a good part of a restart.
    const reads = new Map<string, KindRead>();
    this.reading += 1;
    try {
      for (const kind of this.table.kinds) {
        signal?.throwIfAborted();
        reads.set(kind, await this.reader.readKind(kind, signal));
      }
    } finally {
      this.reading -= 1;
    }
    const problems: UnparsedEntry[] = [];
    for (const kind of this.table.kinds) {
      const read = reads.get(kind);
      if (!read) throw new Error(`ODL kind ${kind} was not read`);
      reads.delete(kind);
      problems.push(...read.unparsed);
      const entries = read.entries;
      const unparsed = new Set(read.unparsed.map((u) => u.name));
      // Written or re-read during the load: the cached state (present, absent or unparsed) is newer.
      for (const [k, generation] of this.touched) {
        if (generation <= startedAt || !k.startsWith(`${kind}/`)) continue;
        const name = k.slice(kind.length + 1);
        const cached = this.get(kind, name);
        entries.delete(name);
        unparsed.delete(name);
        if (cached !== undefined) entries.set(name, cached);
        else if (this.isUnparsed(kind, name)) unparsed.add(name);
      }
      this.replaceKind(kind, entries, unparsed);
    }
    // What was touched during this load matters to no later one, only to another load reading now.
    if (this.reading === 0) this.touched.clear();
    else for (const [k, generation] of this.touched) if (generation <= startedAt) this.touched.delete(k);
    this.loads += 1;
    this.logger.info('read ODL state', {
      ...Object.fromEntries(this.table.kinds.map((k) => [k, this.size(k)])),
      unparsed: problems.length,
    });
    return problems;
  }

  /** Re-reads one entry from ODL into the cache and returns it (undefined when ODL has none or it does not parse). */
  async refresh(kind: string, name: string): Promise<unknown> {
    const read = await this.reader.readEntry(kind, name);
    switch (read.state) {
      case 'absent':
        this.remove(kind, name);
        return undefined;
      case 'parsed':
        this.set(kind, read.entry);
        return read.entry;
      case 'unparsed':
        this.setUnparsed(kind, name);
        this.logger.warn('ODL entry does not parse; it is left alone', { kind, name, error: read.error });
        return undefined;
    }
  }

  private touch(kind: string, name: string): void {
    this.generation += 1;
    if (this.reading > 0) this.touched.set(`${kind}/${name}`, this.generation);
  }

  private announce(kind: string, name: string, before: unknown, after: unknown): void {
    if (
      before === after ||
      (before !== undefined && after !== undefined && canonicalJson(before) === canonicalJson(after))
    )
      return;
    const change: EntryChange = { ref: { kind, name }, before, after };
    for (const listener of this.listeners) listener(change);
  }
}
