/**
 * The module list an ODL controller publishes, for the modules the emulator serves, in both
 * dialects' shapes (netconf `stable/aluminium`, release/aluminium-sr4):
 *
 * - RFC 8040: ietf-yang-library (RFC 7895) `modules-state` in the operational datastore,
 *   written by `SchemaContextHandler` on every schema change through
 *   `RestconfMappingNodeUtil.mapModulesByIetfYangLibraryYang`: `module-set-id` (a counter) and
 *   one `module` entry per module with `name`, `revision`, `schema`
 *   (`/modules/<name>/<revision>`), `namespace` and `conformance-type`, which ODL sets to
 *   `import` for every module without deviations. Read with
 *   `GET /rests/data/ietf-yang-library:modules-state` (or through
 *   `/restconf/operational/...`, the same datastore).
 * - bierman02: `GET /restconf/modules` (`RestconfImpl.getModules`): `{"modules":{"module":[…]}}`
 *   with `name`, `revision` and `namespace` (and `feature`, which no emulated module has).
 */
import { entryKey, type Instance, type KeyedList } from './data.js';
import type { ModuleInfo } from './netvirt-schema.js';

const YL = 'ietf-yang-library';

/** The operational `ietf-yang-library:modules-state` container of a module list. */
export function modulesStateInstance(modules: readonly ModuleInfo[], moduleSetId = '1'): Instance {
  const list: KeyedList = new Map();
  for (const m of modules) {
    const entry: Instance = new Map<string, string>([
      [`${YL}:name`, m.name],
      [`${YL}:revision`, m.revision],
      [`${YL}:schema`, `/modules/${m.name}/${m.revision}`],
      [`${YL}:namespace`, m.namespace],
      [`${YL}:conformance-type`, 'import'],
    ]);
    list.set(entryKey([m.name, m.revision]), entry);
  }
  return new Map<string, string | KeyedList>([
    [`${YL}:module-set-id`, moduleSetId],
    [`${YL}:module`, list],
  ]);
}

/** The body of bierman02's `GET /restconf/modules`. */
export function biermanModulesBody(modules: readonly ModuleInfo[]): string {
  return JSON.stringify({
    modules: {
      module: modules.map((m) => ({ name: m.name, revision: m.revision, namespace: m.namespace })),
    },
  });
}
