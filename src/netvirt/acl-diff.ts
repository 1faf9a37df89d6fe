/**
 * The owned-leaf diff of an ACL (acl.ts), by aclservice's rules rather than by replacing the
 * entry: an ACL is created whole; afterwards each ACE is written alone. New ACEs (a rule name
 * not in force in ODL) are added first, then ACEs no longer wanted are written again with
 * `deleted: true` (aclservice removes their flows and then the ACE itself), so a rule that the
 * old and the new ACL both hold is never missing in between. An ACE is never rewritten under
 * its name: aclservice would ignore the edit. A wrong `acl-tag` (Aluminium) is put back by a
 * PUT of the ACL that carries every ACE ODL holds unchanged.
 */
import {
  ACL_TYPE_IPV4,
  aceEntry,
  aclEntry,
  canonicalMatches,
  isClusterAclName,
  liveAces,
  type Ace,
  type Acl,
} from './acl.js';
import { canonicalJson, decide, decisionName, type Decision, type DiffOptions } from './decision.js';
import type { OwnerContext, Ownership } from './ownership.js';
import { netvirtPaths } from './paths.js';
import { putOp, type WriteOp } from './write.js';

/** The kind's name of an ACL: its acl-name for an `ipv4-acl` (all of odlcoe's), else `type,name`. */
export function aclKindName(acl: Pick<Acl, 'name' | 'type'>): string {
  return acl.type === ACL_TYPE_IPV4 ? acl.name : `${acl.type},${acl.name}`;
}

/** The list key of a kind name (`aclKindName`'s inverse). */
export function aclKeyOf(kindName: string): { type: string; name: string } {
  const m = /^(ietf-access-control-list:[a-z0-9-]+),(.*)$/.exec(kindName);
  return m ? { type: m[1]!, name: m[2]! } : { type: ACL_TYPE_IPV4, name: kindName };
}

/** An ACL is this cluster's when it is an `ipv4-acl` named by `aclName` for the cluster. */
export function aclOwnership(acl: Acl, ctx: OwnerContext): Ownership {
  if (acl.type !== ACL_TYPE_IPV4) return { owner: 'foreign', reason: `acl-type ${acl.type}` };
  if (!isClusterAclName(acl.name, ctx.clusterName))
    return {
      owner: 'foreign',
      reason: `acl-name is not a name odlcoe gives ACLs of cluster ${ctx.clusterName}`,
    };
  return { owner: 'ours' };
}

const aceContent = (a: Ace) =>
  canonicalJson({
    m: canonicalMatches(a.matches),
    a: a.action,
    d: a.direction,
    r: a.remoteGroupId?.toLowerCase(),
  });

/** Live ACEs by rule name with their content. */
const byRule = (acl: Acl) => new Map(liveAces(acl).map((a) => [a.ruleName, aceContent(a)]));

export function diffAcl(
  desired: Acl | undefined,
  actual: Acl | undefined,
  ctx: OwnerContext,
  opts: DiffOptions = {},
): Decision {
  const paths = netvirtPaths(ctx.profile);
  const path = (kindName: string) => {
    const { type, name } = aclKeyOf(kindName);
    return paths.acl(name, type);
  };
  return decide<Acl>(
    {
      path,
      ownership: (a) => aclOwnership(a, ctx),
      owned: (e) => ({
        'acl-tag': e.aclTag,
        ace: [...byRule(e)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      }),
      create: (d) => [putOp(paths.acl(d.name), aclEntry(ctx.profile, d))],
      update: (d, a) => ({ action: 'update', writes: aclUpdate(d, a, ctx) }),
    },
    decisionName(desired, actual, aclKindName, opts),
    desired,
    actual,
    opts.keep === true,
  );
}

function aclUpdate(d: Acl, a: Acl, ctx: OwnerContext): WriteOp[] {
  const paths = netvirtPaths(ctx.profile);
  const writes: WriteOp[] = [];
  if (d.aclTag !== a.aclTag) {
    const retagged: Acl = { ...a };
    if (d.aclTag === undefined) delete retagged.aclTag;
    else retagged.aclTag = d.aclTag;
    writes.push(putOp(paths.acl(a.name), aclEntry(ctx.profile, retagged)));
  }
  const held = byRule(a);
  const wanted = new Map(d.aces.map((x) => [x.ruleName, x]));
  for (const [rule, ace] of wanted) {
    if (held.has(rule)) continue;
    // A rule odlcoe is removing (marked deleted, not yet gone) is written back in force.
    writes.push(putOp(paths.ace(a.name, rule), aceEntry({ ...ace, deleted: false })));
  }
  for (const ace of liveAces(a)) {
    const want = wanted.get(ace.ruleName);
    if (want && aceContent(want) === held.get(ace.ruleName)) continue;
    // Gone from the desired ACL, or changed under its name by someone else: only aclservice's
    // removal protocol takes its flows away; the desired rule returns once it is gone.
    writes.push(putOp(paths.ace(a.name, ace.ruleName), aceEntry({ ...ace, deleted: true })));
  }
  return writes;
}
