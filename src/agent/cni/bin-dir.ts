/**
 * What the agent puts into the CNI bin dir (`cni.binDir`), where the container runtime looks
 * for the plugins a pod sandbox needs:
 *
 * - the odlcoe shim: `odlcoe`, a two-line launcher running the compiled shim (copied beside it
 *   as `odlcoe-shim.mjs`: a file without extension would load as CommonJS) with the agent's
 *   Node binary;
 * - `loopback`: containerd (and CRI-O) bring up every sandbox's `lo` with the loopback plugin,
 *   looked up in the same directory as the network's plugin, on RunPodSandbox and
 *   StopPodSandbox alike. Without it both fail, and what a stopped pod held (its port, veth
 *   and lease) stays. It is taken from the CNI plugins beside host-local (the directory of
 *   `ipam.pluginPath`: /usr/lib/cni, Debian's containernetworking-plugins, in the image). A
 *   loopback already in the bin dir (the runtime's own, or one installed earlier) is kept.
 *   When there is none and nothing to install, the readiness check says what is missing and
 *   where the agent looked, until one appears in the bin dir.
 */
import { constants } from 'node:fs';
import { access, chmod, mkdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../common/log.js';
import { errorMessage } from '../../common/log.js';
import { writeFileAtomic } from './conflist.js';

/** Where the compiled shim sits in dist/ beside this module (dist/cni/odlcoe.js). */
export const SHIM_SOURCE = fileURLToPath(new URL('../../../cni/odlcoe.js', import.meta.url));

export interface CniBinDirOptions {
  /** `cni.binDir`. */
  dir: string;
  /** The compiled shim to install. */
  shimSource: string;
  /** Where the host's CNI plugins are: the directory of `ipam.pluginPath`. */
  pluginDir: string;
  logger: Logger;
}

export class CniBinDir {
  /** Why the bin dir has no loopback plugin, while it has none. */
  private loopbackProblem: string | undefined;

  constructor(private readonly options: CniBinDirOptions) {}

  /** Installs the shim (throws when it cannot) and loopback (see `ready`). */
  async install(): Promise<void> {
    await mkdir(this.options.dir, { recursive: true });
    await this.installShim();
    this.loopbackProblem = await this.installLoopback();
  }

  /** The readiness check: true, or throws with what is missing and where the agent looked. */
  async ready(): Promise<boolean> {
    if (this.loopbackProblem !== undefined && (await isExecutableFile(this.loopbackPath))) {
      this.options.logger.info('the CNI bin dir has a loopback plugin now', { path: this.loopbackPath });
      this.loopbackProblem = undefined;
    }
    if (this.loopbackProblem !== undefined) throw new Error(this.loopbackProblem);
    return true;
  }

  private get loopbackPath(): string {
    return join(this.options.dir, 'loopback');
  }

  private async installShim(): Promise<void> {
    const { dir, shimSource, logger } = this.options;
    const source = await readFile(shimSource, 'utf8').catch((err: unknown) => {
      throw new Error(
        `cannot install the CNI shim: ${shimSource} is missing (build first): ${errorMessage(err)}`,
      );
    });
    const shim = join(dir, 'odlcoe-shim.mjs');
    await writeFileAtomic(shim, source, 0o755);
    const launcher = `#!/bin/sh\nexec ${shellQuote(process.execPath)} ${shellQuote(shim)} "$@"\n`;
    const target = join(dir, 'odlcoe');
    await writeFileAtomic(target, launcher, 0o755);
    await chmod(target, 0o755);
    logger.info('installed the CNI shim', { path: target, size: (await stat(shim)).size });
  }

  /** Returns why the bin dir has no loopback plugin, or undefined when it has one. */
  private async installLoopback(): Promise<string | undefined> {
    const { dir, pluginDir, logger } = this.options;
    const target = this.loopbackPath;
    const source = join(pluginDir, 'loopback');
    const plugin = await readFile(source).catch((err: unknown) => err as NodeJS.ErrnoException);
    if (await isExecutableFile(target)) {
      const same = Buffer.isBuffer(plugin) && (await readFile(target)).equals(plugin);
      if (same) logger.debug('the CNI bin dir has the loopback plugin already', { path: target });
      else
        logger.info('kept the loopback plugin already in the CNI bin dir', { path: target, notFrom: source });
      return undefined;
    }
    if (!Buffer.isBuffer(plugin) || !(await isExecutableFile(source))) {
      const why = Buffer.isBuffer(plugin)
        ? 'not executable'
        : plugin.code === 'ENOENT'
          ? 'missing'
          : errorMessage(plugin);
      const problem =
        `the CNI bin dir ${dir} has no loopback plugin, which the container runtime runs beside odlcoe ` +
        `for every pod sandbox (without it every RunPodSandbox and StopPodSandbox fails), and there is ` +
        `none to install: ${source} (in ${pluginDir}, the directory of ipam.pluginPath) is ${why}. ` +
        `Install the CNI plugins (Debian: containernetworking-plugins) so that ${source} exists, ` +
        `or put loopback into ${dir}`;
      logger.error('the CNI bin dir has no loopback plugin', { dir, lookedFor: source, problem: why });
      return problem;
    }
    try {
      // Whatever is there is no usable plugin (a dangling link, a file without x bits): replace it.
      await rm(target, { force: true });
      await writeFileAtomic(target, plugin, 0o755);
    } catch (err) {
      logger.error('could not install the loopback CNI plugin', { path: target, error: errorMessage(err) });
      return `the CNI bin dir ${dir} has no loopback plugin, and copying ${source} there failed: ${errorMessage(err)}`;
    }
    logger.info('installed the loopback CNI plugin', { path: target, from: source, size: plugin.length });
    return undefined;
  }
}

/** A regular file (after links) with an execute bit for this process. */
async function isExecutableFile(path: string): Promise<boolean> {
  try {
    if (!(await stat(path)).isFile()) return false;
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** POSIX single quotes: the paths come from config and the Node binary location. */
function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
