/**
 * The one place where odlcoe starts processes (`ip`, `nsenter`, `ovs-vsctl`, host-local): the
 * agent, odlcoectl trace, the sandbox and the tests all spawn through it.
 *
 * Argument arrays only: nothing is ever interpreted by a shell, so a hostile pod name or
 * interface name cannot become a command. Every command has a deadline; a hung `ovs-vsctl`
 * (ovsdb-server wedged) or `ip` (RTNL contention) must not pin a CNI request forever.
 */
import { spawn } from 'node:child_process';

export const DEFAULT_COMMAND_TIMEOUT_MS = 30_000;

/** Output beyond this is dropped (and the command fails): no tool we call prints megabytes. */
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

/** After SIGTERM on timeout, how long a child gets before SIGKILL. */
const KILL_GRACE_MS = 2_000;

export interface RunOptions {
  /** Written to the child's stdin, which is then closed. Without it stdin is /dev/null. */
  input?: string;
  timeoutMs?: number;
  /** The child's whole environment (not merged). Default: this process's environment. */
  env?: NodeJS.ProcessEnv;
}

export interface RunResult {
  stdout: string;
  stderr: string;
}

export class CommandError extends Error {
  override name = 'CommandError';
  readonly cmd: string;
  readonly args: string[];
  /** Exit code; null when the child was killed by a signal or never started. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;

  constructor(init: {
    cmd: string;
    args: readonly string[];
    code: number | null;
    signal?: NodeJS.Signals | null;
    stdout?: string;
    stderr?: string;
    timedOut?: boolean;
    reason?: string;
    cause?: unknown;
  }) {
    const stderr = init.stderr ?? '';
    const what = init.reason ?? describeExit(init.code, init.signal ?? null, init.timedOut ?? false);
    const detail = stderr.trim() ? `: ${stderr.trim()}` : '';
    super(`${[init.cmd, ...init.args].join(' ')} ${what}${detail}`, { cause: init.cause });
    this.cmd = init.cmd;
    this.args = [...init.args];
    this.code = init.code;
    this.signal = init.signal ?? null;
    this.stdout = init.stdout ?? '';
    this.stderr = stderr;
    this.timedOut = init.timedOut ?? false;
  }
}

function describeExit(code: number | null, signal: NodeJS.Signals | null, timedOut: boolean): string {
  if (timedOut) return `timed out${signal ? ` (killed by ${signal})` : ''}`;
  if (signal) return `killed by ${signal}`;
  return `exited with code ${code}`;
}

/**
 * Runs `cmd args...` and resolves with its output when it exits 0.
 * Rejects with a CommandError (carrying code, signal, stdout and stderr) otherwise.
 * On timeout the child is killed by its pid: SIGTERM, then SIGKILL after a short grace.
 */
export function run(cmd: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    return Promise.reject(new RangeError(`timeoutMs must be a positive number, got ${timeoutMs}`));
  }
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      shell: false,
      env: opts.env ?? process.env,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let overflow = false;
    let timedOut = false;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;

    const kill = (signal: NodeJS.Signals): void => {
      // By pid: the child is the process we started, never something found by name.
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(child.pid, signal);
        } catch {
          // Already gone.
        }
      }
    };
    const collect = (chunks: Buffer[]) => (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > MAX_OUTPUT_BYTES) {
        if (!overflow) {
          overflow = true;
          kill('SIGKILL');
        }
        return;
      }
      chunks.push(chunk);
    };
    child.stdout?.on('data', collect(out));
    child.stderr?.on('data', collect(err));

    const timer = setTimeout(() => {
      timedOut = true;
      kill('SIGTERM');
      killTimer = setTimeout(() => kill('SIGKILL'), KILL_GRACE_MS);
    }, timeoutMs);

    const finish = (outcome: RunResult | CommandError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      if (outcome instanceof CommandError) reject(outcome);
      else resolve(outcome);
    };

    child.on('error', (e: NodeJS.ErrnoException) => {
      // Spawn failures (ENOENT, EACCES) arrive here without an 'close' for a started process.
      finish(
        new CommandError({
          cmd,
          args,
          code: null,
          stderr: Buffer.concat(err).toString('utf8'),
          reason: `could not be started (${e.code ?? e.message})`,
          cause: e,
        }),
      );
    });
    child.on('close', (code, signal) => {
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      if (code === 0 && !timedOut && !overflow) {
        finish({ stdout, stderr });
        return;
      }
      finish(
        new CommandError({
          cmd,
          args,
          code,
          signal,
          stdout,
          stderr,
          timedOut,
          ...(overflow ? { reason: `printed more than ${MAX_OUTPUT_BYTES} bytes` } : {}),
        }),
      );
    });

    if (opts.input !== undefined && child.stdin) {
      // A child that exits without reading stdin makes the write fail with EPIPE; its exit
      // status is what matters, so the stdin error is not the result.
      child.stdin.on('error', () => undefined);
      child.stdin.end(opts.input);
    }
  });
}
