/**
 * The watcher's configuration: a YAML or JSON file (`--config`), environment variables and
 * command-line flags, merged with flags over environment over file over defaults, as declared
 * in settings.ts. Every value is validated where it comes from, so an error names the flag,
 * variable or file key at fault; the checks that involve several settings are here.
 */
import type { Checks, SettingsSources } from '../common/settings-scheme.js';
import { checkClusterName, checkRouteTarget, maxAssignedNumber, parseCidr } from '../netvirt/index.js';
import {
  WATCHER_SCHEME,
  WATCHER_SETTINGS,
  watcherSettingsOf,
  type WatcherValues,
} from './watcher-settings.js';

export { parseDuration } from '../common/settings-scheme.js';

/** The configuration file's schema (every key optional; unknown keys are errors, to catch typos). */
export const configFileSchema = WATCHER_SCHEME.fileSchema;

export interface ConfigSources extends SettingsSources {
  /** Parsed flags (commander's camelCase keys); `config` names the file. */
  flags: Readonly<Record<string, unknown>>;
  defaultIdentity: () => string;
}

/** Merges and validates file, environment and flags into the watcher's configuration. */
export function loadWatcherConfig(sources: ConfigSources): WatcherConfig {
  return watcherConfigOf(WATCHER_SCHEME.load(sources, checkWatcherValues), sources.defaultIdentity);
}

/** The checks that involve several settings, or rules of the model. */
export function checkWatcherValues(v: WatcherValues, c: Checks): void {
  const s = WATCHER_SETTINGS;
  c.check(s.clusterName, () => checkClusterName(v.clusterName));
  c.check(s.vpn.routeTarget, () => checkRouteTarget(v.vpn.routeTarget, 'route target'));
  c.check(s.vpn.rdAdministrator, () => maxAssignedNumber(v.vpn.rdAdministrator));
  const { source, clusterCidr, nodePrefixLength } = v.subnets;
  const allocate = `${c.label(s.subnets.source)} allocate`;
  if (source === 'allocate') {
    if (clusterCidr === undefined)
      c.problem(`${c.label(s.subnets.clusterCidr)} (with ${allocate}) is required`);
    if (nodePrefixLength === undefined)
      c.problem(`${c.label(s.subnets.nodePrefixLength)} (with ${allocate}) is required`);
    if (clusterCidr !== undefined)
      c.check(s.subnets.clusterCidr, () => {
        const parsed = parseCidr(clusterCidr);
        const bits = parsed.family === 4 ? 32 : 128;
        if (
          nodePrefixLength !== undefined &&
          (nodePrefixLength < parsed.prefixLength || nodePrefixLength > bits - 2)
        )
          throw new Error(
            `${c.label(s.subnets.nodePrefixLength)} ${nodePrefixLength} must be between ${parsed.prefixLength} and ${bits - 2}`,
          );
      });
  } else {
    for (const [setting, value] of [
      [s.subnets.clusterCidr, clusterCidr],
      [s.subnets.nodePrefixLength, nodePrefixLength],
    ] as const) {
      if (value !== undefined)
        c.problem(`${c.label(setting)} is only meaningful with ${allocate} (it is ${source})`);
    }
  }
  for (const cidr of v.services.cidrs) c.check(s.services.cidrs, () => parseCidr(cidr));
  if (v.odl.passwordFile !== undefined && v.odl.tokenFile !== undefined)
    c.problem(`${c.label(s.odl.passwordFile)} and ${c.label(s.odl.tokenFile)} exclude each other`);
  const { leaseDuration, renewDeadline, retryPeriod } = v.leaderElection;
  if (!(leaseDuration > renewDeadline && renewDeadline > retryPeriod && leaseDuration % 1000 === 0))
    c.problem('leader election needs whole-second lease duration > renew deadline > retry period');
}

/** The validated values in the form the watcher's parts take them (durations in milliseconds). */
export function watcherConfigOf(v: WatcherValues, defaultIdentity: () => string) {
  const le = v.leaderElection;
  return {
    settings: watcherSettingsOf(v),
    ...(v.kubeconfig !== undefined ? { kubeconfig: v.kubeconfig } : {}),
    odl: v.odl,
    metrics: v.metrics,
    leaderElection: {
      enabled: le.enabled,
      namespace: le.namespace,
      name: le.name,
      identity: le.identity ?? defaultIdentity(),
      leaseDurationMs: le.leaseDuration,
      renewDeadlineMs: le.renewDeadline,
      retryPeriodMs: le.retryPeriod,
    },
  };
}

/** Everything the program needs: WatcherSettings, and how to reach Kubernetes, ODL and its Lease. */
export type WatcherConfig = ReturnType<typeof watcherConfigOf>;
