/**
 * Polls a condition until it holds or the deadline passes. Tests wait for conditions, never
 * for a fixed time: the machine is shared and slow moments are normal, so deadlines are
 * generous and only bound a failure.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (
    let interval = Math.min(opts.intervalMs ?? 20, 1000);
    ;
    interval = Math.min(interval * 2, opts.intervalMs ?? 500)
  ) {
    try {
      if (await condition()) return;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${opts.what ?? 'a condition'}${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

/**
 * `promise`, or a rejection naming `what` once `timeoutMs` passes first: a test that waits for
 * a promise fails with a message instead of hanging until the runner's own timeout.
 */
export async function within<T>(what: string, promise: Promise<T>, timeoutMs = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** A promise the test settles by hand: work awaits `promise` until the test calls `open()`. */
export interface Gate {
  promise: Promise<void>;
  open(): void;
}

export function gate(): Gate {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
