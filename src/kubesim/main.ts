#!/usr/bin/env node
/**
 * odlcoe-kubesim: runs the Kubernetes API simulator until SIGINT or SIGTERM.
 * Logs one JSON line `kubesim listening` with the URL on stderr once it serves.
 */
import { Command, InvalidArgumentError } from 'commander';
import { readSecretFile } from '../common/config-file.js';
import { createLogger, errorMessage } from '../common/log.js';
import { onStopSignals } from '../common/stop-signals.js';
import { DEFAULT_BOOKMARK_INTERVAL_MS, DEFAULT_HISTORY_LIMIT, startKubeSim } from './server.js';

function integer(min: number, max: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`"${value}" is not a whole number`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`${n} is outside ${min}..${max}`);
    return n;
  };
}

interface CliOptions {
  host: string;
  port: number;
  token?: string;
  tokenFile?: string;
  tls: boolean;
  historyLimit: number;
  bookmarkInterval: number;
  kubeconfigOut?: string;
}

async function main(): Promise<void> {
  const program = new Command()
    .name('odlcoe-kubesim')
    .description('Kubernetes API simulator for odlcoe tests and the sandbox (docs/kubesim.md)')
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0: ephemeral)', integer(0, 65535), 6443)
    .option('--token <token>', 'require this bearer token on every request (prefer --token-file)')
    .option('--token-file <path>', 'read the required bearer token from this file')
    .option('--tls', 'serve HTTPS with a fresh self-signed certificate (the kubeconfig trusts it)', false)
    .option(
      '--history-limit <events>',
      'watch events retained; older resourceVersions get 410 Gone',
      integer(1, 10_000_000),
      DEFAULT_HISTORY_LIMIT,
    )
    .option(
      '--bookmark-interval <ms>',
      'interval of BOOKMARK events on watches that allow them',
      integer(10, 3_600_000),
      DEFAULT_BOOKMARK_INTERVAL_MS,
    )
    .option('--kubeconfig-out <file>', 'write a kubeconfig for this server to FILE (mode 0600)')
    .parse();
  const opts = program.opts<CliOptions>();
  const logger = createLogger('kubesim');

  let token = opts.token;
  if (opts.tokenFile !== undefined) {
    if (token !== undefined) program.error('use either --token or --token-file, not both');
    token = readSecretFile(opts.tokenFile);
  }

  const sim = await startKubeSim({
    host: opts.host,
    port: opts.port,
    ...(token !== undefined ? { token } : {}),
    tls: opts.tls,
    historyLimit: opts.historyLimit,
    bookmarkIntervalMs: opts.bookmarkInterval,
    logger,
  });
  if (opts.kubeconfigOut !== undefined) sim.writeKubeconfig(opts.kubeconfigOut);
  logger.info('kubesim listening', {
    url: sim.url,
    kubeconfig: opts.kubeconfigOut,
    auth: token !== undefined ? 'token' : 'none',
  });

  onStopSignals(logger, () => sim.close(), { message: 'kubesim stopping' });
}

main().catch((err: unknown) => {
  process.stderr.write(
    `${JSON.stringify({ level: 'error', message: 'kubesim failed to start', component: 'kubesim', error: errorMessage(err) })}\n`,
  );
  process.exit(1);
});
