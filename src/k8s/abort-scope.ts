/**
 * An abort signal for one operation: it aborts when `parent` aborts or `timeoutMs` passes,
 * and `dispose()` unhooks it from the parent once the operation is over.
 *
 * This replaces `AbortSignal.any([parent, AbortSignal.timeout(ms)])` for operations under a
 * long-lived parent (an informer's or leader elector's lifetime). On Node 20 every composite
 * signal stays registered on its parent and is never pruned: a leader renewing every 2 s
 * leaks a few MiB a day that way. Here the parent only ever holds one listener per operation
 * in flight.
 */
export interface AbortScope {
  readonly signal: AbortSignal;
  /** Whether the deadline (rather than the parent or `abort`) ended the operation. */
  timedOut(): boolean;
  abort(reason: unknown): void;
  dispose(): void;
}

export function abortScope(parent: AbortSignal | undefined, timeoutMs?: number): AbortScope {
  const controller = new AbortController();
  let timedOut = false;
  const onParentAbort = () => controller.abort(parent?.reason);
  let timer: NodeJS.Timeout | undefined;
  if (parent?.aborted) {
    controller.abort(parent.reason);
  } else {
    parent?.addEventListener('abort', onParentAbort, { once: true });
    if (timeoutMs !== undefined) {
      timer = setTimeout(
        () => {
          timedOut = true;
          controller.abort(new Error(`deadline of ${Math.round(timeoutMs)} ms passed`));
        },
        Math.max(0, timeoutMs),
      );
    }
  }
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    abort: (reason) => controller.abort(reason),
    dispose: () => {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}
