import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ACL_TYPE_IPV4, aceRuleName, aclName, type Ace, type Acl } from './acl.js';
import { aclKeyOf, aclKindName, diffAcl } from './acl-diff.js';
import type { OwnerContext } from './ownership.js';
import { PROFILES } from './profile.js';
import type { WriteOp } from './write.js';
import { diffInterface } from './diff.js';
import type { Interface } from './interfaces.js';

const owner = (profile: OwnerContext['profile']): OwnerContext => ({
  clusterName: 'c1',
  profile,
  routeTarget: '64512:1',
  rdAdministrator: '64512',
});

function ace(port: number, deleted = false): Ace {
  const content = {
    direction: 'ingress' as const,
    action: 'permit' as const,
    matches: {
      sourceIpv4Network: '0.0.0.0/0',
      protocol: 6,
      destinationPortRange: { lower: port, upper: port },
    },
  };
  return { ...content, ruleName: aceRuleName(content), deleted };
}

const NAME = aclName('c1', 'policy:p:ingress');
const acl = (aces: Ace[], aclTag?: number): Acl => ({
  name: NAME,
  type: ACL_TYPE_IPV4,
  aces,
  ...(aclTag === undefined ? {} : { aclTag }),
});

/** What a write does, in words: `put ace <rule> deleted=<bool>`, `put acl`. */
function describeWrite(w: WriteOp): string {
  const last = w.path[w.path.length - 1]!;
  if (w.op === 'delete') return `delete ${last.name}`;
  if (last.name === 'ace') {
    const entry = (w.body['ietf-access-control-list:ace'] as Record<string, unknown>[])[0]!;
    return `put ace ${String(last.keys?.[0])} deleted=${String(entry['aclservice:deleted'])}`;
  }
  return `put ${last.name}`;
}

describe('ACL diff', () => {
  for (const profile of PROFILES) {
    const tag = profile === 'aluminium' ? 7 : undefined;
    const ctx = owner(profile);

    it(`creates the whole ACL, then leaves an equal one alone (${profile})`, () => {
      const d = diffAcl(acl([ace(80)], tag), undefined, ctx);
      assert.equal(d.action, 'create');
      assert.equal(diffAcl(acl([ace(80)], tag), acl([ace(80)], tag), ctx).action, 'none');
    });

    it(`adds new rules before it marks the old ones deleted, never rewriting a rule (${profile})`, () => {
      const d = diffAcl(acl([ace(80), ace(443)], tag), acl([ace(80), ace(8080)], tag), ctx);
      assert.equal(d.action, 'update');
      assert.deepEqual(d.action === 'update' && d.writes.map(describeWrite), [
        `put ace ${ace(443).ruleName} deleted=false`,
        `put ace ${ace(8080).ruleName} deleted=true`,
      ]);
    });

    it(`counts a rule marked deleted as gone, and writes nothing more while aclservice removes it (${profile})`, () => {
      assert.equal(diffAcl(acl([ace(80)], tag), acl([ace(80), ace(8080, true)], tag), ctx).action, 'none');
      const back = diffAcl(acl([ace(80), ace(8080)], tag), acl([ace(80), ace(8080, true)], tag), ctx);
      assert.deepEqual(back.action === 'update' && back.writes.map(describeWrite), [
        `put ace ${ace(8080).ruleName} deleted=false`,
      ]);
    });
  }

  it('puts a wrong acl-tag back with every rule ODL holds unchanged', () => {
    const d = diffAcl(acl([ace(80)], 9), acl([ace(80), ace(81, true)], 8), owner('aluminium'));
    assert.equal(d.action, 'update');
    if (d.action !== 'update') return;
    assert.deepEqual(d.writes.map(describeWrite), ['put acl']);
    const body = d.writes[0]!.op === 'put' ? d.writes[0]!.body : {};
    const entry = (body['ietf-access-control-list:acl'] as Record<string, unknown>[])[0]!;
    assert.equal(entry['aclservice:acl-tag'], 9);
    assert.equal((entry['access-list-entries'] as { ace: unknown[] }).ace.length, 2);
  });

  it("owns only this cluster's ipv4-acl names; others are foreign and never written", () => {
    const theirs = { ...acl([ace(80)]), name: aclName('c2', 'policy:p:ingress') };
    const d = diffAcl(undefined, theirs, owner('sodium'));
    assert.equal(d.action, 'foreign');
    assert.equal(diffAcl(undefined, acl([ace(80)]), owner('sodium')).action, 'delete-candidate');
    const v6 = { ...acl([]), type: 'ietf-access-control-list:ipv6-acl' };
    assert.equal(aclKindName(v6), `ietf-access-control-list:ipv6-acl,${NAME}`);
    assert.deepEqual(aclKeyOf(aclKindName(v6)), { type: v6.type, name: NAME });
    assert.equal(diffAcl(undefined, v6, owner('sodium')).action, 'foreign');
  });
});

describe('interface-acl in the interface diff', () => {
  const base: Interface = { name: 'ns:p', type: 'iana-if-type:l2vlan', description: 'odlcoe:c1:pod:u1' };
  const secured = (groups: string[]): Interface => ({
    ...base,
    acl: {
      portSecurityEnabled: true,
      securityGroups: groups,
      allowedAddressPairs: [{ macAddress: '0a:58:0a:0b:01:05', ipAddress: '10.11.1.5' }],
    },
  });

  it("is odlcoe's only while the desired entry carries it (policy enforcement on)", () => {
    const ctx = owner('sodium');
    assert.equal(diffInterface(base, secured([NAME]), ctx).action, 'none', 'enforcement off: left alone');
    const d = diffInterface(secured([NAME]), base, ctx);
    assert.equal(d.action, 'update');
    assert.deepEqual(d.action === 'update' && d.changed, ['interface-acl']);
    assert.equal(diffInterface(secured([NAME.toUpperCase()]), secured([NAME]), ctx).action, 'none');
  });

  it('keeps what Genius wrote when it updates the groups', () => {
    const actual = { ...secured([]), parentInterface: 'tap123' };
    const d = diffInterface(secured([NAME]), actual, owner('aluminium'));
    assert.equal(d.action, 'update');
    const w = d.action === 'update' ? d.writes[0] : undefined;
    const entry =
      w?.op === 'put' ? (w.body['ietf-interfaces:interface'] as Record<string, unknown>[])[0] : {};
    assert.equal(entry?.['odl-interface:parent-interface'], 'tap123');
    assert.deepEqual(entry?.['aclservice:security-groups'], [NAME]);
  });
});
