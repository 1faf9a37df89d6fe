import winston from 'winston';

/** A silent winston logger (level debug) whose events are kept, read from its `data` side. */
export function keptLogger(): { logger: winston.Logger; events: winston.LogEntry[] } {
  const events: winston.LogEntry[] = [];
  const logger = winston.createLogger({
    level: 'debug',
    transports: [new winston.transports.Console({ silent: true })],
  });
  logger.on('data', (entry: winston.LogEntry) => events.push(entry));
  return { logger, events };
}
