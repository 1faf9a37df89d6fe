import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import type { Logger } from '../common/log.js';

/**
 * `--record`: one JSON line per accepted write, `{"method","url","status","body","request"}`, appended in
 * the order the writes were applied (tests and benchmarks replay or count them). The body is
 * the parsed JSON the client sent (null for DELETE).
 */
export interface RecordedWrite {
  method: string;
  url: string;
  status: number;
  body: unknown;
  /**
   * Which write request applied it, numbered from 1 in the order applied: the edits of one
   * YANG Patch share theirs.
   */
  request: number;
}

export class RecordFile {
  private readonly stream: WriteStream;
  private failure: Error | undefined;

  private constructor(stream: WriteStream, path: string, logger: Logger) {
    this.stream = stream;
    stream.on('error', (err) => {
      // Recording stops, serving goes on; one log line says why the file ends early.
      if (!this.failure)
        logger.error('record file write failed, recording stopped', { path, error: err.message });
      this.failure = err;
    });
  }

  /** Opens `path` for appending; fails (rather than losing records later) when it cannot. */
  static async open(path: string, logger: Logger): Promise<RecordFile> {
    const stream = createWriteStream(path, { flags: 'a', mode: 0o600 });
    await Promise.race([
      once(stream, 'open'),
      once(stream, 'error').then(([err]) => {
        throw new Error(`cannot open record file ${path}: ${(err as Error).message}`);
      }),
    ]);
    return new RecordFile(stream, path, logger);
  }

  append(write: RecordedWrite): void {
    if (this.failure) return;
    this.stream.write(`${JSON.stringify(write)}\n`);
  }

  async close(): Promise<void> {
    if (this.stream.closed) return;
    this.stream.end();
    await once(this.stream, 'close');
  }
}
