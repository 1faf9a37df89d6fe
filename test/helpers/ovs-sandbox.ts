import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandError, run } from '../../src/common/exec.js';
import { startUserspaceOvs, type UserspaceOvs } from '../../src/sandbox/userspace-ovs.js';
import { lockNetworkNamespace } from './netns-lock.js';

/**
 * A private, userspace Open vSwitch for tests: the sandbox's own (src/sandbox/userspace-ovs.ts),
 * in a temp dir, so it touches neither a system OVS nor another test's. Bridges must use
 * `datapath_type=netdev` (no kernel module here).
 *
 * ovs-vswitchd creates tap devices in the namespace it runs in (`ovs-netdev`, one per bridge),
 * so only one sandbox can run per network namespace. startOvsSandbox() holds a machine-wide
 * lock on that namespace until stop(): sandboxes in the test process's own namespace (the
 * one whose devices `ip` and the agent modules see) take turns; a sandbox started with
 * `netns` (a simulated node) runs alongside the others. The devices a sandbox can attach are
 * those of the namespace it runs in. stop() leaves the namespace as it found it: the bridges
 * and their taps go too, which the sandbox never needs (its node's namespace goes with it).
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
  ofctl(args: string[], input?: string): Promise<string>;
  /** Stops ovs-vswitchd only (ovsdb-server keeps running), to test a dead switch daemon. */
  stopVswitchd(): Promise<void>;
  /** Starts ovs-vswitchd again after stopVswitchd(). */
  startVswitchd(): Promise<void>;
  /** Stops ovsdb-server by its pid (ovs-vswitchd keeps running), to test a dead database server. */
  stopOvsdb(): Promise<void>;
  /** Starts ovsdb-server again, on the same database, after stopOvsdb(). */
  startOvsdb(): Promise<void>;
  /** Removes the bridges, stops both daemons by pid, removes the temp dir; safe to call twice. */
  stop(): Promise<void>;
}

export async function startOvsSandbox(opts: { netns?: string } = {}): Promise<OvsSandbox> {
  const lock = await lockNetworkNamespace(opts.netns ? `/run/netns/${opts.netns}` : undefined);
  let dir: string | undefined;
  let ovs: UserspaceOvs | undefined;
  // Whatever a stopped switch left (it makes its tap devices persistent), then the temp dir
  // and the lock: the namespace is clean for the next sandbox.
  const cleanUp = async (bridges: string[]) => {
    try {
      for (const dev of ['ovs-netdev', ...bridges]) await deleteTap(dev, opts.netns);
      if (dir) await rm(dir, { recursive: true, force: true });
    } finally {
      await lock.release();
    }
  };
  try {
    dir = await mkdtemp(join(tmpdir(), 'odlcoe-ovs-'));
    ovs = await startUserspaceOvs({ dir, ...(opts.netns ? { netns: opts.netns } : {}) });
  } catch (err) {
    await cleanUp([]);
    throw err;
  }
  const started = ovs;

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    let bridges: string[] = [];
    try {
      bridges = await bridgesOf(started);
      // Deleting the bridges while ovs-vswitchd runs removes their taps with them.
      if (await started.vswitchdRunning()) {
        for (const br of bridges)
          await started.vsctl(['--timeout=10', '--if-exists', 'del-br', br]).catch(() => undefined);
      }
      await started.stop();
    } finally {
      await cleanUp(bridges);
    }
  };

  return {
    dir: started.dir,
    dbSocket: started.dbSocket,
    ...(opts.netns ? { netns: opts.netns } : {}),
    vsctl: started.vsctl,
    ofctl: started.ofctl,
    stopVswitchd: started.stopVswitchd,
    startVswitchd: started.startVswitchd,
    stopOvsdb: started.stopOvsdb,
    startOvsdb: started.startOvsdb,
    stop,
  };
}

async function bridgesOf(ovs: UserspaceOvs): Promise<string[]> {
  try {
    return (await ovs.vsctl(['--timeout=5', 'list-br'])).split('\n').filter(Boolean);
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
