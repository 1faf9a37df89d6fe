import { createHash } from 'node:crypto';
import type { Logger } from '../common/log.js';
import { entryKey, entryKeyValues, type Instance, type KeyedList } from './data.js';
import type { Datastore } from './datastore.js';
import type { ContainerNode, ListNode, SchemaRoot } from './schema.js';
import type { Step } from './url.js';

/**
 * What ODL itself writes after a client's write, emulated the way ODL does it: asynchronously,
 * a few milliseconds after the client got its answer.
 *
 * - ELAN manager merges `elan-tag` (from an ID pool starting at 5000; one tag per ELAN name,
 *   never handed to another ELAN while allocated) and `mac-timeout` 300 (when absent) into every
 *   `elan:elan-instances/elan-instance` config entry, and releases the tag when the entry goes.
 * - With `fillParentInterface`, Genius fills `odl-interface:parent-interface` of l2vlan
 *   interfaces that lack it, as if their OVS port had appeared (`tap` + 11 hex digits derived
 *   from the interface name).
 * - Genius keeps `ietf-interfaces:interfaces-state/interface` (operational) for configured
 *   interfaces that have a parent interface (in ODL: whose OVS port exists): type,
 *   admin-status, oper-status, if-index, lower-layer-if. A new entry appears `operDelayMs`
 *   after the interface got its parent (ODL takes a while to bind a port: Genius's
 *   `InterfaceStateAddHelper` runs on the OVSDB port event, not on the config write); with
 *   `operStatus: false` it never appears, as on an ODL whose Genius never sees the port.
 *   An entry already published follows admin-status changes at once.
 * - aclservice, after it has removed the flows of an ACE marked `aclservice:deleted: true`,
 *   deletes that ACE from config itself (`AclServiceUtils.deleteAcesFromConfigDS`): the
 *   removal protocol a client must follow, since a plain DELETE leaves the flows.
 */
export const ELAN_TAG_FIRST = 5000;
export const ELAN_TAG_LAST = 100_000;
export const DEFAULT_MAC_TIMEOUT = 300;
const WRITE_BACK_DELAY_MS = 5;

const ELAN = 'elan';
const IF = 'ietf-interfaces';
const ODL_IF = 'odl-interface';
const ACL = 'ietf-access-control-list';

/** Allocates ELAN tags by ELAN name; a released tag is reused only after the range is used up. */
export class ElanTagPool {
  private readonly byName = new Map<string, number>();
  private readonly inUse = new Set<number>();
  private readonly released: number[] = [];
  private next = ELAN_TAG_FIRST;

  /** Records a tag found in the data (state reload, or a client that wrote its own). */
  claim(name: string, tag: number): void {
    if (this.byName.get(name) === tag) return;
    this.release(name);
    this.byName.set(name, tag);
    this.inUse.add(tag);
    if (tag >= this.next && tag <= ELAN_TAG_LAST) this.next = tag + 1;
  }

  /** The tag of `name`, allocating one; undefined when the pool is exhausted. */
  allocate(name: string): number | undefined {
    const existing = this.byName.get(name);
    if (existing !== undefined) return existing;
    let tag: number | undefined;
    while (this.next <= ELAN_TAG_LAST && this.inUse.has(this.next)) this.next++;
    if (this.next <= ELAN_TAG_LAST) tag = this.next++;
    else {
      while (this.released.length > 0 && tag === undefined) {
        const candidate = this.released.shift()!;
        if (!this.inUse.has(candidate)) tag = candidate;
      }
    }
    if (tag === undefined) return undefined;
    this.byName.set(name, tag);
    this.inUse.add(tag);
    return tag;
  }

  release(name: string): void {
    const tag = this.byName.get(name);
    if (tag === undefined) return;
    this.byName.delete(name);
    this.inUse.delete(tag);
    this.released.push(tag);
  }
}

/** The parent interface Genius would find for `name` (deterministic, a valid Linux name). */
export function parentInterfaceName(name: string): string {
  return `tap${createHash('sha256').update(name).digest('hex').slice(0, 11)}`;
}

interface WatchedList {
  top: ContainerNode;
  list: ListNode;
  pending: Set<string>;
}

/** A token from `beforeWrite`, handed back to `afterWrite`. */
export interface WriteWatch {
  steps: readonly Step[];
  before: Map<WatchedList, string[]>;
}

export class OdlWriteBacks {
  readonly elanTags = new ElanTagPool();
  private readonly ifIndexes = new Map<string, number>();
  private nextIfIndex = 1;
  private readonly elan: WatchedList;
  private readonly interfaces: WatchedList;
  private readonly interfacesState: { top: ContainerNode; list: ListNode };
  private readonly acls: WatchedList;
  private readonly aceList: { entries: ContainerNode; ace: ListNode };
  private timer: NodeJS.Timeout | undefined;
  /** Interfaces whose first interfaces-state entry waits out `operDelayMs`, by name. */
  private readonly operTimers = new Map<string, NodeJS.Timeout>();

  constructor(
    schema: SchemaRoot,
    private readonly config: Datastore,
    private readonly operational: Datastore,
    private readonly options: {
      fillParentInterface: boolean;
      /** Delay of a new interfaces-state entry; 0 = with the other write-backs. */
      operDelayMs?: number;
      /** false: never publish interfaces-state (ODL that never sees the port). */
      operStatus?: boolean;
      logger: Logger;
    },
  ) {
    this.elan = { ...lookup(schema, `${ELAN}:elan-instances`, 'elan-instance'), pending: new Set() };
    this.interfaces = { ...lookup(schema, `${IF}:interfaces`, 'interface'), pending: new Set() };
    this.interfacesState = lookup(schema, `${IF}:interfaces-state`, 'interface');
    this.acls = { ...lookup(schema, `${ACL}:access-lists`, 'acl'), pending: new Set() };
    const entries = this.acls.list.children.byQName.get(`${ACL}:access-list-entries`);
    const ace = entries?.kind === 'container' ? entries.children.byQName.get(`${ACL}:ace`) : undefined;
    if (entries?.kind !== 'container' || ace?.kind !== 'list') throw new Error('schema lacks acl/ace');
    this.aceList = { entries, ace };
  }

  private get watchedLists(): WatchedList[] {
    return [this.elan, this.interfaces, this.acls];
  }

  /** Call before a config write or delete at `steps`. */
  beforeWrite(steps: readonly Step[]): WriteWatch {
    const before = new Map<WatchedList, string[]>();
    for (const watched of this.watchedLists) {
      const keys = this.affectedKeys(watched, steps);
      if (keys.length > 0) before.set(watched, keys);
    }
    return { steps, before };
  }

  /** Call after the write succeeded: schedules ODL's reaction to every affected entry. */
  afterWrite(watch: WriteWatch): void {
    for (const watched of this.watchedLists) {
      for (const key of watch.before.get(watched) ?? []) watched.pending.add(key);
      for (const key of this.affectedKeys(watched, watch.steps)) watched.pending.add(key);
    }
    this.schedule();
  }

  /** After loading a state file: rebuild the tag pool and the operational view from config. */
  rebuild(): void {
    for (const [name, entry] of this.entries(this.elan)) {
      const tag = entry.get(`${ELAN}:elan-tag`);
      if (typeof tag === 'number') this.elanTags.claim(name, tag);
    }
    for (const watched of this.watchedLists) {
      for (const [key] of this.entries(watched)) watched.pending.add(key);
    }
    this.flush();
  }

  /** Applies all pending write-backs now (also used by `close`). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const name of this.elan.pending) this.reactToElanInstance(name);
    this.elan.pending.clear();
    for (const name of this.interfaces.pending) this.reactToInterface(name);
    this.interfaces.pending.clear();
    for (const key of this.acls.pending) this.reactToAcl(key);
    this.acls.pending.clear();
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const timer of this.operTimers.values()) clearTimeout(timer);
    this.operTimers.clear();
  }

  private schedule(): void {
    if (this.timer || this.watchedLists.every((w) => w.pending.size === 0)) return;
    this.timer = setTimeout(() => this.flush(), WRITE_BACK_DELAY_MS);
  }

  private entries(
    watched: { top: ContainerNode; list: ListNode },
    store: Datastore = this.config,
  ): KeyedList {
    return (
      (store.read([{ node: watched.top }, { node: watched.list }]) as KeyedList | undefined) ?? new Map()
    );
  }

  /** Keys of `watched` entries a write at `steps` can change (read in the current data). */
  private affectedKeys(watched: WatchedList, steps: readonly Step[]): string[] {
    const [first, second] = steps;
    if (first?.node !== watched.top) return [];
    if (!second) return [...this.entries(watched).keys()];
    if (second.node !== watched.list) return [];
    return second.key !== undefined ? [second.key] : [...this.entries(watched).keys()];
  }

  private entrySteps(watched: { top: ContainerNode; list: ListNode }, entry: Instance): Step[] {
    const keyValues = entryKeyValues(watched.list, entry);
    return [{ node: watched.top }, { node: watched.list, keyValues, key: String(keyValues[0]) }];
  }

  private reactToElanInstance(name: string): void {
    const entry = this.entries(this.elan).get(name);
    if (!entry) {
      this.elanTags.release(name);
      return;
    }
    const additions: Instance = new Map();
    const written = entry.get(`${ELAN}:elan-tag`);
    if (typeof written === 'number' && written !== 0) this.elanTags.claim(name, written);
    else {
      const tag = this.elanTags.allocate(name);
      if (tag === undefined) this.options.logger.error('ELAN tag pool exhausted', { elanInstance: name });
      else additions.set(`${ELAN}:elan-tag`, tag);
    }
    if (!entry.has(`${ELAN}:mac-timeout`)) additions.set(`${ELAN}:mac-timeout`, DEFAULT_MAC_TIMEOUT);
    if (additions.size > 0) this.config.merge(this.entrySteps(this.elan, entry), additions);
  }

  /** aclservice's side of the ACE removal protocol: ACEs marked deleted leave config. */
  private reactToAcl(key: string): void {
    const acl = this.entries(this.acls).get(key);
    const entries = acl?.get(`${ACL}:access-list-entries`) as Instance | undefined;
    const aces = entries?.get(`${ACL}:ace`) as KeyedList | undefined;
    if (!acl || !aces) return;
    const keyValues = entryKeyValues(this.acls.list, acl);
    for (const [rule, ace] of [...aces]) {
      if (ace.get('aclservice:deleted') !== true) continue;
      this.config.delete(
        [
          { node: this.acls.top },
          { node: this.acls.list, keyValues, key: entryKey(keyValues) },
          { node: this.aceList.entries },
          { node: this.aceList.ace, keyValues: [rule], key: rule },
        ],
        rule,
      );
    }
  }

  private reactToInterface(name: string): void {
    let entry = this.entries(this.interfaces).get(name);
    if (!entry) {
      this.removeInterfaceState(name);
      return;
    }
    const parentLeaf = `${ODL_IF}:parent-interface`;
    if (
      this.options.fillParentInterface &&
      entry.get(`${IF}:type`) === 'iana-if-type:l2vlan' &&
      !entry.has(parentLeaf)
    ) {
      this.config.merge(
        this.entrySteps(this.interfaces, entry),
        new Map([[parentLeaf, parentInterfaceName(name)]]),
      );
      entry = this.entries(this.interfaces).get(name)!;
    }
    if (typeof entry.get(parentLeaf) !== 'string' || this.options.operStatus === false) {
      this.removeInterfaceState(name);
      return;
    }
    const delay = this.options.operDelayMs ?? 0;
    if (delay <= 0 || this.entries(this.interfacesState, this.operational).has(name)) {
      this.publishInterfaceState(name);
      return;
    }
    if (this.operTimers.has(name)) return;
    const timer = setTimeout(() => {
      this.operTimers.delete(name);
      this.publishInterfaceState(name);
    }, delay);
    timer.unref();
    this.operTimers.set(name, timer);
  }

  /** Writes the interfaces-state entry of configured interface `name` from its config now. */
  private publishInterfaceState(name: string): void {
    const entry = this.entries(this.interfaces).get(name);
    const parent = entry?.get(`${ODL_IF}:parent-interface`);
    if (!entry || typeof parent !== 'string') return;
    let ifIndex = this.ifIndexes.get(name);
    if (ifIndex === undefined) {
      ifIndex = this.nextIfIndex++;
      this.ifIndexes.set(name, ifIndex);
    }
    const enabled = entry.get(`${IF}:enabled`) !== false;
    const state: Instance = new Map<string, string | number | string[]>([
      [`${IF}:name`, name],
      [`${IF}:type`, entry.get(`${IF}:type`) as string],
      [`${IF}:admin-status`, enabled ? 'up' : 'down'],
      [`${IF}:oper-status`, enabled ? 'up' : 'down'],
      [`${IF}:if-index`, ifIndex],
      [`${IF}:lower-layer-if`, [parent]],
    ]);
    this.operational.put(this.entrySteps(this.interfacesState, state), state);
  }

  private removeInterfaceState(name: string): void {
    const timer = this.operTimers.get(name);
    if (timer) clearTimeout(timer);
    this.operTimers.delete(name);
    this.ifIndexes.delete(name);
    const state = this.entries(this.interfacesState, this.operational).get(name);
    if (state) this.operational.delete(this.entrySteps(this.interfacesState, state), name);
  }
}

function lookup(schema: SchemaRoot, top: string, list: string): { top: ContainerNode; list: ListNode } {
  const topNode = schema.children.byQName.get(top);
  const listNode =
    topNode?.kind === 'container' ? topNode.children.byQName.get(`${topNode.module}:${list}`) : undefined;
  if (topNode?.kind !== 'container' || listNode?.kind !== 'list')
    throw new Error(`schema lacks ${top}/${list}`);
  return { top: topNode, list: listNode };
}
