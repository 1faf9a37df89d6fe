/**
 * Which NetVirt release and optional models an ODL controller has, read from the module list it
 * publishes (RestconfClient.getModules: ietf-yang-library `modules-state` on RFC 8040, `GET
 * /restconf/modules` on bierman02). Every program reads it at start-up and picks what it does
 * from it, unless told; a told profile that contradicts what ODL serves is refused.
 *
 * Rules (module names from netvirt, coe and genius release/sodium-sr4 and release/aluminium-sr4):
 * - profile `aluminium` (Magnesium and later): module `l3vpn-instances-interfaces` (neutronvpn,
 *   revision 2020-02-04, where the VPN lists moved). Aluminium still loads `l3vpn` and
 *   `odl-l3vpn`, without the VPN lists, so their presence does not mean Sodium.
 * - profile `sodium`: `l3vpn` without `l3vpn-instances-interfaces`.
 * - neither: no NetVirt VPN model, nothing odlcoe can work with.
 * - COE: `k8s-node`, `pod` and `service` (coe's northbound API, installed by Sodium's
 *   odl-netvirt-coe; no later release has them).
 * - ACL service: `aclservice` and `ietf-access-control-list`. NAT: `odl-nat`.
 */
import { PROFILES, type Profile } from '../netvirt/profile.js';
import type { RequestOptions, RestconfClient } from '../restconf/client.js';

export interface OdlModels {
  profile: Profile;
  /** `odl`: read from ODL's module list; `told`: ODL publishes none, so the told profile and its usual models are assumed. */
  source: 'odl' | 'told';
  /** The COE northbound models (k8s-node, pod, service). */
  coe: boolean;
  /** NetVirt's ACL service (aclservice + ietf-access-control-list). */
  acl: boolean;
  /** NetVirt's NAT service (odl-nat). */
  nat: boolean;
  /** The modules ODL has (or, when told, is assumed to have), sorted by name. */
  modules: readonly string[];
}

/** A profile or model set ODL does not have: the program must not start. */
export class OdlModelsError extends Error {
  override name = 'OdlModelsError';
}

const COE_MODULES = ['k8s-node', 'pod', 'service'] as const;
const ACL_MODULES = ['aclservice', 'ietf-access-control-list'] as const;
const PROFILE_MODULE: Record<Profile, string> = {
  sodium: 'l3vpn',
  aluminium: 'l3vpn-instances-interfaces',
};

/** What a release usually has (its modules as far as odlcoe cares), for a told profile without a module list. */
export function assumedModels(profile: Profile): OdlModels {
  const modules = [
    'ietf-interfaces',
    'iana-if-type',
    'odl-interface',
    'elan',
    'dhcp_allocation_pool',
    'odl-nat',
    ...ACL_MODULES,
    ...(profile === 'sodium' ? ['l3vpn', 'odl-l3vpn', ...COE_MODULES, 'k8s-cluster'] : []),
    ...(profile === 'aluminium' ? ['l3vpn-instances-interfaces'] : []),
  ].sort();
  return modelsOf(profile, modules, 'told');
}

function modelsOf(profile: Profile, modules: readonly string[], source: OdlModels['source']): OdlModels {
  const has = new Set(modules);
  return {
    profile,
    source,
    coe: COE_MODULES.every((m) => has.has(m)),
    acl: ACL_MODULES.every((m) => has.has(m)),
    nat: has.has('odl-nat'),
    modules: [...has].sort(),
  };
}

/** The profile a module list implies; undefined when it holds no NetVirt VPN model. */
export function profileOf(modules: Iterable<string>): Profile | undefined {
  const has = new Set(modules);
  if (has.has(PROFILE_MODULE.aluminium)) return 'aluminium';
  if (has.has(PROFILE_MODULE.sodium)) return 'sodium';
  return undefined;
}

/**
 * The models from ODL's module list (`listed`, undefined when ODL publishes none), checked
 * against a told profile. Throws OdlModelsError when ODL has no NetVirt VPN model, when the
 * told profile contradicts ODL (naming both), or when neither tells the profile.
 */
export function resolveModels(
  listed: readonly { name?: unknown }[] | undefined,
  told: Profile | undefined,
  where: string,
): OdlModels {
  if (listed === undefined) {
    if (told === undefined)
      throw new OdlModelsError(
        `ODL at ${where} publishes no module list, so its release cannot be detected: give the profile (${PROFILES.join(' or ')})`,
      );
    return assumedModels(told);
  }
  const names = listed.map((m) => m.name).filter((n): n is string => typeof n === 'string');
  const profile = profileOf(names);
  if (profile === undefined)
    throw new OdlModelsError(
      `ODL at ${where} serves no NetVirt VPN model (neither ${PROFILE_MODULE.aluminium} nor ${PROFILE_MODULE.sodium}): is NetVirt installed (odl-netvirt-openstack)?`,
    );
  if (told !== undefined && told !== profile)
    throw new OdlModelsError(
      `the profile is set to ${told}, but ODL at ${where} serves the ${profile} models (module ${PROFILE_MODULE[profile]}${profile === 'sodium' ? `, no ${PROFILE_MODULE.aluminium}` : ''}): remove the setting or set it to ${profile}`,
    );
  return modelsOf(profile, names, 'odl');
}

/** Reads ODL's module list and resolves the models (see resolveModels). */
export async function readModels(
  client: RestconfClient,
  told: Profile | undefined,
  where: string,
  options: RequestOptions = {},
): Promise<OdlModels> {
  return resolveModels(await client.getModules(options), told, where);
}

/** `coe, acl, nat` (or `none`): the optional models found, for logs and odlcoectl. */
export function optionalModels(models: Pick<OdlModels, 'coe' | 'acl' | 'nat'>): string {
  const found = (['coe', 'acl', 'nat'] as const).filter((m) => models[m]);
  return found.length > 0 ? found.join(', ') : 'none';
}
