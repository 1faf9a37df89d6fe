/**
 * Contract at the edges of the model, for both profiles and both dialects:
 *
 * - Refusals agree. For each YANG restriction netvirt-model.md lists (length, pattern, range,
 *   type, identity, a leaf the profile does not have), the builder refuses the bad value with a
 *   ModelValidationError, and the emulator refuses the same value in an otherwise valid body
 *   with 400. A builder that accepted what ODL refuses would fail at run time on every
 *   reconcile; an emulator that accepted it would hide that in every test.
 * - 64-bit numbers (`datapath-node-identifier`, `dpn-id`) beyond 2^53 survive a write and a
 *   read in both dialects (bierman02 answers them as bare JSON numbers).
 * - IPv6 pods: /128 adjacency, V6Subnet, IPv6 static MAC entry, Sodium `ipv6-family`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  elanInstanceName,
  entryBody,
  ModelValidationError,
  netvirtPaths,
  parseInterfaces,
  parseVpnInstances,
  parseVpnInterfaces,
  parseElanInstances,
  parseElanInterfaces,
  podMac,
  putAllocationPool,
  putCoePod,
  putElanInstance,
  putElanInterface,
  putInterface,
  putK8sNode,
  putVpnInstance,
  putVpnInterface,
  subnetId,
  type JsonObject,
  type Profile,
  type VpnInstance,
  type WriteOp,
} from '../../src/netvirt/index.js';
import { RestconfError } from '../../src/restconf/client.js';
import type { DataPath } from '../../src/restconf/path.js';
import {
  apply,
  controllerForSuite,
  DIALECTS,
  ELAN_NAME,
  IF_NAME,
  NODE_IP,
  PROFILES,
  sampleCoePod,
  sampleElanInstance,
  sampleElanInterface,
  sampleInterface,
  sampleIpv6Pool,
  sampleK8sNode,
  sampleVpnInstance,
  sampleVpnInterface,
} from './fixtures.js';

interface Refusal {
  what: string;
  /** Only for this profile (the restriction is profile-specific). */
  profile?: Profile;
  /** The builder called with the bad value: must throw ModelValidationError. */
  buildBad(profile: Profile): unknown;
  /** A valid write of the same entry, whose body `spoil` then breaks the same way. */
  valid(profile: Profile): WriteOp;
  spoil(entry: JsonObject, profile: Profile): void;
  /** A different URL for the spoiled body (when the key itself is what is bad). */
  path?(profile: Profile): DataPath;
}

const only = (entry: JsonObject, member: string): JsonObject[] => {
  const list = entry[member];
  assert.ok(Array.isArray(list), `${member} is a list in ${JSON.stringify(entry)}`);
  return list as JsonObject[];
};

/** Sodium keeps RD and targets in ipv4-family; Aluminium directly in the entry. */
const rdHolder = (entry: JsonObject, profile: Profile): JsonObject =>
  profile === 'sodium' ? (entry['ipv4-family'] as JsonObject) : entry;

const withRd = (v: VpnInstance, rd: string): VpnInstance =>
  v.profile === 'sodium'
    ? { ...v, ipv4Family: { routeDistinguishers: [rd], vpnTargets: v.ipv4Family?.vpnTargets ?? [] } }
    : { ...v, routeDistinguishers: [rd] };

const REFUSALS: Refusal[] = [
  {
    what: 'elan-instance description empty (length 1..254)',
    buildBad: (p) => putElanInstance(p, { ...sampleElanInstance(), description: '' }),
    valid: (p) => putElanInstance(p, sampleElanInstance()),
    spoil: (e) => void (e['description'] = ''),
  },
  {
    what: 'elan-instance description of 255 characters',
    buildBad: (p) => putElanInstance(p, { ...sampleElanInstance(), description: 'd'.repeat(255) }),
    valid: (p) => putElanInstance(p, sampleElanInstance()),
    spoil: (e) => void (e['description'] = 'd'.repeat(255)),
  },
  {
    what: 'elan-instance segmentation-id above uint32',
    buildBad: (p) => putElanInstance(p, { ...sampleElanInstance(), segmentationId: 2 ** 32 }),
    valid: (p) => putElanInstance(p, sampleElanInstance()),
    spoil: (e) => void (e['segmentation-id'] = 2 ** 32),
  },
  {
    what: 'elan-instance mac-timeout above 65535',
    buildBad: (p) => putElanInstance(p, { ...sampleElanInstance(), macTimeout: 65536 }),
    valid: (p) => putElanInstance(p, sampleElanInstance()),
    spoil: (e) => void (e['mac-timeout'] = 65536),
  },
  {
    // phys-address allows any number of octets, so the malformed one is a half octet.
    what: 'static MAC entry with a malformed MAC',
    buildBad: (p) =>
      putElanInterface(p, {
        ...sampleElanInterface(),
        staticMacEntries: [{ macAddress: '0a:58:0a:0b:01:5' }],
      }),
    valid: (p) => putElanInterface(p, sampleElanInterface()),
    spoil: (e) => void ((only(e, 'static-mac-entries')[0] as JsonObject)['mac-address'] = '0a:58:0a:0b:01:5'),
  },
  {
    what: 'static MAC entry ip-prefix with a prefix length (the type is ip-address)',
    buildBad: (p) =>
      putElanInterface(p, {
        ...sampleElanInterface(),
        staticMacEntries: [{ macAddress: '0a:58:0a:0b:01:05', ipPrefix: '10.11.1.5/32' }],
      }),
    valid: (p) => putElanInterface(p, sampleElanInterface()),
    spoil: (e) => void ((only(e, 'static-mac-entries')[0] as JsonObject)['ip-prefix'] = '10.11.1.5/32'),
  },
  {
    what: 'interface type without its module prefix (identityref of another module)',
    buildBad: (p) => putInterface(p, { ...sampleInterface(), type: 'l2vlan' }),
    valid: (p) => putInterface(p, sampleInterface()),
    spoil: (e) => void (e['type'] = 'l2vlan'),
  },
  {
    what: 'interface vlan-id 4096 (0..4095)',
    buildBad: (p) => putInterface(p, { ...sampleInterface(), vlanId: 4096 }),
    valid: (p) => putInterface(p, sampleInterface()),
    spoil: (e) => void (e['odl-interface:vlan-id'] = 4096),
  },
  {
    what: 'vpn-interface vpn-name of 41 characters (1..40)',
    buildBad: (p) =>
      putVpnInterface(p, {
        ...sampleVpnInterface(),
        vpnInstanceNames: [{ vpnName: 'v'.repeat(41), associatedSubnetType: 'V4Subnet' }],
      }),
    valid: (p) => putVpnInterface(p, sampleVpnInterface()),
    spoil: (e) => void ((only(e, 'vpn-instance-names')[0] as JsonObject)['vpn-name'] = 'v'.repeat(41)),
  },
  {
    what: 'adjacency subnet_id that is not a UUID',
    buildBad: (p) => {
      const v = sampleVpnInterface();
      return putVpnInterface(p, { ...v, adjacencies: [{ ...v.adjacencies[0]!, subnetId: NODE_IP }] });
    },
    valid: (p) => putVpnInterface(p, sampleVpnInterface()),
    spoil: (e, p) => {
      const member = p === 'sodium' ? 'odl-l3vpn:adjacency' : 'adjacency';
      (only(e, member)[0] as JsonObject)['subnet_id'] = NODE_IP;
    },
  },
  {
    what: 'vpn-interface `external` in the Sodium model (Aluminium only)',
    profile: 'sodium',
    buildBad: (p) => putVpnInterface(p, { ...sampleVpnInterface(), external: false }),
    valid: (p) => putVpnInterface(p, sampleVpnInterface()),
    spoil: (e) => void (e['external'] = false),
  },
  {
    what: 'route distinguisher of 2 characters (3..21)',
    buildBad: (p) => putVpnInstance(p, withRd(sampleVpnInstance(p), '1:')),
    valid: (p) => putVpnInstance(p, sampleVpnInstance(p)),
    spoil: (e, p) => void (rdHolder(e, p)['route-distinguisher'] = ['1:']),
  },
  {
    what: 'route distinguisher of 22 characters (3..21)',
    buildBad: (p) => putVpnInstance(p, withRd(sampleVpnInstance(p), '192.168.100.200:65535'.padEnd(22, '5'))),
    valid: (p) => putVpnInstance(p, sampleVpnInstance(p)),
    spoil: (e, p) => void (rdHolder(e, p)['route-distinguisher'] = ['192.168.100.200:65535'.padEnd(22, '5')]),
  },
  {
    what: "Sodium vpn-instance description with '?' (pattern)",
    profile: 'sodium',
    buildBad: (p) => putVpnInstance(p, { ...sampleVpnInstance(p), description: 'why?' } as VpnInstance),
    valid: (p) => putVpnInstance(p, sampleVpnInstance(p)),
    spoil: (e) => void (e['description'] = 'why?'),
  },
  {
    what: 'allocation-pool subnet /33',
    buildBad: (p) => putAllocationPool(p, ELAN_NAME, { subnet: '10.11.1.0/33' }),
    valid: (p) => putAllocationPool(p, ELAN_NAME, { subnet: '10.11.1.0/24' }),
    spoil: (e) => void (e['subnet'] = '10.11.1.0/33'),
    path: (p) => netvirtPaths(p).allocationPool(ELAN_NAME, '10.11.1.0/33'),
  },
  {
    what: 'allocation-pool gateway that is not an address',
    buildBad: (p) => putAllocationPool(p, ELAN_NAME, { ...sampleIpv6Pool(), gateway: 'gw' }),
    valid: (p) => putAllocationPool(p, ELAN_NAME, sampleIpv6Pool()),
    spoil: (e) => void (e['gateway'] = 'gw'),
  },
  {
    what: 'COE pod uid that is not a UUID (key)',
    // The COE models exist only on Sodium (with COE).
    profile: 'sodium',
    buildBad: (p) => putCoePod(p, { ...sampleCoePod(), uid: 'nginx' }),
    valid: (p) => putCoePod(p, sampleCoePod()),
    spoil: (e) => void (e['uid'] = 'nginx'),
    path: (p) => netvirtPaths(p).coePod('nginx'),
  },
  {
    what: 'COE pod host-ip-address that is not an address',
    // The COE models exist only on Sodium (with COE).
    profile: 'sodium',
    buildBad: (p) => putCoePod(p, { ...sampleCoePod(), hostIpAddress: 'worker-1' }),
    valid: (p) => putCoePod(p, sampleCoePod()),
    spoil: (e) => void (e['host-ip-address'] = 'worker-1'),
  },
  {
    what: 'k8s-node internal-ip-address that is not an address',
    // The COE models exist only on Sodium (with COE).
    profile: 'sodium',
    buildBad: (p) => putK8sNode(p, { ...sampleK8sNode(), internalIpAddress: 'worker-1' }),
    valid: (p) => putK8sNode(p, sampleK8sNode()),
    spoil: (e) => void (e['internal-ip-address'] = 'worker-1'),
  },
];

const V6_IP = 'fd00:10:11:1::5';

for (const profile of PROFILES) {
  for (const dialect of DIALECTS) {
    describe(`model edges: builders × client × emulator (${profile}, ${dialect})`, () => {
      const ctl = controllerForSuite(profile, dialect);
      const paths = netvirtPaths(profile);

      for (const r of REFUSALS) {
        if (r.profile && r.profile !== profile) continue;
        it(`both refuse: ${r.what}`, async () => {
          assert.throws(() => r.buildBad(profile), ModelValidationError, 'the builder refuses');
          const valid = r.valid(profile);
          assert.equal(valid.op, 'put');
          if (valid.op !== 'put') return;
          const body = structuredClone(valid.body);
          const entries = Object.values(body)[0];
          assert.ok(Array.isArray(entries));
          r.spoil(entries[0] as JsonObject, profile);
          const path = r.path?.(profile) ?? valid.path;
          await assert.rejects(
            ctl.client.put(path, body),
            (err: unknown) => err instanceof RestconfError && err.status === 400,
            `the emulator answers 400 to ${JSON.stringify(body)}`,
          );
          // (A GET of a key the type refuses is itself a 400, so look at the whole kind.)
          assert.equal(await ctl.client.get(valid.path.slice(0, 1)), undefined, 'and stores nothing');
        });
      }

      it('uint64 beyond 2^53 (datapath-node-identifier, dpn-id) survives write and read', async () => {
        const dpid = '18446744073709551615';
        const dpnId = '9007199254740993';
        const iface = { ...sampleInterface(), datapathNodeIdentifier: dpid };
        await apply(ctl.client, putInterface(profile, iface));
        const [readIface] = parseInterfaces(await ctl.client.get(paths.interface(IF_NAME)));
        assert.equal(readIface?.datapathNodeIdentifier, dpid);
        const vif = { ...sampleVpnInterface(), dpnId };
        await apply(ctl.client, putVpnInterface(profile, vif));
        const [readVif] = parseVpnInterfaces(profile, await ctl.client.get(paths.vpnInterface(IF_NAME)));
        assert.equal(readVif?.dpnId, dpnId);
        assert.equal(await ctl.client.delete(paths.interface(IF_NAME)), 'deleted');
        assert.equal(await ctl.client.delete(paths.vpnInterface(IF_NAME)), 'deleted');
      });

      it('an IPv6 pod: /128 primary adjacency, V6Subnet, IPv6 static MAC entry, IPv6 VPN family', async () => {
        const mac = podMac(V6_IP);
        const vif = {
          ...sampleVpnInterface(),
          vpnInstanceNames: [{ vpnName: 'default', associatedSubnetType: 'V6Subnet' as const }],
          adjacencies: [
            {
              ipAddress: `${V6_IP}/128`,
              macAddress: mac,
              adjacencyType: 'primary-adjacency' as const,
              subnetId: subnetId('fd00:56::101'),
              subnetGatewayIp: 'fd00:10:11:1::1',
            },
          ],
        };
        assert.equal(await apply(ctl.client, putVpnInterface(profile, vif)), 'created');
        assert.deepEqual(parseVpnInterfaces(profile, await ctl.client.get(paths.vpnInterface(IF_NAME))), [
          vif,
        ]);

        const elanIf = { ...sampleElanInterface(), staticMacEntries: [{ macAddress: mac, ipPrefix: V6_IP }] };
        assert.equal(await apply(ctl.client, putElanInterface(profile, elanIf)), 'created');
        assert.deepEqual(parseElanInterfaces(await ctl.client.get(paths.elanInterface(IF_NAME))), [elanIf]);

        const base = sampleVpnInstance(profile);
        const vpn: VpnInstance =
          base.profile === 'sodium'
            ? { ...base, ipv4Family: undefined, ipv6Family: base.ipv4Family }
            : { ...base, ipAddressFamilyConfigured: 'ipv6' };
        if (vpn.profile === 'sodium') delete vpn.ipv4Family;
        assert.equal(await apply(ctl.client, putVpnInstance(profile, vpn)), 'created');
        assert.deepEqual(parseVpnInstances(profile, await ctl.client.get(paths.vpnInstance('default'))), [
          vpn,
        ]);

        // An IPv6 node names its ELANs with colons: `fd00:56::101:default` as a URL key.
        const elan = { ...sampleElanInstance(), name: elanInstanceName('fd00:56::101', 'default') };
        assert.equal(await apply(ctl.client, putElanInstance(profile, elan)), 'created');
        const [readElan] = parseElanInstances(await ctl.client.get(paths.elanInstance(elan.name)));
        assert.equal(readElan?.name, elan.name);
        assert.equal(await ctl.client.delete(paths.elanInstance(elan.name)), 'deleted');

        // The adjacency key in the URL carries ':' and '/' (sent as %2F).
        const adjacencyPath = paths.adjacency(IF_NAME, `${V6_IP}/128`);
        assert.notEqual(
          await ctl.client.get(adjacencyPath),
          undefined,
          'adjacency addressed by its IPv6 key',
        );
        for (const p of [
          paths.vpnInterface(IF_NAME),
          paths.elanInterface(IF_NAME),
          paths.vpnInstance('default'),
        ])
          assert.equal(await ctl.client.delete(p), 'deleted');
      });

      it('entryBody names the member the emulator expects for every path the model uses', async () => {
        // A body member must equal the last URL element (else ODL answers 400 malformed-message).
        const writes: [DataPath, JsonObject][] = [
          [paths.adjacency(IF_NAME, '10.11.1.5/32'), { ip_address: '10.11.1.5/32' }],
          [paths.allocationPool(ELAN_NAME, '10.11.1.0/24'), { subnet: '10.11.1.0/24' }],
        ];
        await apply(ctl.client, putVpnInterface(profile, { ...sampleVpnInterface(), adjacencies: [] }));
        for (const [path, entry] of writes)
          assert.equal(await ctl.client.put(path, entryBody(path, entry)), 'created', JSON.stringify(path));
        assert.equal(await ctl.client.delete(paths.vpnInterface(IF_NAME)), 'deleted');
        assert.equal(await ctl.client.delete(paths.dhcpNetwork(ELAN_NAME)), 'deleted');
      });
    });
  }
}
