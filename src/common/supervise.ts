/**
 * Background tasks that do not die: a task that fails is started again after a backoff until
 * the daemon stops, and while it keeps failing its part is down (see liveness.ts), so that a
 * daemon whose task cannot recover eventually fails `/healthz` and is restarted. The task
 * says when it is doing its job (`up()`), which also resets the backoff.
 */
import { Backoff, sleep, type BackoffOptions } from './backoff.js';
import type { Liveness } from './liveness.js';
import { errorMessage, type Logger } from './log.js';

export interface SuperviseOptions {
  signal: AbortSignal;
  logger: Logger;
  liveness?: Liveness;
  /** Between restarts (default 0.5 s doubling to 30 s). */
  backoff?: BackoffOptions;
}

/** Runs `task` until it returns or `signal` aborts; resolves then (never rejects). */
export async function supervise(
  name: string,
  task: (signal: AbortSignal, up: () => void) => Promise<void>,
  options: SuperviseOptions,
): Promise<void> {
  const { signal, logger, liveness } = options;
  const backoff = new Backoff(options.backoff ?? { initialMs: 500, maxMs: 30_000 });
  const up = () => {
    backoff.reset();
    liveness?.up(name);
  };
  while (!signal.aborted) {
    try {
      await task(signal, up);
      return;
    } catch (err) {
      if (signal.aborted) return;
      liveness?.down(name, err);
      const delay = backoff.next();
      logger.error('background task failed; starting it again', {
        task: name,
        error: errorMessage(err),
        restartInMs: delay,
        attempt: backoff.attempts,
      });
      await sleep(delay, signal).catch(() => undefined);
    }
  }
}
