/**
 * The watcher's resolved settings (after file, environment and flags were merged and
 * validated by config.ts). Durations are milliseconds.
 */
import type { Profile } from '../netvirt/profile.js';
import type { Dialect } from '../restconf/path.js';

/** Where node pod subnets come from (see docs/watcher.md). */
export type SubnetSource = 'odl' | 'podCIDR' | 'allocate';
export const SUBNET_SOURCES: readonly SubnetSource[] = ['odl', 'podCIDR', 'allocate'];

/**
 * What the watcher writes into ODL: `netvirt` (NetVirt/Genius objects directly) or
 * `coe-northbound` (ODL's own COE models, for releases whose NetVirt translates them).
 */
export type BackendName = 'netvirt' | 'coe-northbound';
export const BACKEND_NAMES: readonly BackendName[] = ['netvirt', 'coe-northbound'];

export interface WatcherSettings {
  /** DNS-1123 label; goes into every ownership marker. */
  clusterName: string;
  backend: BackendName;
  profile: Profile;
  dialect: Dialect;
  /** Route target every namespace VPN imports and exports. */
  routeTarget: string;
  /** RD administrator (AS number or IPv4) under which namespace VPN RDs are allocated. */
  rdAdministrator: string;
  subnetSource: SubnetSource;
  /** `allocate` only: the range node subnets are carved from. */
  clusterCidr?: string;
  /** `allocate` only: the prefix length of each node subnet. */
  nodePrefixLength?: number;
  /**
   * The Service ranges (kube-apiserver's `--service-cluster-ip-range`, one per family). Empty:
   * no node gateways and no Service routes; otherwise every node gets its gateway in ODL and
   * every Service IP a route through the gateways, and a ClusterIP outside them is refused.
   */
  serviceCidrs?: readonly string[];
  /**
   * An unneeded VPN/ELAN instance is deleted after this long. The clock is in memory: it
   * starts over after a restart or a leader change (a deletion only ever comes later).
   */
  gracePeriodMs: number;
  /** Full resync (re-read ODL, reconcile every key) interval; 0 disables it. */
  resyncPeriodMs: number;
  /** `odl` subnet source: how often a node without a pod-cidr in ODL is looked up again. */
  subnetPollMs: number;
  /** A key held by a foreign ODL object (or a used-up subnet pool) is looked at again after this. */
  slowRetryMs: number;
  /** A key waiting for a precondition (an instance, interfaces to go) is looked at again after this. */
  waitRetryMs: number;
  /** Concurrent reconciles. */
  workers: number;
  /**
   * The work queue's overall bound on retries (per-key backoff comes on top): tokens per
   * second and bucket size. client-go's 10/s with bursts of 100 would take minutes to retry
   * the thousands of keys that fail together during an ODL outage, and nothing converges
   * meanwhile; the defaults (50/s, bursts of 500) still keep a failing ODL from being hammered.
   */
  retryRatePerSecond: number;
  retryBurst: number;
  /** Drain bound on SIGTERM. */
  shutdownTimeoutMs: number;
}

/** Defaults for everything a deployment rarely changes. */
export const DEFAULT_SETTINGS = {
  backend: 'netvirt',
  routeTarget: '64512:1',
  rdAdministrator: '64512',
  subnetSource: 'odl',
  gracePeriodMs: 5 * 60_000,
  resyncPeriodMs: 10 * 60_000,
  subnetPollMs: 10_000,
  slowRetryMs: 60_000,
  waitRetryMs: 2_000,
  workers: 8,
  retryRatePerSecond: 50,
  retryBurst: 500,
  shutdownTimeoutMs: 20_000,
} as const satisfies Partial<WatcherSettings>;

/** `allocate` only: the range node subnets are carved from and their prefix length. */
export function subnetAllocation(
  settings: WatcherSettings,
): { clusterCidr: string; nodePrefixLength: number } | undefined {
  return settings.clusterCidr !== undefined && settings.nodePrefixLength !== undefined
    ? { clusterCidr: settings.clusterCidr, nodePrefixLength: settings.nodePrefixLength }
    : undefined;
}
