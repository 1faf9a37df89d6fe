/**
 * The programs a benchmark measures against (the ODL emulator, the Kubernetes simulator) run as
 * child processes, so that the figures of the process under test are its own. Each is started
 * from source on an ephemeral port and found by the URL in its `... listening` log line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository, whether this runs from source or compiled into `dist/bench` (`tsconfig.bench.json`). */
export const REPO_ROOT = ((here: string) => (basename(here) === 'dist' ? dirname(here) : here))(
  fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, ''),
);
const STARTUP_TIMEOUT_MS = 60_000;

export interface ListeningChild {
  child: ChildProcess;
  url: string;
}

/**
 * Runs `node --import tsx <args>` in the repository root and resolves once it logs (JSON on
 * stderr) `message` with a `url`; stops it and rejects if it exits or stays silent first.
 * `logLevel` is its ODLCOE_LOG_LEVEL (the listening line is written at info).
 */
export async function startListening(
  args: readonly string[],
  message: string,
  logLevel = 'info',
): Promise<ListeningChild> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ODLCOE_LOG_LEVEL: logLevel },
  });
  const stderr = child.stderr;
  if (!stderr) throw new Error(`${args[0]}: no stderr`);
  const lines = createInterface({ input: stderr });
  const tail: string[] = [];
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${args[0]} did not report "${message}" within ${STARTUP_TIMEOUT_MS} ms`)),
        STARTUP_TIMEOUT_MS,
      );
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${args[0]} exited (${signal ?? code}) before listening:\n${tail.join('\n')}`));
      });
      lines.on('line', (line) => {
        tail.push(line);
        if (tail.length > 20) tail.shift();
        let record: { message?: unknown; url?: unknown };
        try {
          record = JSON.parse(line) as typeof record;
        } catch {
          return;
        }
        if (record.message === message && typeof record.url === 'string') {
          clearTimeout(timer);
          resolve(record.url);
        }
      });
    });
    // Keep draining stderr so the child never blocks on a full pipe.
    child.removeAllListeners('exit');
    return { child, url };
  } catch (err) {
    await stopChild(child);
    throw err;
  }
}

/** SIGTERM by pid, SIGKILL after 5 s; resolves once it has exited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(child.pid, 'SIGTERM');
  const timer = setTimeout(() => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined)
      process.kill(child.pid, 'SIGKILL');
  }, 5_000);
  await exited;
  clearTimeout(timer);
}
