import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import { CommandError, run } from '../../src/common/exec.js';
import { waitFor } from './wait.js';

/**
 * Network namespaces for tests: unique names (tests of several engineers run in parallel on
 * one machine), created with `ip netns add` so they are bind-mounted under /run/netns like a
 * runtime's, and removed by the test's after hook.
 */

export interface TestNetns {
  /** Name under /run/netns (for `ip netns exec` and `ip -n`). */
  name: string;
  /** Path, as a runtime passes CNI_NETNS. */
  path: string;
  /** Deletes the namespace; safe to call twice. */
  remove(): Promise<void>;
}

const PREFIX = /^[a-z][a-z0-9-]{0,15}$/;

export async function createNetns(prefix: string): Promise<TestNetns> {
  if (!PREFIX.test(prefix)) throw new Error(`netns prefix ${JSON.stringify(prefix)} must match ${PREFIX}`);
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  await run('ip', ['netns', 'add', name]);
  return {
    name,
    path: `/run/netns/${name}`,
    async remove() {
      try {
        await run('ip', ['netns', 'del', name]);
      } catch (err) {
        if (err instanceof CommandError && /No such file or directory/.test(err.stderr)) return;
        throw err;
      }
    },
  };
}

export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

const ROOT_REASON = 'needs root (network namespaces, veth pairs, Open vSwitch); CI runs as root';

/** For `describe(name, { skip: skipUnlessRoot() }, ...)`: false as root, else the reason. */
export function skipUnlessRoot(): string | false {
  return isRoot() ? false : ROOT_REASON;
}

/** Inside a test: skips it with a clear message unless root; returns whether to go on. */
export function requireRoot(t: TestContext): boolean {
  if (isRoot()) return true;
  t.skip(ROOT_REASON);
  return false;
}

/** Runs a command inside the namespace (by path, as the agent does). */
export async function execIn(netnsPath: string, cmd: string, args: string[]): Promise<string> {
  return (await run('nsenter', [`--net=${netnsPath}`, cmd, ...args])).stdout;
}

/** Waits until `ip` answers a ping from inside the namespace. */
export async function waitForPing(netnsPath: string, ip: string, timeoutMs = 30_000): Promise<void> {
  await waitFor(
    async () => {
      await execIn(netnsPath, 'ping', ['-c', '1', '-W', '1', ip]);
      return true;
    },
    { timeoutMs, what: `${ip} to answer ping from ${netnsPath}` },
  );
}
