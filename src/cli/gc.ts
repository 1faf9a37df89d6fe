/**
 * `odlcoectl gc`: the ODL objects garbage collection would delete: this cluster's objects that
 * the cluster no longer needs, by the watcher's rules (the pure translation and owned-leaf diff
 * of src/netvirt). Foreign objects are never candidates, names whose desired state is unknown
 * right now (`keep`) are never candidates, entries that do not parse are never candidates, and
 * an instance is a candidate only when nothing that stays still refers to it.
 *
 * Safety: the decision rests on a complete view, every ODL list read whole and every
 * Kubernetes list paged to its end, ODL first (see snapshot.ts); any failed read aborts before
 * anything is decided. Deleting (`--yes`) goes in dependency order, re-reads each entry right
 * before deleting it and skips it when it changed since the plan was made, re-checks instance
 * references just before the instances go, and stops at the first failure. The watcher is the
 * only regular writer and collects garbage itself; this is for operators cleaning up after a
 * watcher that is gone for good, or for looking (`--dry-run`).
 */
import type { DesiredState, OwnerContext } from '../netvirt/index.js';
import { errorMessage, silentLogger } from '../common/log.js';
import type { RestconfClient } from '../restconf/client.js';
import { OdlState, type OdlEntries, type OdlKind, type UnparsedEntry } from '../watcher/odl-state.js';
import { kindDecisions } from './kind-decisions.js';
import { DELETE_ORDER, entryPath, entryUrl, KIND_LABEL, ownershipOf } from './odl-objects.js';
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
  odlKind: OdlKind;
  /** The entry as planned on, compared again right before deleting. */
  snapshot: string;
}

export interface GcPlan {
  candidates: PlannedCandidate[];
  kept: GcKept[];
}

/**
 * Names of `kind` that stay although nothing desires them now: those the translation cannot
 * decide yet (`keep`), and every ELAN of a namespace with a pod whose ELAN cannot be named now.
 */
function keptNames(kind: OdlKind, desired: DesiredState, odl: OdlState): ReadonlySet<string> {
  const keep = desired.keep;
  switch (kind) {
    case 'interface':
      return keep.interfaces;
    case 'elanInterface':
      return keep.elanInterfaces;
    case 'vpnInterface':
      return keep.vpnInterfaces;
    case 'elanInstance':
      return new Set(
        [...odl.values('elanInstance')]
          .map((e) => e.name)
          .filter((n) => keep.elanNamespaces.has(n.slice(n.lastIndexOf(':') + 1))),
      );
    case 'vpnInstance':
      return keep.vpnInstances;
    case 'k8sNode':
      return new Set();
  }
}

/** Interface entries (by name) that refer to the instance, whichever owner they have. */
function referrers(odl: OdlState, kind: 'elanInstance' | 'vpnInstance', name: string): string[] {
  if (kind === 'elanInstance')
    return [...odl.values('elanInterface')].filter((e) => e.elanInstanceName === name).map((e) => e.name);
  return [...odl.values('vpnInterface')]
    .filter((v) => v.vpnInstanceNames.some((n) => n.vpnName === name))
    .map((v) => v.name);
}

/** Pure: the candidates (in delete order) and the kept objects, from a complete snapshot. */
export function planGc(
  desired: DesiredState,
  odl: OdlState,
  owner: OwnerContext,
  client: RestconfClient,
  unparsed: readonly UnparsedEntry[],
): GcPlan {
  const candidates: PlannedCandidate[] = [];
  const kept: GcKept[] = [];
  const ietf = (name: string) => odl.get('interface', name);
  const chosen = new Set<string>();
  for (const kind of DELETE_ORDER) {
    const label = KIND_LABEL[kind];
    const unparsedReferrers = unparsed.filter((u) =>
      kind === 'elanInstance'
        ? u.kind === 'elanInterface'
        : kind === 'vpnInstance'
          ? u.kind === 'vpnInterface'
          : false,
    );
    for (const d of kindDecisions(kind, desired, odl, owner, keptNames(kind, desired, odl))) {
      const actual = odl.get(kind, d.name);
      if (!actual) continue;
      if (
        d.action === 'none' &&
        !hasDesired(desired, kind, d.name) &&
        ownershipOf(kind, actual, owner, ietf).owner === 'ours'
      ) {
        kept.push({
          kind: label,
          name: d.name,
          reason:
            'its desired state cannot be computed now (a pod, node or namespace the cluster view does not fully know yet)',
        });
        continue;
      }
      if (d.action !== 'delete-candidate') continue;
      if (kind === 'elanInstance' || kind === 'vpnInstance') {
        const staying = referrers(odl, kind, d.name).filter(
          (r) => !chosen.has(`${kind === 'elanInstance' ? 'elanInterface' : 'vpnInterface'}/${r}`),
        );
        if (staying.length > 0) {
          kept.push({ kind: label, name: d.name, reason: `still referred to by ${staying.join(', ')}` });
          continue;
        }
        if (unparsedReferrers.length > 0) {
          kept.push({
            kind: label,
            name: d.name,
            reason: `${plural(unparsedReferrers.length, 'interface entry', 'interface entries')} that do not parse might refer to it`,
          });
          continue;
        }
      }
      chosen.add(`${kind}/${d.name}`);
      candidates.push({
        kind: label,
        odlKind: kind,
        name: d.name,
        url: entryUrl(client, owner.profile, kind, d.name),
        snapshot: JSON.stringify(actual),
      });
    }
  }
  return { candidates, kept };
}

function hasDesired(desired: DesiredState, kind: OdlKind, name: string): boolean {
  const maps: Record<OdlKind, ReadonlyMap<string, unknown>> = {
    interface: desired.interfaces,
    elanInterface: desired.elanInterfaces,
    vpnInterface: desired.vpnInterfaces,
    elanInstance: desired.elanInstances,
    vpnInstance: desired.vpnInstances,
    k8sNode: desired.k8sNodes,
  };
  return maps[kind].has(name);
}

/**
 * Deletes the plan's candidates in order. Each entry is re-read first and skipped when it
 * changed (or vanished) since the plan; before the first instance, the interface lists are
 * re-read and an instance something refers to now is skipped. Stops at the first failure.
 */
export async function executeGc(
  plan: GcPlan,
  client: RestconfClient,
  owner: OwnerContext,
): Promise<GcDeletion[]> {
  const out: GcDeletion[] = [];
  const fresh = new OdlState(client, owner.profile, silentLogger());
  let referencesChecked = false;
  for (const [i, c] of plan.candidates.entries()) {
    const record = (result: GcDeletion['result'], reason?: string) =>
      out.push({ kind: c.kind, name: c.name, result, ...(reason !== undefined ? { reason } : {}) });
    try {
      if ((c.odlKind === 'elanInstance' || c.odlKind === 'vpnInstance') && !referencesChecked) {
        await fresh.load();
        referencesChecked = true;
      }
      if (c.odlKind === 'elanInstance' || c.odlKind === 'vpnInstance') {
        const now = referrers(fresh, c.odlKind, c.name);
        if (now.length > 0) {
          record('skipped', `referred to by ${now.join(', ')} now`);
          continue;
        }
      }
      const current = await fresh.refresh(c.odlKind, c.name);
      if (!current) {
        record('absent', 'already gone');
        continue;
      }
      if (JSON.stringify(current as OdlEntries[OdlKind]) !== c.snapshot) {
        record('skipped', 'changed since the plan was made (re-run gc to look again)');
        continue;
      }
      const result = await client.delete(entryPath(owner.profile, c.odlKind, c.name));
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
  deletions: GcDeletion[] | null,
): GcReport {
  return {
    dryRun: deletions === null,
    candidates: plan.candidates.map(({ kind, name, url }) => ({ kind, name, url })),
    kept: plan.kept,
    unparsed: unparsed.map((u) => ({ kind: KIND_LABEL[u.kind], name: u.name, error: u.error })),
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
