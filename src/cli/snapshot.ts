/**
 * A complete view of both sides, read in a safe order: ODL first, then Kubernetes. Any ODL
 * object odlcoe created before the ODL read belongs to a pod (node, namespace) that existed
 * before it, hence before the Kubernetes lists, so it appears in them unless it is really
 * gone. Reading the other way round, a pod created between the two reads would have its fresh
 * ODL objects look stale.
 */
import type { KubeClient } from '../k8s/kube-client.js';
import { OdlReader, type OdlSnapshot } from '../odl/reader.js';
import type { RestconfClient } from '../restconf/client.js';
import { readCluster, type KubeSnapshot, type ReadOptions } from './kube-reader.js';
import { NETVIRT_MODEL, type CliModel } from './model.js';
import type { CliSettings } from './settings.js';

export type { OdlSnapshot };

/**
 * odlcoectl's reader: the model's kinds (default: the netvirt backend's) that ODL has a model
 * for (no k8s-node without the COE models), in the settings' profile.
 */
export function odlReader(
  client: RestconfClient,
  settings: Pick<CliSettings, 'profile' | 'models'>,
  model: CliModel = NETVIRT_MODEL,
): OdlReader {
  return new OdlReader(
    client,
    settings.profile,
    model.kinds.restrictedTo(settings.profile, settings.models.modules),
  );
}

/** Every list odlcoe writes, each read whole; throws when any of them cannot be read. */
export async function readOdl(
  client: RestconfClient,
  settings: Pick<CliSettings, 'profile' | 'models'>,
  signal?: AbortSignal,
  reader: OdlReader = odlReader(client, settings),
): Promise<OdlSnapshot> {
  return reader.snapshot(signal);
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
  reader: OdlReader = odlReader(client, settings),
): Promise<Snapshot> {
  const odl = await readOdl(client, settings, opts.signal, reader);
  const cluster = await readCluster(kube, opts, settings.serviceCidrs);
  return { odl, kube: cluster };
}
