/**
 * The plans of extra networks (translate-network.ts has the objects):
 *
 * - `network/<ns>/<nad>`: the NAD's own ELAN and, when routed `vpn`, its VPN (routed
 *   `namespace`, its attachments join the namespace's VPN, which only the `vpn/` key writes and
 *   deletes: planVpn counts such networks as needing it); nothing for a NAD of
 *   another plugin or one on an ELAN an ODL user made (that ELAN is only checked to exist); a
 *   NAD that is invalid is reported on the NAD and keeps whatever exists (nothing is written).
 * - `attachment/<ns>/<pod>/<ifname>`: one extra interface of a pod, from the allocation recorded
 *   in the pod's `odlcoe.io/attachments` annotation (the watcher writes it before it plans the
 *   interface); a refused attachment is reported on the pod and has no objects.
 *
 * `networkDefinition` undefined: the NADs are not known here (a cluster without the CRD, or
 * odlcoectl without them), so what exists is kept.
 */
import type { V1Pod } from '@kubernetes/client-node';
import {
  ATTACHMENTS_ANNOTATION,
  isAttachmentFailure,
  parseAttachments,
  type AttachmentRecord,
} from './attachments.js';
import { ModelValidationError } from './errors.js';
import { podNetworkEligibility } from './kube.js';
import { vpnName } from './names.js';
import { NAD_API_VERSION, NAD_KIND, type NetworkDefinition } from './network-config.js';
import { attachmentInterfaceName, networkInstanceName } from './network-names.js';
import { absent, keep, present, type EntryPlan, type KeyPlan, type KubeObjectRef } from './plan.js';
import { translateAttachment, translateNetworkElan, translateNetworkVpn } from './translate-network.js';
import type { TranslateSettings } from './translate-settings.js';

export interface NetworkPlanInputs {
  settings: TranslateSettings;
  pod(namespace: string, name: string): V1Pod | undefined;
  /**
   * The NAD `<ns>/<name>` read, its ELAN checked to exist in ODL when it names one (undefined:
   * no such NAD). The member itself is undefined where NADs are not known.
   */
  networkDefinition?(namespace: string, name: string): NetworkDefinition | undefined;
  /**
   * The valid networks of `namespace` routed through its VPN (`"routing": "namespace"`, as
   * `<ns>/<name>`): they need the namespace's VPN even while it has no pod. Undefined where
   * NADs are not known.
   */
  namespaceRoutedNetworks?(namespace: string): readonly string[];
  /** The RD of a VPN by its name (a network VPN's name is its id in the allocator). */
  routeDistinguisher(id: string): { rd: string; reassigned: boolean };
}

const NETWORK_KINDS = ['elanInstance', 'vpnInstance'] as const;
const ATTACHMENT_KINDS = ['interface', 'elanInterface', 'vpnInterface'] as const;

const all = (kinds: readonly string[], name: string, want: 'absent' | 'keep', why: string): EntryPlan[] =>
  kinds.map((k) => (want === 'absent' ? absent(k, name, why) : keep(k, name, why)));

export function planNetwork(
  key: string,
  namespace: string,
  name: string,
  inputs: NetworkPlanInputs,
): KeyPlan {
  const instance = networkInstanceName(namespace, name);
  if (!inputs.networkDefinition)
    return {
      key,
      entries: all(NETWORK_KINDS, instance, 'keep', 'NetworkAttachmentDefinitions are not known here'),
      facts: [],
    };
  const def = inputs.networkDefinition(namespace, name);
  if (!def || def.state === 'foreign-plugin')
    return {
      key,
      entries: all(
        NETWORK_KINDS,
        instance,
        'absent',
        def ? 'the NAD is not an odlcoe network' : 'the NAD is gone',
      ),
      facts: [],
    };
  if (def.state === 'invalid')
    return {
      key,
      involved: { kind: NAD_KIND, apiVersion: NAD_API_VERSION, name, namespace },
      entries: all(NETWORK_KINDS, instance, 'keep', def.message),
      facts: [{ fact: 'untranslatable', message: `${def.message}; nothing is written for this network` }],
    };
  const net = def.network;
  const involved: KubeObjectRef = {
    kind: NAD_KIND,
    apiVersion: NAD_API_VERSION,
    name,
    namespace,
    uid: net.uid,
  };
  const elan = translateNetworkElan(net, inputs.settings);
  if (!elan)
    return {
      key,
      involved,
      entries: all(
        NETWORK_KINDS,
        instance,
        'absent',
        `the network joins the ELAN ${net.elan ?? '?'} made in ODL`,
      ),
      facts: [],
    };
  const plan: KeyPlan = { key, involved, entries: [present('elanInstance', instance, elan)], facts: [] };
  if (net.routing !== 'vpn') {
    plan.entries.push(
      absent(
        'vpnInstance',
        instance,
        net.routing === 'namespace'
          ? `the network is routed through its namespace's VPN ${vpnName(namespace)} (the vpn/ key's)`
          : 'the network is not routed ("l2")',
      ),
    );
    return plan;
  }
  const { rd, reassigned } = inputs.routeDistinguisher(instance);
  const vpn = translateNetworkVpn(net, rd, inputs.settings);
  if (vpn) plan.entries.push(present('vpnInstance', instance, vpn));
  if (reassigned) plan.facts.push({ fact: 'rd-reassigned', namespace, vpn: instance, rd });
  return plan;
}

/** A pod's recorded attachments (a missing annotation: none). Throws ModelValidationError. */
export function podAttachments(pod: V1Pod): Map<string, AttachmentRecord> {
  const value = pod.metadata?.annotations?.[ATTACHMENTS_ANNOTATION];
  return value === undefined ? new Map() : parseAttachments(value);
}

export function planAttachment(
  key: string,
  namespace: string,
  podName: string,
  ifname: string,
  inputs: NetworkPlanInputs,
): KeyPlan {
  const name = attachmentInterfaceName(namespace, podName, ifname);
  const gone = (why: string): KeyPlan => ({
    key,
    entries: all(ATTACHMENT_KINDS, name, 'absent', why),
    facts: [],
  });
  const pod = inputs.pod(namespace, podName);
  if (!pod) return gone('pod deleted');
  const eligibility = podNetworkEligibility(pod);
  if (!eligibility.onNetwork) return gone(`pod ${eligibility.reason}`);
  const uid = pod.metadata?.uid ?? '';
  const involved: KubeObjectRef = { kind: 'Pod', name: podName, namespace, ...(uid ? { uid } : {}) };
  const kept = (message: string): KeyPlan => ({
    key,
    involved,
    entries: all(ATTACHMENT_KINDS, name, 'keep', message),
    facts: [{ fact: 'untranslatable', message }],
  });
  let record: AttachmentRecord | undefined;
  try {
    record = podAttachments(pod).get(ifname);
  } catch (err) {
    if (!(err instanceof ModelValidationError)) throw err;
    return kept(err.message);
  }
  if (!record) return gone(`no attachment ${ifname} is recorded on the pod`);
  if (isAttachmentFailure(record))
    return {
      key,
      involved,
      entries: all(ATTACHMENT_KINDS, name, 'absent', record.error.message),
      facts: [
        {
          fact: 'refused',
          message: `attachment refused (${record.error.reason}): ${record.error.message}`,
        },
      ],
    };
  if (record.interfaceName !== name)
    return kept(
      `attachment ${ifname} is recorded with interface name ${record.interfaceName}, expected ${name}`,
    );
  if (!inputs.networkDefinition || !uid)
    return {
      key,
      entries: all(ATTACHMENT_KINDS, name, 'keep', 'NetworkAttachmentDefinitions are not known here'),
      facts: [],
    };
  const [netNs = '', netName = ''] = record.network.split('/');
  const def = inputs.networkDefinition(netNs, netName);
  if (!def || def.state === 'foreign-plugin') return gone(`network ${record.network} is gone`);
  if (def.state === 'invalid')
    return {
      key,
      involved,
      entries: all(ATTACHMENT_KINDS, name, 'keep', `network ${record.network} is invalid`),
      facts: [],
    };
  let objects;
  try {
    objects = translateAttachment(record, def.network, uid, inputs.settings);
  } catch (err) {
    if (!(err instanceof ModelValidationError)) throw err;
    return kept(err.message);
  }
  return {
    key,
    involved,
    entries: [
      present('interface', name, objects.interface),
      present('elanInterface', name, objects.elanInterface),
      objects.vpnInterface
        ? present('vpnInterface', name, objects.vpnInterface)
        : absent('vpnInterface', name, 'the network is not routed'),
    ],
    facts: [],
  };
}
