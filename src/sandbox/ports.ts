/**
 * Ports of the sandbox's servers: fixed defaults, so that the commands in the docs usually
 * work as printed, with a fallback to a free port when one is taken (a second sandbox, or a
 * real service on that port). A port the user asked for explicitly is never replaced.
 */

export interface PortChoice {
  /** The port to try first; 0 means any free port. */
  port: number;
  /** true: the user chose this port; failing to get it is an error, not a fallback. */
  explicit: boolean;
}

export const DEFAULT_PORTS = {
  kube: 16443,
  odl: 18181,
  watcherMetrics: 19090,
  /** The first simulated node's agent metrics; the next nodes take the following ports. */
  agentMetrics: 19102,
} as const;

export function isAddressInUse(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; message?: unknown };
  return e.code === 'EADDRINUSE' || (typeof e.message === 'string' && e.message.includes('EADDRINUSE'));
}

/**
 * Starts a server on the chosen port; when a default port is taken, on a free one instead.
 * `start` must leave nothing running when it throws.
 */
export async function startOnPort<T>(
  what: string,
  choice: PortChoice,
  start: (port: number) => Promise<T>,
  onFallback?: (port: number) => void,
): Promise<T> {
  try {
    return await start(choice.port);
  } catch (err) {
    if (!isAddressInUse(err) || choice.port === 0) throw err;
    if (choice.explicit)
      throw new Error(
        `${what}: port ${choice.port} is already in use (choose another one, or leave the flag out to use a free port)`,
      );
    onFallback?.(choice.port);
    return start(0);
  }
}

/** Parses a `--*-port` flag value (1..65535, or 0 for any free port). */
export function parsePort(value: string, flag: string): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535)
    throw new Error(`${flag} ${JSON.stringify(value)} must be a port number (0..65535; 0 picks a free one)`);
  return Number(value);
}
