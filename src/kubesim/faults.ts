/**
 * Fault injection: the failure modes a real API server (or the network in front of it) shows
 * and that odlcoe's informers must survive. The timed faults live here; `close-watches` and
 * `compact` act on the watch hub and the store at once and keep no state.
 */
import { z } from 'zod';
import { badRequest } from './status.js';

export type KubeSimFault =
  | { action: 'close-watches' }
  | { action: 'compact' }
  | { action: 'errors'; status: 500 | 429; seconds: number }
  | { action: 'latency'; ms: number }
  | { action: 'silent-watches'; seconds: number }
  | { action: 'clear' };

const seconds = z.number().positive().max(86_400);

const faultSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('close-watches') }).strict(),
  z.object({ action: z.literal('compact') }).strict(),
  z
    .object({ action: z.literal('errors'), status: z.union([z.literal(500), z.literal(429)]), seconds })
    .strict(),
  z.object({ action: z.literal('latency'), ms: z.number().int().min(0).max(600_000) }).strict(),
  z.object({ action: z.literal('silent-watches'), seconds }).strict(),
  z.object({ action: z.literal('clear') }).strict(),
]);

/** Validates a fault from an untrusted source (HTTP body or caller); 400 with the precise reason. */
export function parseFault(value: unknown): KubeSimFault {
  const result = faultSchema.safeParse(value);
  if (!result.success) {
    const issues = result.error.issues
      .map((i) => `${i.path.length > 0 ? i.path.join('.') : 'fault'}: ${i.message}`)
      .join('; ');
    throw badRequest(`invalid fault: ${issues}`);
  }
  return result.data;
}

/** The timed faults in force, each with the clock time at which it ends. */
export class FaultState {
  private errorStatus: 500 | 429 = 500;
  private errorsUntil = 0;
  private silentUntil = 0;
  latencyMs = 0;

  constructor(private readonly now: () => number = Date.now) {}

  apply(fault: KubeSimFault): void {
    switch (fault.action) {
      case 'errors':
        this.errorStatus = fault.status;
        this.errorsUntil = this.now() + fault.seconds * 1000;
        break;
      case 'latency':
        this.latencyMs = fault.ms;
        break;
      case 'silent-watches':
        this.silentUntil = this.now() + fault.seconds * 1000;
        break;
      case 'clear':
        this.errorsUntil = 0;
        this.silentUntil = 0;
        this.latencyMs = 0;
        break;
      case 'close-watches':
      case 'compact':
        break;
    }
  }

  /** The forced error status and the seconds it has left, while an `errors` fault lasts. */
  forcedError(): { status: 500 | 429; remainingSeconds: number } | undefined {
    const left = this.errorsUntil - this.now();
    if (left <= 0) return undefined;
    return { status: this.errorStatus, remainingSeconds: Math.max(1, Math.ceil(left / 1000)) };
  }

  /** Whether a watch opened now goes silent. */
  silentWatches(): boolean {
    return this.now() < this.silentUntil;
  }

  describe(): {
    errors?: { status: number; remainingSeconds: number };
    latencyMs: number;
    silentWatches: boolean;
  } {
    const errors = this.forcedError();
    return { ...(errors ? { errors } : {}), latencyMs: this.latencyMs, silentWatches: this.silentWatches() };
  }
}
