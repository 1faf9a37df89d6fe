#!/usr/bin/env node
/**
 * odlcoe-watcher: keeps ODL's configuration (NetVirt objects, or ODL's own COE models) equal to
 * what the Kubernetes cluster needs.
 * See docs/watcher.md. Flags override environment variables, which override the config file.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { Command } from 'commander';
import { ConfigError } from '../common/config-file.js';
import { createLogger, errorMessage } from '../common/log.js';
import { onStopSignals } from '../common/stop-signals.js';
import { restconfClientOptions } from '../restconf/settings.js';
import { loadWatcherConfig } from '../config/watcher-config.js';
import { WATCHER_SCHEME } from '../config/watcher-settings.js';
import { defaultIdentity, startWatcher } from './watcher.js';

async function main(): Promise<void> {
  const cmd = WATCHER_SCHEME.addOptions(
    new Command('odlcoe-watcher').description(
      'Keeps OpenDaylight’s configuration equal to what the Kubernetes cluster needs',
    ),
  );
  cmd.parse(process.argv);

  const logger = createLogger('watcher');
  const config = loadWatcherConfig({ flags: WATCHER_SCHEME.flagsFrom(cmd), defaultIdentity });
  const odl = restconfClientOptions(config.odl);
  const kubeConfig = new KubeConfig();
  if (config.kubeconfig) kubeConfig.loadFromFile(config.kubeconfig);
  else kubeConfig.loadFromCluster();

  const le = config.leaderElection;
  logger.info('starting', {
    cluster: config.settings.clusterName,
    backend: config.settings.backend,
    profile: config.settings.profile,
    dialect: config.settings.dialect,
    odl: config.odl.url,
    subnetSource: config.settings.subnetSource,
    leaderElection: le.enabled ? `${le.namespace}/${le.name} as ${le.identity}` : 'disabled',
  });
  const watcher = await startWatcher({
    settings: config.settings,
    kubeConfig,
    odl,
    leaderElection: le.enabled ? le : false,
    ops: { host: config.metrics.host, port: config.metrics.port },
    logger,
    // Exit so Kubernetes restarts the pod (and a standby takes the lease) instead of a zombie leader.
    onFatal: (err) => {
      logger.error('giving up', { error: errorMessage(err) });
      process.exit(1);
    },
  });

  onStopSignals(logger, () => watcher.close(), {
    message: 'stopping: draining, then releasing the lease',
    secondSignalExits: true,
  });
}

main().catch((err: unknown) => {
  // exitCode rather than exit(): stderr to a pipe is asynchronous and must get flushed.
  process.stderr.write(`odlcoe-watcher: ${errorMessage(err)}\n`);
  process.exitCode = err instanceof ConfigError ? 2 : 1;
});
