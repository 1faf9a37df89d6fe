#!/usr/bin/env node
import { KubeConfig } from '@kubernetes/client-node';
import { Command, Option } from 'commander';
import { ConfigError } from '../common/config-file.js';
import { createLogger, errorMessage } from '../common/log.js';
import { createRegistry } from '../common/metrics.js';
import { loadRestconfAuth } from '../restconf/auth.js';
import { Agent } from './agent.js';
import { buildAgentConfig } from './config.js';
import { processExists, watchParentProcess } from './parent-process.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

const program = new Command('odlcoe-agent')
  .description(
    'odlcoe node agent: prepares Open vSwitch, learns the pod subnet from ODL, writes the CNI config and serves the odlcoe CNI plugin',
  )
  .option('--config <file>', 'YAML/JSON settings file (flags and environment override it)')
  .option('--node-name <name>', 'this Kubernetes node (env NODE_NAME)')
  .option('--kubeconfig <file>', 'kubeconfig; default in-cluster, then $KUBECONFIG, ~/.kube/config')
  .option('--odl-url <url>', 'OpenDaylight RESTCONF base URL, e.g. http://odl:8181 (env ODLCOE_ODL_URL)')
  .option('--odl-user <user>', 'ODL user (env ODLCOE_ODL_USER)')
  .option(
    '--odl-password-file <file>',
    'file holding the ODL password (env ODLCOE_ODL_PASSWORD_FILE; or the password itself in ODLCOE_ODL_PASSWORD)',
  )
  .option('--odl-ca-file <file>', 'CA bundle for an https ODL URL')
  .addOption(
    new Option('--dialect <dialect>', 'RESTCONF dialect (env ODLCOE_DIALECT)').choices([
      'bierman02',
      'rfc8040',
    ]),
  )
  .option('--odl-manager <target>', 'OVSDB manager for ODL, e.g. tcp:10.0.0.1:6640 (repeatable)', collect)
  .option(
    '--odl-controller <target>',
    'OpenFlow controller of the bridge, e.g. tcp:10.0.0.1:6653 (repeatable)',
    collect,
  )
  .option('--ovs-db <socket>', 'ovsdb-server unix socket; default the system one (env ODLCOE_OVS_DB)')
  .option('--bridge <name>', 'integration bridge (default br-int)')
  .addOption(new Option('--datapath-type <type>', 'bridge datapath type').choices(['system', 'netdev']))
  .option('--tunnel-ip <ip>', 'other_config:local_ip; default the node InternalIP (env ODLCOE_TUNNEL_IP)')
  .option('--cni-conf-dir <dir>', 'where the conflist is written (default /etc/cni/net.d)')
  .option('--cni-bin-dir <dir>', 'install the odlcoe shim here (default: not installed)')
  .addOption(
    new Option('--cni-version <version>', 'cniVersion of the written conflist (default 1.0.0)').choices([
      '0.3.1',
      '0.4.0',
      '1.0.0',
      '1.1.0',
    ]),
  )
  .option('--cni-log-file <file>', 'log file of the shim (default: its stderr)')
  .option('--socket <path>', 'CNI server unix socket (default /run/odlcoe/cni.sock)')
  .option('--mtu <bytes>', 'pod interface MTU (default 1450: VXLAN under a 1500 underlay)')
  .option('--ipam-data-dir <dir>', 'host-local lease directory (default /var/lib/cni/networks)')
  .option('--parent-pid <pid>', 'stop when this process is gone (the supervisor that started the agent)')
  .option(
    '--metrics-port <port>',
    '/metrics, /healthz and /readyz port (default 9102; env ODLCOE_METRICS_PORT)',
  )
  .showHelpAfterError();

async function main(): Promise<void> {
  program.parse();
  const opts = program.opts<Record<string, string | string[] | undefined>>();
  const logger = createLogger('agent');
  let agent: Agent;
  let parentPid: number | undefined;
  try {
    const file = typeof opts.config === 'string' ? opts.config : undefined;
    const config = buildAgentConfig({ ...(file ? { file } : {}), env: process.env, flags: opts });
    parentPid = config.parentPid;
    if (parentPid !== undefined && !processExists(parentPid)) {
      // Its supervisor died while it was being started: nobody would ever stop it.
      logger.error('the parent process is not running; not starting', { parentPid });
      process.exit(1);
    }
    const kubeConfig = new KubeConfig();
    if (config.kubeconfig) kubeConfig.loadFromFile(config.kubeconfig);
    else kubeConfig.loadFromDefault();
    const odlAuth = loadRestconfAuth({
      ...(config.odl.user ? { user: config.odl.user } : {}),
      ...(config.odl.passwordFile ? { passwordFile: config.odl.passwordFile } : {}),
      env: process.env,
    });
    agent = new Agent(config, {
      kubeConfig,
      registry: createRegistry('odlcoe_agent_'),
      logger,
      ...(odlAuth ? { odlAuth } : {}),
    });
    await agent.start();
  } catch (err) {
    if (err instanceof ConfigError) process.stderr.write(`odlcoe-agent: ${err.message}\n`);
    else logger.error('odlcoe-agent failed to start', { error: errorMessage(err) });
    process.exit(err instanceof ConfigError ? 2 : 1);
  }
  let stopping = false;
  const shutdown = (why: Record<string, unknown>) => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping', why);
    agent
      .stop()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        logger.error('stop failed', { error: errorMessage(err) });
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown({ signal: 'SIGTERM' }));
  process.on('SIGINT', () => shutdown({ signal: 'SIGINT' }));
  if (parentPid !== undefined) {
    const pid = parentPid;
    watchParentProcess(pid, () => shutdown({ reason: 'the parent process is gone', parentPid: pid }));
  }
}

void main();
