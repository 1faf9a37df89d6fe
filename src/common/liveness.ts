/**
 * Whether a daemon can still do its job, for `/healthz`: the parts it depends on (a
 * connection, a background task) report themselves up or down, and the daemon is unhealthy
 * once one part has been down for longer than a limit, so that Kubernetes restarts it instead
 * of leaving a zombie. A part that never reported is neither: a daemon still starting, or
 * waiting for something outside it (readiness says so), is not restarted for that.
 */
import { errorMessage } from './log.js';

export interface PartState {
  part: string;
  up: boolean;
  /** Since when the part is down (ms since the epoch). */
  downSince?: number;
  downForMs?: number;
  error?: string;
}

export interface LivenessReport {
  healthy: boolean;
  /** Names the dead parts, when unhealthy. */
  reason?: string;
  parts: PartState[];
}

export class Liveness {
  private readonly parts = new Map<string, { downSince?: number; error?: string }>();

  constructor(
    /** How long a part may be down before the daemon is unhealthy. */
    private readonly limitMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  up(part: string): void {
    this.parts.set(part, {});
  }

  /** Marks the part down; the clock starts at its first failure after being up. */
  down(part: string, error: unknown): void {
    const downSince = this.parts.get(part)?.downSince ?? this.now();
    this.parts.set(part, { downSince, error: errorMessage(error) });
  }

  report(): LivenessReport {
    const now = this.now();
    const parts: PartState[] = [...this.parts].map(([part, s]) =>
      s.downSince === undefined
        ? { part, up: true }
        : {
            part,
            up: false,
            downSince: s.downSince,
            downForMs: now - s.downSince,
            ...(s.error !== undefined ? { error: s.error } : {}),
          },
    );
    const dead = parts.filter((p) => p.downForMs !== undefined && p.downForMs > this.limitMs);
    if (dead.length === 0) return { healthy: true, parts };
    return {
      healthy: false,
      reason: dead
        .map(
          (p) =>
            `${p.part} down for ${Math.round((p.downForMs ?? 0) / 1000)}s: ${p.error ?? 'unknown error'}`,
        )
        .join('; '),
      parts,
    };
  }
}
