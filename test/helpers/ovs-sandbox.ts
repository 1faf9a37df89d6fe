import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandError, run } from '../../src/agent/exec.js';
import { lockNetworkNamespace } from './netns-lock.js';
import { isAlive, readPidFile, stopPid } from './processes.js';

/**
 * A private, userspace Open vSwitch for tests: its own ovsdb-server and
 * `ovs-vswitchd --disable-system`, with every runtime, database and log path in a temp dir,
 * so it touches neither a system OVS nor another test's. Bridges must use
 * `datapath_type=netdev` (no kernel module here).
 *
 * ovs-vswitchd creates tap devices in the namespace it runs in (`ovs-netdev`, one per bridge),
 * so only one sandbox can run per network namespace. startOvsSandbox() holds a machine-wide
 * lock on that namespace until stop(): sandboxes in the test process's own namespace (the
 * one whose devices `ip` and the agent modules see) take turns; a sandbox started with
 * `netns` (a simulated node) runs alongside the others. The devices a sandbox can attach are
 * those of the namespace it runs in.
 */

export interface OvsSandbox {
  dir: string;
  /** Unix socket of the sandbox's ovsdb-server (for `new Ovs({ dbSocket })`). */
  dbSocket: string;
  /** The namespace both daemons run in, when one was given. */
  netns?: string;
  /** ovs-vsctl against this sandbox; returns stdout. */
  vsctl(args: string[]): Promise<string>;
  /** ovs-ofctl against this sandbox's bridges (e.g. ['-O', 'OpenFlow13', 'dump-flows', 'br-int']). */
  ofctl(args: string[]): Promise<string>;
  /** Stops ovs-vswitchd only (ovsdb-server keeps running), to test a dead switch daemon. */
  stopVswitchd(): Promise<void>;
  /** Starts ovs-vswitchd again after stopVswitchd(). */
  startVswitchd(): Promise<void>;
  /** Removes the bridges, stops both daemons by pid, removes the temp dir; safe to call twice. */
  stop(): Promise<void>;
}

const SCHEMA = '/usr/share/openvswitch/vswitch.ovsschema';

export async function startOvsSandbox(opts: { netns?: string } = {}): Promise<OvsSandbox> {
  const netnsPath = opts.netns ? `/run/netns/${opts.netns}` : undefined;
  const lock = await lockNetworkNamespace(netnsPath);
  let dir: string;
  try {
    dir = await mkdtemp(join(tmpdir(), 'odlcoe-ovs-'));
  } catch (err) {
    await lock.release();
    throw err;
  }
  const dbSocket = join(dir, 'db.sock');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
    OVS_RUNDIR: dir,
    OVS_DBDIR: dir,
    OVS_LOGDIR: dir,
    OVS_SYSCONFDIR: dir,
  };
  // In the sandbox's namespace: `ip netns exec` execs the daemon there; --detach returns once
  // the daemon is ready, and its pidfile names the daemon itself.
  const inNetns = (cmd: string, args: string[]) =>
    opts.netns ? run('ip', ['netns', 'exec', opts.netns, cmd, ...args], { env }) : run(cmd, args, { env });
  const daemonArgs = (name: string) => [
    `--pidfile=${join(dir, `${name}.pid`)}`,
    `--log-file=${join(dir, `${name}.log`)}`,
    `--unixctl=${join(dir, `${name}.ctl`)}`,
    '--detach',
    '--no-chdir',
    '-vconsole:off',
  ];
  const pids: { ovsdb?: number; vswitchd?: number } = {};
  const vsctl = async (args: string[]) =>
    (await run('ovs-vsctl', [`--db=unix:${dbSocket}`, '--timeout=20', ...args], { env })).stdout;

  const startVswitchd = async () => {
    if (pids.vswitchd !== undefined && (await isAlive(pids.vswitchd))) return;
    await inNetns('ovs-vswitchd', [`unix:${dbSocket}`, '--disable-system', ...daemonArgs('ovs-vswitchd')]);
    pids.vswitchd = await readPidFile(join(dir, 'ovs-vswitchd.pid'));
  };
  const stopVswitchd = async () => {
    if (pids.vswitchd !== undefined) await stopPid(pids.vswitchd);
    pids.vswitchd = undefined;
  };

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    try {
      // ovs-vswitchd makes its tap devices persistent (they survive a restart); deleting the
      // bridges while it runs removes them, so the namespace is clean for the next sandbox.
      const bridges = await bridgesOf(vsctl);
      if (pids.vswitchd !== undefined && (await isAlive(pids.vswitchd))) {
        for (const br of bridges)
          await vsctl(['--timeout=10', '--if-exists', 'del-br', br]).catch(() => undefined);
      }
      await stopVswitchd();
      if (pids.ovsdb !== undefined) await stopPid(pids.ovsdb);
      // Whatever is still left (ovs-vswitchd was stopped before): only tap devices, by the
      // names this sandbox's switch created.
      for (const dev of ['ovs-netdev', ...bridges]) await deleteTap(dev, opts.netns);
      await rm(dir, { recursive: true, force: true });
    } finally {
      await lock.release();
    }
  };

  try {
    await run('ovsdb-tool', ['create', join(dir, 'conf.db'), SCHEMA], { env });
    await inNetns('ovsdb-server', [
      join(dir, 'conf.db'),
      `--remote=punix:${dbSocket}`,
      // As on a node: managers set with set-manager (ptcp:/tcp:) take effect.
      '--remote=db:Open_vSwitch,Open_vSwitch,manager_options',
      ...daemonArgs('ovsdb-server'),
    ]);
    pids.ovsdb = await readPidFile(join(dir, 'ovsdb-server.pid'));
    await vsctl(['--no-wait', 'init']);
    await startVswitchd();
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    dir,
    dbSocket,
    ...(opts.netns ? { netns: opts.netns } : {}),
    vsctl,
    // ovs-ofctl finds a bridge's management socket as $OVS_RUNDIR/<bridge>.mgmt.
    ofctl: async (args) => (await run('ovs-ofctl', args, { env })).stdout,
    stopVswitchd,
    startVswitchd,
    stop,
  };
}

async function bridgesOf(vsctl: (args: string[]) => Promise<string>): Promise<string[]> {
  try {
    return (await vsctl(['--timeout=5', 'list-br'])).split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** Deletes a leftover tap device of that name (never any other kind of device). */
async function deleteTap(name: string, netns: string | undefined): Promise<void> {
  const ip = (args: string[]) => run('ip', [...(netns ? ['-n', netns] : []), ...args]);
  try {
    const [link] = JSON.parse((await ip(['-d', '-j', 'link', 'show', 'dev', name])).stdout) as {
      linkinfo?: { info_kind?: string };
    }[];
    if (link?.linkinfo?.info_kind === 'tun') await ip(['link', 'del', 'dev', name]);
  } catch (err) {
    if (err instanceof CommandError && /does not exist|Cannot find device|No such file/.test(err.stderr))
      return;
    throw err;
  }
}
