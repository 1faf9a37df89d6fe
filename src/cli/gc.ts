/**
 * `odlcoectl gc`: the ODL objects garbage collection would delete: this cluster's objects that
 * the cluster no longer needs, by the watcher's rules (the pure translation and owned-leaf diff
 * of src/netvirt). Foreign objects are never candidates, names whose desired state is unknown
 * right now (`keep`) are never candidates, entries that do not parse are never candidates, and
 * an instance is a candidate only when nothing that stays still refers to it.
 *
 * Every key's plan (the watcher's, src/netvirt/plan-netvirt.ts) says what ODL should hold; what
 * it says is absent and ODL holds as ours is a candidate, taken in the kinds table's delete
 * order, and an instance is kept while something that stays still needs it (the table's
 * prerequisites).
 *
 * Safety: the decision rests on a complete view, every ODL list read whole and every
 * Kubernetes list paged to its end, ODL first (see snapshot.ts); any failed read aborts before
 * anything is decided. Deleting (`--yes`) goes in dependency order, re-reads each entry right
 * before deleting it and skips it when it changed since the plan was made, re-checks instance
 * references just before the instances go, and stops at the first failure. The watcher is the
 * only regular writer and collects garbage itself; this is for operators cleaning up after a
 * watcher that is gone for good, or for looking (`--dry-run`).
 */
import { errorMessage } from '../common/log.js';
import type { Ref } from '../netvirt/kind.js';
import type { OwnerContext } from '../netvirt/ownership.js';
import type { KeyPlan } from '../netvirt/plan.js';
import type { EntryStore, UnparsedEntry } from '../odl/entry-store.js';
import type { OdlReader } from '../odl/reader.js';
import { cell, indentedTable, plural } from './render.js';

export interface GcCandidate {
  kind: string;
  name: string;
  url: string;
}

export interface GcKept {
  kind: string;
  name: string;
  reason: string;
}

export interface GcDeletion {
  kind: string;
  name: string;
  result: 'deleted' | 'absent' | 'skipped' | 'failed';
  reason?: string;
}

export interface GcReport {
  dryRun: boolean;
  /** In the order they are (or would be) deleted. */
  candidates: GcCandidate[];
  /** Owned objects not needed now that are nevertheless kept, and why. */
  kept: GcKept[];
  unparsed: { kind: string; name: string; error: string }[];
  /** null for a dry run. */
  deletions: GcDeletion[] | null;
}

interface PlannedCandidate extends GcCandidate {
  ref: Ref;
  /** The entry as planned on, compared again right before deleting. */
  snapshot: string;
}

export interface GcPlan {
  candidates: PlannedCandidate[];
  kept: GcKept[];
}

const KEPT_UNKNOWN =
  'its desired state cannot be computed now (a pod, node or namespace the cluster view does not fully know yet)';

/** Pure: the candidates (in delete order) and the kept objects, from a complete snapshot. */
export function planGc(
  keys: readonly string[],
  planOf: (key: string) => KeyPlan,
  odl: EntryStore,
  owner: OwnerContext,
  reader: OdlReader,
): GcPlan {
  const table = odl.table;
  const ours = (kind: string, name: string) => {
    const entry = odl.get(kind, name);
    return entry !== undefined && odl.ownership(kind, entry, owner).owner === 'ours';
  };
  const absent = new Map<string, Ref>();
  const kept: GcKept[] = [];
  for (const key of keys) {
    for (const e of planOf(key).entries) {
      if (!ours(e.kind, e.name)) continue;
      if (e.want === 'absent') absent.set(`${e.kind}/${e.name}`, { kind: e.kind, name: e.name });
      else if (e.want === 'keep')
        kept.push({ kind: table.label(e.kind), name: e.name, reason: KEPT_UNKNOWN });
    }
  }
  const candidates: PlannedCandidate[] = [];
  const chosen = new Set<string>();
  for (const kind of table.deleteOrder) {
    const unparsedDependants = table
      .dependantKinds(kind)
      .reduce((n, k) => n + [...odl.unparsedNames(k)].length, 0);
    const names = [...absent.values()]
      .filter((r) => r.kind === kind)
      .map((r) => r.name)
      .sort();
    for (const name of names) {
      const ref = { kind, name };
      const staying = odl.dependants(ref).filter((d) => !chosen.has(`${d.kind}/${d.name}`));
      if (staying.length > 0) {
        kept.push({
          kind: table.label(kind),
          name,
          reason: `still referred to by ${staying.map((d) => d.name).join(', ')}`,
        });
        continue;
      }
      if (unparsedDependants > 0) {
        kept.push({
          kind: table.label(kind),
          name,
          reason: `${plural(unparsedDependants, 'entry', 'entries')} that do not parse might refer to it`,
        });
        continue;
      }
      chosen.add(`${kind}/${name}`);
      candidates.push({
        kind: table.label(kind),
        ref,
        name,
        url: reader.entryUrl(kind, name),
        snapshot: JSON.stringify(odl.get(kind, name)),
      });
    }
  }
  return { candidates, kept };
}

/**
 * Deletes the plan's candidates in order. Each entry is re-read first and skipped when it
 * changed (or vanished) since the plan; before the first instance, the interface lists are
 * re-read and an instance something refers to now is skipped. Stops at the first failure.
 */
export async function executeGc(plan: GcPlan, reader: OdlReader): Promise<GcDeletion[]> {
  const out: GcDeletion[] = [];
  let fresh: EntryStore | undefined;
  for (const [i, c] of plan.candidates.entries()) {
    const record = (result: GcDeletion['result'], reason?: string) =>
      out.push({ kind: c.kind, name: c.name, result, ...(reason !== undefined ? { reason } : {}) });
    try {
      if (reader.table.dependantKinds(c.ref.kind).length > 0) {
        // Before the first entry something may need, read everything again: an entry that
        // needs it now keeps it.
        fresh ??= (await reader.snapshot()).state;
        const now = fresh.dependants(c.ref);
        if (now.length > 0) {
          record('skipped', `referred to by ${now.map((d) => d.name).join(', ')} now`);
          continue;
        }
      }
      const current = await reader.readEntry(c.ref.kind, c.name);
      if (current.state === 'absent') {
        record('absent', 'already gone');
        continue;
      }
      if (current.state !== 'parsed' || JSON.stringify(current.entry) !== c.snapshot) {
        record('skipped', 'changed since the plan was made (re-run gc to look again)');
        continue;
      }
      const result = await reader.client.delete(reader.table.spec(c.ref.kind).entry(reader.profile, c.name));
      record(result, result === 'absent' ? 'already gone' : undefined);
    } catch (err) {
      record('failed', errorMessage(err));
      for (const rest of plan.candidates.slice(i + 1))
        out.push({
          kind: rest.kind,
          name: rest.name,
          result: 'skipped',
          reason: 'an earlier deletion failed',
        });
      break;
    }
  }
  return out;
}

export function gcReport(
  plan: GcPlan,
  unparsed: readonly UnparsedEntry[],
  label: (kind: string) => string,
  deletions: GcDeletion[] | null,
): GcReport {
  return {
    dryRun: deletions === null,
    candidates: plan.candidates.map(({ kind, name, url }) => ({ kind, name, url })),
    kept: plan.kept,
    unparsed: unparsed.map((u) => ({ kind: label(u.kind), name: u.name, error: u.error })),
    deletions,
  };
}

export function renderGc(r: GcReport): string {
  const out: string[] = [];
  if (r.candidates.length === 0) out.push('Nothing to collect: every owned ODL object is still needed.');
  else {
    out.push(
      `${r.dryRun ? 'Would delete' : 'Deletion plan'}: ${plural(r.candidates.length, 'object')}, in this order`,
    );
    out.push(
      indentedTable(
        ['KIND', 'NAME', 'URL'],
        r.candidates.map((c) => [c.kind, c.name, c.url]),
      ),
    );
  }
  if (r.kept.length > 0) {
    out.push(
      '',
      `Kept although not needed now: ${r.kept.length}`,
      indentedTable(
        ['KIND', 'NAME', 'WHY'],
        r.kept.map((k) => [k.kind, k.name, k.reason]),
      ),
    );
  }
  if (r.unparsed.length > 0) {
    out.push('', 'Entries that do not parse (never collected):');
    for (const u of r.unparsed) out.push(`  ${u.kind} ${u.name}: ${u.error}`);
  }
  if (r.deletions) {
    out.push(
      '',
      'Result:',
      indentedTable(
        ['KIND', 'NAME', 'RESULT', 'NOTE'],
        r.deletions.map((d) => [d.kind, d.name, d.result, cell(d.reason)]),
      ),
    );
  } else if (r.candidates.length > 0) {
    out.push('', 'Dry run: nothing was deleted.');
  }
  return out.join('\n');
}
