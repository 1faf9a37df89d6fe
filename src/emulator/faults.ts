import { RestconfError } from './errors.js';

/**
 * Injected misbehaviour of the emulated controller. Everything here applies to data requests
 * only (never to the `/odlcoe-emulator/...` control endpoints). The `refuse` outage (no
 * listener at all) needs the server, so the server implements it and asks `FaultState` only
 * about the rest.
 */
export interface FaultSettings {
  latencyMs?: number;
  latencyJitterMs?: number;
  errorRate?: number;
  errorStatus?: 500 | 503;
}

export type OutageMode = 'refuse' | '503';

export interface FaultStatus {
  settings: FaultSettings;
  /** Seconds left of a running outage or election, rounded up. */
  outage?: { mode: OutageMode; remainingSeconds: number };
  election?: { delayMs: number; remainingSeconds: number };
}

/** What to do with one data request. */
export type FaultDecision = { delayMs: number; error?: RestconfError };

/** Validates settings from the control endpoint, a CLI or a caller; throws with a clear message. */
export function checkFaultSettings(value: unknown): FaultSettings {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error('fault settings must be a JSON object');
  const input = value as Record<string, unknown>;
  const settings: FaultSettings = {};
  const nonNegative = (key: 'latencyMs' | 'latencyJitterMs'): void => {
    const v = input[key];
    if (v === undefined) return;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 600_000)
      throw new Error(`${key} must be a number of milliseconds in 0..600000`);
    settings[key] = v;
  };
  nonNegative('latencyMs');
  nonNegative('latencyJitterMs');
  if (input.errorRate !== undefined) {
    const v = input.errorRate;
    if (typeof v !== 'number' || !(v >= 0 && v <= 1)) throw new Error('errorRate must be a number in 0..1');
    settings.errorRate = v;
  }
  if (input.errorStatus !== undefined) {
    if (input.errorStatus !== 500 && input.errorStatus !== 503)
      throw new Error('errorStatus must be 500 or 503');
    settings.errorStatus = input.errorStatus;
  }
  return settings;
}

export function checkSeconds(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 86_400) {
    throw new Error(`${what} must be a number of seconds in (0, 86400]`);
  }
  return value;
}

/** ODL's answer while a shard has no leader (cluster election): 500 operation-failed. */
export function noShardLeaderError(): RestconfError {
  return new RestconfError('application', 'operation-failed', 'Transaction not committed correctly', {
    errorInfo:
      'org.opendaylight.controller.cluster.datastore.exceptions.NoShardLeaderException: Shard member-1-shard-default-config currently has no leader. Try again later.',
  });
}

export function unavailableError(): RestconfError {
  return new RestconfError(
    'application',
    'resource-denied-transport',
    'Service Unavailable: the datastore is not available',
    { status: 503 },
  );
}

export function injectedError(status: 500 | 503): RestconfError {
  return status === 503
    ? unavailableError()
    : new RestconfError('application', 'operation-failed', 'Transaction not committed correctly', {
        errorInfo:
          'org.opendaylight.mdsal.common.api.TransactionCommitFailedException: canCommit encountered an unexpected failure',
      });
}

export class FaultState {
  private settings: FaultSettings = {};
  private unavailableUntil = 0;
  private electionUntil = 0;
  private electionDelayMs = 0;
  private refusingUntil = 0;

  constructor(
    initial: FaultSettings = {},
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {
    this.settings = checkFaultSettings(initial);
  }

  set(settings: FaultSettings): void {
    this.settings = checkFaultSettings(settings);
  }

  /** Data requests get 503 for `seconds`. */
  unavailableFor(seconds: number): void {
    this.unavailableUntil = this.now() + checkSeconds(seconds, 'outage seconds') * 1000;
  }

  /** Records a `refuse` outage (the server stops listening) so status reports show it. */
  refusingFor(seconds: number): void {
    this.refusingUntil = this.now() + seconds * 1000;
  }

  endRefusing(): void {
    this.refusingUntil = 0;
  }

  election(seconds: number, delayMs = 0): void {
    if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0 || delayMs > 600_000) {
      throw new Error('election delayMs must be a number of milliseconds in 0..600000');
    }
    this.electionUntil = this.now() + checkSeconds(seconds, 'election seconds') * 1000;
    this.electionDelayMs = delayMs;
  }

  clear(): void {
    this.settings = {};
    this.unavailableUntil = 0;
    this.electionUntil = 0;
    this.electionDelayMs = 0;
    this.refusingUntil = 0;
  }

  /** Decides the fate of one data request. */
  decide(): FaultDecision {
    const now = this.now();
    const { latencyMs = 0, latencyJitterMs = 0, errorRate = 0, errorStatus = 500 } = this.settings;
    const latency = latencyMs + (latencyJitterMs > 0 ? this.random() * latencyJitterMs : 0);
    if (now < this.unavailableUntil) return { delayMs: latency, error: unavailableError() };
    if (now < this.electionUntil)
      return { delayMs: latency + this.electionDelayMs, error: noShardLeaderError() };
    if (errorRate > 0 && this.random() < errorRate)
      return { delayMs: latency, error: injectedError(errorStatus) };
    return { delayMs: latency };
  }

  status(): FaultStatus {
    const now = this.now();
    const status: FaultStatus = { settings: { ...this.settings } };
    const remaining = (until: number): number => Math.ceil((until - now) / 1000);
    if (now < this.refusingUntil)
      status.outage = { mode: 'refuse', remainingSeconds: remaining(this.refusingUntil) };
    else if (now < this.unavailableUntil)
      status.outage = { mode: '503', remainingSeconds: remaining(this.unavailableUntil) };
    if (now < this.electionUntil)
      status.election = { delayMs: this.electionDelayMs, remainingSeconds: remaining(this.electionUntil) };
    return status;
  }
}
