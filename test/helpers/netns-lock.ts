import { spawn } from 'node:child_process';
import { mkdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A machine-wide exclusive lock on one network namespace, for the test daemons that cannot
 * share one: a userspace ovs-vswitchd creates a tap device `ovs-netdev` (and one per bridge)
 * in its namespace, so a second one in the same namespace fails ("Device or resource busy").
 * Test files run in parallel processes, so the lock must be between processes.
 *
 * The lock is flock(1) on a file named by the namespace's inode, held while its child `cat`
 * runs; cat's stdin is a pipe from this process: release closes the pipe, and if this process
 * dies the pipe closes anyway, so a crashed test never leaves a stale lock. flock(1) is used
 * because Node.js has no flock(2).
 */

export interface NetnsLock {
  release(): Promise<void>;
}

/** Locks the namespace at `netnsPath` (default: the one this process runs in). */
export async function lockNetworkNamespace(
  netnsPath = '/proc/self/ns/net',
  timeoutMs = 180_000,
): Promise<NetnsLock> {
  const { ino } = await stat(netnsPath);
  // Lock files stay (an empty file per namespace inode): unlinking a flock'd file races with
  // a waiter that has already opened it.
  const dir = join(tmpdir(), 'odlcoe-test-locks');
  await mkdir(dir, { recursive: true });
  const file = join(dir, `netns-${ino}.lock`);
  // cat echoes its stdin, and only runs once flock holds the lock: the echo is the signal.
  const holder = spawn('flock', [`--timeout=${Math.ceil(timeoutMs / 1000)}`, file, 'cat'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => holder.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    holder.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const onData = (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (stdout.includes('locked\n')) {
        holder.stdout.off('data', onData);
        holder.stdout.resume();
        resolve();
      }
    };
    holder.stdout.on('data', onData);
    holder.once('error', reject);
    holder.once('close', (code) =>
      reject(
        new Error(
          `could not lock network namespace ${netnsPath} (${file}): flock exited ${code}: ${stderr.trim()}`,
        ),
      ),
    );
    holder.stdin.write('locked\n');
  });
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      holder.stdin.end();
      await exited;
    },
  };
}
