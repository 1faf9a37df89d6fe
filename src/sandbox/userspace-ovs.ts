/**
 * A private, userspace Open vSwitch: its own ovsdb-server and `ovs-vswitchd --disable-system`,
 * with every runtime, database and log file in one directory. It touches neither a system OVS
 * nor another instance's. The sandbox runs one per simulated node, inside the node's network
 * namespace; the integration tests' harness (test/helpers/ovs-sandbox.ts) starts its own
 * through here too. ovs-vswitchd creates tap devices (`ovs-netdev`, one per bridge) in the
 * namespace it runs in, so two instances cannot share a namespace. Bridges must use
 * `datapath_type=netdev` (no kernel module is needed or used).
 */
import { access, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from '../common/exec.js';
import { checkNetnsName } from './netns.js';
import { isAlive, readPidFile, stopPid } from './processes.js';

export const OVS_SCHEMA = '/usr/share/openvswitch/vswitch.ovsschema';
const OVS_PROGRAMS = ['ovsdb-tool', 'ovsdb-server', 'ovs-vswitchd', 'ovs-vsctl'] as const;

export interface UserspaceOvs {
  dir: string;
  /** Unix socket of this ovsdb-server (the agent's `--ovs-db`). */
  dbSocket: string;
  /** ovs-vsctl against this instance; returns stdout. */
  vsctl(args: readonly string[]): Promise<string>;
  /**
   * ovs-ofctl against this instance's bridges (e.g. ['-O', 'OpenFlow13', 'dump-flows', 'br-int']);
   * `input` is its stdin (a `-` file argument).
   */
  ofctl(args: readonly string[], input?: string): Promise<string>;
  /** Whether ovs-vswitchd is running (it may have been stopped, or have died). */
  vswitchdRunning(): Promise<boolean>;
  /** Stops ovs-vswitchd only (ovsdb-server keeps running), as when the switch daemon dies. */
  stopVswitchd(): Promise<void>;
  /** Starts ovs-vswitchd again after stopVswitchd(); does nothing while it runs. */
  startVswitchd(): Promise<void>;
  /** Stops ovsdb-server by its pid (ovs-vswitchd keeps running and reconnects), as when the database server dies. */
  stopOvsdb(): Promise<void>;
  /** Starts ovsdb-server again on the same database after stopOvsdb(); does nothing while it runs. */
  startOvsdb(): Promise<void>;
  /** Stops both daemons by pid (vswitchd first: it holds the database connection); safe to call twice. */
  stop(): Promise<void>;
}

/** Why a userspace OVS cannot run here, or undefined when it can. */
export async function ovsUnavailableReason(): Promise<string | undefined> {
  try {
    await access(OVS_SCHEMA);
  } catch {
    return `Open vSwitch is not installed (${OVS_SCHEMA} is missing; Debian: apt-get install openvswitch-switch)`;
  }
  for (const program of OVS_PROGRAMS) {
    try {
      await run(program, ['--version'], { timeoutMs: 10_000 });
    } catch {
      return `${program} cannot be run (is openvswitch-switch installed and on PATH?)`;
    }
  }
  return undefined;
}

/**
 * Starts both daemons with their files in `dir` (created if missing), inside the named network
 * namespace `netns`, or in this process's own namespace when it is absent.
 */
export async function startUserspaceOvs(opts: { dir: string; netns?: string }): Promise<UserspaceOvs> {
  const netns = opts.netns === undefined ? undefined : checkNetnsName(opts.netns);
  const dir = opts.dir;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const dbSocket = join(dir, 'db.sock');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
    OVS_RUNDIR: dir,
    OVS_DBDIR: dir,
    OVS_LOGDIR: dir,
    OVS_SYSCONFDIR: dir,
  };
  // `ip netns exec` execs the daemon in the namespace; --detach returns once it serves, and
  // its pidfile names the daemon itself.
  const daemon = (command: string, args: string[]) =>
    netns ? run('ip', ['netns', 'exec', netns, command, ...args], { env }) : run(command, args, { env });
  const daemonArgs = (name: string) => [
    `--pidfile=${join(dir, `${name}.pid`)}`,
    `--log-file=${join(dir, `${name}.log`)}`,
    `--unixctl=${join(dir, `${name}.ctl`)}`,
    '--detach',
    '--no-chdir',
    '-vconsole:off',
  ];
  const vsctl = async (args: readonly string[]) =>
    (await run('ovs-vsctl', [`--db=unix:${dbSocket}`, '--timeout=20', ...args], { env })).stdout;
  const pids: { ovsdb?: number; vswitchd?: number } = {};

  const vswitchdRunning = async () => pids.vswitchd !== undefined && (await isAlive(pids.vswitchd));
  const startVswitchd = async () => {
    if (await vswitchdRunning()) return;
    await daemon('ovs-vswitchd', [`unix:${dbSocket}`, '--disable-system', ...daemonArgs('ovs-vswitchd')]);
    pids.vswitchd = await readPidFile(join(dir, 'ovs-vswitchd.pid'));
  };
  const stopVswitchd = async () => {
    if (pids.vswitchd !== undefined) await stopPid(pids.vswitchd);
    pids.vswitchd = undefined;
  };
  const startOvsdb = async () => {
    if (pids.ovsdb !== undefined && (await isAlive(pids.ovsdb))) return;
    await daemon('ovsdb-server', [
      join(dir, 'conf.db'),
      `--remote=punix:${dbSocket}`,
      // As on a node: managers set with set-manager (ptcp:/tcp:) take effect.
      '--remote=db:Open_vSwitch,Open_vSwitch,manager_options',
      ...daemonArgs('ovsdb-server'),
    ]);
    pids.ovsdb = await readPidFile(join(dir, 'ovsdb-server.pid'));
  };
  const stopOvsdb = async () => {
    if (pids.ovsdb !== undefined) await stopPid(pids.ovsdb);
    pids.ovsdb = undefined;
  };
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await stopVswitchd();
    await stopOvsdb();
  };

  try {
    await run('ovsdb-tool', ['create', join(dir, 'conf.db'), OVS_SCHEMA], { env });
    await startOvsdb();
    await vsctl(['--no-wait', 'init']);
    await startVswitchd();
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    dir,
    dbSocket,
    vsctl,
    // ovs-ofctl finds a bridge's management socket as $OVS_RUNDIR/<bridge>.mgmt.
    ofctl: async (args, input) =>
      (await run('ovs-ofctl', args, input === undefined ? { env } : { env, input })).stdout,
    vswitchdRunning,
    stopVswitchd,
    startVswitchd,
    stopOvsdb,
    startOvsdb,
    stop,
  };
}
