import { readFile } from 'node:fs/promises';
import { waitFor } from './wait.js';

/**
 * Whether a pid is a live process. A zombie counts as gone: a daemon that detached is not our
 * child, and whether something reaps it depends on the container's init.
 */
export async function isAlive(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ..." — comm may contain spaces and parentheses; state follows the last ")".
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** SIGTERM by pid, wait for it to go, SIGKILL if it will not. Never by name. */
export async function stopPid(pid: number, graceMs = 10_000): Promise<void> {
  if (!(await isAlive(pid))) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  try {
    await waitFor(async () => !(await isAlive(pid)), {
      timeoutMs: graceMs,
      what: `pid ${pid} to exit after SIGTERM`,
    });
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return;
    }
    await waitFor(async () => !(await isAlive(pid)), {
      timeoutMs: graceMs,
      what: `pid ${pid} to exit after SIGKILL`,
    });
  }
}

/** A daemon's pid from its pidfile. */
export async function readPidFile(path: string): Promise<number> {
  const pid = Number.parseInt((await readFile(path, 'utf8')).trim(), 10);
  if (!Number.isInteger(pid) || pid <= 1) throw new Error(`pidfile ${path} holds no pid`);
  return pid;
}
