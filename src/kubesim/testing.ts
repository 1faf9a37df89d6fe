/**
 * Shared pieces of the kubesim tests (and of other areas' tests that want a simulator): a
 * started simulator with client-node wired to it through its kubeconfig, a collecting watch,
 * and polling waits. Everything goes over real HTTP on 127.0.0.1.
 */
import { CoordinationV1Api, CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import type { KubeSim, KubeSimOptions } from './server.js';
import { startKubeSim } from './server.js';

export interface SimClient {
  sim: KubeSim;
  kc: KubeConfig;
  core: CoreV1Api;
  coordination: CoordinationV1Api;
}

export async function startSimClient(options: KubeSimOptions = {}): Promise<SimClient> {
  const sim = await startKubeSim(options);
  const kc = new KubeConfig();
  kc.loadFromString(sim.kubeconfig());
  return { sim, kc, core: kc.makeApiClient(CoreV1Api), coordination: kc.makeApiClient(CoordinationV1Api) };
}

/** Polls `condition` every 20 ms until it holds; fails with `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export interface SeenEvent {
  type: string;
  object: {
    kind?: string;
    code?: number;
    reason?: string;
    metadata?: {
      name?: string;
      namespace?: string;
      resourceVersion?: string;
      annotations?: Record<string, string>;
    };
  };
}

/** A client-node watch that records every event and how it ended. */
export interface CollectingWatch {
  events: SeenEvent[];
  /** Set once the stream has ended: null for a clean end, else the error. */
  ended: { error: unknown } | undefined;
  abort(): void;
  /** Events of these types, in order. */
  of(...types: string[]): SeenEvent[];
}

export async function collectWatch(
  kc: KubeConfig,
  path: string,
  query: Record<string, string | number | boolean> = {},
): Promise<CollectingWatch> {
  const events: SeenEvent[] = [];
  const result: CollectingWatch = {
    events,
    ended: undefined,
    abort: () => undefined,
    of: (...types) => events.filter((e) => types.includes(e.type)),
  };
  const controller = await new Watch(kc).watch(
    path,
    query,
    (type, object) => events.push({ type, object: object as SeenEvent['object'] }),
    (err) => {
      result.ended = { error: err ?? null };
    },
  );
  result.abort = () => controller.abort();
  return result;
}

/** The HTTP status code of a client-node ApiException (or undefined for anything else). */
export function apiCode(err: unknown): number | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'number'
    ? err.code
    : undefined;
}

/** The Status body of a client-node ApiException. */
export function apiStatus(err: unknown): {
  reason?: string;
  code?: number;
  message?: string;
  details?: Record<string, unknown>;
  metadata?: { continue?: string };
} {
  if (typeof err !== 'object' || err === null || !('body' in err)) return {};
  const body = err.body;
  if (typeof body === 'string') {
    try {
      return JSON.parse(body) as ReturnType<typeof apiStatus>;
    } catch {
      return {};
    }
  }
  return (body ?? {}) as ReturnType<typeof apiStatus>;
}

/** Runs `action`, expecting an ApiException with `code` (and `reason` when given); returns its Status. */
export async function rejects(
  action: () => Promise<unknown>,
  code: number,
  reason?: string,
): Promise<ReturnType<typeof apiStatus>> {
  try {
    await action();
  } catch (err) {
    const got = apiCode(err);
    if (got !== code)
      throw new Error(
        `expected HTTP ${code}, got ${String(got)}: ${err instanceof Error ? err.message : String(err)}`,
      );
    const status = apiStatus(err);
    if (reason !== undefined && status.reason !== reason)
      throw new Error(`expected reason ${reason}, got ${String(status.reason)}`);
    return status;
  }
  throw new Error(`expected HTTP ${code}, but the request succeeded`);
}

export function pod(
  name: string,
  extra: { namespace?: string; labels?: Record<string, string>; nodeName?: string; phase?: string } = {},
) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      ...(extra.namespace ? { namespace: extra.namespace } : {}),
      ...(extra.labels ? { labels: extra.labels } : {}),
    },
    spec: {
      containers: [{ name: 'c', image: 'busybox' }],
      ...(extra.nodeName ? { nodeName: extra.nodeName } : {}),
    },
    ...(extra.phase ? { status: { phase: extra.phase } } : {}),
  };
}
