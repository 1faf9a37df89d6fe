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
  return winston.createLogger({
    level: silent ? 'error' : level,
    silent,
    defaultMeta: { component },
    format: winston.format.combine(
      winston.format.timestamp(),
      winston.format.errors({ stack: true }),
      winston.format.json(),
    ),
    transports: [new winston.transports.Console({ stderrLevels: [...LEVELS] })],
  });
}

/** A logger that drops everything, for library code used without one. */
export function silentLogger(): Logger {
  return winston.createLogger({ silent: true, transports: [new winston.transports.Console()] });
}

/** The message of anything thrown, for log fields. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
