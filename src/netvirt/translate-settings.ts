/**
 * The settings translation depends on, and the one place the watcher's and odlcoectl's
 * resolved settings are turned into them (`translateSettingsOf`, `ownerContextOf`): both
 * programs must make exactly the same objects and the same ownership verdicts.
 */
import { ModelValidationError } from './errors.js';
import type { SegmentType } from './elan.js';
import type { IpFamily } from './kube.js';
import { checkClusterName } from './names.js';
import type { OwnerContext } from './ownership.js';
import type { Profile } from './profile.js';
import { checkRouteTarget } from './route-distinguisher.js';

export interface TranslateSettings {
  /** DNS-1123 label; goes into every ownership marker. */
  clusterName: string;
  profile: Profile;
  /** The cluster route target every namespace VPN imports and exports (`vrfRTType both`). */
  routeTarget: string;
  /** ELAN segment type. ELANs are per node, so VXLAN is the only type that needs no provider network. */
  segmentType: Extract<SegmentType, 'vxlan'>;
  /** Address families routed through the VPNs, in preference order. Default `['ipv4']`. */
  ipFamilies?: readonly IpFamily[];
  /** The RD administrator (the gateway VPN's RDs are under it). */
  rdAdministrator?: string;
  /**
   * The Service ranges: non-empty turns node gateways and Service routes on; undefined where
   * they are not known (odlcoectl), so gateway plans keep what exists.
   */
  serviceCidrs?: readonly string[];
}

export function families(settings: TranslateSettings): readonly IpFamily[] {
  const f = settings.ipFamilies ?? ['ipv4'];
  if (f.length === 0 || new Set(f).size !== f.length) {
    throw new ModelValidationError(
      'settings.ipFamilies',
      `must list ipv4 and/or ipv6 once each, got ${JSON.stringify(f)}`,
    );
  }
  return f;
}

/** Validates the settings once, with precise errors, before any object is built. */
export function checkTranslateSettings(settings: TranslateSettings): void {
  checkClusterName(settings.clusterName);
  checkRouteTarget(settings.routeTarget, 'settings.routeTarget');
  if (settings.segmentType !== 'vxlan') {
    throw new ModelValidationError(
      'settings.segmentType',
      `only vxlan is supported, got ${JSON.stringify(settings.segmentType)}`,
    );
  }
  families(settings);
}

/** What both programs resolve from their configuration (the watcher's settings, odlcoectl's). */
export interface ClusterIdentity {
  clusterName: string;
  profile: Profile;
  routeTarget: string;
  rdAdministrator: string;
  /** The watcher's `services.cidrs` (odlcoectl does not know them). */
  serviceCidrs?: readonly string[];
}

/**
 * The settings in the shape translation wants (validated: a bad cluster name or route target
 * is refused before anything is translated). ELANs are per node, so VXLAN is the only segment
 * type that needs no provider network.
 */
export function translateSettingsOf(identity: ClusterIdentity): TranslateSettings {
  const translate: TranslateSettings = {
    clusterName: identity.clusterName,
    profile: identity.profile,
    routeTarget: identity.routeTarget,
    segmentType: 'vxlan',
    rdAdministrator: identity.rdAdministrator,
    ...(identity.serviceCidrs !== undefined ? { serviceCidrs: identity.serviceCidrs } : {}),
  };
  checkTranslateSettings(translate);
  return translate;
}

/** The settings in the shape the ownership rules (and so the diffs) want. */
export function ownerContextOf(identity: ClusterIdentity): OwnerContext {
  return {
    clusterName: identity.clusterName,
    profile: identity.profile,
    routeTarget: identity.routeTarget,
    rdAdministrator: identity.rdAdministrator,
  };
}
