/**
 * The watcher's settings: one declaration (WATCHER_SETTINGS) from which its flags, environment
 * variables, configuration-file keys, defaults, validation and docs table derive (see
 * src/common/settings-scheme.ts), and the resolved form the watcher runs on (WatcherSettings).
 * Durations resolve to milliseconds. odlcoectl shares this declaration (src/cli/settings.ts).
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import {
  boolean,
  duration,
  list,
  number,
  oneOf,
  quoted,
  setting,
  SettingsScheme,
  text,
  type Setting,
  type ValuesOf,
} from '../common/settings-scheme.js';
import { profileSetting, type Profile } from '../netvirt/profile.js';
import { odlConnectionSettings } from '../restconf/settings.js';

/**
 * The component the watcher's Kubernetes Events carry (`source.component`,
 * `reportingComponent`); odlcoectl finds the watcher's Events by it.
 */
export const WATCHER_EVENT_COMPONENT = 'odlcoe-watcher';

/** Where node pod subnets come from (see docs/watcher.md). */
export type SubnetSource = 'odl' | 'podCIDR' | 'allocate';
export const SUBNET_SOURCES: readonly SubnetSource[] = ['odl', 'podCIDR', 'allocate'];

/**
 * What the watcher writes into ODL: `netvirt` (NetVirt/Genius objects directly) or
 * `coe-northbound` (ODL's own COE models, for releases whose NetVirt translates them).
 */
export type BackendName = 'netvirt' | 'coe-northbound';
export const BACKEND_NAMES: readonly BackendName[] = ['netvirt', 'coe-northbound'];

const positiveInt = number(z.number().int().min(1));

/** How NetworkPolicy is enforced: `auto` follows what ODL serves. */
export const POLICY_ENFORCEMENT = ['auto', 'on', 'off'] as const;
export type PolicyEnforcement = (typeof POLICY_ENFORCEMENT)[number];

export const WATCHER_SETTINGS = {
  clusterName: setting(text(), {
    flag: '--cluster-name <name>',
    env: 'ODLCOE_CLUSTER_NAME',
    required: true,
    doc: 'DNS-1123 label (`a-z0-9-`, ≤ 63); goes into every ownership marker and the cluster UUID',
  }),
  backend: setting(oneOf(BACKEND_NAMES), {
    flag: '--backend <name>',
    env: 'ODLCOE_BACKEND',
    default: 'netvirt',
    doc: "`netvirt` (NetVirt/Genius objects) or `coe-northbound` (ODL's COE models, for Sodium's COE renderer); see [watcher.md](watcher.md#backend-selection)",
  }),
  kubeconfig: setting(text(), {
    flag: '--kubeconfig <file>',
    env: 'KUBECONFIG',
    defaultText: 'in-cluster service account',
    doc: 'one kubeconfig file (a `:`-separated list is not supported); absent: in-cluster only',
  }),
  odl: {
    ...odlConnectionSettings(),
    profile: profileSetting(),
  },
  vpn: {
    routeTarget: setting(text(), {
      flag: '--route-target <rt>',
      env: 'ODLCOE_ROUTE_TARGET',
      default: '64512:1',
      doc: 'RT every namespace VPN imports and exports (`ASN:nn` or `IPv4:nn`)',
    }),
    rdAdministrator: setting(text(), {
      flag: '--rd-administrator <asn|ip>',
      env: 'ODLCOE_RD_ADMINISTRATOR',
      default: '64512',
      doc: 'AS number (0..4294967295) or IPv4 address; namespace RDs are `<admin>:<n>`. Give each cluster sharing a controller its own',
    }),
  },
  subnets: {
    source: setting(oneOf(SUBNET_SOURCES), {
      flag: '--subnet-source <source>',
      env: 'ODLCOE_SUBNET_SOURCE',
      default: 'odl',
      doc: 'where node pod subnets come from: `odl`, `podCIDR` or `allocate` ([architecture.md](architecture.md#node-subnets))',
    }),
    clusterCidr: setting(text(), {
      flag: '--cluster-cidr <cidr>',
      env: 'ODLCOE_CLUSTER_CIDR',
      doc: 'the range node subnets are carved from: required with `allocate`, an error with any other source; a network address (`10.11.0.0/16`, not `.5/16`)',
    }),
    nodePrefixLength: setting(number(z.number().int().min(1).max(128)), {
      flag: '--node-prefix-length <n>',
      env: 'ODLCOE_NODE_PREFIX_LENGTH',
      doc: 'prefix length of each node subnet: required with `allocate`, an error otherwise; between the cluster CIDR’s prefix and 30 (IPv4) / 126 (IPv6)',
    }),
    odlPollInterval: setting(duration(), {
      env: 'ODLCOE_SUBNET_POLL_INTERVAL',
      default: '10s',
      doc: '`odl` source: how often a node without a subnet in ODL (its network, or its k8s-node `pod-cidr`) is looked up again',
    }),
  },
  services: {
    cidrs: setting(list(z.string()), {
      flag: '--service-cidrs <cidrs>',
      env: 'ODLCOE_SERVICE_CIDRS',
      default: [],
      doc: "the Service ranges (kube-apiserver's `--service-cluster-ip-range`, one per family). Empty: no node gateways and no Service routes in ODL; otherwise every node gets its gateway and every Service IP a route through the gateways, and a ClusterIP outside them is refused",
    }),
  },
  networkPolicy: {
    enforcement: setting(oneOf(POLICY_ENFORCEMENT), {
      flag: '--network-policy <mode>',
      env: 'ODLCOE_NETWORK_POLICY',
      default: 'auto',
      doc: "NetworkPolicy enforcement through NetVirt's ACLs (see [network-policy.md](network-policy.md)): `on` gives every pod port security and writes the ACLs its policies need (start-up fails when ODL lacks the ACL modules); `off` writes neither and leaves what exists; `auto` is `on` when ODL serves `aclservice` and `ietf-access-control-list`, since a cluster whose ODL can enforce policy should not silently ignore it",
    }),
  },
  gracePeriod: setting(duration(), {
    flag: '--grace-period <duration>',
    env: 'ODLCOE_GRACE_PERIOD',
    default: '5m',
    doc: 'an unneeded VPN/ELAN instance is deleted after this long (the clock starts over on a restart or a leader change)',
  }),
  resyncPeriod: setting(duration(), {
    flag: '--resync-period <duration>',
    env: 'ODLCOE_RESYNC_PERIOD',
    default: '10m',
    doc: 're-read ODL and reconcile every key this often; `0` disables it',
  }),
  progressInterval: setting(duration(), {
    flag: '--progress-interval <duration>',
    env: 'ODLCOE_PROGRESS_INTERVAL',
    default: '10s',
    doc: 'log convergence progress (keys settled and pending, rate, ETA) this often while a start-up or resync converges; `0`: only when it converged',
  }),
  workers: setting(positiveInt, {
    flag: '--workers <n>',
    env: 'ODLCOE_WORKERS',
    default: 8,
    doc: 'concurrent reconciles, integer ≥ 1',
  }),
  queue: {
    retryRatePerSecond: setting(number(z.number().positive()), {
      env: 'ODLCOE_QUEUE_RETRY_RATE',
      default: 50,
      doc: 'overall bound on retries of failed keys, per second (per-key backoff comes on top); a positive number. See [watcher.md](watcher.md#settings)',
    }),
    retryBurst: setting(positiveInt, {
      env: 'ODLCOE_QUEUE_RETRY_BURST',
      default: 500,
      doc: 'retries allowed at once before that rate applies, integer ≥ 1',
    }),
  },
  shutdownTimeout: setting(duration(), {
    flag: '--shutdown-timeout <duration>',
    env: 'ODLCOE_SHUTDOWN_TIMEOUT',
    default: '20s',
    doc: "drain bound on SIGTERM; keep it below the pod's `terminationGracePeriodSeconds` (30)",
  }),
  metrics: {
    host: setting(
      text(
        z.string().refine((h) => isIP(h) !== 0 || h === 'localhost', {
          error: (iss) => `${quoted(iss.input)} is not an IP address`,
        }),
      ),
      {
        flag: '--metrics-host <ip>',
        env: 'ODLCOE_METRICS_HOST',
        default: '0.0.0.0',
        doc: 'ops server address: an IP address or `localhost`',
      },
    ),
    port: setting(number(z.coerce.number().int().min(0).max(65535)), {
      flag: '--metrics-port <port>',
      env: 'ODLCOE_METRICS_PORT',
      default: 9090,
      doc: 'ops server port (`/metrics`, `/healthz`, `/readyz`; the shipped config uses 9101); 0..65535',
    }),
  },
  leaderElection: {
    enabled: setting(boolean(), {
      flag: '--leader-elect',
      negatedHelp: 'always lead (run exactly one replica)',
      env: 'ODLCOE_LEADER_ELECT',
      default: true,
      doc: 'Lease leader election; `false`: this replica always leads (run exactly one)',
    }),
    namespace: setting(text(), {
      flag: '--lease-namespace <ns>',
      env: 'ODLCOE_LEASE_NAMESPACE',
      default: 'kube-system',
      doc: 'namespace of the Lease',
    }),
    name: setting(text(), {
      flag: '--lease-name <name>',
      env: 'ODLCOE_LEASE_NAME',
      default: 'odlcoe-watcher',
      doc: 'name of the Lease',
    }),
    identity: setting(text(), {
      flag: '--identity <id>',
      env: 'ODLCOE_IDENTITY',
      defaultText: '`<hostname>_<pid>`',
      doc: "this replica's identity in the Lease",
    }),
    leaseDuration: setting(duration(), {
      env: 'ODLCOE_LEASE_DURATION',
      default: '15s',
      doc: 'whole seconds, > renew deadline',
    }),
    renewDeadline: setting(duration(), {
      env: 'ODLCOE_RENEW_DEADLINE',
      default: '10s',
      doc: '> retry period',
    }),
    retryPeriod: setting(duration(), {
      env: 'ODLCOE_RETRY_PERIOD',
      default: '2s',
      doc: 'how often a standby tries to take the Lease',
    }),
  },
};

export const WATCHER_SCHEME = new SettingsScheme(WATCHER_SETTINGS, {
  title: 'watcher configuration',
  configFile: {
    flag: '--config <file>',
    env: 'ODLCOE_CONFIG',
    doc: 'YAML/JSON file with the keys below; unknown keys are errors',
  },
});

export type WatcherValues = ValuesOf<typeof WATCHER_SETTINGS>;

/** Not settings: how soon keys that wait are looked at again. */
const RETRY_AFTER = {
  /** A key held by a foreign ODL object (or a used-up subnet pool). */
  slowRetryMs: 60_000,
  /** A key waiting for a precondition (an instance, interfaces to go). */
  waitRetryMs: 2_000,
};

/** What the watcher runs on, in its own words (durations in milliseconds). */
export function watcherSettingsOf(v: WatcherValues) {
  return {
    clusterName: v.clusterName,
    backend: v.backend,
    profile: v.odl.profile,
    dialect: v.odl.dialect,
    routeTarget: v.vpn.routeTarget,
    rdAdministrator: v.vpn.rdAdministrator,
    subnetSource: v.subnets.source,
    /** `allocate` only: the range node subnets are carved from, and the prefix length of each. */
    ...(v.subnets.source === 'allocate'
      ? { clusterCidr: v.subnets.clusterCidr, nodePrefixLength: v.subnets.nodePrefixLength }
      : {}),
    /** Empty: no node gateways and no Service routes. */
    serviceCidrs: v.services.cidrs as readonly string[],
    networkPolicyEnforcement: v.networkPolicy.enforcement,
    gracePeriodMs: v.gracePeriod,
    resyncPeriodMs: v.resyncPeriod,
    progressIntervalMs: v.progressInterval,
    subnetPollMs: v.subnets.odlPollInterval,
    ...RETRY_AFTER,
    workers: v.workers,
    retryRatePerSecond: v.queue.retryRatePerSecond,
    retryBurst: v.queue.retryBurst,
    shutdownTimeoutMs: v.shutdownTimeout,
  };
}

/** The settings as told: the profile may be left to detection (ODL's module list, read at start-up). */
export type WatcherSettingsInput = ReturnType<typeof watcherSettingsOf>;

/** What the watcher runs on: the profile is the one ODL serves (told and confirmed, or detected). */
export type WatcherSettings = Omit<WatcherSettingsInput, 'profile'> & { profile: Profile };

/** The settings of a watcher configured with nothing but what is required (tests, benchmarks). */
export const DEFAULT_SETTINGS: Omit<WatcherSettings, 'clusterName' | 'profile'> = (() => {
  const {
    clusterName: _,
    profile: __,
    ...defaults
  } = watcherSettingsOf(
    WATCHER_SCHEME.load({
      env: {},
      given: new Map<Setting, unknown>([
        [WATCHER_SETTINGS.clusterName, 'defaults'],
        [WATCHER_SETTINGS.odl.url, 'http://odl'],
      ]),
    }),
  );
  return defaults;
})();

/** `allocate` only: the range node subnets are carved from and their prefix length. */
export function subnetAllocation(
  settings: WatcherSettings,
): { clusterCidr: string; nodePrefixLength: number } | undefined {
  return settings.clusterCidr !== undefined && settings.nodePrefixLength !== undefined
    ? { clusterCidr: settings.clusterCidr, nodePrefixLength: settings.nodePrefixLength }
    : undefined;
}
