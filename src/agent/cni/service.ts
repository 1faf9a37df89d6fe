/**
 * Where a CNI request becomes work: read once (cni/request.ts), serialised per sandbox, bounded
 * by a deadline and dispatched to the engine (pod-attach.ts), and answered in the version the
 * runtime asked for, as a result or a spec error code. It holds no state of its own.
 */
import type { Logger } from '../../common/log.js';
import { errorMessage } from '../../common/log.js';
import type { KeyedLock } from '../keyed-lock.js';
import type { AgentMetrics } from '../metrics.js';
import type { PodAttacher } from '../pod-attach.js';
import { CNI_ERROR, CniError, toCniError } from './error.js';
import {
  CNI_ENV_KEYS,
  cniRequestOf,
  decodeConfig,
  parseCommand,
  type CniEnv,
  type CniRequest,
  type ConfigDocument,
} from './request.js';
import { formatResult } from './result.js';
import type { CniAnswer } from './server.js';
import { cniVersionInfo, isSupportedVersion, LATEST_CNI_VERSION, type CniCommand } from './version.js';

/** Why ADD cannot be served yet; undefined when it can. */
export type AddReadiness = () => string | undefined;

export interface CniServiceOptions {
  attacher: PodAttacher;
  lock: KeyedLock;
  metrics: AgentMetrics;
  logger: Logger;
  /** Each request's deadline, below kubelet's 2-minute CRI timeout and the shim's 110 s. */
  requestTimeoutMs: number;
  addReadiness: AddReadiness;
  /** STATUS: resolves when an ADD would succeed now, throws a CniError (50/51) otherwise. */
  status: () => Promise<void>;
}

/**
 * Validates a CNI request, serialises requests per sandbox, bounds each with a deadline,
 * dispatches it and answers in the version the runtime asked for. Every request is counted
 * in the latency histogram under its command and result (`ok` or the error code).
 */
export class CniService {
  constructor(private readonly options: CniServiceOptions) {}

  async handle(env: CniEnv, stdin: string): Promise<CniAnswer> {
    const started = process.hrtime.bigint();
    // The request is read once, here: the config text decoded, then the command; each later
    // step takes what it needs from these.
    const doc = decodeConfig(stdin);
    const requested = doc.version;
    const answerVersion = isSupportedVersion(requested) ? requested : (requested ?? LATEST_CNI_VERSION);
    let command = 'unknown';
    try {
      const parsed = parseCommand(env);
      command = parsed;
      const answer = await this.dispatch(parsed, env, doc);
      this.observe(command, 'ok', started);
      this.options.logger.info('CNI request done', { ...logFields(env), seconds: seconds(started) });
      return answer;
    } catch (err) {
      const error = toCniError(err);
      this.observe(command, String(error.code), started);
      const level = error.code === CNI_ERROR.internal ? 'error' : 'warn';
      this.options.logger.log(level, 'CNI request failed', {
        ...logFields(env),
        code: error.code,
        msg: error.message,
        details: error.details,
      });
      return { error: error.toJSON(answerVersion) };
    }
  }

  private async dispatch(command: CniCommand, env: CniEnv, doc: ConfigDocument): Promise<CniAnswer> {
    if (command === 'VERSION') return { result: cniVersionInfo() };
    const req = cniRequestOf(command, env, doc);
    const { attacher, lock } = this.options;
    switch (req.command) {
      case 'ADD': {
        const notReady = this.options.addReadiness();
        if (notReady) throw new CniError(CNI_ERROR.tryAgainLater, `odlcoe agent is not ready: ${notReady}`);
        const result = await this.bounded(req, (signal) => attacher.add(req, signal));
        return { result: formatResult(result, req.config.cniVersion) };
      }
      case 'DEL':
        await this.bounded(req, () => attacher.del(req));
        return {};
      case 'CHECK':
        await this.bounded(req, () => attacher.check(req));
        return {};
      case 'STATUS':
        await this.options.status();
        return {};
      case 'GC':
        await this.bounded(req, () => attacher.gc(req, (id) => lock.isHeld(id)), false);
        return {};
    }
  }

  /**
   * Runs `fn` under the sandbox lock with the request deadline. When the deadline passes the
   * runtime gets "try again later" at once, while `fn` sees its signal aborted and stops at
   * its next step (an ADD then rolls back); the lock is held until it has, so the runtime's
   * follow-up DEL never interleaves with it.
   */
  private async bounded<T>(
    req: CniRequest,
    fn: (signal: AbortSignal) => Promise<T>,
    locked = true,
  ): Promise<T> {
    const controller = new AbortController();
    const ms = this.options.requestTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new CniError(
          CNI_ERROR.tryAgainLater,
          `${req.command} did not finish within ${ms / 1000} s`,
        );
        controller.abort(error);
        reject(error);
      }, ms);
    });
    const queued = process.hrtime.bigint();
    const work = locked
      ? this.options.lock.run(req.containerId, () => {
          // Time spent behind another request for the same sandbox (a runtime retrying, or
          // its DEL racing an ADD that is still rolling back).
          this.options.metrics.cniStepDuration.observe(
            { command: req.command, step: 'lock_wait' },
            seconds(queued),
          );
          return fn(controller.signal);
        })
      : fn(controller.signal);
    work.catch((err: unknown) => {
      if (controller.signal.aborted) {
        this.options.logger.warn('request finished after its deadline', {
          command: req.command,
          containerId: req.containerId,
          error: errorMessage(err),
        });
      }
    });
    try {
      return await Promise.race([work, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  private observe(command: string, result: string, started: bigint): void {
    this.options.metrics.cniDuration.observe({ command, result }, seconds(started));
  }
}

function seconds(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** The request's identity for logs (CNI_ARGS holds the pod; nothing secret is in CNI_*). */
function logFields(env: CniEnv): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const key of CNI_ENV_KEYS) if (key !== 'CNI_PATH') out[key] = env[key];
  return out;
}
