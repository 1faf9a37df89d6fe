import winston from 'winston';

export type Logger = winston.Logger;

const LEVELS = ['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'] as const;

/**
 * One JSON line per event on stderr (stdout belongs to CLI output and CNI results).
 * `ODLCOE_LOG_LEVEL` sets the level; `silent` mutes everything (the test runner sets it).
 */
export function createLogger(component: string, level = process.env.ODLCOE_LOG_LEVEL ?? 'info'): Logger {
  const silent = level === 'silent';
  if (!silent && !(LEVELS as readonly string[]).includes(level)) {
    throw new Error(`log level "${level}" is not one of silent, ${LEVELS.join(', ')}`);
  }
  return gateLevels(
    winston.createLogger({
      level: silent ? 'error' : level,
      silent,
      defaultMeta: { component },
      format: winston.format.combine(
        winston.format.timestamp(),
        winston.format.errors({ stack: true }),
        winston.format.json(),
      ),
      transports: [new winston.transports.Console({ stderrLevels: [...LEVELS] })],
    }),
  );
}

/** A logger that drops everything, for library code used without one. */
export function silentLogger(): Logger {
  return gateLevels(winston.createLogger({ silent: true, transports: [new winston.transports.Console()] }));
}

/**
 * Makes a call at a level the logger would drop (below its level, or any level when silent)
 * return at once. winston builds the entry and pushes it through its stream before filtering
 * it: a debug line in a hot path cost as much as a written one, and the watcher's per-entry
 * lines were a few percent of its CPU converging a cluster even with logging off. The level
 * and `silent` are looked up at each call (children inherit both, and they may be changed).
 */
function gateLevels(logger: Logger): Logger {
  for (const level of LEVELS) {
    const write = logger[level] as (...args: unknown[]) => Logger;
    Object.defineProperty(logger, level, {
      value: function (this: Logger | undefined, ...args: unknown[]): Logger {
        const self = this ?? logger;
        return self.silent || !self.isLevelEnabled(level) ? self : write.apply(self, args);
      },
      writable: true,
      configurable: true,
    });
  }
  return logger;
}

/** The message of anything thrown, for log fields. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
