/**
 * A complete view of both sides, read in a safe order: ODL first, then Kubernetes. Any ODL
 * object odlcoe created before the ODL read belongs to a pod (node, namespace) that existed
 * before it, hence before the Kubernetes lists, so it appears in them unless it is really
 * gone. Reading the other way round, a pod created between the two reads would have its fresh
 * ODL objects look stale.
 */
import { silentLogger } from '../common/log.js';
import type { KubeClient } from '../k8s/kube-client.js';
import type { RestconfClient } from '../restconf/client.js';
import { OdlState, type UnparsedEntry } from '../watcher/odl-state.js';
import { readCluster, type KubeSnapshot, type ReadOptions } from './kube-reader.js';
import type { CliSettings } from './settings.js';

export interface OdlSnapshot {
  state: OdlState;
  /** Entries that do not parse: never judged, never deleted, always reported. */
  unparsed: UnparsedEntry[];
}

/** Every list odlcoe writes, each read whole; throws when any of them cannot be read. */
export async function readOdl(
  client: RestconfClient,
  settings: CliSettings,
  signal?: AbortSignal,
): Promise<OdlSnapshot> {
  const state = new OdlState(client, settings.profile, silentLogger());
  const unparsed = await state.load(signal);
  return { state, unparsed };
}

export interface Snapshot {
  odl: OdlSnapshot;
  kube: KubeSnapshot;
}

export async function readSnapshot(
  client: RestconfClient,
  kube: KubeClient,
  settings: CliSettings,
  opts: ReadOptions,
): Promise<Snapshot> {
  const odl = await readOdl(client, settings, opts.signal);
  const cluster = await readCluster(kube, opts);
  return { odl, kube: cluster };
}
