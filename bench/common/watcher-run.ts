/**
 * A watcher for a benchmark: an in-process Kubernetes API simulator seeded with `items`, an
 * empty ODL emulator, and the watcher between them with the benchmarks' settings (no resync,
 * node subnets from `spec.podCIDR`, silent Events), stopped by `close()`; a run that outlives
 * `timeoutMs` ends the process.
 */
import { performance } from 'node:perf_hooks';
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../../src/common/log.js';
import { createRegistry } from '../../src/common/metrics.js';
import { DEFAULT_SETTINGS, type WatcherSettings } from '../../src/config/watcher-settings.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { startKubeSim, type KubeSim } from '../../src/kubesim/server.js';
import type { Profile } from '../../src/netvirt/profile.js';
import type { EventRecorder } from '../../src/watcher/events.js';
import { startWatcher, type Watcher } from '../../src/watcher/watcher.js';

export interface WatcherRun {
  sim: KubeSim;
  emu: Emulator;
  kc: KubeConfig;
  watcher: Watcher;
  /** performance.now() when the watcher was started. */
  started: number;
  close(): Promise<void>;
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export async function startWatcherRun(opts: {
  profile: Profile;
  items: readonly unknown[];
  timeoutMs: number;
  settings?: Partial<WatcherSettings>;
}): Promise<WatcherRun> {
  const logger = createLogger('bench', process.env.ODLCOE_LOG_LEVEL ?? 'silent');
  const sim = await startKubeSim({ port: 0, logger });
  const emu = await startEmulator({ port: 0, profile: opts.profile, logger, fillParentInterface: true });
  sim.seed(opts.items);
  const kc = new KubeConfig();
  kc.loadFromString(sim.kubeconfig());
  const silent: EventRecorder = { warning: () => undefined };
  const settings: WatcherSettings = {
    ...DEFAULT_SETTINGS,
    clusterName: 'bench',
    profile: opts.profile,
    dialect: 'rfc8040',
    routeTarget: '64512:1',
    rdAdministrator: '64512',
    subnetSource: 'podCIDR',
    resyncPeriodMs: 0,
    ...opts.settings,
  };
  const started = performance.now();
  const watcher = await startWatcher({
    settings,
    kubeConfig: kc,
    odl: { baseUrl: emu.url, auth: { kind: 'basic', user: 'admin', password: 'admin' } },
    registry: createRegistry(),
    logger,
    events: silent,
  });
  const timeout = setTimeout(() => {
    console.error(`timed out after ${seconds(opts.timeoutMs)}`);
    process.exit(1);
  }, opts.timeoutMs);
  return {
    sim,
    emu,
    kc,
    watcher,
    started,
    close: async () => {
      clearTimeout(timeout);
      await watcher.close();
      await emu.close();
      await sim.close();
    },
  };
}
