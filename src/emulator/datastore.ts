import { checkMandatory } from './codec.js';
import type { Child, Instance, KeyedList } from './data.js';
import { invalidValue, RestconfError } from './errors.js';
import type { LeafValue } from './leaf-types.js';
import { keyLeaves, schemaPathOf, type InnerNode, type SchemaNode } from './schema.js';
import type { Step } from './url.js';

/**
 * One datastore (config or operational) as a tree of Maps. Every operation addresses a node by
 * resolved steps and touches only the maps along that path, so an entry write costs the same
 * with 10 or 40,000 entries beside it.
 *
 * Writes are atomic: the new value is computed, put in place, the result checked (mandatory
 * leaves of the written subtree and of every entry on the path), and on failure the previous
 * value and any parents created on the way are restored, so a refused write leaves nothing behind.
 * Like ODL's structural containers, a container or list left empty disappears (a GET of it is 404).
 */
type Slot = { holder: Map<string, unknown>; key: string };

interface Located {
  slot: Slot;
  /** Maps and keys inserted while creating missing parents, for undo. */
  created: Slot[];
  /** The instances (containers, entries) along the path, with their schema nodes. */
  ancestors: { node: InnerNode; instance: Instance; path: string }[];
}

export class Datastore {
  root: Instance = new Map();
  /** Called after every successful mutation (persistence marks itself dirty here). */
  onMutate: () => void = () => undefined;

  /** The value at `steps`, or undefined when absent. */
  read(steps: readonly Step[]): Child | undefined {
    let current: Child | undefined = this.root;
    for (const step of steps) {
      if (current === undefined) return undefined;
      current = (current as Instance).get(step.node.qname);
      if (current !== undefined && step.key !== undefined) current = (current as KeyedList).get(step.key);
    }
    return current;
  }

  /** Replaces (or creates) the node at `steps`; returns whether it existed before. */
  put(steps: readonly Step[], value: Child): { existed: boolean } {
    guardKeyLeaf(steps);
    const located = this.locate(steps, true)!;
    const old = located.slot.holder.get(located.slot.key) as Child | undefined;
    this.commit(steps, located, old, value);
    return { existed: old !== undefined };
  }

  /** Merges `value` into the node at `steps` (creating it and its parents when missing). */
  merge(steps: readonly Step[], value: Child): { existed: boolean } {
    guardKeyLeaf(steps);
    const located = this.locate(steps, true)!;
    const old = located.slot.holder.get(located.slot.key) as Child | undefined;
    const last = steps[steps.length - 1]!;
    this.commit(
      steps,
      located,
      old,
      old === undefined ? value : mergeValue(last.node, old, value, last.key !== undefined),
    );
    return { existed: old !== undefined };
  }

  /** Creates the node at `steps`; 409 `data-exists` when it is already there. */
  create(steps: readonly Step[], value: Child, describe: string): void {
    const located = this.locate(steps, true)!;
    const old = located.slot.holder.get(located.slot.key) as Child | undefined;
    if (old !== undefined) {
      undo(located.created);
      throw new RestconfError('protocol', 'data-exists', `Data already exists for path: ${describe}`);
    }
    this.commit(steps, located, undefined, value);
  }

  /** Deletes the node at `steps`; 404 `data-missing` when absent. */
  delete(steps: readonly Step[], describe: string): void {
    guardKeyLeaf(steps);
    const located = this.locate(steps, false);
    const old = located?.slot.holder.get(located.slot.key) as Child | undefined;
    if (!located || old === undefined) {
      throw new RestconfError('protocol', 'data-missing', `Data does not exist for path: ${describe}`);
    }
    this.commit(steps, located, old, undefined);
  }

  private commit(
    steps: readonly Step[],
    located: Located,
    old: Child | undefined,
    value: Child | undefined,
  ): void {
    const { slot } = located;
    if (value === undefined) slot.holder.delete(slot.key);
    else slot.holder.set(slot.key, value);
    try {
      const node = steps[steps.length - 1]!.node;
      if (value !== undefined)
        checkSubtree(node, value, schemaPathOf(node), steps[steps.length - 1]!.key !== undefined);
      for (const { node: ancestor, instance, path } of located.ancestors)
        checkMandatory(ancestor, instance, path, false);
    } catch (err) {
      if (old === undefined) slot.holder.delete(slot.key);
      else slot.holder.set(slot.key, old);
      undo(located.created);
      throw err;
    }
    this.prune(steps);
    this.onMutate();
  }

  /**
   * Walks to the slot of `steps`. With `create`, missing parent containers and list entries
   * are created (entries with their key leaves), as ODL's ensure-parents merge does.
   */
  private locate(steps: readonly Step[], create: boolean): Located | undefined {
    if (steps.length === 0)
      throw new RestconfError('protocol', 'operation-not-supported', 'The datastore root cannot be written', {
        status: 405,
      });
    const created: Slot[] = [];
    const ancestors: Located['ancestors'] = [];
    let instance: Instance = this.root;
    let path = '';
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i]!;
      const last = i === steps.length - 1;
      const node = step.node;
      path += `/${i === 0 || node.module !== steps[i - 1]!.node.module ? node.qname : node.name}`;
      if (last && step.key === undefined)
        return { slot: { holder: instance, key: node.qname }, created, ancestors };
      let child = instance.get(node.qname) as Instance | KeyedList | undefined;
      if (child === undefined) {
        if (!create) return undefined;
        child = new Map();
        instance.set(node.qname, child);
        created.push({ holder: instance, key: node.qname });
      }
      if (step.key !== undefined) {
        const list = child as KeyedList;
        path += `[${step.key}]`;
        if (last) return { slot: { holder: list, key: step.key }, created, ancestors };
        let entry = list.get(step.key);
        if (entry === undefined) {
          if (!create) return undefined;
          entry = newEntry(node as InnerNode, step.keyValues!);
          list.set(step.key, entry);
          created.push({ holder: list, key: step.key });
        }
        instance = entry;
      } else {
        instance = child as Instance;
      }
      ancestors.push({ node: node as InnerNode, instance, path });
    }
    throw new Error('unreachable: the loop returns at the last step');
  }

  /** Removes containers and lists left empty along `steps`, deepest first. */
  private prune(steps: readonly Step[]): void {
    const chain: { holder: Map<string, unknown>; key: string }[] = [];
    let instance: Instance | undefined = this.root;
    for (const step of steps) {
      if (!instance) break;
      const child = instance.get(step.node.qname);
      if (child === undefined) break;
      chain.push({ holder: instance, key: step.node.qname });
      if (step.key !== undefined) {
        const entry = (child as KeyedList).get(step.key);
        if (!entry) break;
        chain.push({ holder: child as KeyedList, key: step.key });
        instance = entry;
      } else {
        instance = step.node.kind === 'container' ? (child as Instance) : undefined;
      }
    }
    for (let i = chain.length - 1; i >= 0; i--) {
      const { holder, key } = chain[i]!;
      const value = holder.get(key);
      if (isEmpty(value)) holder.delete(key);
      else if (value !== undefined) break;
    }
  }
}

function newEntry(list: InnerNode, keyValues: readonly LeafValue[]): Instance {
  const entry: Instance = new Map();
  if (list.kind === 'list') keyLeaves(list).forEach((leaf, i) => entry.set(leaf.qname, keyValues[i]!));
  return entry;
}

function isEmpty(value: unknown): boolean {
  if (value instanceof Map) return value.size === 0;
  return Array.isArray(value) && value.length === 0;
}

function undo(created: readonly Slot[]): void {
  for (let i = created.length - 1; i >= 0; i--) created[i]!.holder.delete(created[i]!.key);
}

/** A key leaf is part of its entry's identity: it is written and deleted with the entry only. */
function guardKeyLeaf(steps: readonly Step[]): void {
  const last = steps[steps.length - 1];
  const parent = steps[steps.length - 2];
  if (
    last?.node.kind === 'leaf' &&
    parent?.node.kind === 'list' &&
    parent.node.keys.includes(last.node.name) &&
    parent.node.module === last.node.module
  ) {
    throw invalidValue(
      `${last.node.name} is a key of ${parent.node.name}: write or delete the whole entry instead`,
    );
  }
}

function checkSubtree(node: SchemaNode, value: Child, path: string, singleEntry: boolean): void {
  if (node.kind === 'container') checkMandatory(node, value as Instance, path, true);
  else if (node.kind === 'list') {
    if (singleEntry) checkMandatory(node, value as Instance, path, true);
    else {
      const entries = node.keys.length === 0 ? (value as Instance[]) : (value as KeyedList).values();
      for (const entry of entries) checkMandatory(node, entry, path, true);
    }
  }
}

/**
 * ODL merge semantics without mutating `old`: containers, list entries and keyed lists merge
 * member by member, leaf-lists take the union, keyless lists and leaves are replaced.
 * `asEntry` says that a list node's value is one entry rather than the whole list.
 */
export function mergeValue(node: SchemaNode, old: Child, incoming: Child, asEntry: boolean): Child {
  switch (node.kind) {
    case 'leaf':
      return incoming;
    case 'leaf-list': {
      const merged = [...(old as LeafValue[])];
      for (const v of incoming as LeafValue[]) if (!merged.includes(v)) merged.push(v);
      return merged;
    }
    case 'container':
      return mergeInstance(node, old as Instance, incoming as Instance);
    case 'list':
      if (asEntry) return mergeInstance(node, old as Instance, incoming as Instance);
      if (node.keys.length === 0) return incoming;
      return mergeEntries(node, old as KeyedList, incoming as KeyedList);
  }
}

function mergeEntries(node: InnerNode, old: KeyedList, incoming: KeyedList): KeyedList {
  const merged: KeyedList = new Map(old);
  for (const [key, entry] of incoming) {
    const previous = old.get(key);
    merged.set(key, previous ? mergeInstance(node, previous, entry) : entry);
  }
  return merged;
}

function mergeInstance(node: InnerNode, old: Instance, incoming: Instance): Instance {
  const merged: Instance = new Map(old);
  for (const [qname, value] of incoming) {
    const child = node.children.byQName.get(qname);
    const previous = old.get(qname);
    merged.set(qname, child && previous !== undefined ? mergeValue(child, previous, value, false) : value);
  }
  return merged;
}
