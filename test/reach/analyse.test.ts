/**
 * The reachability analysis on NetVirt worlds written by hand into the ODL emulator, in both
 * profiles. Every expectation below is read off the objects written here and NetVirt's
 * documented semantics (netvirt-features §3.1, vpnmanager's route import), not off the code:
 *
 *   ELAN 192.168.56.101:ns-a   a1 10.11.1.5 (port security: groups G-a, allow-out; its IP+MAC as AAP)
 *                              a2 10.11.1.6 (port security: group web = ingress TCP 80 from G-a,
 *                                            SCTP 5000 from anywhere)
 *   ELAN 192.168.56.102:ns-a   a3 10.11.2.5 (no port security)
 *   ELAN 192.168.56.101:ns-b   b1 10.11.1.7 (no port security)
 *   ELAN 192.168.56.102:ns-c   c1 10.11.2.6 (no port security)
 *   ELAN 192.168.56.102:ns-a   a4 10.11.2.7 (port security, allow-out, but its AAP holds another IP)
 *   ELAN 192.168.56.102:ns-a   a5 10.11.2.8 (no OVS port: no parent-interface)
 *   ELAN odlcoe-gw.n1          odlcoe-gw.n1 10.11.1.2, extra route 10.96.0.10/32 via 10.11.1.2
 *   VPNs ns-a (RD 64512:1), ns-b (64512:2), odlcoe.gateways (64512:9): route target 64512:1 both;
 *        ns-c (64512:3): route target 64512:99 only
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { aclName, PROTOCOL_NUMBERS } from '../../src/netvirt/acl.js';
import type { ReachResult } from '../../src/netvirt/reach/index.js';
import { PROFILES_AND_DIALECTS } from '../helpers/policy-writes.js';
import {
  apply,
  mac,
  markAceDeleted,
  putAcl,
  putElan,
  putPort,
  putVpn,
  reach,
  rule,
  startWorld,
  type World,
} from './testing.js';

const G_A = aclName('t', 'group:a');
const WEB = aclName('t', 'policy:web:ingress');
const ALLOW_OUT = aclName('t', 'allow-out');
const E1A = '192.168.56.101:ns-a';
const E2A = '192.168.56.102:ns-a';

/** An ingress rule from anywhere (or from a remote group) to one port of one protocol. */
const ingressTo = (protocol: number, port: number, remoteGroupId?: string) =>
  rule({
    direction: 'ingress',
    action: 'permit',
    ...(remoteGroupId !== undefined ? { remoteGroupId } : {}),
    matches: { sourceIpv4Network: '0.0.0.0/0', protocol, destinationPortRange: { lower: port, upper: port } },
  });
const webRule = ingressTo(PROTOCOL_NUMBERS.tcp, 80, G_A);
const sctpRule = ingressTo(PROTOCOL_NUMBERS.sctp, 5000);
const outRule = rule({
  direction: 'egress',
  action: 'permit',
  matches: { destinationIpv4Network: '0.0.0.0/0' },
});

async function build(w: World): Promise<void> {
  for (const e of [E1A, E2A, '192.168.56.101:ns-b', '192.168.56.102:ns-c', 'odlcoe-gw.n1'])
    await putElan(w, e);
  await putVpn(w, 'ns-a', '64512:1', '64512:1');
  await putVpn(w, 'ns-b', '64512:2', '64512:1');
  await putVpn(w, 'ns-c', '64512:3', '64512:99');
  await putVpn(w, 'odlcoe.gateways', '64512:9', '64512:1');
  await putAcl(w, G_A, [], 1);
  await putAcl(w, ALLOW_OUT, [outRule], 2);
  await putAcl(w, WEB, [webRule, sctpRule], 3);
  await putPort(w, {
    name: 'ns-a:a1',
    ip: '10.11.1.5',
    elan: E1A,
    vpn: 'ns-a',
    acl: {
      portSecurityEnabled: true,
      securityGroups: [G_A, ALLOW_OUT],
      allowedAddressPairs: [{ macAddress: mac('10.11.1.5'), ipAddress: '10.11.1.5' }],
    },
  });
  await putPort(w, {
    name: 'ns-a:a2',
    ip: '10.11.1.6',
    elan: E1A,
    vpn: 'ns-a',
    acl: {
      portSecurityEnabled: true,
      securityGroups: [WEB],
      allowedAddressPairs: [{ macAddress: mac('10.11.1.6'), ipAddress: '10.11.1.6' }],
    },
  });
  await putPort(w, { name: 'ns-a:a3', ip: '10.11.2.5', elan: E2A, vpn: 'ns-a' });
  await putPort(w, { name: 'ns-b:b1', ip: '10.11.1.7', elan: '192.168.56.101:ns-b', vpn: 'ns-b' });
  await putPort(w, { name: 'ns-c:c1', ip: '10.11.2.6', elan: '192.168.56.102:ns-c', vpn: 'ns-c' });
  await putPort(w, {
    name: 'ns-a:a4',
    ip: '10.11.2.7',
    elan: E2A,
    vpn: 'ns-a',
    acl: {
      portSecurityEnabled: true,
      securityGroups: [ALLOW_OUT],
      allowedAddressPairs: [{ macAddress: mac('10.11.2.7'), ipAddress: '10.11.2.77' }],
    },
  });
  await putPort(w, { name: 'ns-a:a5', ip: '10.11.2.8', elan: E2A, vpn: 'ns-a', bound: false });
  await putPort(w, {
    name: 'odlcoe-gw.n1',
    ip: '10.11.1.2',
    elan: 'odlcoe-gw.n1',
    vpn: 'odlcoe.gateways',
    extraRoutes: [{ prefix: '10.96.0.10/32', nextHop: '10.11.1.2' }],
  });
}

/** A drop's reason with its per-ACL lines. */
const why = (r: ReachResult) => [r.drop?.reason ?? '', ...(r.drop?.details ?? [])].join('\n');
const pod = (name: string) => ({ interface: name });
const kindsOf = (path: { kind: string; name: string }[]) => path.map((h) => `${h.kind} ${h.name}`);

for (const [profile, dialect] of PROFILES_AND_DIALECTS) {
  describe(`reachability analysis (${profile})`, () => {
    let w: World;
    before(async () => {
      w = await startWorld(profile, dialect);
      await build(w);
    });
    after(async () => w?.close());

    it('same ELAN, a rule whose remote group holds the source: delivered through ELAN and both ports’ ACLs', async () => {
      const r = await reach(w, pod('ns-a:a1'), pod('ns-a:a2'), '80/tcp');
      assert.equal(r.verdict, 'delivered', JSON.stringify(r.drop));
      assert.deepEqual(kindsOf(r.path), [
        'ietf-interface ns-a:a1',
        'elan-interface ns-a:a1',
        `acl ${ALLOW_OUT}`,
        `elan-instance ${E1A}`,
        'ietf-interface ns-a:a2',
        'elan-interface ns-a:a2',
        `acl ${WEB}`,
      ]);
      assert.match(r.path[6]!.note, new RegExp(webRule.ruleName));
      assert.ok(
        r.notes.some((n) => /conntrack/.test(n)),
        'the stateful reply is explained',
      );
      assert.deepEqual(r.destination, { interface: 'ns-a:a2', ip: '10.11.1.6' });
    });

    it('a port no rule opens: dropped by the one ACL of the destination, each rule saying why', async () => {
      const r = await reach(w, pod('ns-a:a1'), pod('ns-a:a2'), '81/tcp');
      assert.equal(r.verdict, 'dropped');
      assert.equal(r.drop?.kind, 'acl');
      assert.equal(r.drop?.name, WEB);
      assert.match(why(r), /port 81 is outside 80-80/);
      assert.deepEqual(
        r.drop?.acls?.[0]?.rules.map((x) => x.rule),
        [webRule.ruleName, sctpRule.ruleName],
      );
    });

    it('UDP to a TCP rule: dropped on the protocol', async () => {
      const r = await reach(w, pod('ns-a:a1'), pod('ns-a:a2'), '80/udp');
      assert.equal(r.drop?.name, WEB);
      assert.match(why(r), /protocol 6 is not the packet's 17/);
    });

    it('a source outside the remote group: dropped, naming the group', async () => {
      const r = await reach(w, pod('ns-b:b1'), pod('ns-a:a2'), '80/tcp');
      assert.equal(r.verdict, 'dropped');
      assert.equal(r.drop?.name, WEB);
      assert.match(why(r), new RegExp(`10\\.11\\.1\\.7 is no allowed-address-pair .* remote group ${G_A}`));
      assert.ok(
        r.notes.some((n) => /ns-b:b1: port security is off/.test(n)),
        'the open source side is said',
      );
    });

    it('SCTP: NetVirt ignores the rule’s port, so another port passes', async () => {
      const r = await reach(w, pod('ns-b:b1'), pod('ns-a:a2'), '6000/sctp');
      assert.equal(r.verdict, 'delivered', JSON.stringify(r.drop));
      assert.match(r.path.at(-1)!.note, /ignores ports/);
    });

    it('another node of the same namespace: routed by the VPN through the primary adjacency', async () => {
      const r = await reach(w, pod('ns-a:a1'), pod('ns-a:a3'), '8080/tcp');
      assert.equal(r.verdict, 'delivered', JSON.stringify(r.drop));
      assert.deepEqual(kindsOf(r.path).slice(3), [
        'vpn-interface ns-a:a1',
        'vpn-instance ns-a',
        'ietf-interface ns-a:a3',
        'elan-interface ns-a:a3',
      ]);
      assert.match(r.path[4]!.note, /route 10\.11\.2\.5\/32 \(primary-adjacency of ns-a:a3\)/);
    });

    it('another namespace: the route is imported through the shared route target', async () => {
      const r = await reach(w, pod('ns-b:b1'), pod('ns-a:a3'));
      assert.equal(r.verdict, 'delivered', JSON.stringify(r.drop));
      assert.match(
        r.path.find((h) => h.kind === 'vpn-instance')?.note ?? '',
        /of VPN ns-a, imported through route target 64512:1/,
      );
      assert.ok(!r.notes.some((n) => /conntrack/.test(n)), 'no ACL was involved, so no conntrack note');
    });

    it('a VPN that does not import the destination’s routes: dropped at the source’s VPN', async () => {
      const r = await reach(w, pod('ns-a:a1'), pod('ns-c:c1'), '80/tcp');
      assert.equal(r.verdict, 'dropped');
      assert.deepEqual({ kind: r.drop?.kind, name: r.drop?.name }, { kind: 'vpn-instance', name: 'ns-a' });
      assert.match(
        why(r),
        /does not import route 10\.11\.2\.6\/32 of VPN ns-c .*exports route targets \[64512:99\]/,
      );
    });

    it('a Service IP: the extra route of the node gateway delivers it there', async () => {
      const r = await reach(w, pod('ns-a:a1'), { ip: '10.96.0.10' }, '443/tcp');
      assert.equal(r.verdict, 'delivered', JSON.stringify(r.drop));
      assert.equal(r.destination.interface, 'odlcoe-gw.n1');
      assert.match(
        r.path.find((h) => h.kind === 'vpn-instance')?.note ?? '',
        /extra route 10\.96\.0\.10\/32 via 10\.11\.1\.2/,
      );
      assert.ok(
        r.notes.some((n) => /kube-proxy/.test(n)),
        'where NetVirt stops is said',
      );
    });

    it('an address no adjacency covers: dropped at the VPN as a missing adjacency', async () => {
      const r = await reach(w, pod('ns-a:a1'), { ip: '10.99.0.1' }, '80/tcp');
      assert.deepEqual({ kind: r.drop?.kind, name: r.drop?.name }, { kind: 'vpn-instance', name: 'ns-a' });
      assert.match(why(r), /no adjacency or extra route of any VPN covers 10\.99\.0\.1/);
    });

    it('port security without its own IP among the allowed-address-pairs: anti-spoofing drops all egress', async () => {
      const r = await reach(w, pod('ns-a:a4'), pod('ns-a:a3'));
      assert.deepEqual(
        { kind: r.drop?.kind, name: r.drop?.name },
        { kind: 'ietf-interface', name: 'ns-a:a4' },
      );
      assert.match(why(r), /no allowed-address-pair holds 0a:58:0a:0b:02:07 with 10\.11\.2\.7/);
    });

    it('a port Genius never bound: dropped at its ietf-interface', async () => {
      const r = await reach(w, pod('ns-a:a3'), pod('ns-a:a5'));
      assert.deepEqual(
        { kind: r.drop?.kind, name: r.drop?.name },
        { kind: 'ietf-interface', name: 'ns-a:a5' },
      );
      assert.match(why(r), /no parent-interface/);
    });

    it('the source given by its address is the port that holds it', async () => {
      const r = await reach(w, { ip: '10.11.1.5' }, { ip: '10.11.1.6' }, '80/tcp');
      assert.equal(r.verdict, 'delivered', JSON.stringify(r.drop));
      assert.equal(r.source.interface, 'ns-a:a1');
    });

    it('a rule removed the aclservice way (deleted: true) no longer permits: the ACL is named', async () => {
      // aclservice (and the emulator) then removes the ACE from config itself.
      await apply(w, markAceDeleted(w, WEB, webRule));
      try {
        const r = await reach(w, pod('ns-a:a1'), pod('ns-a:a2'), '80/tcp');
        assert.equal(r.verdict, 'dropped');
        assert.deepEqual({ kind: r.drop?.kind, name: r.drop?.name }, { kind: 'acl', name: WEB });
        assert.deepEqual(
          r.drop?.acls?.[0]?.rules.map((x) => x.rule),
          [sctpRule.ruleName],
        );
      } finally {
        await putAcl(w, WEB, [webRule, sctpRule], 3);
      }
    });

    if (profile === 'aluminium')
      it('Aluminium: a remote group without acl-tag makes aclservice skip the rule', async () => {
        await putAcl(w, G_A, []);
        try {
          const r = await reach(w, pod('ns-a:a1'), pod('ns-a:a2'), '80/tcp');
          assert.equal(r.drop?.name, WEB);
          assert.match(why(r), /remote group .* has no acl-tag: Aluminium's aclservice skips the rule/);
        } finally {
          await putAcl(w, G_A, [], 1);
        }
      });
  });
}
