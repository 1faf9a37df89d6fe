/**
 * The real `odlcoe-watcher` entry point as a child process (configured by flags and
 * environment, as a Deployment runs it), with its JSON log collected and the ops server's
 * port picked up from it.
 *
 * Start-up is timed on its own (`started`): before its first log line the child has tsx compile
 * and load the whole program, several seconds of CPU that a loaded machine stretches past half a
 * minute. A test's deadlines for what the watcher does (lead, converge) start after it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/watcher/main.ts', import.meta.url));

export interface WatcherProcess {
  child: ChildProcess;
  /** stderr, one entry per line. */
  log: string[];
  /** The ops server's port, once it listens. */
  port(): number | undefined;
  /**
   * Resolves with the ops server's port once it listens (the watcher starts it once it has read
   * ODL's module list, before it talks to Kubernetes); rejects with the end of the child's log
   * if the child exits first or `timeoutMs` (default 120 s) passes.
   */
  started(timeoutMs?: number): Promise<number>;
  /** An ops server path: status and body. */
  scrape(path: string): Promise<{ status: number; text: string }>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/**
 * The flags every test run needs: the kubeconfig and ODL password in `dir` (`kubeconfig`,
 * `odl-password`), the emulator's profile and dialect, `podCIDR` subnets, and an ops server
 * on a free port of 127.0.0.1.
 */
export function baseArgs(
  env: { emu: { url: string }; profile: string; dialect: string },
  dir: string,
): string[] {
  return [
    ['--kubeconfig', join(dir, 'kubeconfig')],
    ['--odl-url', env.emu.url],
    ['--odl-user', 'admin'],
    ['--odl-password-file', join(dir, 'odl-password')],
    ['--profile', env.profile],
    ['--dialect', env.dialect],
    ['--subnet-source', 'podCIDR'],
    // The scenario oracles fold no NetworkPolicy (test/watcher/network-policy.test.ts has it on).
    ['--network-policy', 'off'],
    ['--metrics-host', '127.0.0.1'],
    ['--metrics-port', '0'],
  ].flat();
}

export function startWatcherProcess(args: string[], env: Record<string, string>): WatcherProcess {
  const log: string[] = [];
  let port: number | undefined;
  let onListening = (): void => undefined;
  const listening = new Promise<void>((resolve) => (onListening = resolve));
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    env: { ...process.env, ODLCOE_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // After 'exit', once stderr is read to its end: what the child said last is in `log`.
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  let buffered = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      log.push(line);
      try {
        const entry = JSON.parse(line) as { message?: string; port?: number };
        if (entry.message === 'ops server listening') {
          port = entry.port;
          onListening();
        }
      } catch {
        // not JSON: kept in the log only
      }
    }
  });
  const tail = () => log.slice(-10).join('\n');
  return {
    child,
    log,
    port: () => port,
    async started(timeoutMs = 120_000) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`the watcher's ops server not listening after ${timeoutMs} ms:\n${tail()}`)),
          timeoutMs,
        );
      });
      const exit = closed.then((code) => {
        throw new Error(`the watcher exited with ${code} before its ops server listened:\n${tail()}`);
      });
      try {
        await Promise.race([listening, exit, deadline]);
      } finally {
        clearTimeout(timer);
      }
      return port ?? 0;
    },
    async scrape(path) {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      return { status: res.status, text: await res.text() };
    },
    exited,
  };
}
