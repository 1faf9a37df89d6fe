/**
 * Child abort signals under a few long-lived sources (a leader term, a work queue), with one
 * listener per source however many children are alive.
 *
 * Hooking every child onto its sources directly costs an `addEventListener` per child per
 * source, and Node's EventTarget scans its listener list on every add (for duplicates): with
 * hundreds of reconciles running under one term that scan is a hot spot of its own. Here each
 * source holds one listener; a child is a plain controller in a set, released when its
 * operation ends.
 */
export interface AbortChild {
  readonly signal: AbortSignal;
  release(): void;
}

export interface AbortFanout {
  child(): AbortChild;
  /** Unhooks the fan-out from its sources (children still alive keep their state). */
  dispose(): void;
}

export function abortFanout(sources: readonly AbortSignal[]): AbortFanout {
  const live = new Set<AbortController>();
  let fired: { reason: unknown } | undefined;
  const onAbort = (source: AbortSignal) => () => {
    fired ??= { reason: source.reason };
    for (const c of live) c.abort(fired.reason);
    live.clear();
  };
  const hooks = sources.map((source) => ({ source, listener: onAbort(source) }));
  for (const { source, listener } of hooks) {
    if (source.aborted) listener();
    else source.addEventListener('abort', listener, { once: true });
  }
  return {
    child() {
      const controller = new AbortController();
      if (fired) controller.abort(fired.reason);
      else live.add(controller);
      return { signal: controller.signal, release: () => live.delete(controller) };
    },
    dispose() {
      for (const { source, listener } of hooks) source.removeEventListener('abort', listener);
      live.clear();
    },
  };
}
