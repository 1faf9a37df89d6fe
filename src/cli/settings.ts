/**
 * odlcoectl settings are the watcher's settings: the same config file (`--config` or
 * ODLCOE_CONFIG, validated by the watcher's own schema), the same environment variables and
 * the same flag names, merged the same way (flags > environment > file > defaults), declared
 * once in src/config/watcher-settings.ts. An operator points odlcoectl at the watcher's file and both
 * agree on the cluster name, ODL, the model profile, the RD administrator and route target
 * (what makes an ODL object this cluster's) and the leader Lease. Only the output format and
 * the request deadline are odlcoectl's own.
 */
import { z } from 'zod';
import { httpUrl, number, oneOf, quoted, setting, type Usage } from '../common/settings-scheme.js';
import { checkWatcherValues, watcherConfigOf } from '../config/watcher-config.js';
import { WATCHER_SCHEME, WATCHER_SETTINGS } from '../config/watcher-settings.js';
import type { Profile } from '../netvirt/profile.js';
import type { OdlModels } from '../odl/models.js';

export type OutputFormat = 'human' | 'json';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['human', 'json'];

const CLI_SETTINGS = {
  output: setting(oneOf(OUTPUT_FORMATS), {
    flag: '-o, --output <format>',
    file: false,
    default: 'human',
    doc: '`human` or `json`',
  }),
  timeout: setting(
    number(
      z.number().refine((n) => Number.isInteger(n) && n >= 1 && n <= 600, {
        error: (iss) => `${quoted(iss.input)} must be a whole number of seconds in 1..600`,
      }),
    ),
    {
      flag: '--timeout <seconds>',
      file: false,
      default: 30,
      doc: 'deadline of each request to ODL or Kubernetes, in seconds: 1..600',
    },
  ),
  watcherMetrics: setting(httpUrl('http://localhost:9464/metrics'), {
    flag: '--watcher-metrics <url>',
    env: 'ODLCOE_WATCHER_METRICS_URL',
    file: false,
    doc: "the leading watcher's metrics endpoint (e.g. through `kubectl port-forward`): `status` shows its convergence progress",
  }),
};

export const CLI_SCHEME = WATCHER_SCHEME.with(CLI_SETTINGS, {
  title: 'settings (shared with the watcher)',
  configFile: {
    flag: '--config <file>',
    env: 'ODLCOE_CONFIG',
    doc: "the watcher's config file: odlcoectl shares its settings, and validates but does not use its other keys",
  },
});

const w = WATCHER_SETTINGS;
/** The watcher's settings odlcoectl reads, by where their flags go. */
export const CLI_USES: Record<'global' | 'status' | 'noFlag', readonly Usage[]> = {
  global: [
    {
      setting: w.kubeconfig,
      defaultText: '`$KUBECONFIG`, `~/.kube/config`, in-cluster',
      doc: 'kubeconfig file; a `:`-separated `KUBECONFIG` is merged',
    },
    ...[w.odl.url, w.odl.user, w.odl.passwordFile, w.odl.tokenFile, w.odl.caFile].map((setting) => ({
      setting,
    })),
    ...[
      w.odl.profile,
      w.odl.dialect,
      w.clusterName,
      w.services.cidrs,
      CLI_SETTINGS.output,
      CLI_SETTINGS.timeout,
    ].map((setting) => ({ setting })),
  ],
  status: [w.leaderElection.namespace, w.leaderElection.name, CLI_SETTINGS.watcherMetrics].map((setting) => ({
    setting,
    flag: '(`status` only)',
  })),
  noFlag: [w.odl.insecureSkipVerify, w.vpn.routeTarget, w.vpn.rdAdministrator, w.subnets.source].map(
    (setting) => ({ setting, flag: false }),
  ),
};

/** The rows of odlcoectl's table in docs/configuration.md. */
export const CLI_DOC_ROWS: readonly Usage[] = [...CLI_USES.global, ...CLI_USES.noFlag, ...CLI_USES.status];

/** The Lease the watcher's leader election uses unless configured otherwise. */
export const DEFAULT_LEASE = {
  namespace: w.leaderElection.namespace.default,
  name: w.leaderElection.name.default,
} as const;

/** Flags as commander hands them over (camelCase names), only those given. */
export type GlobalFlags = Readonly<Record<string, unknown>>;

/**
 * Resolves the settings as told (the profile may be left to detection: withModels). Throws
 * ConfigError (exit 2) naming the flag, variable or file key at fault; never contacts anything.
 */
export function resolveSettings(flags: GlobalFlags, env: NodeJS.ProcessEnv = process.env) {
  const values = CLI_SCHEME.load({ flags, env }, checkWatcherValues);
  const { settings: s, odl, leaderElection: le, kubeconfig } = watcherConfigOf(values, () => 'odlcoectl');
  const { timeout: _odlTimeout, profile: _profile, ...connection } = odl;
  return {
    clusterName: s.clusterName,
    ...(s.profile !== undefined ? { profile: s.profile } : {}),
    odl: connection,
    routeTarget: s.routeTarget,
    rdAdministrator: s.rdAdministrator,
    subnetSource: s.subnetSource,
    /** The watcher's Service ranges: with them, node gateways and Service routes are checked. */
    serviceCidrs: s.serviceCidrs,
    lease: { namespace: le.namespace, name: le.name },
    output: values.output,
    /** Per request (each RESTCONF attempt, each Kubernetes request). */
    timeoutMs: values.timeout * 1000,
    ...(values.watcherMetrics !== undefined ? { watcherMetrics: values.watcherMetrics } : {}),
    ...(kubeconfig !== undefined ? { kubeconfig } : {}),
  };
}

/** The settings as told (flags, environment, file): the profile may be left to detection. */
export type CliConfig = ReturnType<typeof resolveSettings>;

/**
 * The settings a command runs with: the profile is the one ODL serves (its module list, read
 * before anything else), checked against a told one.
 */
export type CliSettings = Omit<CliConfig, 'profile'> & {
  profile: Profile;
  /** What ODL has (read from its module list, or assumed from a told profile when it publishes none). */
  models: OdlModels;
};

/** The settings of a command, once ODL's models are known. */
export function withModels(config: CliConfig, models: OdlModels): CliSettings {
  return { ...config, profile: models.profile, models };
}
