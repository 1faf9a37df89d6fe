#!/usr/bin/env node
/**
 * odlcoe-emulator: OpenDaylight RESTCONF (NetVirt/Genius/COE subtrees) for tests, benchmarks
 * and the sandbox. Logs one JSON line `emulator listening` with the `url` on stderr once it
 * serves (benchmarks start it with `--port 0` and read that line).
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { readSecretFile } from '../common/config-file.js';
import { createLogger, errorMessage } from '../common/log.js';
import { onStopSignals } from '../common/stop-signals.js';
import { PROFILES, type Profile } from '../netvirt/profile.js';
import {
  defaultFeatures,
  EMULATOR_FEATURES,
  featureProblem,
  type EmulatorFeature,
} from './netvirt-schema.js';
import { startEmulator, type EmulatorOptions, type FaultSettings } from './server.js';

function millisecondsIn(min: number, max: number) {
  return (value: string): number => {
    if (!/^\d+(\.\d+)?$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new InvalidArgumentError(`must be a number of milliseconds in ${min}..${max}`);
    }
    return Number(value);
  };
}

function integerIn(min: number, max: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new InvalidArgumentError(`must be an integer in ${min}..${max}`);
    }
    return Number(value);
  };
}

function rate(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !(n >= 0 && n <= 1)) throw new InvalidArgumentError('must be a number in 0..1');
  return n;
}

/** `--features coe` / `--features none`: a comma-separated list of optional features. */
function features(value: string): EmulatorFeature[] {
  const text = value.trim();
  if (text === '' || text === 'none') return [];
  const out: EmulatorFeature[] = [];
  for (const part of text.split(',').map((p) => p.trim())) {
    if (!(EMULATOR_FEATURES as readonly string[]).includes(part))
      throw new InvalidArgumentError(
        `unknown feature "${part}": known are ${EMULATOR_FEATURES.join(', ')} (or none)`,
      );
    if (!out.includes(part as EmulatorFeature)) out.push(part as EmulatorFeature);
  }
  return out;
}

function errorStatus(value: string): 500 | 503 {
  if (value !== '500' && value !== '503') throw new InvalidArgumentError('must be 500 or 503');
  return Number(value) as 500 | 503;
}

interface Flags {
  port: number;
  host: string;
  profile: Profile;
  features?: EmulatorFeature[];
  user?: string;
  password?: string;
  passwordFile?: string;
  tlsCert?: string;
  tlsKey?: string;
  record?: string;
  state?: string;
  fillParentInterface?: boolean;
  operDelayMs?: number;
  operStatus: boolean;
  yangPatch: boolean;
  txCostMs?: number;
  editCostMs?: number;
  latencyMs?: number;
  latencyJitterMs?: number;
  errorRate?: number;
  errorStatus?: 500 | 503;
}

function parseFlags(argv: readonly string[]): Flags {
  const program = new Command('odlcoe-emulator')
    .description('Emulates OpenDaylight RESTCONF for the NetVirt, Genius and COE subtrees odlcoe uses')
    .option('--port <port>', 'TCP port (0 picks a free one)', integerIn(0, 65535), 8181)
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .addOption(
      new Option('--profile <profile>', 'NetVirt model release').choices([...PROFILES]).default('sodium'),
    )
    .option(
      '--features <list>',
      'optional features installed, comma-separated, or none: coe (the COE models k8s-node, pod, service; Sodium only). Default: coe on sodium, none on aluminium',
      features,
    )
    .option('--user <name>', 'basic-auth user (default admin)')
    .option('--password <password>', 'basic-auth password (default admin); prefer --password-file')
    .option('--password-file <file>', 'file holding the basic-auth password')
    .option('--tls-cert <file>', 'PEM certificate: serve HTTPS (needs --tls-key)')
    .option('--tls-key <file>', 'PEM private key for --tls-cert')
    .option('--record <file>', 'append every accepted write as one JSON line')
    .option('--state <file>', 'keep the config datastore in this file across restarts')
    .option(
      '--fill-parent-interface',
      'fill odl-interface:parent-interface of l2vlan interfaces, as Genius does when the OVS port appears',
    )
    .option(
      '--oper-delay-ms <ms>',
      'interfaces-state (oper-status up) of an interface appears this long after it got its parent interface (default 0)',
      integerIn(0, 600_000),
    )
    .option('--no-oper-status', 'never publish interfaces-state, as an ODL that never sees the pod ports')
    .option('--no-yang-patch', 'refuse YANG Patch with 415, as a controller without it')
    .option(
      '--tx-cost-ms <ms>',
      'cost model: every write transaction holds the datastore this long (commits one after the other)',
      millisecondsIn(0, 600_000),
    )
    .option(
      '--edit-cost-ms <ms>',
      'cost model: plus this much per edit of the transaction (fractions allowed)',
      millisecondsIn(0, 600_000),
    )
    .option('--latency-ms <ms>', 'latency added to every data request', integerIn(0, 600_000))
    .option('--latency-jitter-ms <ms>', 'plus a uniform random latency up to this', integerIn(0, 600_000))
    .option('--error-rate <fraction>', 'fraction of data requests answered with --error-status', rate)
    .option('--error-status <status>', 'status of injected errors: 500 or 503 (default 500)', errorStatus)
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });
  program.parse(argv, { from: 'user' });
  const flags = program.opts<Flags>();
  if (flags.password !== undefined && flags.passwordFile !== undefined)
    throw new Error('give --password or --password-file, not both');
  if ((flags.tlsCert === undefined) !== (flags.tlsKey === undefined))
    throw new Error('--tls-cert and --tls-key go together');
  for (const feature of flags.features ?? []) {
    const problem = featureProblem(flags.profile, feature);
    if (problem) throw new Error(`--features ${feature}: ${problem}`);
  }
  return flags;
}

async function main(): Promise<void> {
  let flags: Flags;
  try {
    flags = parseFlags(process.argv.slice(2));
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'commander.helpDisplayed' || code === 'commander.version') process.exit(0);
    // commander has already printed its own parse errors.
    if (!code?.startsWith('commander.')) process.stderr.write(`odlcoe-emulator: ${errorMessage(err)}\n`);
    process.exit(2);
  }
  const logger = createLogger('emulator');
  const faults: FaultSettings = {};
  if (flags.latencyMs !== undefined) faults.latencyMs = flags.latencyMs;
  if (flags.latencyJitterMs !== undefined) faults.latencyJitterMs = flags.latencyJitterMs;
  if (flags.errorRate !== undefined) faults.errorRate = flags.errorRate;
  if (flags.errorStatus !== undefined) faults.errorStatus = flags.errorStatus;
  const options: EmulatorOptions = {
    host: flags.host,
    port: flags.port,
    profile: flags.profile,
    features: flags.features ?? defaultFeatures(flags.profile),
    fillParentInterface: flags.fillParentInterface ?? false,
    operDelayMs: flags.operDelayMs ?? 0,
    operStatus: flags.operStatus,
    yangPatch: flags.yangPatch,
    costs: { transactionMs: flags.txCostMs ?? 0, editMs: flags.editCostMs ?? 0 },
    faults,
    logger,
  };
  if (flags.user !== undefined) options.user = flags.user;
  if (flags.password !== undefined) options.password = flags.password;
  if (flags.tlsCert && flags.tlsKey) options.tls = { certFile: flags.tlsCert, keyFile: flags.tlsKey };
  if (flags.record) options.recordFile = flags.record;
  if (flags.state) options.stateFile = flags.state;
  try {
    if (flags.passwordFile !== undefined) options.password = readSecretFile(flags.passwordFile);
  } catch (err) {
    process.stderr.write(`odlcoe-emulator: ${errorMessage(err)}\n`);
    process.exit(2);
  }

  let emulator: Awaited<ReturnType<typeof startEmulator>>;
  try {
    emulator = await startEmulator(options);
  } catch (err) {
    logger.error('emulator cannot start', { error: errorMessage(err) });
    process.exitCode = 1;
    return;
  }
  // The start-up line is a contract (benchmarks and tests wait for it), so it is written
  // whatever ODLCOE_LOG_LEVEL says.
  createLogger('emulator', 'info').info('emulator listening', {
    url: emulator.url,
    profile: flags.profile,
    features: options.features ?? [],
  });

  onStopSignals(logger, () => emulator.close(), { message: 'emulator stopping' });
}

void main();
