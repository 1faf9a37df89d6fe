import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ModelValidationError } from '../errors.js';
import type { Ace, Acl } from '../acl.js';
import { matchAce, type AclPacket, type RemoteGroups } from './ace-match.js';
import { describeMisses, evaluatePortAcls } from './port-acls.js';
import { parseProbe } from './probe.js';

const NO_GROUPS: RemoteGroups = { acl: () => undefined, memberAddresses: () => [] };
const tcp80: AclPacket = {
  direction: 'ingress',
  family: 4,
  source: '10.0.0.1',
  destination: '10.0.0.2',
  probe: { protocol: 'tcp', port: 80 },
};
const ace = (a: Partial<Ace>): Ace => ({
  ruleName: 'r',
  direction: 'ingress',
  matches: {},
  deleted: false,
  ...a,
});

describe('one ACE against one packet, as aclservice programs it', () => {
  it('a deny action permits all the same (no code reads actions)', () => {
    const out = matchAce(
      ace({ action: 'deny', matches: { sourceIpv4Network: '0.0.0.0/0' } }),
      tcp80,
      NO_GROUPS,
      'sodium',
    );
    assert.deepEqual(out, { matches: true, note: 'its action is deny, but aclservice permits on every ACE' });
  });

  it('an ACE without direction is never programmed', () => {
    const { direction: _, ...undirected } = ace({});
    assert.equal(matchAce(undirected, tcp80, NO_GROUPS, 'sodium').matches, false);
  });

  it('a TCP rule without an address family matches nothing; an IP rule without one matches all', () => {
    assert.equal(matchAce(ace({ matches: { protocol: 6 } }), tcp80, NO_GROUPS, 'sodium').matches, false);
    assert.equal(matchAce(ace({ matches: {} }), tcp80, NO_GROUPS, 'sodium').matches, true);
  });

  it('an IPv6 rule does not match an IPv4 packet', () => {
    const out = matchAce(ace({ matches: { sourceIpv6Network: '::/0' } }), tcp80, NO_GROUPS, 'sodium');
    assert.deepEqual(out, { matches: false, why: 'it is an IPv6 rule, the packet is IPv4' });
  });

  it('source and destination ranges are separate flows; only a source range cannot be judged for an ephemeral port', () => {
    const both = ace({
      matches: {
        sourceIpv4Network: '0.0.0.0/0',
        protocol: 6,
        sourcePortRange: { lower: 1, upper: 2 },
        destinationPortRange: { lower: 80, upper: 90 },
      },
    });
    assert.equal(matchAce(both, tcp80, NO_GROUPS, 'sodium').matches, true);
    const src = ace({
      matches: { sourceIpv4Network: '0.0.0.0/0', protocol: 6, sourcePortRange: { lower: 80, upper: 80 } },
    });
    assert.equal(matchAce(src, tcp80, NO_GROUPS, 'sodium').matches, false);
  });

  it('ICMP: the range is type/code; an echo request needs 8/0', () => {
    const ping: AclPacket = { ...tcp80, probe: { protocol: 'icmp' } };
    const echo = ace({
      matches: { sourceIpv4Network: '0.0.0.0/0', protocol: 1, destinationPortRange: { lower: 8, upper: 0 } },
    });
    const unreachable = ace({
      matches: { sourceIpv4Network: '0.0.0.0/0', protocol: 1, destinationPortRange: { lower: 3, upper: 1 } },
    });
    assert.equal(matchAce(echo, ping, NO_GROUPS, 'sodium').matches, true);
    assert.equal(matchAce(unreachable, ping, NO_GROUPS, 'sodium').matches, false);
  });

  it('protocol 1 on an IPv6 rule is ICMPv6', () => {
    const ping6: AclPacket = {
      ...tcp80,
      family: 6,
      source: 'fd00::1',
      destination: 'fd00::2',
      probe: { protocol: 'icmp' },
    };
    assert.equal(
      matchAce(ace({ matches: { sourceIpv6Network: '::/0', protocol: 1 } }), ping6, NO_GROUPS, 'sodium')
        .matches,
      true,
    );
  });
});

describe("a port's ACLs in one direction", () => {
  const acl = (aces: Ace[]): Acl => ({ name: 'g', type: 'ietf-access-control-list:ipv4-acl', aces });
  const port = (groups: string[]) => ({
    name: 'p',
    type: 'iana-if-type:l2vlan',
    acl: { portSecurityEnabled: true, securityGroups: groups, allowedAddressPairs: [] },
  });
  const groups = (a: Acl): RemoteGroups => ({
    acl: (n) => (n === a.name ? a : undefined),
    memberAddresses: () => [],
  });

  it('a rule marked deleted permits nothing and is listed as being removed', () => {
    const g = acl([ace({ ruleName: 'gone', deleted: true, matches: { sourceIpv4Network: '0.0.0.0/0' } })]);
    const v = evaluatePortAcls(port(['g']), tcp80, groups(g), 'sodium');
    assert.equal(v.state, 'denied');
    if (v.state !== 'denied') return;
    assert.deepEqual(v.acls, [
      { acl: 'g', exists: true, rules: [], deletedRules: ['gone'], otherDirection: 0 },
    ]);
    assert.deepEqual(describeMisses('ingress', v.acls), [
      'acl g: no live ingress rule; rule(s) marked deleted (being removed by aclservice): gone',
    ]);
  });

  it('a security group ODL does not hold, and no group at all, deny everything', () => {
    const v = evaluatePortAcls(port(['missing']), tcp80, NO_GROUPS, 'sodium');
    assert.deepEqual(v, {
      state: 'denied',
      acls: [{ acl: 'missing', exists: false, rules: [], deletedRules: [], otherDirection: 0 }],
    });
    const none = evaluatePortAcls(port([]), tcp80, NO_GROUPS, 'sodium');
    assert.deepEqual(none, { state: 'denied', acls: [] });
  });
});

describe('probe', () => {
  it('parses N/proto, N alone as TCP, and nothing as an ICMP echo', () => {
    assert.deepEqual(parseProbe('53/udp'), { protocol: 'udp', port: 53 });
    assert.deepEqual(parseProbe('8080'), { protocol: 'tcp', port: 8080 });
    assert.deepEqual(parseProbe(undefined), { protocol: 'icmp' });
  });

  it('refuses what is no port', () => {
    for (const bad of ['0/tcp', '65536/tcp', '80/icmp', 'http', '80/'])
      assert.throws(() => parseProbe(bad), ModelValidationError, bad);
  });
});
