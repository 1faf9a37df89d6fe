import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import winston from 'winston';
import { createLogger, silentLogger, type Logger } from './log.js';

/** The JSON lines `logger` writes from now on (beside its own transports). */
function capture(logger: Logger): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  logger.clear();
  logger.add(new winston.transports.Stream({ stream: sink }));
  return lines;
}

/** Metadata that fails the moment anything reads it. */
const untouchable = {
  get field(): string {
    throw new Error('metadata of a dropped line was read');
  },
};

describe('logger levels', () => {
  it('a line below the level is dropped before anything of it is built', () => {
    const logger = createLogger('test', 'info');
    const lines = capture(logger);
    logger.debug('not wanted', untouchable);
    logger.silly('not wanted either', untouchable);
    logger.info('wanted', { field: 'x' });
    assert.deepEqual(
      lines.map((l) => [l.level, l.message, l.field, l.component]),
      [['info', 'wanted', 'x', 'test']],
    );
  });

  it('a silent logger drops every level without building a line', () => {
    for (const logger of [createLogger('test', 'silent'), silentLogger()]) {
      const lines = capture(logger);
      logger.error('dropped', untouchable);
      logger.info('dropped', untouchable);
      assert.deepEqual(lines, []);
    }
  });

  it('follows a level changed later, and a child keeps its metadata under the parent level', () => {
    const logger = createLogger('test', 'warn');
    const lines = capture(logger);
    const child = logger.child({ informer: 'pods' });
    child.info('dropped', untouchable);
    logger.level = 'debug';
    child.debug('kept');
    const { debug } = logger;
    debug('called detached');
    assert.deepEqual(
      lines.map((l) => [l.message, l.informer]),
      [
        ['kept', 'pods'],
        ['called detached', undefined],
      ],
    );
  });
});
