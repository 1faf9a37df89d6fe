/** Drives the acceptance scenario of scenario-data.ts against a simulator and an emulator. */
import {
  createNamespace,
  createNode,
  createPod,
  deleteNamespace,
  deletePod,
  readOdl,
  setPodIp,
  waitFor,
  type Env,
  type OdlLists,
} from './testing.js';
import assert from 'node:assert/strict';
import { maskElanTags, NAMESPACES, NODES, PODS, type Uids } from './scenario-data.js';

/** Creates the nodes and namespaces. */
export async function createCluster(env: Env, uids: Uids, opts: { podCIDR?: boolean } = {}): Promise<void> {
  for (const n of NODES)
    uids.nodes[n.name] = await createNode(env, n.name, n.ip, opts.podCIDR === false ? undefined : n.podCIDR);
  for (const ns of NAMESPACES) uids.namespaces[ns] = await createNamespace(env, ns);
}

export function emptyUids(): Uids {
  return { nodes: {}, namespaces: {}, pods: {} };
}

const vpnNames = (lists: OdlLists) => lists['vpn-instance'].map((v) => v['vpn-instance-name']);

/**
 * Creates the pods namespace by namespace (waiting for each namespace's VPN, so RDs are handed
 * out in a known order), then gives them their IPs through pod status.
 */
export async function createPods(env: Env, uids: Uids, opts: { waitForVpns?: boolean } = {}): Promise<void> {
  for (const ns of NAMESPACES) {
    for (const p of PODS.filter((x) => x.ns === ns)) {
      uids.pods[`${p.ns}/${p.name}`] = await createPod(
        env,
        p.ns,
        p.name,
        p.node,
        p.hostNetwork ? { ip: p.ip, hostNetwork: true } : {},
      );
    }
    if (opts.waitForVpns !== false) {
      await waitFor(async () => vpnNames(await readOdl(env)).includes(ns), {
        what: `VPN of ${ns}`,
        timeoutMs: 20_000,
      });
    }
  }
  for (const p of PODS.filter((x) => !x.hostNetwork)) await setPodIp(env, p.ns, p.name, p.ip);
}

/** Deletes a6, a7 and namespace gamma (with its pods). */
export async function deleteSome(env: Env): Promise<void> {
  for (const p of PODS.filter((x) => x.deleted && x.ns !== 'gamma')) await deletePod(env, p.ns, p.name);
  await deleteNamespace(env, 'gamma');
}

/** Waits until ODL holds exactly what the scenario expects (ELAN tags masked), else fails with the difference. */
export async function assertConverges(env: Env, expected: OdlLists): Promise<void> {
  let actual = await readOdl(env);
  await waitFor(
    async () => {
      actual = maskElanTags(await readOdl(env));
      return JSON.stringify(actual) === JSON.stringify(expected);
    },
    { what: 'ODL to hold exactly the expected set', timeoutMs: 30_000 },
  ).catch(() => undefined);
  assert.deepEqual(actual, expected);
}
