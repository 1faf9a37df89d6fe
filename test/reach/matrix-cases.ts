/**
 * The matrix cases, after Kubernetes' network-policy e2e suite (`test/e2e/network/netpol/
 * network_policy.go`), with truth tables written by hand from the NetworkPolicy documentation:
 * a pod selected by a policy for a direction accepts only what some rule of some selecting
 * policy allows (rules and policies add up); a pod no policy selects for a direction is open
 * in it; a connection needs the client's egress and the server's ingress; a pod reaches
 * itself (loopback). Rows are the client, columns the server; `.` delivered, `X` dropped.
 */
import type { MatrixCase } from './matrix-harness.js';
import { addPolicy, policy } from './matrix-harness.js';

const HEAD = 'x/a x/b x/c y/a y/b y/c z/a z/b z/c';

/** No policy in the way. */
const OPEN = `${HEAD}
x/a . . . . . . . . .
x/b . . . . . . . . .
x/c . . . . . . . . .
y/a . . . . . . . . .
y/b . . . . . . . . .
y/c . . . . . . . . .
z/a . . . . . . . . .
z/b . . . . . . . . .
z/c . . . . . . . . .`;

/** Every pod of x isolated for ingress with nothing allowed. */
const X_CLOSED_IN = `${HEAD}
x/a . X X . . . . . .
x/b X . X . . . . . .
x/c X X . . . . . . .
y/a X X X . . . . . .
y/b X X X . . . . . .
y/c X X X . . . . . .
z/a X X X . . . . . .
z/b X X X . . . . . .
z/c X X X . . . . . .`;

/** Every pod of x isolated for egress with nothing allowed. */
const X_CLOSED_OUT = `${HEAD}
x/a . X X X X X X X X
x/b X . X X X X X X X
x/c X X . X X X X X X
y/a . . . . . . . . .
y/b . . . . . . . . .
y/c . . . . . . . . .
z/a . . . . . . . . .
z/b . . . . . . . . .
z/c . . . . . . . . .`;

/** x/a isolated for ingress with nothing allowed. */
const XA_CLOSED_IN = `${HEAD}
x/a . . . . . . . . .
x/b X . . . . . . . .
x/c X . . . . . . . .
y/a X . . . . . . . .
y/b X . . . . . . . .
y/c X . . . . . . . .
z/a X . . . . . . . .
z/b X . . . . . . . .
z/c X . . . . . . . .`;

/** x/a accepts x/b only. */
const XA_FROM_XB = `${HEAD}
x/a . . . . . . . . .
x/b . . . . . . . . .
x/c X . . . . . . . .
y/a X . . . . . . . .
y/b X . . . . . . . .
y/c X . . . . . . . .
z/a X . . . . . . . .
z/b X . . . . . . . .
z/c X . . . . . . . .`;

/** x/a accepts the pods of y only. */
const XA_FROM_Y = `${HEAD}
x/a . . . . . . . . .
x/b X . . . . . . . .
x/c X . . . . . . . .
y/a . . . . . . . . .
y/b . . . . . . . . .
y/c . . . . . . . . .
z/a X . . . . . . . .
z/b X . . . . . . . .
z/c X . . . . . . . .`;

/** Every pod of x accepts the pods of y only. */
const X_FROM_Y = `${HEAD}
x/a . X X . . . . . .
x/b X . X . . . . . .
x/c X X . . . . . . .
y/a . . . . . . . . .
y/b . . . . . . . . .
y/c . . . . . . . . .
z/a X X X . . . . . .
z/b X X X . . . . . .
z/c X X X . . . . . .`;

const deny = (ns: string, types: string[], podSelector = {}) =>
  policy(ns, `deny-${types.join('-').toLowerCase()}`, { podSelector, policyTypes: types });
const selectA = { matchLabels: { pod: 'a' } };
const fromNsY = { namespaceSelector: { matchLabels: { ns: 'y' } } };

export const CASES: MatrixCase[] = [
  {
    name: "should support a 'default-deny-ingress' policy",
    steps: [
      {
        does: 'deny all ingress in x',
        change: (s) => addPolicy(s, deny('x', ['Ingress'])),
        expect: [{ probes: ['80/tcp', '80/udp'], table: X_CLOSED_IN }],
      },
    ],
  },
  {
    name: "should support a 'default-deny-all' policy",
    steps: [
      {
        does: 'deny all ingress and egress in x',
        change: (s) => addPolicy(s, deny('x', ['Ingress', 'Egress'])),
        expect: [
          {
            probes: ['80/tcp', '81/udp'],
            table: `${HEAD}
x/a . X X X X X X X X
x/b X . X X X X X X X
x/c X X . X X X X X X
y/a X X X . . . . . .
y/b X X X . . . . . .
y/c X X X . . . . . .
z/a X X X . . . . . .
z/b X X X . . . . . .
z/c X X X . . . . . .`,
          },
        ],
      },
    ],
  },
  {
    name: 'should enforce policy to allow traffic from pods within server namespace based on PodSelector',
    steps: [
      {
        does: 'x/a accepts pod b of its namespace',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-from-b', {
              podSelector: selectA,
              ingress: [{ _from: [{ podSelector: { matchLabels: { pod: 'b' } } }] }],
            }),
          ),
        expect: [{ probes: ['80/tcp', '81/tcp'], table: XA_FROM_XB }],
      },
    ],
  },
  {
    name: 'should enforce policy to allow ingress traffic for a target',
    steps: [
      {
        does: 'deny all ingress in x, then allow all ingress to x/a',
        change: (s) => {
          addPolicy(s, deny('x', ['Ingress']));
          addPolicy(s, policy('x', 'allow-a', { podSelector: selectA, ingress: [{}] }));
        },
        expect: [
          {
            probes: ['80/tcp'],
            table: `${HEAD}
x/a . X X . . . . . .
x/b . . X . . . . . .
x/c . X . . . . . . .
y/a . X X . . . . . .
y/b . X X . . . . . .
y/c . X X . . . . . .
z/a . X X . . . . . .
z/b . X X . . . . . .
z/c . X X . . . . . .`,
          },
        ],
      },
    ],
  },
  {
    name: 'should enforce policy to allow traffic only from a different namespace, based on NamespaceSelector',
    steps: [
      {
        does: 'every pod of x accepts namespace y',
        change: (s) =>
          addPolicy(s, policy('x', 'from-y', { podSelector: {}, ingress: [{ _from: [fromNsY] }] })),
        expect: [{ probes: ['80/tcp', '81/udp'], table: X_FROM_Y }],
      },
    ],
  },
  {
    name: 'should enforce policy based on NamespaceSelector with MatchExpressions',
    steps: [
      {
        does: 'x/a accepts namespaces with ns In [y]',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-from-in-y', {
              podSelector: selectA,
              ingress: [
                {
                  _from: [
                    {
                      namespaceSelector: { matchExpressions: [{ key: 'ns', operator: 'In', values: ['y'] }] },
                    },
                  ],
                },
              ],
            }),
          ),
        expect: [{ probes: ['80/tcp'], table: XA_FROM_Y }],
      },
    ],
  },
  {
    name: 'should enforce policy based on PodSelector with MatchExpressions',
    steps: [
      {
        does: 'x/a accepts pods with pod In [b] of its namespace',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-from-in-b', {
              podSelector: selectA,
              ingress: [
                {
                  _from: [
                    { podSelector: { matchExpressions: [{ key: 'pod', operator: 'In', values: ['b'] }] } },
                  ],
                },
              ],
            }),
          ),
        expect: [{ probes: ['80/tcp'], table: XA_FROM_XB }],
      },
    ],
  },
  {
    name: 'should enforce policy based on PodSelector or NamespaceSelector',
    steps: [
      {
        does: 'x/a accepts namespaces other than x, or pod b of x',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-from-other-or-b', {
              podSelector: selectA,
              ingress: [
                {
                  _from: [
                    {
                      namespaceSelector: {
                        matchExpressions: [{ key: 'ns', operator: 'NotIn', values: ['x'] }],
                      },
                    },
                    { podSelector: { matchLabels: { pod: 'b' } } },
                  ],
                },
              ],
            }),
          ),
        expect: [
          {
            probes: ['80/tcp'],
            table: `${HEAD}
x/a . . . . . . . . .
x/b . . . . . . . . .
x/c X . . . . . . . .
y/a . . . . . . . . .
y/b . . . . . . . . .
y/c . . . . . . . . .
z/a . . . . . . . . .
z/b . . . . . . . . .
z/c . . . . . . . . .`,
          },
        ],
      },
    ],
  },
  {
    name: 'should enforce policy based on PodSelector and NamespaceSelector',
    steps: [
      {
        does: 'x/a accepts pod b of namespaces other than x',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-from-other-b', {
              podSelector: selectA,
              ingress: [
                {
                  _from: [
                    {
                      namespaceSelector: {
                        matchExpressions: [{ key: 'ns', operator: 'NotIn', values: ['x'] }],
                      },
                      podSelector: { matchLabels: { pod: 'b' } },
                    },
                  ],
                },
              ],
            }),
          ),
        expect: [
          {
            probes: ['80/tcp', '80/udp'],
            table: `${HEAD}
x/a . . . . . . . . .
x/b X . . . . . . . .
x/c X . . . . . . . .
y/a X . . . . . . . .
y/b . . . . . . . . .
y/c X . . . . . . . .
z/a X . . . . . . . .
z/b . . . . . . . . .
z/c X . . . . . . . .`,
          },
        ],
      },
    ],
  },
  {
    name: 'should enforce policy based on Multiple PodSelectors and NamespaceSelectors',
    steps: [
      {
        does: 'x/a accepts pods b and c of namespaces other than x',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-from-other-bc', {
              podSelector: selectA,
              ingress: [
                {
                  _from: [
                    {
                      namespaceSelector: {
                        matchExpressions: [{ key: 'ns', operator: 'NotIn', values: ['x'] }],
                      },
                      podSelector: { matchExpressions: [{ key: 'pod', operator: 'In', values: ['b', 'c'] }] },
                    },
                  ],
                },
              ],
            }),
          ),
        expect: [
          {
            probes: ['80/tcp'],
            table: `${HEAD}
x/a . . . . . . . . .
x/b X . . . . . . . .
x/c X . . . . . . . .
y/a X . . . . . . . .
y/b . . . . . . . . .
y/c . . . . . . . . .
z/a X . . . . . . . .
z/b . . . . . . . . .
z/c . . . . . . . . .`,
          },
        ],
      },
    ],
  },
  {
    name: 'should enforce policy based on any PodSelectors',
    steps: [
      {
        does: 'x/a accepts pod b or pod c of its namespace',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-from-b-or-c', {
              podSelector: selectA,
              ingress: [
                {
                  _from: [
                    { podSelector: { matchLabels: { pod: 'b' } } },
                    { podSelector: { matchLabels: { pod: 'c' } } },
                  ],
                },
              ],
            }),
          ),
        expect: [
          {
            probes: ['81/tcp'],
            table: `${HEAD}
x/a . . . . . . . . .
x/b . . . . . . . . .
x/c . . . . . . . . .
y/a X . . . . . . . .
y/b X . . . . . . . .
y/c X . . . . . . . .
z/a X . . . . . . . .
z/b X . . . . . . . .
z/c X . . . . . . . .`,
          },
        ],
      },
    ],
  },
  {
    name: 'should enforce policy to allow traffic only from a pod in a different namespace based on PodSelector and NamespaceSelector',
    steps: [
      {
        does: 'x/a accepts y/a only',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-from-ya', {
              podSelector: selectA,
              ingress: [{ _from: [{ ...fromNsY, podSelector: { matchLabels: { pod: 'a' } } }] }],
            }),
          ),
        expect: [
          {
            probes: ['80/tcp'],
            table: `${HEAD}
x/a . . . . . . . . .
x/b X . . . . . . . .
x/c X . . . . . . . .
y/a . . . . . . . . .
y/b X . . . . . . . .
y/c X . . . . . . . .
z/a X . . . . . . . .
z/b X . . . . . . . .
z/c X . . . . . . . .`,
          },
        ],
      },
    ],
  },
  {
    name: 'should enforce policy based on Ports',
    steps: [
      {
        does: 'x/a accepts namespace y on TCP 81',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-81-from-y', {
              podSelector: selectA,
              ingress: [{ _from: [fromNsY], ports: [{ protocol: 'TCP', port: 81 }] }],
            }),
          ),
        expect: [
          { probes: ['80/tcp', '81/udp'], table: XA_CLOSED_IN },
          { probes: ['81/tcp'], table: XA_FROM_Y },
        ],
      },
    ],
  },
  {
    name: 'should enforce multiple, stacked policies with overlapping podSelectors',
    steps: [
      {
        does: 'x/a accepts namespace y on TCP 81',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-81-from-y', {
              podSelector: selectA,
              ingress: [{ _from: [fromNsY], ports: [{ protocol: 'TCP', port: 81 }] }],
            }),
          ),
        expect: [
          { probes: ['80/tcp'], table: XA_CLOSED_IN },
          { probes: ['81/tcp'], table: XA_FROM_Y },
        ],
      },
      {
        does: 'a second policy: x/a accepts namespace y on TCP 80 too',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-80-from-y', {
              podSelector: selectA,
              ingress: [{ _from: [fromNsY], ports: [{ protocol: 'TCP', port: 80 }] }],
            }),
          ),
        expect: [{ probes: ['80/tcp', '81/tcp'], table: XA_FROM_Y }],
      },
    ],
  },
  {
    name: 'should support allow-all policy',
    steps: [
      {
        does: 'every pod of x accepts everything',
        change: (s) => addPolicy(s, policy('x', 'allow-all', { podSelector: {}, ingress: [{}] })),
        expect: [{ probes: ['80/tcp', '81/tcp', '80/udp'], table: OPEN }],
      },
    ],
  },
  {
    name: 'should allow ingress access on one named port',
    steps: [
      {
        does: 'every pod of x accepts its port serve-81-tcp',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'allow-81-named', {
              podSelector: {},
              ingress: [{ ports: [{ port: 'serve-81-tcp' }] }],
            }),
          ),
        expect: [
          { probes: ['81/tcp'], table: OPEN },
          { probes: ['80/tcp', '81/udp'], table: X_CLOSED_IN },
        ],
      },
    ],
  },
  {
    name: 'should allow ingress access from namespace on one named port',
    steps: [
      {
        does: 'every pod of x accepts namespace y on its port serve-80-tcp',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'allow-80-named-from-y', {
              podSelector: {},
              ingress: [{ _from: [fromNsY], ports: [{ port: 'serve-80-tcp' }] }],
            }),
          ),
        expect: [
          { probes: ['80/tcp'], table: X_FROM_Y },
          { probes: ['81/tcp', '80/udp'], table: X_CLOSED_IN },
        ],
      },
    ],
  },
  {
    name: 'should allow egress access on one named port',
    steps: [
      {
        does: 'every pod of x may send to serve-80-tcp only',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'egress-80-named', {
              policyTypes: ['Egress'],
              podSelector: {},
              egress: [{ ports: [{ port: 'serve-80-tcp' }] }],
            }),
          ),
        expect: [
          { probes: ['80/tcp'], table: OPEN },
          { probes: ['81/tcp', '80/udp'], table: X_CLOSED_OUT },
        ],
      },
    ],
  },
  {
    name: 'should enforce updated policy',
    steps: [
      {
        does: 'x/a accepts pod b of its namespace',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-ingress', {
              podSelector: selectA,
              ingress: [{ _from: [{ podSelector: { matchLabels: { pod: 'b' } } }] }],
            }),
          ),
        expect: [{ probes: ['80/tcp'], table: XA_FROM_XB }],
      },
      {
        does: 'the same policy updated: x/a accepts namespace y instead',
        change: (s) =>
          addPolicy(s, policy('x', 'a-ingress', { podSelector: selectA, ingress: [{ _from: [fromNsY] }] })),
        expect: [{ probes: ['80/tcp'], table: XA_FROM_Y }],
      },
    ],
  },
  {
    name: 'should allow ingress access from updated namespace',
    steps: [
      {
        does: 'x/a accepts namespaces labelled ns2=updated (none yet)',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-from-updated-ns', {
              podSelector: selectA,
              ingress: [{ _from: [{ namespaceSelector: { matchLabels: { ns2: 'updated' } } }] }],
            }),
          ),
        expect: [{ probes: ['80/tcp'], table: XA_CLOSED_IN }],
      },
      {
        does: 'namespace y gets ns2=updated',
        change: (s) => s.namespaceLabels.set('y', { ...s.namespaceLabels.get('y'), ns2: 'updated' }),
        expect: [{ probes: ['80/tcp'], table: XA_FROM_Y }],
      },
    ],
  },
  {
    name: 'should allow ingress access from updated pod',
    steps: [
      {
        does: 'x/a accepts pods of x labelled pod2=updated (none yet)',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-from-updated-pod', {
              podSelector: selectA,
              ingress: [{ _from: [{ podSelector: { matchLabels: { pod2: 'updated' } } }] }],
            }),
          ),
        expect: [{ probes: ['80/tcp'], table: XA_CLOSED_IN }],
      },
      {
        does: 'x/b gets pod2=updated',
        change: (s) => s.podLabels.set('x/b', { ...s.podLabels.get('x/b'), pod2: 'updated' }),
        expect: [{ probes: ['80/tcp'], table: XA_FROM_XB }],
      },
    ],
  },
  {
    name: 'should deny ingress access to updated pod',
    steps: [
      {
        does: 'pods of x labelled target=isolated accept nothing (none yet)',
        change: (s) => addPolicy(s, deny('x', ['Ingress'], { matchLabels: { target: 'isolated' } })),
        expect: [{ probes: ['80/tcp'], table: OPEN }],
      },
      {
        does: 'x/a gets target=isolated',
        change: (s) => s.podLabels.set('x/a', { ...s.podLabels.get('x/a'), target: 'isolated' }),
        expect: [{ probes: ['80/tcp'], table: XA_CLOSED_IN }],
      },
    ],
  },
  {
    name: 'should deny ingress from pods on other namespaces',
    steps: [
      {
        does: 'every pod of x accepts the pods of x',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'from-own-namespace', {
              podSelector: {},
              ingress: [{ _from: [{ podSelector: {} }] }],
            }),
          ),
        expect: [
          {
            probes: ['80/tcp', '81/udp'],
            table: `${HEAD}
x/a . . . . . . . . .
x/b . . . . . . . . .
x/c . . . . . . . . .
y/a X X X . . . . . .
y/b X X X . . . . . .
y/c X X X . . . . . .
z/a X X X . . . . . .
z/b X X X . . . . . .
z/c X X X . . . . . .`,
          },
        ],
      },
    ],
  },
  {
    name: 'should deny egress from pods based on PodSelector',
    steps: [
      {
        does: 'x/a may send nothing',
        change: (s) => addPolicy(s, deny('x', ['Egress'], selectA)),
        expect: [
          {
            probes: ['80/tcp'],
            table: `${HEAD}
x/a . X X X X X X X X
x/b . . . . . . . . .
x/c . . . . . . . . .
y/a . . . . . . . . .
y/b . . . . . . . . .
y/c . . . . . . . . .
z/a . . . . . . . . .
z/b . . . . . . . . .
z/c . . . . . . . . .`,
          },
        ],
      },
    ],
  },
  {
    name: 'should deny egress from all pods in a namespace',
    steps: [
      {
        does: 'no pod of x may send',
        change: (s) => addPolicy(s, deny('x', ['Egress'])),
        expect: [{ probes: ['80/tcp', '80/udp'], table: X_CLOSED_OUT }],
      },
    ],
  },
  {
    name: 'should work with Ingress, Egress specified together',
    steps: [
      {
        does: 'x/a accepts pod b of x and may send to namespace y',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-in-and-out', {
              podSelector: selectA,
              policyTypes: ['Ingress', 'Egress'],
              ingress: [{ _from: [{ podSelector: { matchLabels: { pod: 'b' } } }] }],
              egress: [{ to: [fromNsY] }],
            }),
          ),
        expect: [
          {
            probes: ['80/tcp', '81/tcp'],
            table: `${HEAD}
x/a . X X . . . X X X
x/b . . . . . . . . .
x/c X . . . . . . . .
y/a X . . . . . . . .
y/b X . . . . . . . .
y/c X . . . . . . . .
z/a X . . . . . . . .
z/b X . . . . . . . .
z/c X . . . . . . . .`,
          },
        ],
      },
    ],
  },
  {
    name: 'should enforce egress policy allowing traffic to a server in a different namespace based on PodSelector and NamespaceSelector',
    steps: [
      {
        does: 'x/a may send to y/a only',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-to-ya', {
              policyTypes: ['Egress'],
              podSelector: selectA,
              egress: [{ to: [{ ...fromNsY, podSelector: { matchLabels: { pod: 'a' } } }] }],
            }),
          ),
        expect: [
          {
            probes: ['80/tcp'],
            table: `${HEAD}
x/a . X X . X X X X X
x/b . . . . . . . . .
x/c . . . . . . . . .
y/a . . . . . . . . .
y/b . . . . . . . . .
y/c . . . . . . . . .
z/a . . . . . . . . .
z/b . . . . . . . . .
z/c . . . . . . . . .`,
          },
        ],
      },
    ],
  },
  {
    name: 'should allow egress access to server in CIDR block',
    steps: [
      {
        does: 'x/a may send to the /32 of y/b only',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-to-yb-cidr', {
              policyTypes: ['Egress'],
              podSelector: selectA,
              egress: [{ to: [{ ipBlock: { cidr: '10.11.1.21/32' } }] }],
            }),
          ),
        expect: [
          {
            probes: ['80/tcp', '80/udp'],
            table: `${HEAD}
x/a . X X X . X X X X
x/b . . . . . . . . .
x/c . . . . . . . . .
y/a . . . . . . . . .
y/b . . . . . . . . .
y/c . . . . . . . . .
z/a . . . . . . . . .
z/b . . . . . . . . .
z/c . . . . . . . . .`,
          },
        ],
      },
    ],
  },
  {
    name: 'should enforce except clause while egress access to server in CIDR block',
    steps: [
      {
        does: 'x/a may send to 10.11.0.0/16 except the /32 of y/a',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-to-cidr-except', {
              policyTypes: ['Egress'],
              podSelector: selectA,
              egress: [{ to: [{ ipBlock: { cidr: '10.11.0.0/16', except: ['10.11.1.20/32'] } }] }],
            }),
          ),
        expect: [
          {
            probes: ['80/tcp'],
            table: `${HEAD}
x/a . . . X . . . . .
x/b . . . . . . . . .
x/c . . . . . . . . .
y/a . . . . . . . . .
y/b . . . . . . . . .
y/c . . . . . . . . .
z/a . . . . . . . . .
z/b . . . . . . . . .
z/c . . . . . . . . .`,
          },
        ],
      },
    ],
  },
  {
    name: 'should ensure an IP overlapping both IPBlock.CIDR and IPBlock.Except is allowed',
    steps: [
      {
        does: 'x/a may send to 10.11.0.0/16 except y/a, and to y/a by a second peer',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-to-cidr-overlap', {
              policyTypes: ['Egress'],
              podSelector: selectA,
              egress: [
                {
                  to: [
                    { ipBlock: { cidr: '10.11.0.0/16', except: ['10.11.1.20/32'] } },
                    { ipBlock: { cidr: '10.11.1.20/32' } },
                  ],
                },
              ],
            }),
          ),
        expect: [{ probes: ['80/tcp'], table: OPEN }],
      },
    ],
  },
  {
    name: 'should support an ingress port range (endPort)',
    steps: [
      {
        does: 'every pod of x accepts namespace y on TCP 81-82',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'from-y-81-82', {
              podSelector: {},
              ingress: [{ _from: [fromNsY], ports: [{ protocol: 'TCP', port: 81, endPort: 82 }] }],
            }),
          ),
        expect: [
          { probes: ['81/tcp'], table: X_FROM_Y },
          { probes: ['80/tcp', '81/udp'], table: X_CLOSED_IN },
        ],
      },
    ],
  },
  {
    name: 'should allow ingress access again after the policy is deleted',
    steps: [
      {
        does: 'deny all ingress in x',
        change: (s) => addPolicy(s, deny('x', ['Ingress'])),
        expect: [{ probes: ['80/tcp'], table: X_CLOSED_IN }],
      },
      {
        does: 'the policy deleted',
        change: (s) => s.policies.delete('x/deny-ingress'),
        expect: [{ probes: ['80/tcp', '80/udp'], table: OPEN }],
      },
    ],
  },
  {
    name: 'should enforce policy based on Ports (UDP)',
    steps: [
      {
        does: 'x/a accepts namespace y on UDP 81',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-udp-81-from-y', {
              podSelector: selectA,
              ingress: [{ _from: [fromNsY], ports: [{ protocol: 'UDP', port: 81 }] }],
            }),
          ),
        expect: [
          { probes: ['81/udp'], table: XA_FROM_Y },
          { probes: ['80/udp', '81/tcp'], table: XA_CLOSED_IN },
        ],
      },
    ],
  },
  {
    name: 'should enforce ingress policy allowing any port traffic to a server on a specific protocol',
    steps: [
      {
        does: 'x/a accepts TCP on any port',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-any-tcp', { podSelector: selectA, ingress: [{ ports: [{ protocol: 'TCP' }] }] }),
          ),
        expect: [
          { probes: ['80/tcp', '81/tcp'], table: OPEN },
          { probes: ['80/udp'], table: XA_CLOSED_IN },
        ],
      },
    ],
  },
  {
    name: 'should stop allowing a namespace whose label no longer matches',
    steps: [
      {
        does: 'x/a accepts namespace y (ns=y)',
        change: (s) =>
          addPolicy(s, policy('x', 'a-from-y', { podSelector: selectA, ingress: [{ _from: [fromNsY] }] })),
        expect: [{ probes: ['80/tcp'], table: XA_FROM_Y }],
      },
      {
        does: 'namespace y relabelled ns=y2',
        change: (s) => s.namespaceLabels.set('y', { ...s.namespaceLabels.get('y'), ns: 'y2' }),
        expect: [{ probes: ['80/tcp'], table: XA_CLOSED_IN }],
      },
    ],
  },
  {
    name: 'should stop allowing a pod whose label no longer matches',
    steps: [
      {
        does: 'x/a accepts pod b of x',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-from-b', {
              podSelector: selectA,
              ingress: [{ _from: [{ podSelector: { matchLabels: { pod: 'b' } } }] }],
            }),
          ),
        expect: [{ probes: ['80/tcp'], table: XA_FROM_XB }],
      },
      {
        does: 'x/b relabelled pod=b2',
        change: (s) => s.podLabels.set('x/b', { pod: 'b2' }),
        expect: [{ probes: ['80/tcp'], table: XA_CLOSED_IN }],
      },
    ],
  },
  {
    name: 'policyTypes left out: a policy with egress rules isolates ingress too (Ingress is always implied)',
    steps: [
      {
        does: 'x/a may send to the /32 of y/b only, policyTypes not given',
        change: (s) =>
          addPolicy(
            s,
            policy('x', 'a-to-yb-implied', {
              podSelector: selectA,
              egress: [{ to: [{ ipBlock: { cidr: '10.11.1.21/32' } }] }],
            }),
          ),
        expect: [
          {
            probes: ['80/tcp'],
            table: `${HEAD}
x/a . X X X . X X X X
x/b X . . . . . . . .
x/c X . . . . . . . .
y/a X . . . . . . . .
y/b X . . . . . . . .
y/c X . . . . . . . .
z/a X . . . . . . . .
z/b X . . . . . . . .
z/c X . . . . . . . .`,
          },
        ],
      },
    ],
  },
];
