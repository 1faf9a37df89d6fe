import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { ATTACHMENTS_ANNOTATION, formatAttachments, type AttachmentRecord } from './attachments.js';
import { keyOfInterfaceName, keyOfVpnName, parseNetvirtKey } from './keys.js';
import { NETVIRT_KINDS } from './kinds.js';
import { readNetworkDefinition, type NetworkDefinition } from './network-config.js';
import {
  attachmentInterfaceName,
  attachmentOfInterfaceName,
  networkInstanceName,
  networkOfInstanceName,
} from './network-names.js';
import { vpnInstanceOwnership } from './ownership.js';
import type { KeyPlan } from './plan.js';
import { planAttachment, planNetwork, type NetworkPlanInputs } from './plan-network.js';
import type { Profile } from './profile.js';
import type { TranslateSettings } from './translate-settings.js';
import type { VpnInstance } from './vpn.js';

const settings = (profile: Profile): TranslateSettings => ({
  clusterName: 'c1',
  profile,
  routeTarget: '64512:1',
  segmentType: 'vxlan',
  rdAdministrator: '64512',
});

const def = (name: string, config: unknown): NetworkDefinition =>
  readNetworkDefinition({
    metadata: { namespace: 'tenant', name, uid: `${name}-uid` },
    spec: { config: JSON.stringify(config) },
  });

const NETS: Record<string, NetworkDefinition> = {
  'tenant/blue': def('blue', { type: 'odlcoe', routing: 'vpn', subnets: [{ cidr: '10.50.0.0/24' }] }),
  'tenant/green': def('green', { type: 'odlcoe', subnets: [{ cidr: '10.51.0.0/24' }] }),
  'tenant/user': def('user', { type: 'odlcoe', elan: 'made-in-odl', subnets: [{ cidr: '10.52.0.0/24' }] }),
  'tenant/bad': def('bad', { type: 'odlcoe', subnets: [{ cidr: '10.0.0.0/24', gateway: '10.1.0.1' }] }),
};

function podWith(records: Map<string, AttachmentRecord>): V1Pod {
  return {
    metadata: {
      namespace: 'tenant',
      name: 'p1',
      uid: 'pod-uid',
      annotations: { [ATTACHMENTS_ANNOTATION]: formatAttachments(records) },
    },
    spec: { nodeName: 'n1', containers: [] },
    status: { phase: 'Running' },
  };
}

function inputs(profile: Profile, pod?: V1Pod): NetworkPlanInputs {
  return {
    settings: settings(profile),
    pod: (ns, name) => (pod && ns === 'tenant' && name === 'p1' ? pod : undefined),
    networkDefinition: (ns, name) => NETS[`${ns}/${name}`],
    routeDistinguisher: () => ({ rd: '64512:7', reassigned: false }),
  };
}

/** Every present entry builds a body that validates against the model (the kind's builder). */
function bodies(plan: KeyPlan, profile: Profile): string[] {
  return plan.entries.flatMap((e) => {
    if (e.want !== 'present') return [`${e.kind} ${e.name} ${e.want}`];
    NETVIRT_KINDS.spec(e.kind).build(profile, e.desired);
    return [`${e.kind} ${e.name} present`];
  });
}

const allocation: AttachmentRecord = {
  network: 'tenant/blue',
  interfaceName: 'tenant:p1@net1',
  ips: ['10.50.0.2/24'],
  mac: '0a:58:0a:32:00:02',
  routes: [],
};

describe('extra networks in ODL', () => {
  it('names network instances and attachment interfaces so they read back to their owners', () => {
    assert.equal(networkInstanceName('tenant', 'blue.v2'), 'odlcoe-net.tenant.blue.v2');
    assert.deepEqual(networkOfInstanceName('odlcoe-net.tenant.blue.v2'), {
      namespace: 'tenant',
      name: 'blue.v2',
    });
    assert.equal(networkOfInstanceName('10.0.0.1:tenant'), undefined);
    assert.equal(networkOfInstanceName('odlcoe-gw.node-1'), undefined);
    assert.equal(attachmentInterfaceName('tenant', 'web.1', 'net1'), 'tenant:web.1@net1');
    assert.deepEqual(attachmentOfInterfaceName('tenant:web.1@net1'), {
      namespace: 'tenant',
      pod: 'web.1',
      ifname: 'net1',
    });
    assert.equal(
      attachmentOfInterfaceName('tenant:web.1'),
      undefined,
      "a pod's primary interface is not an attachment",
    );
    assert.equal(keyOfInterfaceName('tenant:web.1@net1'), 'attachment/tenant/web.1/net1');
    assert.equal(keyOfInterfaceName('tenant:web.1'), 'pod/tenant/web.1');
    assert.equal(keyOfVpnName('odlcoe-net.tenant.blue'), 'network/tenant/blue');
    assert.equal(
      NETVIRT_KINDS.spec('elanInstance').ownerKey('odlcoe-net.tenant.blue', {
        get: () => undefined,
        owner: { clusterName: 'c1', profile: 'sodium', routeTarget: '64512:1', rdAdministrator: '64512' },
      }),
      'network/tenant/blue',
    );
    assert.deepEqual(parseNetvirtKey('attachment/tenant/web.1/net1'), {
      kind: 'attachment',
      namespace: 'tenant',
      pod: 'web.1',
      ifname: 'net1',
    });
  });

  for (const profile of ['sodium', 'aluminium'] as const) {
    it(`plans a routed network's ELAN and isolated VPN, an L2 network's ELAN, nothing for a user's ELAN (${profile})`, () => {
      const blue = planNetwork('network/tenant/blue', 'tenant', 'blue', inputs(profile));
      assert.deepEqual(bodies(blue, profile), [
        'elanInstance odlcoe-net.tenant.blue present',
        'vpnInstance odlcoe-net.tenant.blue present',
      ]);
      const vpn = blue.entries[1]?.want === 'present' ? (blue.entries[1].desired as VpnInstance) : undefined;
      assert.ok(vpn, 'the routed network has a VPN');
      const owner = { clusterName: 'c1', profile, routeTarget: '64512:1', rdAdministrator: '64512' };
      assert.equal(vpnInstanceOwnership(vpn, owner).owner, 'ours', 'the network VPN reads back as ours');
      if (vpn.profile === 'aluminium')
        assert.deepEqual(
          vpn.vpnTargets,
          [{ value: '64512:7', type: 'both' }],
          'its RD is its only route target',
        );
      assert.deepEqual(
        bodies(planNetwork('network/tenant/green', 'tenant', 'green', inputs(profile)), profile),
        ['elanInstance odlcoe-net.tenant.green present', 'vpnInstance odlcoe-net.tenant.green absent'],
      );
      assert.deepEqual(
        bodies(planNetwork('network/tenant/user', 'tenant', 'user', inputs(profile)), profile),
        ['elanInstance odlcoe-net.tenant.user absent', 'vpnInstance odlcoe-net.tenant.user absent'],
      );
      const bad = planNetwork('network/tenant/bad', 'tenant', 'bad', inputs(profile));
      assert.deepEqual(bodies(bad, profile), [
        'elanInstance odlcoe-net.tenant.bad keep',
        'vpnInstance odlcoe-net.tenant.bad keep',
      ]);
      assert.equal(bad.involved?.kind, 'NetworkAttachmentDefinition');
      assert.match(
        bad.facts[0]?.fact === 'untranslatable' ? bad.facts[0].message : '',
        /gateway: 10.1.0.1 is not a host address/,
      );
    });

    it(`plans an attachment's interfaces from its recorded allocation (${profile})`, () => {
      const records = new Map<string, AttachmentRecord>([
        ['net1', allocation],
        [
          'net2',
          {
            network: 'tenant/user',
            interfaceName: 'tenant:p1@net2',
            ips: ['10.52.0.2/24'],
            mac: '02:00:00:00:00:02',
            routes: [],
          },
        ],
        [
          'net3',
          {
            network: 'tenant/green',
            error: {
              reason: 'ip-taken',
              message: 'net3 (tenant/green): 10.51.0.9 is held by pod tenant/q net1',
            },
          },
        ],
      ]);
      const pod = podWith(records);
      const routed = planAttachment(
        'attachment/tenant/p1/net1',
        'tenant',
        'p1',
        'net1',
        inputs(profile, pod),
      );
      assert.deepEqual(bodies(routed, profile), [
        'interface tenant:p1@net1 present',
        'elanInterface tenant:p1@net1 present',
        'vpnInterface tenant:p1@net1 present',
      ]);
      const vif =
        routed.entries[2]?.want === 'present'
          ? (routed.entries[2].desired as { adjacencies: unknown[] })
          : undefined;
      assert.deepEqual(vif?.adjacencies, [
        {
          ipAddress: '10.50.0.2/32',
          macAddress: '0a:58:0a:32:00:02',
          adjacencyType: 'primary-adjacency',
          subnetId: vif && (vif.adjacencies[0] as { subnetId: string }).subnetId,
          subnetGatewayIp: '10.50.0.1',
        },
      ]);
      const onUser = planAttachment(
        'attachment/tenant/p1/net2',
        'tenant',
        'p1',
        'net2',
        inputs(profile, pod),
      );
      assert.deepEqual(bodies(onUser, profile), [
        'interface tenant:p1@net2 present',
        'elanInterface tenant:p1@net2 present',
        'vpnInterface tenant:p1@net2 absent',
      ]);
      assert.equal(
        (onUser.entries[1] as { desired: { elanInstanceName: string } }).desired.elanInstanceName,
        'made-in-odl',
      );
      assert.deepEqual(
        NETVIRT_KINDS.spec('elanInterface').prerequisites(
          (onUser.entries[1] as { desired: unknown }).desired,
        ),
        [
          { kind: 'interface', name: 'tenant:p1@net2', owned: true },
          { kind: 'elanInstance', name: 'made-in-odl', owned: false },
        ],
        "an attachment to a user's ELAN needs it to exist, not to be ours",
      );
      const refused = planAttachment(
        'attachment/tenant/p1/net3',
        'tenant',
        'p1',
        'net3',
        inputs(profile, pod),
      );
      assert.deepEqual(bodies(refused, profile), [
        'interface tenant:p1@net3 absent',
        'elanInterface tenant:p1@net3 absent',
        'vpnInterface tenant:p1@net3 absent',
      ]);
      assert.deepEqual(refused.involved, { kind: 'Pod', name: 'p1', namespace: 'tenant', uid: 'pod-uid' });
      assert.match(
        refused.facts[0]?.fact === 'refused' ? refused.facts[0].message : '',
        /ip-taken.*10.51.0.9 is held/,
      );
      const gone = planAttachment('attachment/tenant/p1/net1', 'tenant', 'p1', 'net1', inputs(profile));
      assert.deepEqual(
        bodies(gone, profile).map((b) => b.split(' ')[2]),
        ['absent', 'absent', 'absent'],
      );
    });
  }
});
