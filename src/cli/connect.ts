/**
 * The connections a command needs, built from the settings. A CLI must answer within its
 * timeout rather than ride out a long ODL outage like the watcher does, so the RESTCONF client
 * retries only briefly; every request is still bounded by `--timeout`.
 */
import { delimiter } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigError } from '../common/config-file.js';
import { silentLogger, type Logger } from '../common/log.js';
import { KubeClient } from '../k8s/kube-client.js';
import { RestconfClient } from '../restconf/client.js';
import { restconfClientOptions } from '../restconf/settings.js';
import type { CliConfig } from './settings.js';

/** Three attempts, 250 ms then 500 ms apart: a blip is ridden out, an outage reported. */
export const CLI_RETRY = { maxAttempts: 3, initialMs: 250, maxMs: 2_000 } as const;

export function connectOdl(
  settings: Pick<CliConfig, 'odl' | 'timeoutMs'>,
  logger: Logger = silentLogger(),
  env: NodeJS.ProcessEnv = process.env,
): RestconfClient {
  return new RestconfClient(
    restconfClientOptions(settings.odl, {
      timeoutMs: settings.timeoutMs,
      retry: CLI_RETRY,
      concurrency: 8,
      logger,
      env,
    }),
  );
}

/** `--kubeconfig`, else the usual search: $KUBECONFIG, ~/.kube/config, in-cluster. */
export function loadKubeConfig(settings: Pick<CliConfig, 'kubeconfig'>): KubeConfig {
  const kc = new KubeConfig();
  try {
    // KUBECONFIG (which the shared settings read) may list several files; client-node merges those.
    if (settings.kubeconfig !== undefined && !settings.kubeconfig.includes(delimiter))
      kc.loadFromFile(settings.kubeconfig);
    else kc.loadFromDefault();
  } catch (err) {
    throw new ConfigError(
      `cannot load kubeconfig${settings.kubeconfig ? ` ${settings.kubeconfig}` : ''}: ${(err as Error).message}`,
    );
  }
  if (!kc.getCurrentCluster())
    throw new ConfigError(
      'the kubeconfig has no current cluster (check current-context, or pass --kubeconfig)',
    );
  return kc;
}

export function connectKube(settings: Pick<CliConfig, 'kubeconfig'>): KubeClient {
  try {
    return new KubeClient(loadKubeConfig(settings));
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError((err as Error).message);
  }
}
