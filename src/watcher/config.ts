/**
 * The watcher's configuration: a YAML or JSON file (`--config`), environment variables and
 * command-line flags, merged with flags over environment over file over defaults. Every value
 * is validated where it comes from, so an error names the flag, variable or file key at fault.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { ConfigError, parseConfig, readConfigFile } from '../common/config-file.js';
import { checkClusterName, checkRouteTarget, maxAssignedNumber, parseCidr } from '../netvirt/index.js';
import { PROFILES, type Profile } from '../netvirt/profile.js';
import { DIALECTS, type Dialect } from '../restconf/path.js';
import {
  BACKEND_NAMES,
  DEFAULT_SETTINGS,
  SUBNET_SOURCES,
  type BackendName,
  type SubnetSource,
  type WatcherSettings,
} from './settings.js';

/** `250ms`, `30s`, `5m`, `1h`, `1m30s`; a bare number is seconds. */
export function parseDuration(value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new Error(`${value} is not a duration`);
    return Math.round(value * 1000);
  }
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let rest = text;
  if (rest === '') throw new Error('empty duration');
  while (rest !== '') {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)/.exec(rest);
    if (!m) throw new Error(`${JSON.stringify(value)} is not a duration (like 250ms, 30s, 5m, 1h30m)`);
    total += Number(m[1]) * (unit[m[2] ?? 's'] ?? 1000);
    rest = rest.slice(m[0].length);
  }
  return Math.round(total);
}

const duration = z.union([z.string(), z.number()]).transform((v, ctx) => {
  try {
    return parseDuration(v);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});
const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().min(1);
const positive = z.coerce.number().positive();
const backendName = z.enum(BACKEND_NAMES as [BackendName, ...BackendName[]]);
const bool = z.union([z.boolean(), z.enum(['true', 'false'])]).transform((v) => v === true || v === 'true');

/** The configuration file (every key optional; unknown keys are errors, to catch typos). */
export const configFileSchema = z
  .object({
    clusterName: z.string(),
    backend: backendName,
    kubeconfig: z.string(),
    odl: z
      .object({
        url: z.string(),
        user: z.string(),
        passwordFile: z.string(),
        tokenFile: z.string(),
        profile: z.enum(PROFILES as [Profile, ...Profile[]]),
        dialect: z.enum(DIALECTS as [Dialect, ...Dialect[]]),
        timeout: duration,
        caFile: z.string(),
        insecureSkipVerify: z.boolean(),
      })
      .partial()
      .strict(),
    vpn: z.object({ routeTarget: z.string(), rdAdministrator: z.string() }).partial().strict(),
    subnets: z
      .object({
        source: z.enum(SUBNET_SOURCES as [SubnetSource, ...SubnetSource[]]),
        clusterCidr: z.string(),
        nodePrefixLength: z.number().int(),
        odlPollInterval: duration,
      })
      .partial()
      .strict(),
    services: z
      .object({ cidrs: z.array(z.string()) })
      .partial()
      .strict(),
    gracePeriod: duration,
    resyncPeriod: duration,
    workers: z.number().int().min(1),
    queue: z
      .object({ retryRatePerSecond: z.number().positive(), retryBurst: z.number().int().min(1) })
      .partial()
      .strict(),
    shutdownTimeout: duration,
    metrics: z.object({ host: z.string(), port }).partial().strict(),
    leaderElection: z
      .object({
        enabled: z.boolean(),
        namespace: z.string(),
        name: z.string(),
        identity: z.string(),
        leaseDuration: duration,
        renewDeadline: duration,
        retryPeriod: duration,
      })
      .partial()
      .strict(),
  })
  .partial()
  .strict();

/** Everything the program needs, besides WatcherSettings. */
export interface WatcherConfig {
  settings: WatcherSettings;
  kubeconfig?: string;
  odl: {
    url: string;
    user?: string;
    passwordFile?: string;
    tokenFile?: string;
    timeoutMs?: number;
    caFile?: string;
    insecureSkipVerify?: boolean;
  };
  metrics: { host: string; port: number };
  leaderElection: {
    enabled: boolean;
    namespace: string;
    name: string;
    identity: string;
    leaseDurationMs: number;
    renewDeadlineMs: number;
    retryPeriodMs: number;
  };
}

/** One setting: its flag (commander's camelCase key), environment variable and file path. */
interface Field {
  key: keyof Flat;
  flag?: string;
  env?: string;
  file?: string[];
  parse: z.ZodType;
}

/** The merged, flat form. */
interface Flat {
  clusterName: string;
  backend: BackendName;
  kubeconfig: string;
  odlUrl: string;
  odlUser: string;
  odlPasswordFile: string;
  odlTokenFile: string;
  profile: Profile;
  dialect: Dialect;
  odlTimeout: number;
  odlCaFile: string;
  odlInsecureSkipVerify: boolean;
  routeTarget: string;
  rdAdministrator: string;
  subnetSource: SubnetSource;
  clusterCidr: string;
  nodePrefixLength: number;
  serviceCidrs: string[];
  subnetPollInterval: number;
  gracePeriod: number;
  resyncPeriod: number;
  workers: number;
  retryRatePerSecond: number;
  retryBurst: number;
  shutdownTimeout: number;
  metricsHost: string;
  metricsPort: number;
  leaderElect: boolean;
  leaseNamespace: string;
  leaseName: string;
  identity: string;
  leaseDuration: number;
  renewDeadline: number;
  retryPeriod: number;
}

const str = z.string().min(1, 'must not be empty');
/** A list: an array in the file, comma-separated in a flag or the environment. */
const list = z.union([
  z.array(z.string()),
  z.string().transform((v) =>
    v
      .split(',')
      .map((x) => x.trim())
      .filter((x) => x !== ''),
  ),
]);
const FIELDS: Field[] = [
  { key: 'clusterName', flag: 'clusterName', env: 'ODLCOE_CLUSTER_NAME', file: ['clusterName'], parse: str },
  { key: 'backend', flag: 'backend', env: 'ODLCOE_BACKEND', file: ['backend'], parse: backendName },
  { key: 'kubeconfig', flag: 'kubeconfig', env: 'KUBECONFIG', file: ['kubeconfig'], parse: str },
  { key: 'odlUrl', flag: 'odlUrl', env: 'ODLCOE_ODL_URL', file: ['odl', 'url'], parse: str },
  { key: 'odlUser', flag: 'odlUser', env: 'ODLCOE_ODL_USER', file: ['odl', 'user'], parse: str },
  {
    key: 'odlPasswordFile',
    flag: 'odlPasswordFile',
    env: 'ODLCOE_ODL_PASSWORD_FILE',
    file: ['odl', 'passwordFile'],
    parse: str,
  },
  {
    key: 'odlTokenFile',
    flag: 'odlTokenFile',
    env: 'ODLCOE_ODL_TOKEN_FILE',
    file: ['odl', 'tokenFile'],
    parse: str,
  },
  {
    key: 'profile',
    flag: 'profile',
    env: 'ODLCOE_PROFILE',
    file: ['odl', 'profile'],
    parse: z.enum(PROFILES as [Profile, ...Profile[]]),
  },
  {
    key: 'dialect',
    flag: 'dialect',
    env: 'ODLCOE_DIALECT',
    file: ['odl', 'dialect'],
    parse: z.enum(DIALECTS as [Dialect, ...Dialect[]]),
  },
  {
    key: 'odlTimeout',
    flag: 'odlTimeout',
    env: 'ODLCOE_ODL_TIMEOUT',
    file: ['odl', 'timeout'],
    parse: duration,
  },
  { key: 'odlCaFile', flag: 'odlCaFile', env: 'ODLCOE_ODL_CA_FILE', file: ['odl', 'caFile'], parse: str },
  {
    key: 'odlInsecureSkipVerify',
    flag: 'odlInsecureSkipVerify',
    env: 'ODLCOE_ODL_INSECURE_SKIP_VERIFY',
    file: ['odl', 'insecureSkipVerify'],
    parse: bool,
  },
  {
    key: 'routeTarget',
    flag: 'routeTarget',
    env: 'ODLCOE_ROUTE_TARGET',
    file: ['vpn', 'routeTarget'],
    parse: str,
  },
  {
    key: 'rdAdministrator',
    flag: 'rdAdministrator',
    env: 'ODLCOE_RD_ADMINISTRATOR',
    file: ['vpn', 'rdAdministrator'],
    parse: str,
  },
  {
    key: 'serviceCidrs',
    flag: 'serviceCidrs',
    env: 'ODLCOE_SERVICE_CIDRS',
    file: ['services', 'cidrs'],
    parse: list,
  },
  {
    key: 'subnetSource',
    flag: 'subnetSource',
    env: 'ODLCOE_SUBNET_SOURCE',
    file: ['subnets', 'source'],
    parse: z.enum(SUBNET_SOURCES as [SubnetSource, ...SubnetSource[]]),
  },
  {
    key: 'clusterCidr',
    flag: 'clusterCidr',
    env: 'ODLCOE_CLUSTER_CIDR',
    file: ['subnets', 'clusterCidr'],
    parse: str,
  },
  {
    key: 'nodePrefixLength',
    flag: 'nodePrefixLength',
    env: 'ODLCOE_NODE_PREFIX_LENGTH',
    file: ['subnets', 'nodePrefixLength'],
    parse: z.coerce.number().int().min(1).max(128),
  },
  {
    key: 'subnetPollInterval',
    env: 'ODLCOE_SUBNET_POLL_INTERVAL',
    file: ['subnets', 'odlPollInterval'],
    parse: duration,
  },
  {
    key: 'gracePeriod',
    flag: 'gracePeriod',
    env: 'ODLCOE_GRACE_PERIOD',
    file: ['gracePeriod'],
    parse: duration,
  },
  {
    key: 'resyncPeriod',
    flag: 'resyncPeriod',
    env: 'ODLCOE_RESYNC_PERIOD',
    file: ['resyncPeriod'],
    parse: duration,
  },
  { key: 'workers', flag: 'workers', env: 'ODLCOE_WORKERS', file: ['workers'], parse: positiveInt },
  {
    key: 'retryRatePerSecond',
    env: 'ODLCOE_QUEUE_RETRY_RATE',
    file: ['queue', 'retryRatePerSecond'],
    parse: positive,
  },
  { key: 'retryBurst', env: 'ODLCOE_QUEUE_RETRY_BURST', file: ['queue', 'retryBurst'], parse: positiveInt },
  {
    key: 'shutdownTimeout',
    flag: 'shutdownTimeout',
    env: 'ODLCOE_SHUTDOWN_TIMEOUT',
    file: ['shutdownTimeout'],
    parse: duration,
  },
  {
    key: 'metricsHost',
    flag: 'metricsHost',
    env: 'ODLCOE_METRICS_HOST',
    file: ['metrics', 'host'],
    parse: str,
  },
  {
    key: 'metricsPort',
    flag: 'metricsPort',
    env: 'ODLCOE_METRICS_PORT',
    file: ['metrics', 'port'],
    parse: port,
  },
  {
    key: 'leaderElect',
    flag: 'leaderElect',
    env: 'ODLCOE_LEADER_ELECT',
    file: ['leaderElection', 'enabled'],
    parse: bool,
  },
  {
    key: 'leaseNamespace',
    flag: 'leaseNamespace',
    env: 'ODLCOE_LEASE_NAMESPACE',
    file: ['leaderElection', 'namespace'],
    parse: str,
  },
  {
    key: 'leaseName',
    flag: 'leaseName',
    env: 'ODLCOE_LEASE_NAME',
    file: ['leaderElection', 'name'],
    parse: str,
  },
  {
    key: 'identity',
    flag: 'identity',
    env: 'ODLCOE_IDENTITY',
    file: ['leaderElection', 'identity'],
    parse: str,
  },
  {
    key: 'leaseDuration',
    env: 'ODLCOE_LEASE_DURATION',
    file: ['leaderElection', 'leaseDuration'],
    parse: duration,
  },
  {
    key: 'renewDeadline',
    env: 'ODLCOE_RENEW_DEADLINE',
    file: ['leaderElection', 'renewDeadline'],
    parse: duration,
  },
  {
    key: 'retryPeriod',
    env: 'ODLCOE_RETRY_PERIOD',
    file: ['leaderElection', 'retryPeriod'],
    parse: duration,
  },
];

/** commander option key → flag spelling, for messages. */
const flagName = (key: string) => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

function parseValue(field: Field, value: unknown, source: string): unknown {
  const result = field.parse.safeParse(value);
  if (result.success) return result.data;
  throw new ConfigError(`${source}: ${result.error.issues.map((i) => i.message).join('; ')}`);
}

function atPath(obj: unknown, path: string[]): unknown {
  let cur = obj;
  for (const p of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

export interface ConfigSources {
  /** Parsed flags (commander's camelCase keys); `config` names the file. */
  flags: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  /** Reads the file (default: readConfigFile); tests pass the content. */
  readFile?: (path: string) => unknown;
  defaultIdentity: () => string;
}

/** Merges and validates file, environment and flags into the watcher's configuration. */
export function loadWatcherConfig(sources: ConfigSources): WatcherConfig {
  const env = sources.env ?? process.env;
  const configPath = (sources.flags.config as string | undefined) ?? nonEmpty(env.ODLCOE_CONFIG);
  const fileValue = configPath
    ? parseConfig(
        configFileSchema,
        (sources.readFile ?? readConfigFile)(configPath),
        `config file ${configPath}`,
      )
    : {};
  const flat: Partial<Record<keyof Flat, unknown>> = {};
  for (const field of FIELDS) {
    const fromFile = field.file ? atPath(fileValue, field.file) : undefined;
    if (fromFile !== undefined) flat[field.key] = fromFile; // validated by the file schema
    const fromEnv = field.env ? nonEmpty(env[field.env]) : undefined;
    if (fromEnv !== undefined)
      flat[field.key] = parseValue(field, fromEnv, `environment variable ${field.env}`);
    const fromFlag = field.flag ? sources.flags[field.flag] : undefined;
    if (fromFlag !== undefined)
      flat[field.key] = parseValue(field, fromFlag, `flag ${flagName(field.flag ?? field.key)}`);
  }
  return resolve(flat as Partial<Flat>, sources.defaultIdentity);
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

/** Defaults and the checks that involve several settings. */
function resolve(f: Partial<Flat>, defaultIdentity: () => string): WatcherConfig {
  const problems: string[] = [];
  const need = <K extends keyof Flat>(key: K, how: string): Flat[K] | undefined => {
    if (f[key] === undefined) problems.push(`${how} is required`);
    return f[key];
  };
  const check = (what: string, fn: () => void) => {
    try {
      fn();
    } catch (err) {
      problems.push(`${what}: ${(err as Error).message}`);
    }
  };
  const clusterName = need('clusterName', '--cluster-name (ODLCOE_CLUSTER_NAME, clusterName)') ?? '';
  if (f.clusterName !== undefined) check('--cluster-name', () => checkClusterName(clusterName));
  const odlUrl = need('odlUrl', '--odl-url (ODLCOE_ODL_URL, odl.url)') ?? '';
  const profile = need('profile', '--profile sodium|aluminium (ODLCOE_PROFILE, odl.profile)') ?? 'sodium';
  const dialect = f.dialect ?? 'rfc8040';
  const routeTarget = f.routeTarget ?? DEFAULT_SETTINGS.routeTarget;
  check('--route-target', () => checkRouteTarget(routeTarget, 'route target'));
  const rdAdministrator = f.rdAdministrator ?? DEFAULT_SETTINGS.rdAdministrator;
  check('--rd-administrator', () => maxAssignedNumber(rdAdministrator));
  const subnetSource = f.subnetSource ?? DEFAULT_SETTINGS.subnetSource;
  if (subnetSource === 'allocate') {
    const cidr = need('clusterCidr', '--cluster-cidr (with --subnet-source allocate)');
    const len = need('nodePrefixLength', '--node-prefix-length (with --subnet-source allocate)');
    if (cidr !== undefined) {
      check('--cluster-cidr', () => {
        const parsed = parseCidr(cidr);
        const bits = parsed.family === 4 ? 32 : 128;
        if (len !== undefined && (len < parsed.prefixLength || len > bits - 2))
          throw new Error(
            `--node-prefix-length ${len} must be between ${parsed.prefixLength} and ${bits - 2}`,
          );
      });
    }
  } else {
    for (const key of ['clusterCidr', 'nodePrefixLength'] as const) {
      if (f[key] !== undefined)
        problems.push(
          `${flagName(key)} is only meaningful with --subnet-source allocate (it is ${subnetSource})`,
        );
    }
  }
  const serviceCidrs = f.serviceCidrs ?? [];
  for (const cidr of serviceCidrs) check('--service-cidrs', () => parseCidr(cidr));
  if (f.odlPasswordFile !== undefined && f.odlTokenFile !== undefined)
    problems.push('--odl-password-file and --odl-token-file exclude each other');
  if (f.metricsHost !== undefined && isIP(f.metricsHost) === 0 && f.metricsHost !== 'localhost')
    problems.push(`--metrics-host ${JSON.stringify(f.metricsHost)} is not an IP address`);
  const leaseDurationMs = f.leaseDuration ?? 15_000;
  const renewDeadlineMs = f.renewDeadline ?? 10_000;
  const retryPeriodMs = f.retryPeriod ?? 2_000;
  if (!(leaseDurationMs > renewDeadlineMs && renewDeadlineMs > retryPeriodMs && leaseDurationMs % 1000 === 0))
    problems.push('leader election needs whole-second lease duration > renew deadline > retry period');
  if (problems.length > 0)
    throw new ConfigError(`invalid watcher configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);

  const settings: WatcherSettings = {
    clusterName,
    backend: f.backend ?? DEFAULT_SETTINGS.backend,
    profile,
    dialect,
    routeTarget,
    rdAdministrator,
    subnetSource,
    ...(subnetSource === 'allocate'
      ? { clusterCidr: f.clusterCidr, nodePrefixLength: f.nodePrefixLength }
      : {}),
    serviceCidrs,
    gracePeriodMs: f.gracePeriod ?? DEFAULT_SETTINGS.gracePeriodMs,
    resyncPeriodMs: f.resyncPeriod ?? DEFAULT_SETTINGS.resyncPeriodMs,
    subnetPollMs: f.subnetPollInterval ?? DEFAULT_SETTINGS.subnetPollMs,
    slowRetryMs: DEFAULT_SETTINGS.slowRetryMs,
    waitRetryMs: DEFAULT_SETTINGS.waitRetryMs,
    workers: f.workers ?? DEFAULT_SETTINGS.workers,
    retryRatePerSecond: f.retryRatePerSecond ?? DEFAULT_SETTINGS.retryRatePerSecond,
    retryBurst: f.retryBurst ?? DEFAULT_SETTINGS.retryBurst,
    shutdownTimeoutMs: f.shutdownTimeout ?? DEFAULT_SETTINGS.shutdownTimeoutMs,
  };
  return {
    settings,
    ...(f.kubeconfig !== undefined ? { kubeconfig: f.kubeconfig } : {}),
    odl: {
      url: odlUrl,
      ...(f.odlUser !== undefined ? { user: f.odlUser } : {}),
      ...(f.odlPasswordFile !== undefined ? { passwordFile: f.odlPasswordFile } : {}),
      ...(f.odlTokenFile !== undefined ? { tokenFile: f.odlTokenFile } : {}),
      ...(f.odlTimeout !== undefined ? { timeoutMs: f.odlTimeout } : {}),
      ...(f.odlCaFile !== undefined ? { caFile: f.odlCaFile } : {}),
      ...(f.odlInsecureSkipVerify !== undefined ? { insecureSkipVerify: f.odlInsecureSkipVerify } : {}),
    },
    metrics: { host: f.metricsHost ?? '0.0.0.0', port: f.metricsPort ?? 9090 },
    leaderElection: {
      enabled: f.leaderElect ?? true,
      namespace: f.leaseNamespace ?? 'kube-system',
      name: f.leaseName ?? 'odlcoe-watcher',
      identity: f.identity ?? defaultIdentity(),
      leaseDurationMs,
      renewDeadlineMs,
      retryPeriodMs,
    },
  };
}
