#!/usr/bin/env node
/**
 * odlcoe-watcher: keeps ODL's configuration (NetVirt objects, or ODL's own COE models) equal to
 * what the Kubernetes cluster needs.
 * See docs/watcher.md. Flags override environment variables, which override the config file.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { Command, Option } from 'commander';
import { ConfigError } from '../common/config-file.js';
import { createLogger, errorMessage } from '../common/log.js';
import { loadRestconfAuth } from '../restconf/auth.js';
import { loadWatcherConfig } from './config.js';
import { BACKEND_NAMES } from './settings.js';
import { defaultIdentity, startWatcher } from './watcher.js';

function program(): Command {
  return new Command('odlcoe-watcher')
    .description('Keeps OpenDaylight’s configuration equal to what the Kubernetes cluster needs')
    .option('--config <file>', 'YAML or JSON configuration file (ODLCOE_CONFIG)')
    .addOption(
      new Option(
        '--backend <name>',
        'what is written into ODL: NetVirt objects, or ODL’s own COE models (ODLCOE_BACKEND); default netvirt',
      ).choices(BACKEND_NAMES),
    )
    .option('--kubeconfig <file>', 'kubeconfig (KUBECONFIG); in-cluster configuration when absent')
    .option('--odl-url <url>', 'ODL RESTCONF base URL, e.g. http://odl:8181 (ODLCOE_ODL_URL)')
    .option('--odl-user <name>', 'ODL user (ODLCOE_ODL_USER)')
    .option('--odl-password-file <file>', 'file holding the ODL password (ODLCOE_ODL_PASSWORD_FILE)')
    .option('--odl-token-file <file>', 'file holding an ODL bearer token (ODLCOE_ODL_TOKEN_FILE)')
    .option('--odl-timeout <duration>', 'per-request timeout, above 30s (ODLCOE_ODL_TIMEOUT)')
    .option('--odl-ca-file <file>', 'CA bundle to verify ODL’s TLS certificate (ODLCOE_ODL_CA_FILE)')
    .option('--odl-insecure-skip-verify', 'do not verify ODL’s TLS certificate')
    .addOption(
      new Option('--profile <profile>', 'NetVirt model release (ODLCOE_PROFILE)').choices([
        'sodium',
        'aluminium',
      ]),
    )
    .addOption(
      new Option('--dialect <dialect>', 'RESTCONF dialect (ODLCOE_DIALECT); default rfc8040').choices([
        'bierman02',
        'rfc8040',
      ]),
    )
    .option(
      '--cluster-name <name>',
      'cluster name in ownership markers, a DNS-1123 label (ODLCOE_CLUSTER_NAME)',
    )
    .option(
      '--route-target <rt>',
      'route target of every namespace VPN (ODLCOE_ROUTE_TARGET); default 64512:1',
    )
    .option(
      '--rd-administrator <asn|ip>',
      'RD administrator for namespace VPNs (ODLCOE_RD_ADMINISTRATOR); default 64512',
    )
    .addOption(
      new Option(
        '--subnet-source <source>',
        'where node pod subnets come from (ODLCOE_SUBNET_SOURCE); default odl',
      ).choices(['odl', 'podCIDR', 'allocate']),
    )
    .option('--cluster-cidr <cidr>', 'range node subnets are carved from (allocate)')
    .option(
      '--service-cidrs <cidrs>',
      'Service ranges, comma-separated: node gateways and Service routes in ODL (default: none)',
    )
    .option('--node-prefix-length <n>', 'prefix length of each node subnet (allocate)')
    .option('--grace-period <duration>', 'delay before an unneeded VPN/ELAN instance is deleted; default 5m')
    .option('--resync-period <duration>', 'full resync interval, 0 disables; default 10m')
    .option('--workers <n>', 'concurrent reconciles; default 8')
    .option('--shutdown-timeout <duration>', 'drain bound on SIGTERM; default 20s')
    .option('--metrics-host <ip>', 'ops server address; default 0.0.0.0')
    .option('--metrics-port <port>', 'ops server port (/metrics, /healthz, /readyz); default 9090')
    .option('--leader-elect', 'use Lease leader election (default)')
    .option('--no-leader-elect', 'always lead (a single replica)')
    .option('--lease-namespace <ns>', 'namespace of the Lease; default kube-system')
    .option('--lease-name <name>', 'name of the Lease; default odlcoe-watcher')
    .option('--identity <id>', 'leader election identity; default host name and pid');
}

async function main(): Promise<void> {
  const cmd = program();
  cmd.parse(process.argv);
  const flags = cmd.opts<Record<string, unknown>>();
  // commander sets leaderElect to true by default when --no-leader-elect is declared: only an
  // explicit flag may override the environment and the file.
  const explicit = (name: string) => cmd.getOptionValueSource(name) === 'cli';
  if (!explicit('leaderElect')) delete flags.leaderElect;

  const logger = createLogger('watcher');
  const config = loadWatcherConfig({ flags, defaultIdentity });
  const auth = loadRestconfAuth({
    ...(config.odl.user !== undefined ? { user: config.odl.user } : {}),
    ...(config.odl.passwordFile !== undefined ? { passwordFile: config.odl.passwordFile } : {}),
    ...(config.odl.tokenFile !== undefined ? { tokenFile: config.odl.tokenFile } : {}),
  });
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
    odl: {
      baseUrl: config.odl.url,
      ...(auth ? { auth } : {}),
      ...(config.odl.timeoutMs !== undefined ? { timeoutMs: config.odl.timeoutMs } : {}),
      // TLS options only when they change something: `insecureSkipVerify: false` is the default
      // and must not turn a plain-http URL into a configuration error.
      ...(config.odl.caFile !== undefined || config.odl.insecureSkipVerify === true
        ? {
            tls: {
              ...(config.odl.caFile !== undefined ? { caFile: config.odl.caFile } : {}),
              ...(config.odl.insecureSkipVerify === true ? { insecureSkipVerify: true } : {}),
            },
          }
        : {}),
    },
    leaderElection: le.enabled ? le : false,
    ops: { host: config.metrics.host, port: config.metrics.port },
    logger,
    // Exit so Kubernetes restarts the pod (and a standby takes the lease) instead of a zombie leader.
    onFatal: (err) => {
      logger.error('giving up', { error: errorMessage(err) });
      process.exit(1);
    },
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn('second signal: exiting now', { signal });
      process.exit(1);
    }
    stopping = true;
    logger.info('stopping: draining, then releasing the lease', { signal });
    watcher.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error('unclean shutdown', { error: errorMessage(err) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  // exitCode rather than exit(): stderr to a pipe is asynchronous and must get flushed.
  process.stderr.write(`odlcoe-watcher: ${errorMessage(err)}\n`);
  process.exitCode = err instanceof ConfigError ? 2 : 1;
});
