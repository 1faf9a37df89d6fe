#!/usr/bin/env node
import { KubeConfig } from '@kubernetes/client-node';
import { Command } from 'commander';
import { ConfigError } from '../common/config-file.js';
import { createLogger, errorMessage } from '../common/log.js';
import { createRegistry } from '../common/metrics.js';
import { onStopSignals } from '../common/stop-signals.js';
import { Agent } from './agent.js';
import { AGENT_SCHEME, buildAgentConfig } from './config.js';
import { processExists, watchParentProcess } from './parent-process.js';

const program = AGENT_SCHEME.addOptions(
  new Command('odlcoe-agent').description(
    'odlcoe node agent: prepares Open vSwitch, learns the pod subnet from ODL, writes the CNI config and serves the odlcoe CNI plugin',
  ),
).showHelpAfterError();

async function main(): Promise<void> {
  program.parse();
  const logger = createLogger('agent');
  let agent: Agent;
  let parentPid: number | undefined;
  try {
    const config = buildAgentConfig({ env: process.env, flags: AGENT_SCHEME.flagsFrom(program) });
    parentPid = config.parentPid;
    if (parentPid !== undefined && !processExists(parentPid)) {
      // Its supervisor died while it was being started: nobody would ever stop it.
      logger.error('the parent process is not running; not starting', { parentPid });
      process.exit(1);
    }
    const kubeConfig = new KubeConfig();
    if (config.kubeconfig) kubeConfig.loadFromFile(config.kubeconfig);
    else kubeConfig.loadFromDefault();
    agent = new Agent(config, {
      kubeConfig,
      registry: createRegistry('odlcoe_agent_'),
      logger,
      // ODL is not what the agent was told (or has no NetVirt): refuse to go on.
      onFatal: (err) => {
        logger.error('odlcoe-agent cannot work with this ODL', { error: errorMessage(err) });
        process.exit(1);
      },
    });
    await agent.start();
  } catch (err) {
    if (err instanceof ConfigError) process.stderr.write(`odlcoe-agent: ${err.message}\n`);
    else logger.error('odlcoe-agent failed to start', { error: errorMessage(err) });
    process.exit(err instanceof ConfigError ? 2 : 1);
  }
  const shutdown = onStopSignals(logger, () => agent.stop());
  if (parentPid !== undefined) {
    const pid = parentPid;
    watchParentProcess(pid, () => shutdown({ reason: 'the parent process is gone', parentPid: pid }));
  }
}

void main();
