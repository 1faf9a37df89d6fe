/**
 * An OVSDB JSON-RPC (RFC 7047) client over ovsdb-server's unix socket: one persistent
 * connection, opened on first use and again on the next request after it broke (an
 * ovsdb-server restart), carrying any number of requests at once, matched to their answers
 * by id (ovsdb-server answers a transaction blocked in a `wait` operation after later ones).
 *
 * This replaces an `ovs-vsctl` process per operation: each one costs a fork of the agent
 * (which blocks its event loop for milliseconds) plus ovs-vsctl's own start, connection and
 * download of the tables it touches, and ovs-vsctl then waits for ovs-vswitchd to apply the
 * whole configuration (`next_cfg`/`cur_cfg`). Callers wait only for what they need.
 *
 * The socket is unref'd: an idle connection never keeps the process alive, a pending request
 * does (its timer).
 */
import { createConnection, type Socket } from 'node:net';
import type { Logger } from '../../common/log.js';
import { errorMessage, silentLogger } from '../../common/log.js';
import { JsonStreamParser } from './json-stream.js';

export interface OvsdbClientOptions {
  /** ovsdb-server's unix socket. */
  socketPath: string;
  /** Deadline of one request unless the call gives its own. Default 10 s. */
  requestTimeoutMs?: number;
  logger?: Logger;
}

/** The connection failed, broke, or ovsdb-server did not answer in time. */
export class OvsdbConnectionError extends Error {
  override name = 'OvsdbConnectionError';
  constructor(
    message: string,
    /** True when the request may have reached ovsdb-server (its effect is unknown). */
    readonly maybeSent: boolean,
    options?: { cause?: unknown; timedOut?: boolean },
  ) {
    super(message, options);
    this.timedOut = options?.timedOut ?? false;
  }

  /** ovsdb-server did not answer within the deadline (rather than refused or broke the connection). */
  readonly timedOut: boolean;
}

/** ovsdb-server answered a request with a JSON-RPC error (unknown method or database, bad syntax). */
export class OvsdbRpcError extends Error {
  override name = 'OvsdbRpcError';
  constructor(
    readonly method: string,
    readonly error: unknown,
  ) {
    super(`OVSDB ${method} failed: ${describeError(error)}`);
  }
}

/**
 * An operation of a transaction failed (RFC 7047 5.2): nothing of the transaction was
 * committed. `index` is the operation's position in the list given to transact(), or
 * ops.length when the commit itself failed (e.g. a constraint violation).
 */
export class OvsdbTransactionError extends Error {
  override name = 'OvsdbTransactionError';
  constructor(
    readonly index: number,
    /** The OVSDB error tag: "timed out", "constraint violation", "referential integrity violation", ... */
    readonly error: string,
    readonly details: string | undefined,
  ) {
    super(`OVSDB transaction failed at operation ${index}: ${error}${details ? ` (${details})` : ''}`);
  }
}

/** An operation of a transaction, as RFC 7047 5.2 writes it. */
export type OvsdbOperation = { op: string } & Record<string, unknown>;

/** The result of one operation: `rows` of a select, `uuid` of an insert, `count` of update/mutate/delete. */
export interface OvsdbOperationResult {
  rows?: Record<string, unknown>[];
  uuid?: unknown;
  count?: number;
}

interface Pending {
  method: string;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

const DEFAULT_TIMEOUT_MS = 10_000;

class Connection {
  readonly pending = new Map<number, Pending>();
  closed = false;
  private readonly parser = new JsonStreamParser();

  constructor(
    readonly socket: Socket,
    private readonly logger: Logger,
    private readonly onClose: (conn: Connection) => void,
  ) {
    socket.on('data', (chunk: Buffer) => {
      let messages: unknown[];
      try {
        messages = this.parser.push(chunk);
      } catch (err) {
        this.destroy(`ovsdb-server sent malformed JSON: ${errorMessage(err)}`);
        return;
      }
      for (const m of messages) this.dispatch(m);
    });
    socket.on('error', (err) => this.fail(`connection to ovsdb-server failed: ${errorMessage(err)}`));
    socket.on('close', () => this.fail('connection to ovsdb-server closed'));
  }

  send(message: object): void {
    this.socket.write(JSON.stringify(message));
  }

  destroy(reason: string): void {
    this.fail(reason);
    this.socket.destroy();
  }

  private dispatch(message: unknown): void {
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      this.destroy(`ovsdb-server sent a message that is not a JSON object: ${JSON.stringify(message)}`);
      return;
    }
    const m = message as { id?: unknown; method?: unknown; result?: unknown; error?: unknown };
    if (typeof m.method === 'string') {
      // ovsdb-server's inactivity probe: answer it, or it drops the connection.
      if (m.method === 'echo' && m.id !== undefined && m.id !== null) {
        this.send({ id: m.id, result: (m as { params?: unknown }).params ?? [], error: null });
      }
      // Notifications (monitor updates, "locked") are not used by this client.
      return;
    }
    if (typeof m.id !== 'number') return;
    const p = this.pending.get(m.id);
    // Absent: the request timed out earlier and its answer came late.
    if (!p) return;
    this.pending.delete(m.id);
    clearTimeout(p.timer);
    if (m.error !== undefined && m.error !== null) p.reject(new OvsdbRpcError(p.method, m.error));
    else p.resolve(m.result);
  }

  private fail(reason: string): void {
    if (!this.closed) {
      this.closed = true;
      this.onClose(this);
    }
    if (this.pending.size > 0)
      this.logger.warn('OVSDB requests failed', { reason, pending: this.pending.size });
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      clearTimeout(p.timer);
      p.reject(new OvsdbConnectionError(`${p.method}: ${reason}`, true));
    }
  }
}

export class OvsdbClient {
  private readonly socketPath: string;
  private readonly timeoutMs: number;
  private readonly logger: Logger;
  private connection: Promise<Connection> | undefined;
  private nextId = 1;
  private closed = false;

  constructor(opts: OvsdbClientOptions) {
    if (!opts.socketPath.startsWith('/'))
      throw new Error(`OVSDB socket must be an absolute path, got ${JSON.stringify(opts.socketPath)}`);
    this.socketPath = opts.socketPath;
    this.timeoutMs = opts.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.logger = opts.logger ?? silentLogger();
  }

  /**
   * Sends one JSON-RPC request and resolves with its result. A request that only reads
   * (`idempotent`) is sent again, once, on a fresh connection when the connection broke
   * under it; anything else reports the break (its effect is unknown).
   */
  async request(
    method: string,
    params: unknown[],
    opts: { timeoutMs?: number; idempotent?: boolean } = {},
  ): Promise<unknown> {
    try {
      return await this.requestOnce(method, params, opts.timeoutMs ?? this.timeoutMs);
    } catch (err) {
      // Not after a timeout: against a wedged server that would only double the caller's wait.
      if (!opts.idempotent || !(err instanceof OvsdbConnectionError) || err.timedOut || this.closed)
        throw err;
      this.logger.debug('retrying an OVSDB read on a new connection', { method, error: err.message });
      return this.requestOnce(method, params, opts.timeoutMs ?? this.timeoutMs);
    }
  }

  /**
   * Runs `ops` as one transaction on `database`, atomically: either every operation applies
   * or none does, and then an OvsdbTransactionError names the first that failed.
   */
  async transact(
    database: string,
    ops: OvsdbOperation[],
    opts: { timeoutMs?: number; readOnly?: boolean } = {},
  ): Promise<OvsdbOperationResult[]> {
    const result = await this.request('transact', [database, ...ops], {
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
      idempotent: opts.readOnly ?? false,
    });
    if (!Array.isArray(result))
      throw new OvsdbRpcError('transact', `result is not an array: ${JSON.stringify(result)}`);
    for (let i = 0; i < result.length; i++) {
      const r = result[i] as { error?: unknown; details?: unknown } | null;
      if (r && typeof r === 'object' && typeof r.error === 'string') {
        throw new OvsdbTransactionError(i, r.error, typeof r.details === 'string' ? r.details : undefined);
      }
    }
    if (result.length < ops.length) {
      throw new OvsdbRpcError('transact', `${result.length} results for ${ops.length} operations`);
    }
    return result.slice(0, ops.length) as OvsdbOperationResult[];
  }

  /** Closes the connection; requests still pending fail. The client can not be used again. */
  close(): void {
    this.closed = true;
    const conn = this.connection;
    this.connection = undefined;
    void conn?.then(
      (c) => c.destroy('client closed'),
      () => undefined,
    );
  }

  private async requestOnce(method: string, params: unknown[], timeoutMs: number): Promise<unknown> {
    if (this.closed) throw new OvsdbConnectionError(`${method}: OVSDB client is closed`, false);
    let conn = await this.connect(timeoutMs);
    // It may have broken while this request waited for it: nothing was sent yet, so a new
    // connection is safe for any request.
    if (conn.closed) conn = await this.connect(timeoutMs);
    if (conn.closed) throw new OvsdbConnectionError(`${method}: connection to ovsdb-server closed`, false);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        conn.pending.delete(id);
        // A server that does not answer within the deadline is wedged or the connection is
        // half-dead: start afresh with the next request.
        conn.destroy(`ovsdb-server did not answer ${method} within ${timeoutMs / 1000} s`);
        reject(
          new OvsdbConnectionError(
            `ovsdb-server did not answer ${method} within ${timeoutMs / 1000} s`,
            true,
            {
              timedOut: true,
            },
          ),
        );
      }, timeoutMs);
      conn.pending.set(id, { method, resolve, reject, timer });
      conn.send({ id, method, params });
    });
  }

  private connect(timeoutMs: number): Promise<Connection> {
    if (!this.connection) {
      const attempt = this.open(timeoutMs);
      this.connection = attempt;
      // A failed attempt is not kept: the next request tries again.
      attempt.catch(() => {
        if (this.connection === attempt) this.connection = undefined;
      });
    }
    return this.connection;
  }

  private open(timeoutMs: number): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = createConnection({ path: this.socketPath });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new OvsdbConnectionError(`connecting to ${this.socketPath} timed out`, false));
      }, timeoutMs);
      socket.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(
          new OvsdbConnectionError(
            `cannot connect to ovsdb-server at ${this.socketPath}: ${err.code ?? err.message}`,
            false,
            {
              cause: err,
            },
          ),
        );
      });
      socket.once('connect', () => {
        clearTimeout(timer);
        if (this.closed) {
          socket.destroy();
          reject(new OvsdbConnectionError('OVSDB client is closed', false));
          return;
        }
        socket.removeAllListeners('error');
        socket.unref();
        // The pending attempt connect() stored: once this connection breaks, it must go.
        const current = this.connection;
        const conn = new Connection(socket, this.logger, () => {
          if (current !== undefined && this.connection === current) this.connection = undefined;
        });
        this.logger.debug('connected to ovsdb-server', { socket: this.socketPath });
        resolve(conn);
      });
    });
  }
}

function describeError(error: unknown): string {
  if (typeof error === 'string') return error;
  if (error && typeof error === 'object') {
    const e = error as { error?: unknown; details?: unknown };
    if (typeof e.error === 'string')
      return typeof e.details === 'string' ? `${e.error} (${e.details})` : e.error;
  }
  return JSON.stringify(error);
}
