/**
 * The coe-northbound backend's cache of ODL's config datastore: every entry of the four COE
 * lists (this cluster's and foreign ones, which collisions are detected against), parsed, and
 * indexed by what ties an entry to a Kubernetes object: pods and services by
 * `<network-NS>/<name>` (a pod or Service re-created under the same name has a new uid, and the
 * old entry must be found to be removed), everything by uid.
 *
 * Filled by `load` (start of a leader term, periodic resync), kept current by the backend's own
 * writes, and re-read entry by entry (`refresh`) before any update or delete, so that a write is
 * always planned against what ODL holds now. A resync's load can interleave with writes; the
 * cache may then briefly hold the state from before a write. That is harmless by construction:
 * a stale "absent" leads to a create that ODL refuses (409) and a re-read; a stale "present"
 * or "different" leads to a re-read before any update or delete. Only "equal" skips ODL, and
 * the cache never shows an entry equal to the desired state unless ODL held it so.
 */
import type { Logger } from '../../common/log.js';
import {
  netvirtPaths,
  parseCoeEndpoints,
  parseCoePods,
  parseCoeServices,
  type CoeEndpoints,
  type CoePod,
  type CoeService,
  type K8sNode,
  type Profile,
} from '../../netvirt/index.js';
import type { RestconfClient } from '../../restconf/client.js';
import { k8sNodesSpec, listOf, one, readEntry, readList, type ListSpec } from '../odl-lists.js';

export interface CoeEntries {
  coePod: CoePod;
  coeService: CoeService;
  coeEndpoints: CoeEndpoints;
  k8sNode: K8sNode;
}
export type CoeKind = keyof CoeEntries;
export const COE_KINDS: readonly CoeKind[] = ['coePod', 'coeService', 'coeEndpoints', 'k8sNode'];

function specs(profile: Profile): { [K in CoeKind]: ListSpec<CoeEntries[K]> } {
  const p = netvirtPaths(profile);
  return {
    coePod: {
      key: 'uid',
      list: listOf(p.coePods(), 'pods'),
      entry: p.coePod,
      parse: (e) => one(parseCoePods({ pods: [e] }), 'pods'),
      nameOf: (e) => e.uid,
    },
    coeService: {
      key: 'uid',
      list: listOf(p.coeServices(), 'services'),
      entry: p.coeService,
      parse: (e) => one(parseCoeServices({ services: [e] }), 'services'),
      nameOf: (e) => e.uid,
    },
    coeEndpoints: {
      key: 'uid',
      list: listOf(p.coeEndpointsInfo(), 'endpoints'),
      entry: p.coeEndpoints,
      parse: (e) => one(parseCoeEndpoints({ endpoints: [e] }), 'endpoints'),
      nameOf: (e) => e.uid,
    },
    k8sNode: k8sNodesSpec(profile),
  };
}

/** An entry ODL holds that does not parse as its model: never written, never deleted. */
export interface UnparsedEntry {
  kind: CoeKind;
  uid: string;
  error: string;
}

/** `<network-NS>/<name>` of a pod or services entry, when it has both. */
export function namedKey(entry: { networkNs?: string; name?: string }): string | undefined {
  return entry.networkNs && entry.name ? `${entry.networkNs}/${entry.name}` : undefined;
}

class NameIndex {
  private readonly map = new Map<string, Set<string>>();
  add(key: string | undefined, uid: string): void {
    if (key === undefined) return;
    let set = this.map.get(key);
    if (!set) this.map.set(key, (set = new Set()));
    set.add(uid);
  }
  remove(key: string | undefined, uid: string): void {
    if (key === undefined) return;
    const set = this.map.get(key);
    set?.delete(uid);
    if (set?.size === 0) this.map.delete(key);
  }
  get(key: string): string[] {
    return [...(this.map.get(key) ?? [])];
  }
  clear(): void {
    this.map.clear();
  }
}

export class CoeOdlCache {
  private readonly specs: { [K in CoeKind]: ListSpec<CoeEntries[K]> };
  private maps: { [K in CoeKind]: Map<string, CoeEntries[K]> } = emptyMaps();
  private unparsed: { [K in CoeKind]: Set<string> } = emptySets();
  private readonly podsByName = new NameIndex();
  private readonly servicesByName = new NameIndex();

  constructor(
    private readonly client: RestconfClient,
    profile: Profile,
    private readonly logger: Logger,
  ) {
    this.specs = specs(profile);
  }

  get<K extends CoeKind>(kind: K, uid: string): CoeEntries[K] | undefined {
    return this.maps[kind].get(uid);
  }

  values<K extends CoeKind>(kind: K): IterableIterator<CoeEntries[K]> {
    return this.maps[kind].values();
  }

  size(kind: CoeKind): number {
    return this.maps[kind].size;
  }

  isUnparsed(kind: CoeKind, uid: string): boolean {
    return this.unparsed[kind].has(uid);
  }

  /** Uids of the pods entries named `<namespace>/<name>`. */
  podsNamed(namespace: string, name: string): string[] {
    return this.podsByName.get(`${namespace}/${name}`);
  }

  /** Uids of the services entries named `<namespace>/<name>`. */
  servicesNamed(namespace: string, name: string): string[] {
    return this.servicesByName.get(`${namespace}/${name}`);
  }

  set<K extends CoeKind>(kind: K, entry: CoeEntries[K]): void {
    this.unindex(kind, entry.uid);
    (this.maps[kind] as Map<string, CoeEntries[K]>).set(entry.uid, entry);
    this.unparsed[kind].delete(entry.uid);
    this.index(kind, entry);
  }

  remove(kind: CoeKind, uid: string): void {
    this.unindex(kind, uid);
    this.maps[kind].delete(uid);
    this.unparsed[kind].delete(uid);
  }

  clear(): void {
    this.maps = emptyMaps();
    this.unparsed = emptySets();
    this.podsByName.clear();
    this.servicesByName.clear();
  }

  /** Reads every list; the cache is replaced only when all four were read. */
  async load(): Promise<UnparsedEntry[]> {
    const maps = emptyMaps();
    const unparsed = emptySets();
    const problems: UnparsedEntry[] = [];
    for (const kind of COE_KINDS) {
      const read = await readList<unknown>(this.client, this.specs[kind] as ListSpec<unknown>);
      maps[kind] = read.entries as never;
      for (const u of read.unparsed) {
        unparsed[kind].add(u.name);
        problems.push({ kind, uid: u.name, error: u.error });
      }
    }
    this.maps = maps;
    this.unparsed = unparsed;
    this.podsByName.clear();
    this.servicesByName.clear();
    for (const pod of maps.coePod.values()) this.podsByName.add(namedKey(pod), pod.uid);
    for (const service of maps.coeService.values()) this.servicesByName.add(namedKey(service), service.uid);
    this.logger.info('read ODL COE state', {
      ...Object.fromEntries(COE_KINDS.map((k) => [k, this.maps[k].size])),
      unparsed: problems.length,
    });
    return problems;
  }

  /** Re-reads one entry into the cache and returns it (undefined when ODL has none or it does not parse). */
  async refresh<K extends CoeKind>(kind: K, uid: string): Promise<CoeEntries[K] | undefined> {
    const read = await readEntry(this.client, this.specs[kind], uid);
    switch (read.state) {
      case 'absent':
        this.remove(kind, uid);
        return undefined;
      case 'parsed':
        this.set(kind, read.entry);
        return read.entry;
      case 'unparsed':
        this.remove(kind, uid);
        this.unparsed[kind].add(uid);
        this.logger.warn('ODL COE entry does not parse; it is left alone', { kind, uid, error: read.error });
        return undefined;
    }
  }

  private index<K extends CoeKind>(kind: K, entry: CoeEntries[K]): void {
    if (kind === 'coePod') this.podsByName.add(namedKey(entry as CoePod), entry.uid);
    if (kind === 'coeService') this.servicesByName.add(namedKey(entry as CoeService), entry.uid);
  }

  private unindex(kind: CoeKind, uid: string): void {
    const old = this.maps[kind].get(uid);
    if (!old) return;
    if (kind === 'coePod') this.podsByName.remove(namedKey(old as CoePod), uid);
    if (kind === 'coeService') this.servicesByName.remove(namedKey(old as CoeService), uid);
  }
}

function emptyMaps(): { [K in CoeKind]: Map<string, CoeEntries[K]> } {
  return { coePod: new Map(), coeService: new Map(), coeEndpoints: new Map(), k8sNode: new Map() };
}

function emptySets(): { [K in CoeKind]: Set<string> } {
  return { coePod: new Set(), coeService: new Set(), coeEndpoints: new Set(), k8sNode: new Set() };
}
