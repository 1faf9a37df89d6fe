/**
 * Holding a CNI ADD until ODL sees the pod's port: Genius binds the OVS port to the
 * ietf-interface `<namespace>:<pod>` (its `iface-id`) and then publishes
 * `ietf-interfaces:interfaces-state/interface=<namespace>:<pod>` in the operational datastore;
 * `oper-status up` there means the port is bound and ELAN/VPN services are being programmed.
 * Before that the pod's first packets are dropped (as ovn-kubernetes waits for its flows, the
 * agent can wait for this).
 *
 * Modes: `off` (no wait, no request to ODL), `wait` (at the timeout the ADD succeeds with a
 * warning), `wait-and-fail` (at the timeout the ADD fails, and the attacher undoes it).
 * Polling backs off from 50 ms to 1 s. However many ADDs wait for the same pod (two sandboxes
 * of one pod name), there is one poll loop per interface; it stops once nobody waits.
 */
import { Backoff, sleep } from '../common/backoff.js';
import type { Logger } from '../common/log.js';
import { errorMessage } from '../common/log.js';
import { findMember, isJsonObject, listEntries } from '../netvirt/json.js';
import { netvirtPaths } from '../netvirt/paths.js';
import type { RestconfClient } from '../restconf/client.js';
import { CNI_ERROR, CniError } from './cni/error.js';

export const OPER_WAIT_MODES = ['off', 'wait', 'wait-and-fail'] as const;
export type OperWaitMode = (typeof OPER_WAIT_MODES)[number];

/** The first poll comes 50 ms after the port is attached; the gaps grow to 1 s. */
export const OPER_POLL_BACKOFF = { initialMs: 50, maxMs: 1000, factor: 2, jitter: 0.2 } as const;

/** What one read of interfaces-state found. */
export type OperObservation = { status: string } | { absent: true } | { error: string };

/** Reads the oper-status of interface `name` from ODL's operational datastore. */
export type OperStatusRead = (name: string, signal: AbortSignal) => Promise<OperObservation>;

/** The reader over RESTCONF: the interface's interfaces-state entry, `oper-status` leaf. */
export function restconfOperStatus(client: Pick<RestconfClient, 'get'>): OperStatusRead {
  const paths = netvirtPaths('aluminium');
  return async (name, signal) => {
    let body: unknown;
    try {
      body = await client.get(paths.interfaceState(name), 'operational', { signal });
    } catch (err) {
      if (signal.aborted) throw err;
      return { error: errorMessage(err) };
    }
    if (body === undefined) return { absent: true };
    try {
      const entry = listEntries(body, 'interfaces-state', 'interface').entries[0];
      const status = isJsonObject(entry) ? findMember(entry, 'oper-status')?.value : undefined;
      return typeof status === 'string' ? { status } : { error: 'the entry has no oper-status' };
    } catch (err) {
      return { error: errorMessage(err) };
    }
  };
}

function describe(seen: OperObservation | undefined): string {
  if (!seen) return 'not read yet';
  if ('status' in seen) return `oper-status ${seen.status}`;
  if ('absent' in seen) return 'no interfaces-state entry';
  return `reading it failed: ${seen.error}`;
}

interface PollLoop {
  up: Promise<void>;
  waiters: number;
  stop: AbortController;
  last?: OperObservation;
}

export interface OdlOperWaitOptions {
  mode: OperWaitMode;
  timeoutMs: number;
  read: OperStatusRead;
  logger: Logger;
}

export class OdlOperWait {
  private readonly loops = new Map<string, PollLoop>();

  constructor(private readonly options: OdlOperWaitOptions) {}

  get mode(): OperWaitMode {
    return this.options.mode;
  }

  /** Poll loops running now (one per interface being waited for). */
  get polling(): number {
    return this.loops.size;
  }

  /**
   * Resolves once interface `name` is oper-status up. At the timeout: `wait` logs a warning and
   * resolves, `wait-and-fail` throws a CniError. When `signal` (the request's deadline) aborts
   * first, throws a "try again later" CniError.
   */
  async wait(name: string, signal: AbortSignal): Promise<void> {
    if (this.options.mode === 'off') return;
    const loop = this.join(name);
    const timeoutMs = this.options.timeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    const either = AbortSignal.any([signal, timeout]);
    let outcome: 'up' | 'timeout' | 'aborted';
    try {
      outcome = await new Promise<'up' | 'timeout' | 'aborted'>((resolve, reject) => {
        const onAbort = () => resolve(signal.aborted ? 'aborted' : 'timeout');
        if (either.aborted) return onAbort();
        either.addEventListener('abort', onAbort, { once: true });
        loop.up.then(
          () => {
            either.removeEventListener('abort', onAbort);
            resolve('up');
          },
          (err: unknown) => {
            either.removeEventListener('abort', onAbort);
            reject(err instanceof Error ? err : new Error(String(err)));
          },
        );
      });
    } finally {
      this.leave(name, loop);
    }
    if (outcome === 'up') return;
    const seen = describe(loop.last);
    if (outcome === 'aborted') {
      throw new CniError(
        CNI_ERROR.tryAgainLater,
        `ADD abandoned while waiting for ODL to report interface ${name} operational (${seen}): ${errorMessage(signal.reason)}`,
      );
    }
    const seconds = Math.round(timeoutMs / 100) / 10;
    if (this.options.mode === 'wait-and-fail') {
      throw new CniError(
        CNI_ERROR.odlInterface,
        `ODL did not report interface ${name} operational within ${seconds} s (${seen})`,
        'Genius publishes ietf-interfaces:interfaces-state/interface=<namespace>:<pod> with oper-status up once it has bound the OVS port; check that the watcher wrote the ietf-interface and that ODL manages this node (odl.operWait)',
      );
    }
    this.options.logger.warn(
      'ODL did not report the pod interface operational in time; ADD succeeds anyway',
      {
        interface: name,
        timeoutSeconds: seconds,
        lastSeen: seen,
      },
    );
  }

  /** The poll loop of `name`, started when none runs. */
  private join(name: string): PollLoop {
    let loop = this.loops.get(name);
    if (!loop) {
      const stop = new AbortController();
      const created: PollLoop = { up: Promise.resolve(), waiters: 0, stop };
      created.up = this.poll(name, created).finally(() => {
        if (this.loops.get(name) === created) this.loops.delete(name);
      });
      created.up.catch(() => undefined);
      this.loops.set(name, created);
      loop = created;
    }
    loop.waiters += 1;
    return loop;
  }

  private leave(name: string, loop: PollLoop): void {
    loop.waiters -= 1;
    if (loop.waiters > 0) return;
    loop.stop.abort(new Error('nobody waits'));
    if (this.loops.get(name) === loop) this.loops.delete(name);
  }

  /** Resolves when up; rejects only when stopped (nobody waits any more). */
  private async poll(name: string, loop: PollLoop): Promise<void> {
    const backoff = new Backoff(OPER_POLL_BACKOFF);
    const signal = loop.stop.signal;
    for (;;) {
      signal.throwIfAborted();
      await sleep(backoff.next(), signal);
      loop.last = await this.options.read(name, signal);
      if ('status' in loop.last && loop.last.status === 'up') return;
    }
  }
}
