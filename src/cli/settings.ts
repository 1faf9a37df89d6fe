/**
 * odlcoectl settings are the watcher's settings: the same config file (`--config` or
 * ODLCOE_CONFIG, validated by the watcher's own schema), the same environment variables and
 * the same flag names, merged the same way (flags > environment > file > defaults) by
 * src/config/watcher-config.ts. An operator points odlcoectl at the watcher's file and both agree on
 * the cluster name, ODL, the model profile, the RD administrator and route target (what makes
 * an ODL object this cluster's) and the leader Lease. Only the output format and the request
 * deadline are odlcoectl's own.
 */
import { ConfigError } from '../common/config-file.js';
import type { Profile } from '../netvirt/profile.js';
import type { Dialect } from '../restconf/path.js';
import { loadWatcherConfig } from '../config/watcher-config.js';
import type { SubnetSource } from '../config/watcher-settings.js';

export type OutputFormat = 'human' | 'json';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['human', 'json'];

/** The Lease the watcher's leader election uses unless configured otherwise (src/config/watcher-config.ts). */
export const DEFAULT_LEASE = { namespace: 'kube-system', name: 'odlcoe-watcher' } as const;
export const DEFAULT_TIMEOUT_SECONDS = 30;

/** Flags as commander hands them over (camelCase names, strings). */
export interface GlobalFlags {
  config?: string;
  kubeconfig?: string;
  odlUrl?: string;
  odlUser?: string;
  odlPasswordFile?: string;
  odlTokenFile?: string;
  odlCaFile?: string;
  profile?: string;
  dialect?: string;
  clusterName?: string;
  output?: string;
  timeout?: string;
  leaseNamespace?: string;
  leaseName?: string;
}

export interface OdlConnection {
  url: string;
  dialect: Dialect;
  user?: string;
  passwordFile?: string;
  tokenFile?: string;
  caFile?: string;
  insecureSkipVerify: boolean;
}

export interface CliSettings {
  clusterName: string;
  profile: Profile;
  odl: OdlConnection;
  kubeconfig?: string;
  routeTarget: string;
  rdAdministrator: string;
  subnetSource: SubnetSource;
  lease: { namespace: string; name: string };
  output: OutputFormat;
  /** Per request (each RESTCONF attempt, each Kubernetes request). */
  timeoutMs: number;
}

/**
 * Resolves the settings. Throws ConfigError (exit 2) naming the flag, variable or file key at
 * fault; never contacts anything.
 */
export function resolveSettings(flags: GlobalFlags, env: NodeJS.ProcessEnv = process.env): CliSettings {
  const outputText = flags.output ?? 'human';
  if (!(OUTPUT_FORMATS as readonly string[]).includes(outputText))
    throw new ConfigError(
      `-o/--output ${JSON.stringify(outputText)} is not one of ${OUTPUT_FORMATS.join(', ')}`,
    );
  const timeoutText = flags.timeout ?? String(DEFAULT_TIMEOUT_SECONDS);
  if (!/^\d+$/.test(timeoutText) || Number(timeoutText) < 1 || Number(timeoutText) > 600)
    throw new ConfigError(
      `--timeout ${JSON.stringify(timeoutText)} must be a whole number of seconds in 1..600`,
    );

  const { output: _output, timeout: _timeout, ...shared } = flags;
  let config;
  try {
    config = loadWatcherConfig({ flags: { ...shared }, env, defaultIdentity: () => 'odlcoectl' });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(
      err.message.replace(/^invalid watcher configuration/, 'invalid settings (shared with the watcher)'),
    );
  }
  const { settings: w, odl } = config;
  const out: CliSettings = {
    clusterName: w.clusterName,
    profile: w.profile,
    odl: { url: odl.url, dialect: w.dialect, insecureSkipVerify: odl.insecureSkipVerify ?? false },
    routeTarget: w.routeTarget,
    rdAdministrator: w.rdAdministrator,
    subnetSource: w.subnetSource,
    lease: { namespace: config.leaderElection.namespace, name: config.leaderElection.name },
    output: outputText as OutputFormat,
    timeoutMs: Number(timeoutText) * 1000,
  };
  if (odl.user !== undefined) out.odl.user = odl.user;
  if (odl.passwordFile !== undefined) out.odl.passwordFile = odl.passwordFile;
  if (odl.tokenFile !== undefined) out.odl.tokenFile = odl.tokenFile;
  if (odl.caFile !== undefined) out.odl.caFile = odl.caFile;
  if (config.kubeconfig !== undefined) out.kubeconfig = config.kubeconfig;
  return out;
}
