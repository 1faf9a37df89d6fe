/**
 * Reading what ODL holds, driven by the kinds table: a whole list, one entry, or every list of
 * a table into a snapshot, each entry parsed into its model object. An entry that does not
 * parse is reported by its key and never written or deleted (it is someone else's, or
 * something odlcoe does not understand). Read-only: writing is the watcher's (and `odlcoectl
 * gc --yes`'s) business.
 */
import { errorMessage } from '../common/log.js';
import type { KindTable } from '../netvirt/kind.js';
import type { Profile } from '../netvirt/profile.js';
import type { RestconfClient } from '../restconf/client.js';
import { EntryStore, type UnparsedEntry } from './entry-store.js';

export type EntryRead<T = unknown> =
  { state: 'parsed'; entry: T } | { state: 'absent' } | { state: 'unparsed'; error: string };

export interface KindRead {
  entries: Map<string, unknown>;
  unparsed: UnparsedEntry[];
}

/** A complete read of every list of a table, and the entries that did not parse. */
export interface OdlSnapshot {
  state: EntryStore;
  unparsed: UnparsedEntry[];
}

export class OdlReader {
  constructor(
    readonly client: RestconfClient,
    readonly profile: Profile,
    readonly table: KindTable,
  ) {}

  /** Reads a whole list (throws when ODL cannot be read). */
  async readKind(kind: string, signal?: AbortSignal): Promise<KindRead> {
    const spec = this.table.spec(kind);
    const entries = new Map<string, unknown>();
    const unparsed: UnparsedEntry[] = [];
    const raws = await this.client.getEntries(spec.list(this.profile), 'config', signal ? { signal } : {});
    for (const raw of raws) {
      try {
        const parsed: unknown = spec.parse(this.profile, raw);
        entries.set(spec.nameOf(parsed), parsed);
      } catch (err) {
        const key = raw[spec.keyMember];
        unparsed.push({
          kind,
          name: typeof key === 'string' ? key : JSON.stringify(raw).slice(0, 80),
          error: errorMessage(err),
        });
      }
    }
    return { entries, unparsed };
  }

  /** Reads one entry: parsed, absent, or present but not parseable. */
  async readEntry(kind: string, name: string, signal?: AbortSignal): Promise<EntryRead> {
    const spec = this.table.spec(kind);
    const [first] = await this.client.getEntries(
      spec.entry(this.profile, name),
      'config',
      signal ? { signal } : {},
    );
    if (first === undefined) return { state: 'absent' };
    try {
      return { state: 'parsed', entry: spec.parse(this.profile, first) };
    } catch (err) {
      return { state: 'unparsed', error: errorMessage(err) };
    }
  }

  /** Every list of the table, each read whole; throws when any of them cannot be read. */
  async snapshot(signal?: AbortSignal): Promise<OdlSnapshot> {
    const state = new EntryStore(this.table);
    const unparsed: UnparsedEntry[] = [];
    for (const kind of this.table.kinds) {
      signal?.throwIfAborted();
      const read = await this.readKind(kind, signal);
      state.replaceKind(kind, read.entries, new Set(read.unparsed.map((u) => u.name)));
      unparsed.push(...read.unparsed);
    }
    return { state, unparsed };
  }

  /** The URL that reads an entry from ODL's config datastore (what `curl` would need). */
  entryUrl(kind: string, name: string): string {
    return this.client.dataUrl(this.table.spec(kind).entry(this.profile, name), 'config', 'GET');
  }
}
