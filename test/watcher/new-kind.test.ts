/**
 * Adding an ODL kind is one table entry plus its translation: a throw-away kind (a DHCP
 * allocation pool per namespace ELAN, asked for with a namespace annotation) is declared here,
 * outside src/, and runs through everything that serves the built-in kinds without any of it
 * being edited: the watcher's skeleton (cache, loader, writer with its prerequisite and
 * dependant checks, garbage collection of what ODL holds of ours) and odlcoectl's dump and gc.
 *
 * The kind needs its ELAN first (a prerequisite that must be ours), so the table alone says
 * that a pool is written after its ELAN and deleted before it. It shares its list with the
 * built-in node networks (`odlcoe-node:<node>`): each kind takes the other's entries for
 * foreign ones, and the checks below look at the pools of ELANs only.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1Namespace } from '@kubernetes/client-node';
import type { RecordedWrite } from '../../src/emulator/record-file.js';
import { runCli } from '../../src/cli/program.js';
import type { CliModel } from '../../src/cli/model.js';
import { decide, type DecisionSpec } from '../../src/netvirt/decision.js';
import { dhcpNetworkEntry, readDhcpNetwork, type DhcpNetwork } from '../../src/netvirt/dhcp.js';
import { EntryReader } from '../../src/netvirt/json.js';
import type { OdlKindSpec } from '../../src/netvirt/kind.js';
import { elanKey, keysOfPod } from '../../src/netvirt/keys.js';
import { NETVIRT_KINDS } from '../../src/netvirt/kinds.js';
import { markerOwnership } from '../../src/netvirt/ownership.js';
import { nodeOfNetwork } from '../../src/netvirt/node-network.js';
import { netvirtPaths } from '../../src/netvirt/paths.js';
import { planElan, planNetvirtKey, type NetvirtPlanInputs } from '../../src/netvirt/plan-netvirt.js';
import { absent, keep, present, type KeyPlan } from '../../src/netvirt/plan.js';
import type { ElanInstance } from '../../src/netvirt/elan.js';
import type { Profile } from '../../src/netvirt/profile.js';
import { putOp } from '../../src/netvirt/write.js';
import type { BackendContext } from '../../src/watcher/backend.js';
import type { ClusterChange } from '../../src/watcher/cluster-view.js';
import { NetvirtBackend } from '../../src/watcher/netvirt-backend.js';
import { runPlan } from '../../src/watcher/plan-executor.js';
import type { ReconcileOutcome, WriteGuard } from '../../src/watcher/reconcile.js';
import type { Watcher } from '../../src/watcher/watcher.js';
import {
  createNode,
  createPod,
  deletePod,
  startEnv,
  startTestWatcher,
  waitFor,
  type Env,
} from './testing.js';

/** Waits until the assertions hold (the last failure is the timeout's message). */
const until = (check: () => Promise<void>) =>
  waitFor(async () => (await check(), true), { what: 'the expected ODL state' });

const POOL_ANNOTATION = 'test.odlcoe.io/pool-subnet';
const NODE_IP = '192.168.56.11';
const ELAN = `${NODE_IP}:shop`;

// ---------------------------------------------------------------------------------------------
// The throw-away kind: its table entry and its translation (plan), nothing else.

const poolPath = (p: Profile, name: string) => netvirtPaths(p).dhcpNetwork(name);

function poolDecisions(
  profile: Profile,
  ctx: { get(kind: string, name: string): unknown },
  owner: Parameters<typeof markerOwnership>[2],
): DecisionSpec<DhcpNetwork> {
  return {
    path: (name) => poolPath(profile, name),
    ownership: (actual) => {
      // Owned through its ELAN, as a vpn-interface is through its ietf-interface.
      const elan = ctx.get('elanInstance', actual.networkId) as ElanInstance | undefined;
      if (!elan) return { owner: 'foreign', reason: `its ELAN ${actual.networkId} is not known` };
      return markerOwnership(elan.description, 'node-namespace', owner);
    },
    owned: (e) => ({ 'allocation-pool': e.allocationPools.map((p) => p.subnet).sort() }),
    create: (d) => [putOp(poolPath(profile, d.networkId), dhcpNetworkEntry(d))],
    update: (d) => ({
      action: 'update',
      writes: [putOp(poolPath(profile, d.networkId), dhcpNetworkEntry(d))],
    }),
  };
}

/** Built per profile: the decisions need it for their paths (a built-in kind gets it from paths.ts the same way). */
function poolKind(profile: Profile): OdlKindSpec<DhcpNetwork> {
  return {
    kind: 'poolNetwork',
    label: 'namespace-pool',
    module: () => 'dhcp_allocation_pool',
    list: (p) => [...netvirtPaths(p).dhcpAllocationPool(), { name: 'network' }],
    entry: (p, name) => poolPath(p, name),
    keyMember: 'network-id',
    parse: (_p, raw) => readDhcpNetwork(EntryReader.of(raw, 'network[0]')),
    nameOf: (e) => e.networkId,
    build: (_p, e) => dhcpNetworkEntry(e),
    ownership: (a, ctx) => poolDecisions(profile, ctx, ctx.owner).ownership(a),
    ownershipRule: 'owned through its ELAN (network-id = an ELAN of ours)',
    diff: (d, a, ctx) =>
      decide(poolDecisions(profile, ctx, ctx.owner), d?.networkId ?? a?.networkId ?? '', d, a, false),
    after: ['elanInstance'],
    prerequisites: (e) => [{ kind: 'elanInstance', name: e.networkId, owned: true }],
    ownerKey: (name) => `pool/${name}`,
    summary: (e) => `pools ${e.allocationPools.map((p) => p.subnet).join(', ')}`,
  };
}

const poolName = (key: string) => key.slice('pool/'.length);

/** A pool is wanted while its ELAN is and the namespace asks for one. */
function planPool(key: string, inputs: NetvirtPlanInputs): KeyPlan {
  const name = poolName(key);
  const ns = name.slice(name.indexOf(':') + 1);
  const elan = planElan(elanKey(name), name, ns, inputs).entries[0];
  const subnet = inputs.namespace(ns)?.metadata?.annotations?.[POOL_ANNOTATION];
  if (elan?.want === 'keep') return { key, entries: [keep('poolNetwork', name, elan.why)], facts: [] };
  if (elan?.want !== 'present' || !subnet)
    return { key, entries: [absent('poolNetwork', name, 'no pool asked for')], facts: [] };
  const pool: DhcpNetwork = { networkId: name, allocationPools: [{ subnet }] };
  return { key, entries: [present('poolNetwork', name, pool)], facts: [] };
}

const planKey = (key: string, inputs: NetvirtPlanInputs): KeyPlan =>
  key.startsWith('pool/') ? planPool(key, inputs) : planNetvirtKey(key, inputs);

/** Every ELAN key comes with its pool key. */
const withPools = function* (keys: Iterable<string>): Iterable<string> {
  for (const key of keys) {
    yield key;
    if (key.startsWith('elan/')) yield `pool/${key.slice('elan/'.length)}`;
  }
};

class PoolBackend extends NetvirtBackend {
  constructor(ctx: BackendContext) {
    super(ctx, NETVIRT_KINDS.with(poolKind(ctx.settings.profile)));
  }
  /** The netvirt keys, with pools; a namespace's annotation (which netvirt ignores) names its pools. */
  override keysFor(change: ClusterChange): string[] {
    const keys = super.keysFor(change);
    if (change.kind === 'namespace') {
      const view = this.ctx.view;
      for (const pod of view.podsInNamespace(change.obj.metadata?.name ?? ''))
        keys.push(...keysOfPod(pod, (name) => view.node(name)));
    }
    return [...new Set(withPools(keys))];
  }
  protected override *clusterKeys(): Iterable<string> {
    yield* withPools(super.clusterKeys());
  }
  protected override parseKey(key: string): void {
    if (!key.startsWith('pool/')) super.parseKey(key);
  }
  protected override nodeOfKey(key: string): string | undefined {
    return key.startsWith('pool/') ? undefined : super.nodeOfKey(key);
  }
  override plan(key: string): KeyPlan {
    return key.startsWith('pool/') ? planPool(key, this.inputs) : super.plan(key);
  }
  protected override async reconcileKey(key: string, guard: WriteGuard): Promise<ReconcileOutcome> {
    if (!key.startsWith('pool/')) return super.reconcileKey(key, guard);
    return (await runPlan(this.planContext(), this.plan(key), guard, () => this.plan(key))).outcome;
  }
}

// ---------------------------------------------------------------------------------------------

describe('a kind added from outside src/ (throw-away DHCP pool per namespace ELAN)', () => {
  let env: Env;
  let watcher: Watcher | undefined;
  let dir: string;
  let record: string;
  const profile: Profile = 'sodium';

  /** The pools of the throw-away kind (the node networks in the same list are not). */
  const pools = async () =>
    (await env.odl.getEntries([...netvirtPaths(profile).dhcpAllocationPool(), { name: 'network' }], 'config'))
      .map((e) => e as { 'network-id': string; 'allocation-pool'?: { subnet: string }[] })
      .filter((e) => nodeOfNetwork(e['network-id']) === undefined);
  const elans = async () =>
    (
      await env.odl.getEntries(
        [...netvirtPaths(profile).elanInstances(), { name: 'elan-instance' }],
        'config',
      )
    ).map((e) => e['elan-instance-name']);
  const writes = async (): Promise<RecordedWrite[]> =>
    (await readFile(record, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as RecordedWrite);
  const setAnnotation = async (value: string | null) => {
    const ns = await env.core.readNamespace({ name: 'shop' });
    const annotations = { ...(ns.metadata?.annotations ?? {}) };
    if (value === null) delete annotations[POOL_ANNOTATION];
    else annotations[POOL_ANNOTATION] = value;
    await env.core.replaceNamespace({
      name: 'shop',
      body: { ...ns, metadata: { ...ns.metadata, annotations } },
    });
  };
  const start = async () => {
    watcher = await startTestWatcher(env, { gracePeriodMs: 300 }, { backend: (ctx) => new PoolBackend(ctx) });
  };
  const stop = async () => {
    await watcher?.close();
    watcher = undefined;
  };
  const cli = async (args: string[]) => {
    const kubeconfig = join(dir, 'kubeconfig');
    const password = join(dir, 'password');
    let stdout = '';
    let stderr = '';
    const model: CliModel = { kinds: NETVIRT_KINDS.with(poolKind(profile)), plan: planKey };
    const code = await runCli(
      [
        '--odl-url',
        env.emu.url,
        '--odl-user',
        'admin',
        '--odl-password-file',
        password,
        '--profile',
        profile,
        '--dialect',
        env.dialect,
        '--cluster-name',
        'test',
        '--kubeconfig',
        kubeconfig,
        '--timeout',
        '20',
        ...args,
      ],
      { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env: { ODLCOE_LOG_LEVEL: 'silent' } },
      { model },
    );
    return { code, stdout, stderr };
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'odlcoe-new-kind-'));
    record = join(dir, 'writes.jsonl');
    env = await startEnv({ profile, dialect: 'rfc8040', emulator: { recordFile: record } });
    await writeFile(join(dir, 'kubeconfig'), env.sim.kubeconfig());
    await writeFile(join(dir, 'password'), 'admin\n');
    await createNode(env, 'n1', NODE_IP, '10.20.1.0/24');
    const body: V1Namespace = {
      metadata: { name: 'shop', annotations: { [POOL_ANNOTATION]: '10.30.1.0/24' } },
    };
    await env.core.createNamespace({ body });
    await createPod(env, 'shop', 'web', 'n1', { ip: '10.20.1.5' });
  });
  after(async () => {
    await stop();
    await env?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('the watcher writes the new kind after its prerequisite, from the table alone', async () => {
    await start();
    await until(async () => {
      const p = (await pools()).find((e) => e['network-id'] === ELAN);
      assert.deepEqual(
        p?.['allocation-pool']?.map((a) => a.subnet),
        ['10.30.1.0/24'],
      );
    });
    // Creates are POSTs to the parent list (the node network's too: the pool is the one naming the ELAN).
    const all = await writes();
    const urls = all.map((w) => `${w.method} ${decodeURIComponent(w.url)}`);
    const elanAt = urls.findIndex((u) => u.endsWith('elan:elan-instances'));
    const poolAt = all.findIndex(
      (w) => w.url.includes('dhcp_allocation_pool') && JSON.stringify(w.body).includes(ELAN),
    );
    assert.ok(elanAt >= 0 && poolAt > elanAt, `ELAN written before its pool: ${urls.join(' | ')}`);
  });

  it('follows its translation: an update, then removal when it is no longer asked for', async () => {
    await setAnnotation('10.30.2.0/24');
    await until(async () => {
      const p = (await pools()).find((e) => e['network-id'] === ELAN);
      assert.deepEqual(
        p?.['allocation-pool']?.map((a) => a.subnet),
        ['10.30.2.0/24'],
      );
    });
    await setAnnotation(null);
    await until(async () => assert.deepEqual(await pools(), []));
    assert.ok((await elans()).includes(ELAN), 'the ELAN stays: the pod still needs it');
    await setAnnotation('10.30.3.0/24');
    await until(async () => assert.equal((await pools()).length, 1));
  });

  it('odlcoectl dump shows it and odlcoectl gc collects it before its ELAN, from the same table', async () => {
    await stop();
    await deletePod(env, 'shop', 'web');
    const dump = await cli(['dump', '-o', 'json']);
    assert.equal(dump.code, 0, dump.stderr);
    const tree = JSON.parse(dump.stdout) as { objects?: Record<string, { name: string }[]> };
    assert.deepEqual(
      tree.objects?.['namespace-pool']?.map((o) => o.name),
      [ELAN],
    );
    const human = await cli(['dump']);
    assert.match(
      human.stdout,
      new RegExp(`namespace-pool[\\s\\S]*${ELAN.replace(/\./g, '\\.')}.*pools 10\\.30\\.3\\.0/24`),
    );

    const gc = await cli(['gc', '--dry-run', '-o', 'json']);
    assert.equal(gc.code, 0, gc.stderr);
    const plan = JSON.parse(gc.stdout) as { candidates: { kind: string; name: string }[] };
    const order = plan.candidates.map((c) => `${c.kind} ${c.name}`);
    const poolAt = order.indexOf(`namespace-pool ${ELAN}`);
    const elanAt = order.indexOf(`elan-instance ${ELAN}`);
    assert.ok(poolAt >= 0 && elanAt > poolAt, `pool collected before its ELAN: ${order.join(', ')}`);
  });

  it("the watcher's garbage collection removes it, and its ELAN only after it", async () => {
    const before = (await writes()).length;
    await start();
    await until(async () => {
      assert.deepEqual(await pools(), []);
      assert.ok(!(await elans()).includes(ELAN), 'the ELAN is gone');
    });
    const deletes = (await writes())
      .slice(before)
      .filter((w) => w.method === 'DELETE')
      .map((w) => decodeURIComponent(w.url));
    const poolAt = deletes.findIndex((u) => u.includes('dhcp_allocation_pool') && u.includes(ELAN));
    const elanAt = deletes.findIndex((u) => u.includes(`elan-instance=${ELAN}`));
    assert.ok(poolAt >= 0 && elanAt > poolAt, `pool deleted before its ELAN: ${deletes.join(' | ')}`);
  });
});
