/**
 * Named network namespaces (`ip netns add`, bind-mounted under /run/netns like a container
 * runtime's), for the simulated nodes and their pods. Names are generated here and validated
 * before they reach `ip`.
 */
import { randomBytes } from 'node:crypto';
import { CommandError, run } from '../common/exec.js';

export interface NamedNetns {
  /** Name under /run/netns (for `ip netns exec` and `ip -n`). */
  readonly name: string;
  /** Path, as a runtime passes it in CNI_NETNS. */
  readonly path: string;
  /** Deletes the namespace; succeeds when it is already gone. */
  remove(): Promise<void>;
}

/** Every namespace the sandbox creates starts with this, so leftovers are easy to find. */
export const NETNS_PREFIX = 'odlcoe-sbx';
const NETNS_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

export function checkNetnsName(name: string): string {
  if (!NETNS_NAME.test(name))
    throw new Error(`network namespace name ${JSON.stringify(name)} must match ${NETNS_NAME}`);
  return name;
}

/**
 * Creates `odlcoe-sbx-<label>-<random>` with its loopback up (a new namespace's `lo` is down,
 * and the relay of a simulated node listens on it).
 */
export async function createNetns(label: string): Promise<NamedNetns> {
  const name = checkNetnsName(`${NETNS_PREFIX}-${label}-${randomBytes(3).toString('hex')}`);
  await run('ip', ['netns', 'add', name]);
  const netns: NamedNetns = {
    name,
    path: `/run/netns/${name}`,
    remove: () => removeNetns(name),
  };
  try {
    await run('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
  } catch (err) {
    await netns.remove();
    throw err;
  }
  return netns;
}

export async function removeNetns(name: string): Promise<void> {
  checkNetnsName(name);
  try {
    await run('ip', ['netns', 'del', name]);
  } catch (err) {
    if (err instanceof CommandError && /No such file or directory/.test(err.stderr)) return;
    throw err;
  }
}

/** Runs a command inside a namespace given by path (what the agent gets as CNI_NETNS). */
export async function execInNetns(
  path: string,
  command: string,
  args: readonly string[],
  timeoutMs = 30_000,
): Promise<string> {
  if (!/^\/run\/netns\/[a-z0-9][a-z0-9-]*$/.test(path))
    throw new Error(`not a sandbox network namespace path: ${path}`);
  return (await run('nsenter', [`--net=${path}`, command, ...args], { timeoutMs })).stdout;
}
