/**
 * The CNI config file the agent writes for the runtime (odlcoe's plugin with host-local IPAM
 * over the node's pod subnet), written atomically and only when its content changes, so a
 * runtime never reads half a file and a restart does not make it reload. It is also read back:
 * the subnet it names lets a restarted agent answer DELs before ODL confirms the subnet.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { podRangeStart } from '../../netvirt/node-network.js';
import type { PodSubnet } from '../pod-subnet.js';

/** Everything the CNI config file says; rendered by `renderConflist`. */
export interface ConflistSettings {
  /** The version the runtime is asked to speak; containerd 1.6 refuses 1.1.0. */
  cniVersion: string;
  networkName: string;
  socketPath: string;
  mtu: number;
  subnet: PodSubnet;
  /** host-local's `routes` (pod-subnet.ts podRoutes). */
  routes: { dst: string }[];
  ipamDataDir: string;
  /** Where the shim writes DEL requests it could not hand to the agent. */
  pendingDelDir: string;
  /** The shim's log file; absent = stderr. */
  logFile?: string;
}

/**
 * The conflist JSON (stable key order, trailing newline) so that "rewrite only when the
 * content changes" is a string comparison.
 */
export function renderConflist(s: ConflistSettings): string {
  const plugin: Record<string, unknown> = {
    type: 'odlcoe',
    socket: s.socketPath,
    mtu: s.mtu,
    pendingDelDir: s.pendingDelDir,
    ...(s.logFile ? { logFile: s.logFile } : {}),
    ipam: {
      type: 'host-local',
      ranges: [[ipamRange(s.subnet)]],
      routes: s.routes,
      dataDir: s.ipamDataDir,
    },
  };
  return `${JSON.stringify({ cniVersion: s.cniVersion, name: s.networkName, plugins: [plugin] }, null, 2)}\n`;
}

/**
 * host-local's range: the subnet, its gateway, and `rangeStart` when pods do not start at the
 * second address (the node gateway holds it); one object for the conflist and the agent's IPAM.
 */
export function ipamRange(subnet: PodSubnet): { subnet: string; gateway: string; rangeStart?: string } {
  const start = podRangeStart(subnet.cidr, false);
  return {
    subnet: subnet.cidr,
    gateway: subnet.gateway,
    ...(subnet.rangeStart !== start ? { rangeStart: subnet.rangeStart } : {}),
  };
}

/** The subnet an earlier agent wrote into the conflist at `path`, or undefined. */
export async function readConflistSubnet(path: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const doc = JSON.parse(text) as {
      plugins?: { type?: string; ipam?: { ranges?: { subnet?: string }[][] } }[];
    };
    const plugin = doc.plugins?.find((p) => p.type === 'odlcoe');
    return plugin?.ipam?.ranges?.[0]?.[0]?.subnet;
  } catch {
    return undefined;
  }
}

/**
 * Writes `content` to `path` so that a reader (the runtime polls the directory) sees either
 * the old file or the new one, never a partial one: a temp file in the same directory, fsync,
 * rename over the target, fsync the directory. The temp name starts with `.` and lacks the
 * `.conflist` suffix so the runtime never loads it. Returns false when the file already had
 * this content (nothing written, so the runtime does not reload needlessly).
 */
export async function writeFileAtomic(
  path: string,
  content: string | Buffer,
  mode = 0o644,
): Promise<boolean> {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  try {
    if ((await readFile(path)).equals(bytes)) return false;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.${basename(path)}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const file = await open(tmp, 'wx', mode);
    try {
      await file.writeFile(bytes);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  const dirHandle = await open(dir, 'r');
  try {
    await dirHandle.sync();
  } finally {
    await dirHandle.close();
  }
  return true;
}
