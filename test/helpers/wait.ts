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
