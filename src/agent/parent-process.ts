/**
 * Ties the agent's life to the process that started it (`--parent-pid`). A supervisor killed
 * with SIGKILL cannot stop its children, and Node.js offers neither prctl(PR_SET_PDEATHSIG) nor
 * pidfds, so the agent polls: `kill(pid, 0)` once a second. When the watched process is the
 * agent's own parent, a changed `process.ppid` counts as gone too: the kernel re-parents a
 * child the moment its parent dies, before anything reaps the parent, so neither a zombie
 * parent nor a later process that reuses the pid keeps the agent alive.
 */

export const PARENT_POLL_MS = 1_000;

/** Whether process `pid` exists (EPERM: it does, owned by someone else). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface ParentWatch {
  stop(): void;
}

/**
 * Calls `onGone` once, at the first poll that finds process `pid` gone. The timer does not keep
 * the event loop alive. `pid` must be a positive integer: 0 and negative numbers name process
 * groups to kill(2).
 */
export function watchParentProcess(
  pid: number,
  onGone: () => void,
  intervalMs: number = PARENT_POLL_MS,
): ParentWatch {
  if (!Number.isInteger(pid) || pid < 1)
    throw new RangeError(`parent pid must be a positive integer, got ${pid}`);
  const isOurParent = process.ppid === pid;
  const timer = setInterval(() => {
    if (processExists(pid) && (!isOurParent || process.ppid === pid)) return;
    clearInterval(timer);
    onGone();
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
