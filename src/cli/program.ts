/**
 * The odlcoectl command line: global flags, the commands, output format and exit codes.
 * `runCli` is the whole program minus `process` (tests run it in-process as well as through
 * main.ts as a child process).
 */
import { parseServiceRef, renderServiceTrace, runServiceTrace } from './trace/service.js';
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../common/config-file.js';
import { createLogger, errorMessage } from '../common/log.js';
import { NameError } from '../common/name-error.js';
import { ModelValidationError } from '../netvirt/errors.js';
import { ReachQueryError } from '../netvirt/reach/index.js';
import { ownerContextOf } from '../netvirt/translate-settings.js';
import { validateBridgeName } from '../ovs/names.js';
import { ovsdbSocketPath } from '../ovs/ovs.js';
import type { RestconfClient } from '../restconf/client.js';
import { connectKube, connectOdl } from './connect.js';
import { buildDump, renderDump } from './dump.js';
import { CliError, EXIT, type ExitCode } from './exit-codes.js';
import { executeGc, gcReport, planGc, renderGc } from './gc.js';
import { NETVIRT_MODEL, type CliModel } from './model.js';
import {
  CLI_SCHEME,
  CLI_USES,
  resolveSettings,
  withModels,
  type CliConfig,
  type CliSettings,
  type GlobalFlags,
} from './settings.js';
import { assumedModels, OdlModelsError, readModels } from '../odl/models.js';
import { keysToPlan, planInputs } from './plan-inputs.js';
import { odlReader, readOdl, readSnapshot } from './snapshot.js';
import { renderStatus, runStatus } from './status.js';
import {
  createNetwork,
  deleteNetwork,
  getNetwork,
  parseNetworkRef,
  readNetworks,
  renderNetwork,
  renderNetworkList,
  updateNetwork,
  type NetworkFlags,
} from './networks.js';
import { buildSubnets, renderSubnets } from './subnets.js';
import { parsePodRef, renderTrace, runTrace } from './trace/index.js';
import { renderReach, runReach } from './reach.js';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

interface Outcome {
  exitCode: ExitCode;
}

/** Writes the report: JSON (stable shape, docs/cli.md) or the human rendering. */
function emit<T>(io: CliIo, settings: CliConfig, report: T, render: (r: T) => string): void {
  io.stdout(settings.output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : `${render(report)}\n`);
}

async function withClient<T>(
  io: CliIo,
  config: CliConfig,
  fn: (client: RestconfClient) => Promise<T>,
): Promise<T> {
  // RESTCONF retries are logged as warnings; a CLI shows them only when asked to.
  const logger = createLogger('odlcoectl', io.env.ODLCOE_LOG_LEVEL ?? 'error');
  const client = connectOdl(config, logger, io.env);
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}

/** A command that needs ODL: its release and models are read first (a told profile is checked). */
async function withOdl<T>(
  io: CliIo,
  config: CliConfig,
  fn: (client: RestconfClient, settings: CliSettings) => Promise<T>,
): Promise<T> {
  return withClient(io, config, async (client) => {
    let models;
    try {
      models = await readModels(client, config.profile, config.odl.url);
    } catch (err) {
      // ODL does not answer: with a told profile, go on with what that release has (every
      // read says what it could not read); without one, nothing can be planned.
      if (err instanceof OdlModelsError || config.profile === undefined) throw err;
      models = assumedModels(config.profile);
    }
    return fn(client, withModels(config, models));
  });
}

const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/** `network list|get|create|update|delete` (networks.ts): Kubernetes only, no ODL. */
function addNetworkCommands(
  program: Command,
  io: CliIo,
  settingsOf: (cmd: Command) => CliConfig,
  done: (o: Outcome) => void,
): void {
  const network = program
    .command('network')
    .description("odlcoe's extra networks (NetworkAttachmentDefinitions): list, get, create, update, delete");
  const opts = (c: CliConfig) => ({ timeoutMs: c.timeoutMs });
  const configFlags = (cmd: Command) =>
    cmd
      .option('--subnet <cidr>', 'a subnet (repeat for several; replaces all subnets on update)', collect)
      .option('--gateway <ip>', "a subnet's gateway (in one of the --subnet ranges)", collect)
      .option('--exclude <ip|cidr>', 'addresses never allocated (in one of the --subnet ranges)', collect)
      .option(
        '--routing <l2|vpn|namespace>',
        "l2 (default), vpn (routed, its own VPN) or namespace (routed through its namespace's VPN)",
      )
      .option(
        '--route <dst[,gw]>',
        'a route every attachment gets (repeat; replaces all routes on update)',
        collect,
      )
      .option('--elan <name>', 'attach to an ELAN an ODL user made (never written by odlcoe)');
  network
    .command('list')
    .description('every odlcoe network, its state, subnets, ELAN and attachments')
    .option('-n, --namespace <ns>', 'only this namespace')
    .action(async (o: { namespace?: string }, cmd: Command) => {
      const c = settingsOf(cmd);
      const views = await readNetworks(connectKube(c), o.namespace, opts(c));
      emit(io, c, { networks: views }, (r) => renderNetworkList(r.networks));
      done({ exitCode: views.some((v) => v.state === 'invalid') ? EXIT.problem : EXIT.ok });
    });
  network
    .command('get')
    .description('one network: its config as the watcher reads it, and every attachment')
    .argument('<network>', '<namespace>/<name>')
    .action(async (ref: string, _o: unknown, cmd: Command) => {
      const c = settingsOf(cmd);
      const view = await getNetwork(connectKube(c), parseNetworkRef(ref), opts(c));
      emit(io, c, view, renderNetwork);
      done({ exitCode: view.state === 'invalid' ? EXIT.problem : EXIT.ok });
    });
  configFlags(network.command('create'))
    .description('create a network (validated as the watcher would, before anything is written)')
    .argument('<network>', '<namespace>/<name>')
    .action(async (ref: string, o: NetworkFlags, cmd: Command) => {
      const c = settingsOf(cmd);
      emit(io, c, await createNetwork(connectKube(c), parseNetworkRef(ref), o, opts(c)), renderNetwork);
      done({ exitCode: EXIT.ok });
    });
  configFlags(network.command('update'))
    .option('--clear-routes', 'remove every route')
    .description("change a network's subnets, routing, routes or ELAN (the given members replace the old)")
    .argument('<network>', '<namespace>/<name>')
    .action(async (ref: string, o: NetworkFlags, cmd: Command) => {
      const c = settingsOf(cmd);
      emit(io, c, await updateNetwork(connectKube(c), parseNetworkRef(ref), o, opts(c)), renderNetwork);
      done({ exitCode: EXIT.ok });
    });
  network
    .command('delete')
    .description('delete a network (refused while pods are attached, unless --force)')
    .argument('<network>', '<namespace>/<name>')
    .option('--force', 'delete although pods are attached (their extra interfaces lose their ODL objects)')
    .action(async (ref: string, o: { force?: boolean }, cmd: Command) => {
      const c = settingsOf(cmd);
      const view = await deleteNetwork(connectKube(c), parseNetworkRef(ref), o.force === true, opts(c));
      emit(
        io,
        c,
        { deleted: `${view.namespace}/${view.name}`, attachments: view.attachments },
        (r) => `deleted ${r.deleted}`,
      );
      done({ exitCode: EXIT.ok });
    });
}

function exitCodeOf(err: unknown): ExitCode {
  if (err instanceof CliError) return err.exitCode;
  if (err instanceof ConfigError || err instanceof NameError) return EXIT.usage;
  if (err instanceof ModelValidationError || err instanceof ReachQueryError) return EXIT.usage;
  // A told profile ODL contradicts, or an ODL without NetVirt: nothing to look at.
  if (err instanceof OdlModelsError) return EXIT.usage;
  return EXIT.unavailable;
}

export interface CliOptions {
  /** The ODL kinds odlcoectl reads and how it plans their keys (default: the netvirt backend's). */
  model?: CliModel;
}

export async function runCli(argv: readonly string[], io: CliIo, options: CliOptions = {}): Promise<number> {
  const model = options.model ?? NETVIRT_MODEL;
  const kinds = model.kinds;
  const readerOf = (client: RestconfClient, settings: CliSettings) => odlReader(client, settings, model);
  let outcome: Outcome = { exitCode: EXIT.ok };
  let jsonErrors =
    argv.some((a, i) => (a === '-o' || a === '--output') && argv[i + 1] === 'json') ||
    argv.includes('--output=json');
  const settingsOf = (cmd: Command, extra: Partial<GlobalFlags> = {}): CliConfig => {
    const flags = { ...CLI_SCHEME.flagsFrom(cmd), ...extra };
    const settings = resolveSettings(flags, io.env);
    jsonErrors = settings.output === 'json';
    return settings;
  };

  const program = CLI_SCHEME.addOptions(
    new Command('odlcoectl').description('Operator CLI for odlcoe: why does this pod have no network?'),
    CLI_USES.global,
    true,
  )
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });

  CLI_SCHEME.addOptions(program.command('status'), CLI_USES.status)
    .description(
      'pods programmed vs pending, collisions, watcher warnings, leader, ODL and Kubernetes reachability',
    )
    .action(async (_opts: unknown, cmd: Command) => {
      const settings = settingsOf(cmd);
      const kube = connectKube(settings);
      outcome = await withClient(io, settings, async (client) => {
        const { report, exitCode } = await runStatus(settings, client, kube, model);
        emit(io, settings, report, renderStatus);
        return { exitCode };
      });
    });

  program
    .command('dump')
    .description(
      'what this cluster owns in ODL, as a tree: VPN → ELAN → interfaces, plus k8s-nodes (reads ODL only)',
    )
    .action(async (_opts: unknown, cmd: Command) => {
      outcome = await withOdl(io, settingsOf(cmd), async (client, settings) => {
        const odl = await readOdl(client, settings, undefined, readerOf(client, settings));
        emit(io, settings, buildDump(odl.state, ownerContextOf(settings), odl.unparsed), renderDump);
        return { exitCode: EXIT.ok };
      });
    });

  program
    .command('trace')
    .description(
      "follow one pod's network through Kubernetes, ODL and OVS, or one Service's routes through the node gateways; points at what is missing or wrong",
    )
    .argument('<pod>', '<namespace>/<pod>, or svc/<namespace>/<name> for a Service')
    .option(
      '--ovs-db <socket>',
      "ovsdb-server's unix socket on this node, a path or unix:<path> (default: the system one)",
    )
    .option('--bridge <name>', 'the integration bridge', 'br-int')
    .option('--no-ovs', "do not look at OVS (when not on the pod's node)")
    .action(async (podRef: string, opts: { ovsDb?: string; bridge: string; ovs: boolean }, cmd: Command) => {
      const config = settingsOf(cmd);
      const service = parseServiceRef(podRef);
      let dbSocket: string | undefined;
      try {
        dbSocket = opts.ovsDb === undefined ? undefined : ovsdbSocketPath(opts.ovsDb);
      } catch (err) {
        throw new CliError(`--ovs-db: ${errorMessage(err)}`, EXIT.usage);
      }
      if (service) {
        validateBridgeName(opts.bridge);
        const kube = connectKube(config);
        outcome = await withOdl(io, config, async (client, settings) => {
          const { report, exitCode } = await runServiceTrace(service, settings, client, kube, {
            skip: !opts.ovs,
            bridge: opts.bridge,
            ...(dbSocket !== undefined ? { dbSocket } : {}),
          });
          emit(io, settings, report, renderServiceTrace);
          return { exitCode };
        });
        return;
      }
      const ref = parsePodRef(podRef);
      const kube = connectKube(config);
      outcome = await withOdl(io, config, async (client, settings) => {
        const { report, exitCode } = await runTrace(ref, settings, client, kube, {
          skip: !opts.ovs,
          bridge: opts.bridge,
          ...(dbSocket !== undefined ? { dbSocket } : {}),
        });
        emit(io, settings, report, renderTrace);
        return { exitCode };
      });
    });

  program
    .command('reach')
    .description(
      'would NetVirt deliver a packet from one pod to another pod or an IP: the ODL objects it passes, and which one drops it (reads ODL; Kubernetes only for the pods)',
    )
    .argument('<from>', 'the source pod, <namespace>/<pod>')
    .argument(
      '<to>',
      'the destination: a pod (<namespace>/<pod>) or an IP address (a Service IP, a node, ...)',
    )
    .option('--port <port>', '<port>/<tcp|udp|sctp> (default: an ICMP echo request)')
    .action(async (from: string, to: string, opts: { port?: string }, cmd: Command) => {
      const config = settingsOf(cmd);
      const kube = connectKube(config);
      outcome = await withOdl(io, config, async (client, settings) => {
        const { report, exitCode } = await runReach(
          { from, to, port: opts.port },
          readerOf(client, settings),
          kube,
          settings.timeoutMs,
        );
        emit(io, settings, report, renderReach);
        return { exitCode };
      });
    });

  program
    .command('subnets')
    .description('per node: internal IP, pod subnet and where it comes from, gateway, pods using it')
    .action(async (_opts: unknown, cmd: Command) => {
      const config = settingsOf(cmd);
      const kube = connectKube(config);
      outcome = await withOdl(io, config, async (client, settings) => {
        const { odl, kube: cluster } = await readSnapshot(client, kube, settings, {
          timeoutMs: settings.timeoutMs,
        });
        const report = buildSubnets(
          cluster,
          odl.state,
          ownerContextOf(settings),
          settings.subnetSource,
          odlReader(client, settings),
        );
        emit(io, settings, report, renderSubnets);
        return { exitCode: report.nodes.some((n) => n.problem !== null) ? EXIT.problem : EXIT.ok };
      });
    });

  program
    .command('gc')
    .description('what garbage collection would delete in ODL (--dry-run), or delete it (--yes)')
    .option('--dry-run', 'only list what would be deleted')
    .option('--yes', 'really delete (the watcher normally does this itself)')
    .action(async (opts: { dryRun?: boolean; yes?: boolean }, cmd: Command) => {
      const config = settingsOf(cmd);
      if (opts.dryRun && opts.yes) throw new CliError('give --dry-run or --yes, not both', EXIT.usage);
      if (!opts.dryRun && !opts.yes) {
        throw new CliError(
          'refusing to delete: the watcher is the only writer of ODL and collects garbage itself. ' +
            'Use --dry-run to see what would be deleted, or --yes to delete it anyway (for example after the watcher was removed for good).',
          EXIT.refused,
        );
      }
      const kube = connectKube(config);
      outcome = await withOdl(io, config, async (client, settings) => {
        const owner = ownerContextOf(settings);
        // ODL first, then Kubernetes (see snapshot.ts); either failing aborts before any decision.
        const reader = readerOf(client, settings);
        const { odl, kube: cluster } = await readSnapshot(
          client,
          kube,
          settings,
          { timeoutMs: settings.timeoutMs },
          reader,
        );
        const inputs = planInputs(cluster, odl.state, settings);
        const plan = planGc(
          keysToPlan(cluster, odl.state, owner),
          (key) => model.plan(key, inputs),
          odl.state,
          owner,
          reader,
        );
        const deletions = opts.yes ? await executeGc(plan, reader) : null;
        emit(
          io,
          settings,
          gcReport(plan, odl.unparsed, (k) => kinds.label(k), deletions),
          renderGc,
        );
        return { exitCode: deletions?.some((d) => d.result === 'failed') ? EXIT.problem : EXIT.ok };
      });
    });

  addNetworkCommands(program, io, settingsOf, (o) => {
    outcome = o;
  });

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return outcome.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (
        err.code === 'commander.helpDisplayed' ||
        err.code === 'commander.version' ||
        err.code === 'commander.help'
      )
        return EXIT.ok;
      // commander has printed its own message.
      return EXIT.usage;
    }
    const code = exitCodeOf(err);
    io.stderr(`odlcoectl: ${errorMessage(err)}\n`);
    if (jsonErrors) io.stdout(`${JSON.stringify({ error: errorMessage(err), exitCode: code }, null, 2)}\n`);
    return code;
  }
}
