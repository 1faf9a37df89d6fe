import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ACL_TYPE_IPV4,
  aceEntry,
  aceRuleName,
  aclEntry,
  aclName,
  isClusterAclName,
  parseAcls,
  PROTOCOL_NUMBERS,
  readAcl,
  type Ace,
  type Acl,
} from './acl.js';
import { EntryReader } from './json.js';
import { interfaceEntry, readInterface, type Interface } from './interfaces.js';
import { ModelValidationError } from './errors.js';
import { PROFILES } from './profile.js';

const GROUP = aclName('c1', 'group:x');

function ace(content: Omit<Ace, 'ruleName' | 'deleted'>): Ace {
  return { ...content, ruleName: aceRuleName(content), deleted: false };
}

const RULES: Ace[] = [
  ace({
    direction: 'ingress',
    action: 'permit',
    matches: {
      sourceIpv4Network: '10.11.0.0/16',
      protocol: PROTOCOL_NUMBERS.tcp,
      destinationPortRange: { lower: 8080, upper: 8080 },
    },
  }),
  ace({
    direction: 'egress',
    action: 'permit',
    matches: {
      destinationIpv6Network: '::/0',
      protocol: PROTOCOL_NUMBERS.udp,
      destinationPortRange: { lower: 53, upper: 53 },
    },
  }),
  ace({
    direction: 'ingress',
    action: 'permit',
    remoteGroupId: GROUP,
    matches: { sourceIpv4Network: '0.0.0.0/0' },
  }),
];

const acl = (aclTag?: number): Acl => ({
  name: aclName('c1', 'policy:uid-1:ingress'),
  type: ACL_TYPE_IPV4,
  ...(aclTag === undefined ? {} : { aclTag }),
  aces: RULES,
});

describe('ACL names', () => {
  it('are version-8 UUIDs that carry the cluster, recognisable without a registry', () => {
    const name = aclName('c1', 'policy:uid-1:ingress');
    assert.match(name, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(aclName('c1', 'policy:uid-1:ingress'), name, 'the same stable string gives the same name');
    assert.notEqual(aclName('c1', 'policy:uid-1:egress'), name);
    assert.equal(isClusterAclName(name, 'c1'), true);
    assert.equal(isClusterAclName(name, 'c2'), false, "another cluster's name");
    assert.equal(isClusterAclName(aclName('c2', 'policy:uid-1:ingress'), 'c1'), false);
    assert.equal(
      isClusterAclName('85cc3048-abc3-43cc-89b3-377341426ac5', 'c1'),
      false,
      'a Neutron (v4) UUID',
    );
  });

  it('name an ACE by its content: a changed rule gets a new name, the same rule keeps it', () => {
    const base = {
      direction: 'ingress' as const,
      action: 'permit' as const,
      matches: { sourceIpv4Network: '10.0.0.0/8' },
    };
    assert.equal(aceRuleName(base), aceRuleName({ ...base, matches: { sourceIpv4Network: '10.0.0.0/8' } }));
    assert.notEqual(
      aceRuleName(base),
      aceRuleName({ ...base, matches: { sourceIpv4Network: '10.0.0.0/9' } }),
    );
    assert.notEqual(aceRuleName(base), aceRuleName({ ...base, direction: 'egress' }));
    assert.notEqual(aceRuleName(base), aceRuleName({ ...base, remoteGroupId: GROUP }));
  });
});

describe('ACL bodies', () => {
  for (const profile of PROFILES) {
    it(`round-trip through build and parse (${profile})`, () => {
      const written = profile === 'aluminium' ? acl(17) : acl();
      const body = aclEntry(profile, written);
      const parsed = readAcl(EntryReader.of(JSON.parse(JSON.stringify(body)), 'acl[0]'));
      assert.deepEqual(parsed, written);
      const rfc = parseAcls({ 'ietf-access-control-list:access-lists': { acl: [body] } });
      const bierman = parseAcls({ acl: [body] });
      assert.deepEqual(rfc, [written]);
      assert.deepEqual(bierman, [written]);
    });
  }

  it('write every trap avoided: direction and deleted on each ACE, permit as [null], both port bounds', () => {
    const body = aclEntry('aluminium', acl(5)) as {
      'access-list-entries': { ace: Record<string, unknown>[] };
    };
    for (const e of body['access-list-entries'].ace) {
      assert.equal(e['aclservice:deleted'], false);
      assert.match(String(e['aclservice:direction']), /^aclservice:direction-(ingress|egress)$/);
      assert.deepEqual(e['actions'], { permit: [null] });
    }
    assert.deepEqual(
      (body['access-list-entries'].ace[0]!['matches'] as Record<string, unknown>)['destination-port-range'],
      {
        'lower-port': 8080,
        'upper-port': 8080,
      },
    );
  });

  it('refuse what ODL would take and misuse: acl-tag on Sodium, a reversed range, two families, no direction', () => {
    assert.throws(() => aclEntry('sodium', acl(3)), ModelValidationError);
    const bad = (a: Partial<Ace>) => () => aceEntry({ ...RULES[0]!, ...a });
    assert.throws(
      bad({ matches: { protocol: 6, destinationPortRange: { lower: 90, upper: 80 } } }),
      /below lower-port/,
    );
    assert.throws(
      bad({ matches: { sourceIpv4Network: '0.0.0.0/0', destinationIpv6Network: '::/0' } }),
      /one address family/,
    );
    assert.throws(bad({ matches: { sourceIpv4Network: '::/0' } }), /not IPv4/);
    const { direction: _d, ...undirected } = RULES[0]!;
    assert.throws(() => aceEntry(undirected), /direction/);
    assert.throws(bad({ remoteGroupId: 'not-a-uuid' }), /UUID/);
  });

  it('parse ACEs of other writers: a deny action, a source range, unknown members kept', () => {
    const [parsed] = parseAcls({
      acl: [
        {
          'acl-name': 'n1',
          'acl-type': 'ipv4-acl',
          'access-list-entries': {
            ace: [
              {
                'rule-name': 'r',
                matches: { 'source-port-range': { 'lower-port': 5 }, dscp: 10 },
                actions: { deny: [null] },
                'aclservice:direction': 'direction-egress',
              },
            ],
          },
        },
      ],
    });
    assert.deepEqual(parsed, {
      name: 'n1',
      type: ACL_TYPE_IPV4,
      aces: [
        {
          ruleName: 'r',
          matches: { sourcePortRange: { lower: 5, upper: 5 }, preserved: { dscp: 10 } },
          action: 'deny',
          direction: 'egress',
        },
      ],
    });
  });
});

describe('interface-acl augment', () => {
  const iface = (interfaceType?: 'access-port'): Interface => ({
    name: 'default:nginx-1',
    type: 'iana-if-type:l2vlan',
    acl: {
      portSecurityEnabled: true,
      securityGroups: [GROUP],
      allowedAddressPairs: [
        { macAddress: '0a:58:0a:0b:01:05', ipAddress: '10.11.1.5' },
        { macAddress: '0a:58:0a:0b:01:05', ipAddress: 'fe80::858:aff:fe0b:105' },
      ],
      ...(interfaceType ? { interfaceType } : {}),
    },
  });

  for (const profile of PROFILES) {
    it(`round-trips with the interface (${profile})`, () => {
      const written = iface(profile === 'aluminium' ? 'access-port' : undefined);
      const body = interfaceEntry(written, profile);
      assert.equal(body['aclservice:port-security-enabled'], true);
      assert.deepEqual(
        readInterface(EntryReader.of(JSON.parse(JSON.stringify(body)), 'interface[0]')),
        written,
      );
    });
  }

  it('refuses interface-type on Sodium and a MAC that is not one', () => {
    assert.throws(() => interfaceEntry(iface('access-port'), 'sodium'), /interface-type/);
    const bad = iface();
    bad.acl!.allowedAddressPairs[0]!.macAddress = 'zz';
    assert.throws(() => interfaceEntry(bad, 'aluminium'), /MAC/);
  });
});
