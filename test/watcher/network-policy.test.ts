/**
 * NetworkPolicy enforcement end to end, on both releases (kubesim → watcher → emulator): the
 * ACLs and port security the watcher writes validate against the release's YANG, a label
 * change on one pod writes that pod's interface and no ACL, a restart over a correct ODL
 * writes nothing, a policy ODL cannot express exactly is reported on the policy, and deleting
 * the policy leaves no ACL and no port-security change behind.
 */
import {
  NetworkingV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1NetworkPolicy,
  type V1Pod,
} from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { aclKind } from '../../src/netvirt/kinds.js';
import { liveAces, type Acl } from '../../src/netvirt/acl.js';
import { parseInterfaces } from '../../src/netvirt/interfaces.js';
import { PROFILES } from '../../src/netvirt/profile.js';
import type { Watcher } from '../../src/watcher/watcher.js';
import {
  createNamespace,
  createNode,
  RecordedEvents,
  startEnv,
  startTestWatcher,
  waitFor,
  type Env,
} from './testing.js';

const NODE = 'node-1';
const ACL_MODULE = 'ietf-access-control-list';
const IF_MODULE = 'ietf-interfaces';

async function createPod(
  env: Env,
  ns: string,
  name: string,
  ip: string,
  labels: Record<string, string>,
): Promise<void> {
  const body: V1Pod = {
    metadata: { name, namespace: ns, labels },
    spec: {
      nodeName: NODE,
      containers: [{ name: 'c', image: 'pause', ports: [{ name: 'http', containerPort: 8080 }] }],
    },
    status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] },
  };
  await env.core.createNamespacedPod({ namespace: ns, body });
}

async function readAcls(env: Env): Promise<Acl[]> {
  const raw = await env.odl.getEntries(aclKind.list(env.profile));
  return raw.map((r) => aclKind.parse(env.profile, r)).sort((a, b) => a.name.localeCompare(b.name));
}

async function interfaceAcls(env: Env): Promise<Record<string, unknown>> {
  const raw = await env.odl.getEntries([{ module: IF_MODULE, name: 'interfaces' }, { name: 'interface' }]);
  const parsed = parseInterfaces({ interface: raw });
  return Object.fromEntries(parsed.map((i) => [i.name, i.acl]));
}

const writesTo = (env: Env, module: string) => env.emu.counters().writes[module] ?? 0;

const POLICY: V1NetworkPolicy = {
  metadata: { name: 'web', namespace: 'x' },
  spec: {
    podSelector: { matchLabels: { app: 'web' } },
    ingress: [
      { _from: [{ podSelector: { matchLabels: { role: 'client' } } }], ports: [{ port: 'http' }] },
      { ports: [{ protocol: 'SCTP', port: 9999 }] },
    ],
  },
};

for (const profile of PROFILES) {
  describe(`NetworkPolicy enforcement (${profile})`, () => {
    let cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const c of cleanups.reverse()) await c().catch(() => undefined);
      cleanups = [];
    });

    /** An environment with one node, namespace x and its pod web. */
    const envWithWeb = async (): Promise<Env> => {
      const env = await startEnv({ profile, dialect: profile === 'sodium' ? 'bierman02' : 'rfc8040' });
      cleanups.push(() => env.close());
      await createNode(env, NODE, '192.168.56.101', '10.244.1.0/24');
      await createNamespace(env, 'x');
      await createPod(env, 'x', 'web', '10.244.1.10', { app: 'web' });
      return env;
    };

    /** A watcher enforcing NetworkPolicy, ready and idle. */
    const startEnforcing = async (env: Env, events = new RecordedEvents()): Promise<Watcher> => {
      const w = await startTestWatcher(env, { networkPolicyEnforcement: 'on' }, { events });
      cleanups.push(() => w.close());
      await w.ready();
      await w.idle();
      return w;
    };

    /** POLICY created, and its ACL and peer group in ODL. */
    const applyPolicy = async (env: Env, watcher: Watcher): Promise<NetworkingV1Api> => {
      const net = env.kc.makeApiClient(NetworkingV1Api);
      await net.createNamespacedNetworkPolicy({ namespace: 'x', body: POLICY });
      await waitFor(async () => (await readAcls(env)).length === 5, {
        what: 'the policy ACL and its peer group',
        timeoutMs: 20_000,
      });
      await watcher.idle();
      return net;
    };

    /** ODL back to the ACLs and port security it held before the policy. */
    const backTo = async (
      env: Env,
      watcher: Watcher,
      acls: Acl[],
      security: Record<string, unknown>,
      what: string,
    ): Promise<void> => {
      await waitFor(async () => (await readAcls(env)).length === acls.length, { what, timeoutMs: 20_000 });
      await watcher.idle();
      assert.deepEqual(await readAcls(env), acls);
      assert.deepEqual(await interfaceAcls(env), security);
    };

    it('applies, follows labels, restarts quietly, reports what it cannot express and cleans up', async () => {
      const env = await envWithWeb();
      await createNamespace(env, 'y');
      // Bystanders: the size of the cluster must not show in the writes of one relabelling.
      for (let i = 0; i < 8; i++)
        await createPod(env, i % 2 ? 'x' : 'y', `other-${i}`, `10.244.1.${20 + i}`, { app: 'other' });
      await createPod(env, 'x', 'client', '10.244.1.11', {});

      const events = new RecordedEvents();
      let watcher = await startEnforcing(env, events);
      const aclsBefore = await readAcls(env);
      const securityBefore = await interfaceAcls(env);
      assert.equal(aclsBefore.length, 3, 'allow-all both ways and the node ACL, before any policy');
      for (const [name, acl] of Object.entries(securityBefore))
        assert.ok(
          acl && (acl as { portSecurityEnabled: boolean }).portSecurityEnabled,
          `port security on ${name}`,
        );

      const net = await applyPolicy(env, watcher);
      const acls = await readAcls(env);
      const rules = acls.map((a) => liveAces(a).length).sort((a, b) => a - b);
      // The group (no rules), the node (its address in and out), allow-all (2 families each),
      // the policy (http from the group × 2 families; the SCTP port left out).
      assert.deepEqual(rules, [0, 2, 2, 2, 2]);
      if (profile === 'aluminium') {
        const tags = acls.map((a) => a.aclTag);
        assert.ok(
          tags.every((t) => t !== undefined) && new Set(tags).size === tags.length,
          `unique acl-tags ${JSON.stringify(tags)}`,
        );
      } else
        assert.ok(
          acls.every((a) => a.aclTag === undefined),
          'no acl-tag on Sodium',
        );
      const web = (await interfaceAcls(env))['x:web'] as { securityGroups: string[] };
      assert.equal(web.securityGroups.length, 3, 'web: the policy (ingress), allow-all egress and its node');
      const approximated = events.events.find((e) => e.reason === 'PolicyApproximated');
      assert.ok(approximated, `an Event on the policy; got ${JSON.stringify(events.events)}`);
      assert.equal(approximated.object.kind, 'NetworkPolicy');
      assert.match(approximated.message, /SCTP/);

      // Relabel the client: it enters one group; its interface is the only write.
      const aclWrites = writesTo(env, ACL_MODULE);
      const ifWrites = writesTo(env, IF_MODULE);
      await env.core.patchNamespacedPod(
        { name: 'client', namespace: 'x', body: { metadata: { labels: { role: 'client' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await waitFor(
        async () =>
          ((await interfaceAcls(env))['x:client'] as { securityGroups: string[] }).securityGroups.length ===
          4,
        { what: 'the client in the peer group', timeoutMs: 20_000 },
      );
      await watcher.idle();
      assert.equal(writesTo(env, ACL_MODULE) - aclWrites, 0, 'no ACL written for a relabelled pod');
      assert.equal(writesTo(env, IF_MODULE) - ifWrites, 1, 'one interface written: the relabelled pod');

      // A restart over the ODL it left writes nothing.
      await watcher.close();
      const total = Object.values(env.emu.counters().writes).reduce((a, b) => a + b, 0);
      watcher = await startEnforcing(env, events);
      assert.equal(
        Object.values(env.emu.counters().writes).reduce((a, b) => a + b, 0),
        total,
        'writes after restart',
      );

      // Deleting the policy (and the label) leaves ODL as it was before the policy.
      await net.deleteNamespacedNetworkPolicy({ name: 'web', namespace: 'x' });
      await env.core.patchNamespacedPod(
        { name: 'client', namespace: 'x', body: { metadata: { labels: null } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await backTo(env, watcher, aclsBefore, securityBefore, 'the policy ACLs gone');
    });

    it('removes what a policy left that was deleted while the watcher was down', async () => {
      const env = await envWithWeb();
      await createPod(env, 'x', 'client', '10.244.1.11', { role: 'client' });
      let watcher = await startEnforcing(env);
      const aclsBefore = await readAcls(env);
      const securityBefore = await interfaceAcls(env);
      const net = await applyPolicy(env, watcher);

      // Down while the policy goes: on restart no policy names its ACLs any more; only the
      // sweep, which knows every desired name, can tell they are for nothing.
      await watcher.close();
      await net.deleteNamespacedNetworkPolicy({ name: 'web', namespace: 'x' });
      watcher = await startEnforcing(env);
      await backTo(env, watcher, aclsBefore, securityBefore, 'the orphaned policy ACL and peer group gone');
    });
  });
}
