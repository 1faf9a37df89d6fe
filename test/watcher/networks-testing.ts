/**
 * What the extra-network tests against the emulator share: NADs and attached pods in the
 * Kubernetes simulator, and ODL's attachments, network ELANs and VPNs read back in the shape
 * the hand-written expected sets are written in.
 */
import assert from 'node:assert/strict';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { ATTACHMENTS_ANNOTATION } from '../../src/netvirt/attachments.js';
import { NETWORKS_ANNOTATION } from '../../src/netvirt/network-selection.js';
import { readOdl, waitFor, type Env } from './testing.js';

export type Raw = Record<string, unknown>;
const GROUP = 'k8s.cni.cncf.io';
const PLURAL = 'network-attachment-definitions';

/** An attachment as the tests compare it in ODL. */
export interface AttachmentView {
  elan: string;
  mac: string;
  ip: string;
  /** `<vpn> <adjacency> gw <gateway>`, or `-` on an L2 network. */
  vpn: string;
}

export const att = (elan: string, ip: string, mac: string, vpn = '-'): AttachmentView => ({
  elan,
  ip,
  mac,
  vpn,
});

const member = (e: Raw, suffix: string): unknown =>
  Object.entries(e).find(([k]) => k === suffix || k.endsWith(`:${suffix}`))?.[1];
const isOurs = (name: string) => name.includes('@') || name.startsWith('odlcoe-net.');

/**
 * The attachments in ODL, the network instances (ELAN and VPN names) odlcoe made, and the
 * other VPNs (namespace VPNs and the gateway VPN) by name.
 */
export async function networksInOdl(env: Env) {
  const odl = await readOdl(env);
  const attachments: Record<string, AttachmentView> = {};
  const ifs = odl.interface.map((e) => String(e.name)).filter(isOurs);
  const vifs = new Map(
    odl['vpn-interface'].filter((e) => isOurs(String(e.name))).map((e) => [String(e.name), e]),
  );
  for (const e of odl['elan-interface'].filter((x) => isOurs(String(x.name)))) {
    const name = String(e.name);
    assert.ok(ifs.includes(name), `ietf-interface ${name} exists with its elan-interface`);
    const mac = ((e['static-mac-entries'] ?? []) as Raw[])[0] ?? {};
    const v = vifs.get(name);
    const adjs = v ? ((member(v, 'adjacency') ?? []) as Raw[]) : [];
    assert.ok(adjs.length <= 1, `vpn-interface ${name} has one adjacency, not ${adjs.length}`);
    const adj = adjs[0];
    attachments[name] = {
      elan: String(e['elan-instance-name']),
      ip: String(mac['ip-prefix']),
      mac: String(mac['mac-address']),
      vpn:
        v && adj
          ? `${((v['vpn-instance-names'] ?? []) as Raw[]).map((x) => String(x['vpn-name'])).join(',')} ${String(adj.ip_address)} gw ${String(adj.subnet_gateway_ip)}`
          : '-',
    };
  }
  for (const name of [...ifs, ...vifs.keys()]) assert.ok(attachments[name], `stray attachment entry ${name}`);
  // Each of odlcoe's network ELANs with the leaves it owns: cluster-wide VXLAN, internal.
  const elans = odl['elan-instance']
    .filter((e) => isOurs(String(e['elan-instance-name'])))
    .map(
      (e) => `${String(e['elan-instance-name'])} ${String(e['segment-type'])} external=${String(e.external)}`,
    )
    .sort();
  const vpns = odl['vpn-instance'].filter((e) => isOurs(String(e['vpn-instance-name'])));
  return {
    attachments,
    elans,
    vpns: vpns.map((v) => String(v['vpn-instance-name'])).sort(),
    vpnEntries: vpns,
    otherVpns: odl['vpn-instance']
      .map((v) => String(v['vpn-instance-name']))
      .filter((n) => !isOurs(n))
      .sort(),
  };
}

export async function recordsOf(env: Env, pod: string, namespace = 'tenant'): Promise<Raw | undefined> {
  const p = (await env.core.listNamespacedPod({ namespace })).items.find((x) => x.metadata?.name === pod);
  const value = p?.metadata?.annotations?.[ATTACHMENTS_ANNOTATION];
  return value === undefined ? undefined : (JSON.parse(value) as Raw);
}

export interface ExpectedNetworks {
  attachments: Record<string, AttachmentView>;
  elans: string[];
  vpns: string[];
  /** The namespace and gateway VPNs, when the test pins them. */
  otherVpns?: string[];
}

/** Waits until ODL and the pods' records (of namespace `tenant`) are as expected. */
export async function converged(
  env: Env,
  expected: ExpectedNetworks,
  records: Record<string, Raw | undefined>,
): Promise<void> {
  // An assertion that throws is waitFor's last error, reported when the deadline passes.
  await waitFor(
    async () => {
      const actual = await networksInOdl(env);
      assert.deepEqual(
        {
          attachments: actual.attachments,
          elans: actual.elans,
          vpns: actual.vpns,
          ...(expected.otherVpns ? { otherVpns: actual.otherVpns } : {}),
        },
        expected,
      );
      for (const [pod, want] of Object.entries(records))
        assert.deepEqual(await recordsOf(env, pod), want, `records of ${pod}`);
      return true;
    },
    { what: 'the expected networks, attachments and records', timeoutMs: 30_000 },
  );
}

export async function putNad(
  env: Env,
  name: string,
  config: unknown,
  replace = false,
  namespace = 'tenant',
): Promise<void> {
  const custom = env.kc.makeApiClient(CustomObjectsApi);
  const base = { group: GROUP, version: 'v1', namespace, plural: PLURAL };
  const body = {
    apiVersion: `${GROUP}/v1`,
    kind: 'NetworkAttachmentDefinition',
    metadata: { name },
    spec: { config: JSON.stringify(config) },
  };
  if (!replace) {
    await custom.createNamespacedCustomObject({ ...base, body });
    return;
  }
  const current = (await custom.getNamespacedCustomObject({ ...base, name })) as Raw;
  await custom.replaceNamespacedCustomObject({ ...base, name, body: { ...current, spec: body.spec } });
}

export async function deleteNad(env: Env, name: string, namespace = 'tenant'): Promise<void> {
  const custom = env.kc.makeApiClient(CustomObjectsApi);
  await custom.deleteNamespacedCustomObject({ group: GROUP, version: 'v1', namespace, plural: PLURAL, name });
}

/** A pod of namespace `tenant` asking for `networks`, once the watcher recorded its attachments. */
export async function createAttachedPod(
  env: Env,
  name: string,
  node: string,
  networks: unknown,
): Promise<void> {
  await env.core.createNamespacedPod({
    namespace: 'tenant',
    body: {
      metadata: {
        name,
        annotations: {
          [NETWORKS_ANNOTATION]: typeof networks === 'string' ? networks : JSON.stringify(networks),
        },
      },
      spec: { nodeName: node, containers: [{ name: 'c', image: 'pause' }] },
      status: { phase: 'Pending' },
    },
  });
  await waitFor(async () => (await recordsOf(env, name)) !== undefined, {
    what: `the record of pod ${name}`,
  });
}
