/**
 * A small NetVirt world written into the ODL emulator the way an ODL user writes it (RESTCONF
 * PUTs of model bodies, which the emulator checks against the profile's YANG), read back
 * through the kinds table as odlcoectl reads it, and handed to the reachability analysis.
 */
import { silentLogger } from '../../src/common/log.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/server.js';
import {
  netvirtPaths,
  putElanInstance,
  putElanInterface,
  putInterface,
  putVpnInstance,
  putVpnInterface,
  putOp,
  type Profile,
  type VpnInstance,
  type WriteOp,
} from '../../src/netvirt/index.js';
import {
  ACL_TYPE_IPV4,
  aceEntry,
  aceRuleName,
  aclEntry,
  type Ace,
  type Acl,
  type InterfaceAcl,
} from '../../src/netvirt/acl.js';
import { NETVIRT_KINDS } from '../../src/netvirt/kinds.js';
import {
  analyseReach,
  HoldingsIndex,
  holdingsOf,
  parseProbe,
  type ReachEndpoint,
  type ReachResult,
} from '../../src/netvirt/reach/index.js';
import { readModels } from '../../src/odl/models.js';
import { OdlReader } from '../../src/odl/reader.js';
import { RestconfClient } from '../../src/restconf/client.js';
import type { Dialect } from '../../src/restconf/path.js';

export interface World {
  profile: Profile;
  emulator: Emulator;
  odl: RestconfClient;
  close(): Promise<void>;
}

export async function startWorld(
  profile: Profile,
  dialect: Dialect,
  options: Pick<EmulatorOptions, 'fillParentInterface'> = {},
): Promise<World> {
  const emulator = await startEmulator({ port: 0, profile, logger: silentLogger(), ...options });
  const odl = new RestconfClient({
    baseUrl: emulator.url,
    dialect,
    auth: { kind: 'basic', user: 'admin', password: 'admin' },
    retry: { maxAttempts: 1 },
  });
  return {
    profile,
    emulator,
    odl,
    async close() {
      odl.close();
      await emulator.close();
    },
  };
}

/** Reads ODL whole through the kinds table (the kinds it has models for), as odlcoectl does. */
export async function readIndex(w: World): Promise<HoldingsIndex> {
  const models = await readModels(w.odl, w.profile, w.emulator.url);
  const table = NETVIRT_KINDS.restrictedTo(w.profile, models.modules);
  const snapshot = await new OdlReader(w.odl, w.profile, table).snapshot();
  return new HoldingsIndex(holdingsOf(snapshot.state, table.kinds));
}

/** Reads ODL and walks one packet. */
export async function reach(
  w: World,
  from: ReachEndpoint,
  to: ReachEndpoint,
  port?: string,
): Promise<ReachResult> {
  return analyseReach(await readIndex(w), w.profile, { from, to, probe: parseProbe(port) });
}

export const mac = (ip: string) =>
  `0a:58:${ip
    .split('.')
    .map((b) => Number(b).toString(16).padStart(2, '0'))
    .join(':')}`;

export async function apply(w: World, op: WriteOp): Promise<void> {
  if (op.op === 'put') await w.odl.put(op.path, op.body);
  else await w.odl.delete(op.path);
}

export interface PortSpec {
  name: string;
  ip: string;
  elan: string;
  vpn?: string;
  /** Genius' binding: absent = no OVS port seen. */
  bound?: boolean;
  acl?: InterfaceAcl;
  gatewayIp?: string;
  extraRoutes?: { prefix: string; nextHop: string }[];
}

export async function putPort(w: World, p: PortSpec): Promise<void> {
  const put = (op: WriteOp) => apply(w, op);
  await put(
    putInterface(w.profile, {
      name: p.name,
      type: 'iana-if-type:l2vlan',
      enabled: true,
      l2vlanMode: 'trunk',
      external: false,
      ...(p.bound === false ? {} : { parentInterface: `tap${p.ip.split('.').join('')}`.slice(0, 14) }),
      ...(p.acl ? { acl: p.acl } : {}),
    }),
  );
  await put(
    putElanInterface(w.profile, {
      name: p.name,
      elanInstanceName: p.elan,
      staticMacEntries: [{ macAddress: mac(p.ip), ipPrefix: p.ip }],
    }),
  );
  if (p.vpn === undefined) return;
  await put(
    putVpnInterface(w.profile, {
      name: p.name,
      vpnInstanceNames: [{ vpnName: p.vpn, associatedSubnetType: 'V4Subnet' }],
      routerInterface: false,
      adjacencies: [
        {
          ipAddress: `${p.ip}/32`,
          macAddress: mac(p.ip),
          adjacencyType: 'primary-adjacency',
          subnetId: '5b1f2c3d-0000-3000-8000-000000000001',
          subnetGatewayIp: p.gatewayIp ?? `${p.ip.split('.').slice(0, 3).join('.')}.1`,
        },
        ...(p.extraRoutes ?? []).map((r) => ({
          ipAddress: r.prefix,
          adjacencyType: 'extra-route' as const,
          nextHopIpList: [r.nextHop],
        })),
      ],
    }),
  );
}

export async function putElan(w: World, name: string): Promise<void> {
  await apply(w, putElanInstance(w.profile, { name, segmentType: 'vxlan', external: false }));
}

export async function putVpn(
  w: World,
  name: string,
  rd: string | undefined,
  routeTarget: string,
): Promise<void> {
  const targets = [{ value: routeTarget, type: 'both' as const }];
  const rds = rd === undefined ? [] : [rd];
  const v: VpnInstance =
    w.profile === 'sodium'
      ? {
          profile: 'sodium',
          name,
          type: 'l3',
          l3vni: 0,
          ipv4Family: { routeDistinguishers: rds, vpnTargets: targets },
        }
      : {
          profile: 'aluminium',
          name,
          routeDistinguishers: rds,
          vpnTargets: targets,
          l2vpn: false,
          bgpvpnType: 'InternalVPN',
          ipAddressFamilyConfigured: 'ipv4',
        };
  await apply(w, putVpnInstance(w.profile, v));
}

export function rule(content: Omit<Ace, 'ruleName' | 'deleted'>): Ace {
  return { ...content, ruleName: aceRuleName(content), deleted: false };
}

export async function putAcl(w: World, name: string, aces: Ace[], aclTag?: number): Promise<void> {
  const acl: Acl = {
    name,
    type: ACL_TYPE_IPV4,
    aces,
    ...(w.profile === 'aluminium' && aclTag !== undefined ? { aclTag } : {}),
  };
  await apply(w, putOp(netvirtPaths(w.profile).acl(name), aclEntry(w.profile, acl)));
}

/** Removes a rule the way aclservice wants it removed: the ACE written again with `deleted: true`. */
export function markAceDeleted(w: World, acl: string, ace: Ace): WriteOp {
  return putOp(netvirtPaths(w.profile).ace(acl, ace.ruleName), aceEntry({ ...ace, deleted: true }));
}

/** Removes a rule by hand with a plain DELETE (which, on a real ODL, leaves its flows behind). */
export function deleteAce(w: World, acl: string, ace: Ace): WriteOp {
  return { op: 'delete', path: netvirtPaths(w.profile).ace(acl, ace.ruleName) };
}
