/**
 * How every odlcoe daemon stops: on SIGTERM or SIGINT (or another reason the program has, such
 * as its parent being gone) it logs why, closes, and exits 0, or 1 when closing failed. A
 * second signal while closing is ignored, or exits at once where a drain may take long.
 */
import { errorMessage, type Logger } from './log.js';

export interface StopOptions {
  /** Logged when stopping begins (default "stopping"). */
  message?: string;
  /** A second signal exits at once with status 1 instead of being ignored. */
  secondSignalExits?: boolean;
}

/**
 * Stops on SIGTERM and SIGINT; returns the same stop for other reasons (their fields are logged).
 */
export function onStopSignals(
  logger: Logger,
  close: () => Promise<void>,
  options: StopOptions = {},
): (why: Record<string, unknown>) => void {
  let stopping = false;
  const stop = (why: Record<string, unknown>) => {
    if (stopping) {
      if (options.secondSignalExits && why.signal !== undefined) {
        logger.warn('second signal: exiting now', why);
        process.exit(1);
      }
      return;
    }
    stopping = true;
    logger.info(options.message ?? 'stopping', why);
    close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error('did not stop cleanly', { error: errorMessage(err) });
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stop({ signal }));
  return stop;
}
