/**
 * A private, userspace Open vSwitch for one simulated node: its own ovsdb-server and
 * `ovs-vswitchd --disable-system`, run inside the node's network namespace, with every
 * runtime, database and log file in the node's directory. It touches neither a system OVS
 * nor another node's: ovs-vswitchd creates tap devices (`ovs-netdev`, one per bridge) in the
 * namespace it runs in, so two of them cannot share a namespace, and every node has its own.
 * Bridges must use `datapath_type=netdev` (no kernel module is needed or used).
 */
import { access, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from '../agent/exec.js';
import { checkNetnsName } from './netns.js';
import { readPidFile, stopPid } from './processes.js';

export const OVS_SCHEMA = '/usr/share/openvswitch/vswitch.ovsschema';
const OVS_PROGRAMS = ['ovsdb-tool', 'ovsdb-server', 'ovs-vswitchd', 'ovs-vsctl'] as const;

export interface UserspaceOvs {
  dir: string;
  /** Unix socket of this ovsdb-server (the agent's `--ovs-db`). */
  dbSocket: string;
  /** ovs-vsctl against this instance; returns stdout. */
  vsctl(args: readonly string[]): Promise<string>;
  /** Stops both daemons by pid; safe to call twice. */
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

export async function startUserspaceOvs(opts: { dir: string; netns: string }): Promise<UserspaceOvs> {
  const netns = checkNetnsName(opts.netns);
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
  const inNetns = (command: string, args: string[]) =>
    run('ip', ['netns', 'exec', netns, command, ...args], { env });
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
  const pids: number[] = [];
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // vswitchd first (it holds the database connection), then ovsdb-server.
    for (const pid of [...pids].reverse()) await stopPid(pid);
  };
  try {
    await run('ovsdb-tool', ['create', join(dir, 'conf.db'), OVS_SCHEMA], { env });
    await inNetns('ovsdb-server', [
      join(dir, 'conf.db'),
      `--remote=punix:${dbSocket}`,
      ...daemonArgs('ovsdb-server'),
    ]);
    pids.push(await readPidFile(join(dir, 'ovsdb-server.pid')));
    await vsctl(['--no-wait', 'init']);
    await inNetns('ovs-vswitchd', [`unix:${dbSocket}`, '--disable-system', ...daemonArgs('ovs-vswitchd')]);
    pids.push(await readPidFile(join(dir, 'ovs-vswitchd.pid')));
  } catch (err) {
    await stop();
    throw err;
  }
  return { dir, dbSocket, vsctl, stop };
}
