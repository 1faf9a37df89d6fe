/**
 * YANG Patch as ODL Sodium/Aluminium apply it (`PATCH /rests/data[/…]`, `PATCH
 * /restconf/config[/…]` with `application/yang.patch+json`; see docs/restconf-client.md for
 * the sources): the whole document is read first (a malformed document, an unknown target or a
 * value that breaks the schema is a 400 errors document and nothing is applied), then the edits
 * run in order in one transaction. The first failing edit stops it: nothing is applied, and
 * the answer is still 200 with a `yang-patch-status` listing `ok` for the edits before it,
 * its errors for it, and nothing after it. A failure when committing (here: a mandatory leaf
 * missing after all edits) is a global error of the same 200 document.
 */
import type { Dialect } from '../restconf/path.js';
import { decodeEntry, decodeValue, parseJsonText, resolveMember } from './codec.js';
import { entryKey, type Child } from './data.js';
import type { Datastore } from './datastore.js';
import { malformed, RestconfError } from './errors.js';
import { parseLeafValue, type LeafValue } from './leaf-types.js';
import { keyLeaves, schemaPathOf, type ChildIndex, type SchemaNode, type SchemaRoot } from './schema.js';
import type { Step } from './url.js';

type Operation = 'create' | 'delete' | 'insert' | 'merge' | 'move' | 'replace' | 'remove';
const OPERATIONS: readonly Operation[] = ['create', 'delete', 'insert', 'merge', 'move', 'replace', 'remove'];
const WITH_VALUE = new Set<Operation>(['create', 'insert', 'merge', 'replace']);

/** One edit, read and decoded: what to do at which nodes. */
interface Edit {
  id: string;
  operation: Operation;
  /** The target as sent (for error-path). */
  target: string;
  /** Nodes to write: one per list entry of the value, or the target itself. */
  writes: { steps: Step[]; value?: Child; raw?: unknown }[];
}

export interface PatchResult {
  body: string;
  /** Edits applied (0 when the patch failed). */
  applied: number;
  /** Every node the applied edits touched, for ODL's write-backs. */
  touched: Step[][];
}

function readError(message: string): RestconfError {
  return malformed(`Error parsing json input: ${message}`);
}

/** Reads a YANG-Patch document addressed to `base` (the URL's steps). Throws a 400 error. */
export function readPatch(
  schema: SchemaRoot,
  base: readonly Step[],
  text: string,
  dialect: Dialect,
): { patchId: string; edits: Edit[] } {
  const doc = parseJsonText(text);
  const top =
    typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? (doc as Record<string, unknown>) : {};
  const patch = top['ietf-yang-patch:yang-patch'] ?? top['yang-patch'];
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch))
    throw readError('the body holds no ietf-yang-patch:yang-patch');
  const { 'patch-id': patchId, edit } = patch as Record<string, unknown>;
  const list = Array.isArray(edit) ? edit : edit === undefined ? [] : [edit];
  const edits = list.map((raw) => readEdit(schema, base, raw, dialect));
  return { patchId: typeof patchId === 'string' ? patchId : '', edits };
}

function readEdit(schema: SchemaRoot, base: readonly Step[], raw: unknown, dialect: Dialect): Edit {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw readError('an edit is not an object');
  const members = raw as Record<string, unknown>;
  const id = members['edit-id'];
  const op = typeof members.operation === 'string' ? members.operation.toLowerCase() : undefined;
  const target = members.target;
  if (typeof id !== 'string' || typeof target !== 'string' || !OPERATIONS.includes(op as Operation))
    throw new RestconfError('protocol', 'malformed-message', 'Error parsing input');
  const operation = op as Operation;
  const keys = Object.keys(members);
  const hasValue = 'value' in members;
  if (hasValue) {
    // ODL re-serialises a value it has to hold back through a buffer that copies strings
    // unescaped and knows no numbers, booleans or nulls: bierman02 always holds the value
    // back, RFC 8040 only when it comes before the target.
    const buffered = dialect === 'bierman02' || keys.indexOf('value') < keys.indexOf('target');
    if (buffered && !survivesBuffer(members.value))
      throw readError('Expected BEGIN_OBJECT but was a number, boolean, null or an unescaped string');
  }
  if (WITH_VALUE.has(operation) !== hasValue)
    throw new RestconfError('protocol', 'malformed-message', 'Error parsing input');
  const steps = target === '/' ? [...base] : [...base, ...parseTarget(schema, base, target)];
  if (!hasValue) return { id, operation, target, writes: [{ steps }] };
  return { id, operation, target, writes: decodeEditValue(schema, steps, members.value) };
}

function survivesBuffer(value: unknown): boolean {
  if (typeof value === 'string') return ![...value].some((ch) => ch === '"' || ch === '\\' || ch < ' ');
  if (Array.isArray(value)) return value.every(survivesBuffer);
  if (typeof value === 'object' && value !== null) return Object.values(value).every(survivesBuffer);
  return false;
}

/**
 * An instance-identifier in ODL's codec form, `/m:node[m:key='v']/…`, resolved below `base`.
 * Prefixes are module names; an unprefixed node or key takes its parent's module.
 */
function parseTarget(schema: SchemaRoot, base: readonly Step[], target: string): Step[] {
  const steps: Step[] = [];
  let parent: SchemaNode | undefined = base[base.length - 1]?.node;
  let i = 0;
  const bad = (why: string) => readError(`target ${target}: ${why}`);
  while (i < target.length) {
    if (target[i] !== '/') throw bad('expected /');
    i++;
    const nameEnd = target.slice(i).search(/[[/]/);
    const qname = nameEnd === -1 ? target.slice(i) : target.slice(i, i + nameEnd);
    i = nameEnd === -1 ? target.length : i + nameEnd;
    const children: ChildIndex | undefined =
      parent === undefined
        ? schema.children
        : parent.kind === 'container' || parent.kind === 'list'
          ? parent.children
          : undefined;
    if (!children) throw bad(`${qname} is below a leaf`);
    const colon = qname.indexOf(':');
    if (colon !== -1 && !schema.modules.has(qname.slice(0, colon)))
      throw bad(`module ${qname.slice(0, colon)} does not exist`);
    let node: SchemaNode;
    try {
      node = resolveMember(children, qname, parent?.module, parent ? schemaPathOf(parent) : '');
    } catch {
      throw bad(`${qname} is not a data node here`);
    }
    const predicates = new Map<string, string>();
    while (target[i] === '[') {
      const m = /^\[([^=\]]+)=(?:'([^']*)'|"([^"]*)")\]/.exec(target.slice(i));
      if (!m) throw bad('bad predicate');
      const keyName = m[1]!.includes(':') ? m[1]!.slice(m[1]!.indexOf(':') + 1) : m[1]!;
      predicates.set(keyName, m[2] ?? m[3]!);
      i += m[0].length;
    }
    if (predicates.size === 0) steps.push({ node });
    else {
      if (node.kind !== 'list' || node.keys.length !== predicates.size)
        throw bad(`bad keys for ${node.name}`);
      const keyValues: LeafValue[] = keyLeaves(node).map((leaf) => {
        const text = predicates.get(leaf.name);
        if (text === undefined) throw bad(`key ${leaf.name} missing`);
        try {
          return parseLeafValue(leaf.type, text, leaf.module);
        } catch {
          throw bad(`invalid key value ${text}`);
        }
      });
      steps.push({ node, keyValues, key: entryKey(keyValues) });
    }
    parent = node;
  }
  return steps;
}

/**
 * The value is read against the target's parent, as ODL does: `{"m:list":[entries]}` for a
 * list or list entry (each entry one write, keys from the value), `{"m:node": …}` otherwise.
 */
function decodeEditValue(schema: SchemaRoot, steps: Step[], raw: unknown): Edit['writes'] {
  const last = steps[steps.length - 1];
  if (!last) throw readError('a value needs a target below the datastore root');
  const node = last.node;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw readError('value is not an object');
  const members = Object.entries(raw);
  const member = members[0];
  if (members.length !== 1 || !member || (member[0] !== node.name && member[0] !== node.qname))
    throw readError(`value must hold exactly one member named ${node.qname}`);
  if (node.kind === 'list' && node.keys.length > 0) {
    const listSteps = last.key === undefined ? steps : [...steps.slice(0, -1), { node }];
    const entries = Array.isArray(member[1]) ? member[1] : [member[1]];
    return entries.map((e) => {
      const { key, entry } = decodeEntry(node, e, schemaPathOf(node));
      const keyValues = keyLeaves(node).map((k) => entry.get(k.qname) as LeafValue);
      return {
        steps: [...listSteps.slice(0, -1), { node, key, keyValues }],
        value: entry,
        raw: { [member[0]]: [e] },
      };
    });
  }
  void schema;
  return [{ steps, value: decodeValue(node, member[1], ''), raw }];
}

/**
 * Applies the edits in order as one transaction, undone entirely when an edit or the commit
 * fails. `delete` of absent data fails on RFC 8040 (`data-missing`) and not on bierman02,
 * whose DELETE and REMOVE share one code path.
 */
export function applyPatch(
  config: Datastore,
  patchId: string,
  edits: readonly Edit[],
  dialect: Dialect,
  describe: (steps: readonly Step[]) => string,
): PatchResult {
  const undo: { steps: Step[]; old: Child | undefined }[] = [];
  const status: Record<string, unknown>[] = [];
  const touched: Step[][] = [];
  const remember = (steps: Step[]) => {
    undo.push({ steps, old: config.read(steps) });
    touched.push(steps);
  };
  const rollback = () => {
    for (const { steps, old } of undo.reverse()) {
      if (old !== undefined) config.put(steps, old);
      else if (config.read(steps) !== undefined) config.delete(steps, describe(steps));
    }
  };
  const doc = (inner: Record<string, unknown>) =>
    JSON.stringify({ 'ietf-yang-patch:yang-patch-status': { 'patch-id': patchId, ...inner } });
  for (const edit of edits) {
    let failure: RestconfError | undefined;
    try {
      for (const { steps, value } of edit.writes) {
        const exists = config.read(steps) !== undefined;
        switch (edit.operation) {
          case 'create':
            if (exists) throw new RestconfError('protocol', 'data-exists', 'Data already exists');
            remember(steps);
            config.put(steps, value!);
            break;
          case 'replace':
            remember(steps);
            config.put(steps, value!);
            break;
          case 'merge':
            remember(steps);
            config.merge(steps, value!);
            break;
          case 'delete':
          case 'remove':
            if (!exists) {
              if (edit.operation === 'delete' && dialect === 'rfc8040')
                throw new RestconfError('protocol', 'data-missing', 'Data does not exist');
              break;
            }
            remember(steps);
            config.delete(steps, describe(steps));
            break;
          default:
            throw new RestconfError(
              'protocol',
              'operation-not-supported',
              'Not supported Yang Patch operation',
            );
        }
      }
    } catch (err) {
      if (!(err instanceof RestconfError)) throw err;
      failure = err;
    }
    if (
      failure &&
      (failure.errorTag === 'data-exists' ||
        failure.errorTag === 'data-missing' ||
        failure.errorTag === 'operation-not-supported')
    ) {
      rollback();
      status.push({
        'edit-id': edit.id,
        errors: {
          error: [
            {
              'error-type': failure.errorType,
              'error-tag': failure.errorTag,
              'error-path': edit.target,
              'error-message': failure.message,
            },
          ],
        },
      });
      return { body: doc({ 'edit-status': { edit: status } }), applied: 0, touched: [] };
    }
    if (failure) {
      // A schema check the datastore makes at once ODL makes when committing: a global error.
      rollback();
      return {
        body: doc({
          errors: {
            error: [
              {
                'error-type': 'application',
                'error-tag': 'operation-failed',
                'error-message': failure.message,
              },
            ],
          },
          'edit-status': { edit: status },
        }),
        applied: 0,
        touched: [],
      };
    }
    status.push({ 'edit-id': edit.id, ok: [null] });
  }
  return { body: doc({ ok: [null] }), applied: edits.length, touched };
}
