/**
 * `odlcoectl reach` against the ODL emulator and the Kubernetes simulator: ODL holds the pod
 * network and the ACLs of one NetworkPolicy as the translation wants them (through the plans
 * the watcher executes; Genius' binding filled in by the emulator), Kubernetes the pods.
 *
 * Policy `web` in namespace default: every pod there accepts TCP 8080 from namespace team-a
 * only (Kubernetes: a pod selected for ingress takes only what a rule allows). So
 * team-a/api-0 → default/web-0 on 8080/tcp is delivered, default/web-1 → default/web-0 is not,
 * and once the rule is removed by hand in ODL, reach names the policy's ACL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1NetworkPolicy, V1Namespace } from '@kubernetes/client-node';
import type { ReachReport } from '../../src/cli/reach.js';
import { liveAces } from '../../src/netvirt/acl.js';
import { netvirtPaths } from '../../src/netvirt/index.js';
import {
  policyDesired,
  policyWrites,
  PROFILES_AND_DIALECTS,
  type PolicyDesired,
} from '../helpers/policy-writes.js';
import { apply, createCluster, NODES, startHarness, type CliHarness } from './testing.js';

const WEB: V1NetworkPolicy = {
  metadata: { namespace: 'default', name: 'web', uid: '7d4c9e2a-0000-4000-8000-000000000001' },
  spec: {
    podSelector: {},
    policyTypes: ['Ingress'],
    ingress: [
      {
        _from: [{ namespaceSelector: { matchLabels: { team: 'a' } } }],
        ports: [{ protocol: 'TCP', port: 8080 }],
      },
    ],
  },
};

const report = (stdout: string) => JSON.parse(stdout) as ReachReport;

for (const [profile, dialect] of PROFILES_AND_DIALECTS) {
  describe(`odlcoectl reach (${profile})`, () => {
    let h: CliHarness;
    let d: PolicyDesired;
    let webAcl: string;

    before(async () => {
      h = await startHarness(profile, dialect, { fillParentInterface: true });
      const cluster = await createCluster(h);
      const namespaces: V1Namespace[] = cluster.namespaces.map((n) =>
        n.metadata?.name === 'team-a' ? { ...n, metadata: { ...n.metadata, labels: { team: 'a' } } } : n,
      );
      const view = {
        ...cluster,
        namespaces,
        services: [],
        routeDistinguishers: new Map([
          ['default', '64512:1'],
          ['team-a', '64512:2'],
        ]),
        nodeSubnets: new Map(NODES.map((n) => [n.name, n.subnet])),
      };
      d = policyDesired(view, [WEB], h.settings);
      webAcl = d.index.policyAcl(d.index.policies[0]!, 'ingress', '');
      assert.ok(
        d.acls.some((a) => a.name === webAcl),
        'the translation makes the policy its ingress ACL',
      );
      await apply(h, policyWrites(h.settings, d));
    });
    after(async () => h?.close());

    it('a packet the policy allows: exit 0, the path through both VPNs and the policy’s ACL', async () => {
      const r = await h.run(['reach', 'team-a/api-0', 'default/web-0', '--port', '8080/tcp', '-o', 'json']);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const out = report(r.stdout);
      assert.equal(out.verdict, 'delivered');
      assert.deepEqual(out.source, { interface: 'team-a:api-0', ip: '10.11.1.6' });
      assert.deepEqual(out.destination, { interface: 'default:web-0', ip: '10.11.1.5' });
      const hops = out.path.map((x) => `${x.kind} ${x.name}`);
      assert.ok(hops.includes('vpn-instance team-a'), hops.join('\n'));
      assert.equal(hops.at(-1), `acl ${webAcl}`);
      assert.ok(
        out.notes.some((n) => /conntrack/.test(n)),
        'replies are explained',
      );
    });

    it('a packet the policy does not allow: exit 1, every ACL of the port says why', async () => {
      const r = await h.run(['reach', 'default/web-1', 'default/web-0', '--port', '8080/tcp', '-o', 'json']);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      const out = report(r.stdout);
      assert.equal(out.verdict, 'dropped');
      assert.ok(
        out.drop?.acls?.some((a) => a.acl === webAcl),
        JSON.stringify(out.drop),
      );
    });

    it('an IP as destination, and the default probe (ICMP echo)', async () => {
      const byIp = await h.run(['reach', 'team-a/api-0', '10.11.1.5', '--port', '8080/tcp', '-o', 'json']);
      assert.equal(byIp.code, 0, byIp.stdout + byIp.stderr);
      assert.equal(report(byIp.stdout).destination.interface, 'default:web-0');
      const ping = await h.run(['reach', 'default/web-0', 'team-a/api-0', '-o', 'json']);
      assert.equal(ping.code, 0, ping.stdout + ping.stderr);
      assert.deepEqual(report(ping.stdout).probe, { protocol: 'icmp' });
    });

    it('the broken case: the policy’s rule deleted by hand in ODL → reach names that ACL (child process, human output)', async () => {
      const acl = d.acls.find((a) => a.name === webAcl)!;
      const paths = netvirtPaths(profile);
      for (const ace of liveAces(acl).filter((a) => a.matches.sourceIpv4Network !== undefined))
        await h.odl.delete(paths.ace(webAcl, ace.ruleName));
      const r = await h.spawn(['reach', 'team-a/api-0', 'default/web-0', '--port', '8080/tcp']);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stdout, /DROPPED/);
      assert.match(r.stdout, new RegExp(`acl ${webAcl}: no ingress rule matched`));
      assert.match(r.stdout, /port security is on for default:web-0/);
      const json = report(
        (await h.run(['reach', 'team-a/api-0', 'default/web-0', '--port', '8080/tcp', '-o', 'json'])).stdout,
      );
      const named = json.drop?.acls?.find((a) => a.acl === webAcl);
      assert.ok(named?.exists, 'the ACL is still there, without the rule');
      assert.ok(!named.rules.some((x) => x.why.includes('10.11.1.6')), 'no rule for the source is left');
    });

    it('bad input: an unknown pod, a bad port, an off-network pod → exit 2 with a precise message', async () => {
      const unknown = await h.run(['reach', 'default/nope', 'default/web-0']);
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /pod default\/nope does not exist in Kubernetes/);
      const port = await h.run(['reach', 'default/web-0', 'default/web-1', '--port', '80/icmp']);
      assert.equal(port.code, 2);
      assert.match(port.stderr, /protocol icmp is not one of tcp, udp, sctp/);
      const host = await h.run(['reach', 'kube-system/host-agent', 'default/web-1']);
      assert.equal(host.code, 2);
      assert.match(host.stderr, /uses the host network/);
      const target = await h.run(['reach', 'default/web-0', 'not a pod']);
      assert.equal(target.code, 2, target.stderr);
    });
  });
}
