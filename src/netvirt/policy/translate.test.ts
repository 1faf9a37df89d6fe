import type { V1NetworkPolicy, V1Node, V1Pod } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aceRemoteNetwork, ACL_TYPE_IPV4, aclName, liveAces, type Ace, type Acl } from '../acl.js';
import { formatPrefix, parsePrefix, subtractPrefixes } from './cidr.js';
import { selectorMatches } from './selector.js';
import { readPolicy, type PolicySpec } from './spec.js';
import { allocateAclTags, ACL_TAG_FIRST } from './tags.js';
import { linkLocalOf, PolicyIndex } from './translate.js';

const NODE: V1Node = {
  metadata: { name: 'n1', uid: 'u-n1' },
  status: { addresses: [{ type: 'InternalIP', address: '192.168.56.101' }] },
};

function pod(
  ns: string,
  name: string,
  ip: string,
  labels: Record<string, string>,
  ports: Record<string, number> = {},
): V1Pod {
  return {
    metadata: { namespace: ns, name, uid: `u-${ns}-${name}`, labels },
    spec: {
      nodeName: 'n1',
      containers: [
        { name: 'c', ports: Object.entries(ports).map(([n, containerPort]) => ({ name: n, containerPort })) },
      ],
    },
    status: { podIP: ip, podIPs: [{ ip }] },
  };
}

function policy(ns: string, name: string, spec: V1NetworkPolicy['spec']): PolicySpec {
  const read = readPolicy({ metadata: { namespace: ns, name, uid: `uid-${ns}-${name}` }, spec: spec! });
  if ('error' in read) throw new Error(read.error);
  return read;
}

const NS_LABELS: Record<string, Record<string, string>> = { x: { team: 'x' }, y: { team: 'y' }, z: {} };
const index = (policies: PolicySpec[], profile: 'sodium' | 'aluminium' = 'sodium') =>
  new PolicyIndex('c1', profile, policies, (ns) => NS_LABELS[ns]);

/** An ACE as `dir proto/range far-side [group]`, for tables a reader can check by eye. */
function show(a: Ace, idx: PolicyIndex, groups: Map<string, string>): string {
  const m = a.matches;
  const port = m.destinationPortRange
    ? `/${m.destinationPortRange.lower}-${m.destinationPortRange.upper}`
    : '';
  const group = a.remoteGroupId ? ` group:${groups.get(a.remoteGroupId) ?? '?'}` : '';
  return `${a.direction} ${m.protocol ?? 'any'}${port} ${aceRemoteNetwork(a) ?? '-'}${group}`;
}
const showAcl = (acl: Acl | undefined, idx: PolicyIndex, groups: Map<string, string>) =>
  (acl ? liveAces(acl) : []).map((a) => show(a, idx, groups)).sort();

const A = pod('x', 'a', '10.11.1.2', { app: 'a' }, { http: 8080 });
const B = pod('x', 'b', '10.11.1.3', { app: 'b' }, { http: 9090 });
const C = pod('y', 'c', '10.11.1.4', { app: 'c' });
const PODS = [A, B, C];

describe('NetworkPolicy translation', () => {
  it('leaves unselected pods open both ways, with port security, their addresses and their node', () => {
    const idx = index([]);
    const sec = idx.podSecurity(A, ['ipv4']);
    assert.deepEqual(sec.securityGroups, [
      idx.allowAllAcl('ingress'),
      idx.allowAllAcl('egress'),
      idx.nodeAcl('n1'),
    ]);
    assert.deepEqual(sec.allowedAddressPairs, [
      { macAddress: '0a:58:0a:0b:01:02', ipAddress: '10.11.1.2' },
      { macAddress: '0a:58:0a:0b:01:02', ipAddress: 'fe80::858:aff:fe0b:102' },
    ]);
    const { acls } = idx.acls(PODS, [{ node: NODE, gateway: '10.11.1.2' }]);
    assert.deepEqual(showAcl(acls.get(idx.allowAllAcl('ingress')), idx, new Map()), [
      'ingress any 0.0.0.0/0',
      'ingress any ::/0',
    ]);
    assert.deepEqual(showAcl(acls.get(idx.nodeAcl('n1')), idx, new Map()), [
      'egress any 10.11.1.2/32',
      'egress any 192.168.56.101/32',
      'ingress any 10.11.1.2/32',
      'ingress any 192.168.56.101/32',
    ]);
    for (const acl of acls.values()) assert.equal(acl.type, ACL_TYPE_IPV4);
  });

  it('isolates selected pods per direction, and a rule is ports × peers × families', () => {
    const p = policy('x', 'allow-b', {
      podSelector: { matchLabels: { app: 'a' } },
      ingress: [
        {
          ports: [{ port: 80 }, { protocol: 'UDP', port: 53, endPort: 60 }],
          _from: [{ podSelector: { matchLabels: { app: 'b' } } }],
        },
      ],
    });
    const idx = index([p]);
    const groupB = idx.groupAcl(
      p.rules.ingress![0]!.peers[0]!.kind === 'pods' ? p.rules.ingress![0]!.peers[0]!.group.id : '',
    );
    assert.deepEqual(idx.securityGroupsOf(A), [
      idx.allowAllAcl('egress'),
      idx.policyAcl(p, 'ingress', ''),
      idx.nodeAcl('n1'),
    ]);
    assert.deepEqual(idx.securityGroupsOf(B), [
      idx.allowAllAcl('ingress'),
      idx.allowAllAcl('egress'),
      idx.nodeAcl('n1'),
      groupB,
    ]);
    assert.deepEqual(
      idx.securityGroupsOf(C),
      [idx.allowAllAcl('ingress'), idx.allowAllAcl('egress'), idx.nodeAcl('n1')],
      'app=b in another namespace is no peer',
    );
    const { acls } = idx.acls(PODS, [{ node: NODE }]);
    assert.deepEqual(showAcl(acls.get(idx.policyAcl(p, 'ingress', '')), idx, new Map([[groupB, 'b']])), [
      'ingress 17/53-60 0.0.0.0/0 group:b',
      'ingress 17/53-60 ::/0 group:b',
      'ingress 6/80-80 0.0.0.0/0 group:b',
      'ingress 6/80-80 ::/0 group:b',
    ]);
    assert.deepEqual(acls.get(groupB)?.aces, [], 'a membership ACL has no rules');
  });

  it('implies Egress only from egress rules; an empty rule list isolates with no rules', () => {
    const deny = policy('x', 'deny', { podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    const egressOnly = policy('y', 'out', { podSelector: {}, policyTypes: ['Egress'], egress: [{}] });
    const idx = index([deny, egressOnly]);
    assert.deepEqual(idx.securityGroupsOf(A), [
      idx.policyAcl(deny, 'ingress', ''),
      idx.policyAcl(deny, 'egress', ''),
      idx.nodeAcl('n1'),
    ]);
    assert.deepEqual(idx.securityGroupsOf(C), [
      idx.allowAllAcl('ingress'),
      idx.policyAcl(egressOnly, 'egress', ''),
      idx.nodeAcl('n1'),
    ]);
    const { acls } = idx.acls(PODS, []);
    assert.deepEqual(acls.get(idx.policyAcl(deny, 'ingress', ''))?.aces, []);
    assert.deepEqual(showAcl(acls.get(idx.policyAcl(egressOnly, 'egress', '')), idx, new Map()), [
      'egress any 0.0.0.0/0',
      'egress any ::/0',
    ]);
    const implied = policy('x', 'implied', { podSelector: {}, egress: [{}] });
    assert.deepEqual(Object.keys(implied.rules).sort(), ['egress', 'ingress']);
    assert.deepEqual(Object.keys(policy('x', 'i', { podSelector: {} }).rules), ['ingress']);
  });

  it('subtracts ipBlock.except, and selects by namespace labels with matchExpressions', () => {
    const p = policy('x', 'blocks', {
      podSelector: { matchLabels: { app: 'a' } },
      policyTypes: ['Egress'],
      egress: [
        { to: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['10.128.0.0/9', '10.1.0.0/16'] } }] },
        {
          to: [
            {
              namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In', values: ['y'] }] },
              podSelector: {},
            },
          ],
        },
      ],
    });
    const idx = index([p]);
    const { acls } = idx.acls(PODS, []);
    const shown = showAcl(acls.get(idx.policyAcl(p, 'egress', '')), idx, new Map());
    assert.deepEqual(
      shown.filter((s) => !s.includes('group')),
      [
        'egress any 10.0.0.0/16',
        'egress any 10.16.0.0/12',
        'egress any 10.2.0.0/15',
        'egress any 10.32.0.0/11',
        'egress any 10.4.0.0/14',
        'egress any 10.64.0.0/10',
        'egress any 10.8.0.0/13',
      ],
    );
    assert.equal(idx.groupsOf(C).length, 1, 'the pod of namespace team=y is a member');
    assert.equal(idx.groupsOf(A).length, 0);
  });

  it('resolves ingress named ports per target pod, and a name no pod defines matches nothing', () => {
    const p = policy('x', 'named', {
      podSelector: {},
      ingress: [{ ports: [{ port: 'http' }, { port: 'nope' }] }],
    });
    const idx = index([p]);
    const va = idx.ingressVariant(p, A);
    const vb = idx.ingressVariant(p, B);
    assert.notEqual(va, vb);
    const { acls } = idx.acls(PODS, []);
    assert.deepEqual(showAcl(acls.get(idx.policyAcl(p, 'ingress', va)), idx, new Map()), [
      'ingress 6/8080-8080 0.0.0.0/0',
      'ingress 6/8080-8080 ::/0',
    ]);
    assert.deepEqual(showAcl(acls.get(idx.policyAcl(p, 'ingress', vb)), idx, new Map()), [
      'ingress 6/9090-9090 0.0.0.0/0',
      'ingress 6/9090-9090 ::/0',
    ]);
    assert.ok(
      idx.securityGroupsOf(A).includes(idx.policyAcl(p, 'ingress', va)),
      'pod a is bound to its own resolution',
    );
  });

  it('splits an egress named port by the number each destination gives it', () => {
    const p = policy('y', 'to-http', {
      podSelector: {},
      policyTypes: ['Egress'],
      egress: [{ ports: [{ port: 'http' }], to: [{ namespaceSelector: { matchLabels: { team: 'x' } } }] }],
    });
    const idx = index([p]);
    const { acls, roles } = idx.acls(PODS, []);
    const names = new Map(
      [...roles]
        .filter(([, r]) => r.role === 'group')
        .map(([n, r]) => [n, r.role === 'group' ? r.group.replace(/.*port=/, '') : '']),
    );
    assert.deepEqual(showAcl(acls.get(idx.policyAcl(p, 'egress', '')), idx, names), [
      'egress 6/8080-8080 0.0.0.0/0 group:TCP/http=8080',
      'egress 6/8080-8080 ::/0 group:TCP/http=8080',
      'egress 6/9090-9090 0.0.0.0/0 group:TCP/http=9090',
      'egress 6/9090-9090 ::/0 group:TCP/http=9090',
    ]);
    const groupsOfA = idx.groupsOf(A).map((g) => names.get(g));
    assert.ok(
      groupsOfA.includes('TCP/http=8080') && !groupsOfA.includes('TCP/http=9090'),
      'a is in the 8080 group only',
    );
  });

  it('applies SCTP ports in their closest safe form and says so; SCTP without a port is exact', () => {
    const p = policy('x', 'sctp', {
      podSelector: {},
      ingress: [{ ports: [{ protocol: 'SCTP', port: 9999 }] }, { ports: [{ protocol: 'SCTP' }] }],
    });
    const idx = index([p]);
    const { acls, notes } = idx.acls(PODS, []);
    assert.deepEqual(showAcl(acls.get(idx.policyAcl(p, 'ingress', '')), idx, new Map()), [
      'ingress 132 0.0.0.0/0',
      'ingress 132 ::/0',
    ]);
    assert.match(notes.get('x/sctp')?.[0] ?? '', /cannot restrict SCTP to port 9999/);
  });
});

describe('policy helpers', () => {
  it('evaluates selectors as the API does', () => {
    const l = { a: '1', b: '2' };
    assert.equal(selectorMatches({}, {}), true);
    assert.equal(selectorMatches({ matchLabels: { a: '1' } }, l), true);
    assert.equal(
      selectorMatches({ matchExpressions: [{ key: 'c', operator: 'NotIn', values: ['x'] }] }, l),
      true,
    );
    assert.equal(selectorMatches({ matchExpressions: [{ key: 'c', operator: 'Exists' }] }, l), false);
    assert.equal(selectorMatches({ matchExpressions: [{ key: 'a', operator: 'DoesNotExist' }] }, l), false);
    assert.equal(
      selectorMatches({ matchExpressions: [{ key: 'b', operator: 'In', values: ['2', '3'] }] }, l),
      true,
    );
    assert.ok(
      'error' in
        readPolicy({
          metadata: { namespace: 'x', name: 'p', uid: 'u' },
          spec: { podSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } },
        }),
    );
  });

  it('subtracts prefixes exactly, IPv6 too', () => {
    const sub = (block: string, holes: string[]) =>
      subtractPrefixes(
        parsePrefix(block)!,
        holes.map((h) => parsePrefix(h)!),
      ).map(formatPrefix);
    assert.deepEqual(sub('10.0.0.0/24', ['10.0.0.0/25']), ['10.0.0.128/25']);
    assert.deepEqual(sub('10.0.0.0/24', ['10.0.0.0/8']), []);
    assert.deepEqual(sub('10.0.0.0/24', ['192.168.0.0/16']), ['10.0.0.0/24']);
    assert.deepEqual(sub('fd00::/126', ['fd00::1/128']), ['fd00::/128', 'fd00::2/127']);
    assert.equal(formatPrefix(parsePrefix('10.1.2.3/8')!), '10.0.0.0/8', 'host bits cleared');
  });

  it('derives the link-local address of a MAC (EUI-64)', () => {
    assert.equal(linkLocalOf('0a:58:0a:0b:01:05'), 'fe80::858:aff:fe0b:105');
  });

  it('keeps the acl-tags ODL holds and gives new ACLs the lowest free tag above Neutron’s pool', () => {
    const mine = aclName('c1', 'a');
    const acls: Acl[] = [
      { name: mine, type: ACL_TYPE_IPV4, aclTag: 10_005, aces: [] },
      { name: 'foreign', type: ACL_TYPE_IPV4, aclTag: ACL_TAG_FIRST, aces: [] },
    ];
    const tags = allocateAclTags([mine, 'new1', 'new2'], acls, (a) => a.name === mine);
    assert.deepEqual(
      [...tags],
      [
        [mine, 10_005],
        ['new1', ACL_TAG_FIRST + 1],
        ['new2', ACL_TAG_FIRST + 2],
      ],
    );
  });
});
