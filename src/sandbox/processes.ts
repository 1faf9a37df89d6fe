/**
 * Long-running child processes of the sandbox (agents, relays) and the detached OVS daemons it
 * starts. Every process is stopped by its pid, never found by name: SIGTERM, a grace period,
 * then SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { sleep } from '../common/backoff.js';

export interface DaemonOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** stdout and stderr are appended here. */
  logFile: string;
  /**
   * Resolve `startDaemon` only once the child printed this line on stdout (then stdout goes
   * to the log file too); otherwise once it has been spawned.
   */
  readyLine?: string;
  /** Deadline for `readyLine`. */
  readyTimeoutMs?: number;
}

export interface Daemon {
  readonly pid: number;
  /** Settles when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  isRunning(): boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it is gone. Safe to call twice. */
  stop(graceMs?: number): Promise<void>;
}

const DEFAULT_GRACE_MS = 10_000;

export async function startDaemon(
  command: string,
  args: readonly string[],
  options: DaemonOptions,
): Promise<Daemon> {
  const log = openSync(options.logFile, 'a', 0o600);
  let child: ChildProcess;
  try {
    child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      // stdin stays a pipe: a child that watches it (the relay) exits when the sandbox dies.
      stdio: ['pipe', options.readyLine === undefined ? log : 'pipe', log],
      shell: false,
    });
  } finally {
    closeSync(log);
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  // A child that exits never reads its stdin again; writes then fail with EPIPE, harmlessly.
  child.stdin?.on('error', () => undefined);
  let running = true;
  void exited.then(() => (running = false));
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('spawn', () => resolve());
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${command} did not start`);

  const stop = async (graceMs = DEFAULT_GRACE_MS): Promise<void> => {
    if (!running) return;
    child.kill('SIGTERM');
    const grace = new AbortController();
    const gone = await Promise.race([
      exited.then(() => true),
      sleep(graceMs, grace.signal).then(
        () => false,
        () => false,
      ),
    ]);
    grace.abort();
    if (!gone && running) {
      child.kill('SIGKILL');
      await exited;
    }
    child.stdin?.destroy();
  };

  if (options.readyLine !== undefined) {
    const stdout = child.stdout;
    if (!stdout) throw new Error(`${command}: no stdout`);
    const ready = options.readyLine;
    try {
      await new Promise<void>((resolve, reject) => {
        let seen = '';
        const timer = setTimeout(
          () =>
            reject(
              new Error(`${command} did not print "${ready}" within ${options.readyTimeoutMs ?? 30_000} ms`),
            ),
          options.readyTimeoutMs ?? 30_000,
        );
        const onData = (chunk: Buffer) => {
          seen += chunk.toString('utf8');
          if (seen.split('\n').includes(ready)) {
            clearTimeout(timer);
            resolve();
          }
        };
        stdout.on('data', onData);
        void exited.then(({ code, signal }) => {
          clearTimeout(timer);
          reject(
            new Error(
              `${command} exited (${signal ?? `code ${code}`}) before it was ready; see ${options.logFile}`,
            ),
          );
        });
      });
    } catch (err) {
      await stop(2_000);
      throw err;
    }
    // Keep draining stdout so the child never blocks on a full pipe.
    stdout.resume();
  }

  return { pid, exited, isRunning: () => running, stop };
}

/**
 * Whether a pid is a live process (a zombie counts as gone: a detached daemon is not our
 * child, and whether anything reaps it depends on the container's init).
 */
export async function isAlive(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Stops a process that is not our child (a detached daemon) by pid. */
export async function stopPid(pid: number, graceMs = DEFAULT_GRACE_MS): Promise<void> {
  const waitGone = async (ms: number) => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (!(await isAlive(pid))) return true;
      await sleep(50);
    }
    return !(await isAlive(pid));
  };
  if (!(await isAlive(pid))) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  if (await waitGone(graceMs)) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  if (!(await waitGone(graceMs))) throw new Error(`pid ${pid} is still alive after SIGKILL`);
}

/** A daemon's pid from its pidfile. */
export async function readPidFile(path: string): Promise<number> {
  const pid = Number.parseInt((await readFile(path, 'utf8')).trim(), 10);
  if (!Number.isInteger(pid) || pid <= 1) throw new Error(`pidfile ${path} holds no pid`);
  return pid;
}
