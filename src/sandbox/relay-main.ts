#!/usr/bin/env node
/**
 * The relay a simulated node runs inside its network namespace (see relay.ts):
 *
 *   relay-main --tcp-to-unix 127.0.0.1:16443=/dir/kube.sock --unix-to-tcp /dir/metrics.sock=127.0.0.1:9102
 *
 * Prints `ready` on stdout once every listener is up. Exits on SIGTERM/SIGINT, and when its
 * stdin closes: the sandbox holds the other end, so a sandbox that dies (even by SIGKILL) takes
 * its relays with it.
 */
import { errorMessage } from '../common/log.js';
import { checkUnixPath, parseHostPort, relayTcp, relayUnix, type Relay } from './relay.js';

function usage(message: string): never {
  process.stderr.write(
    `relay: ${message}\nusage: relay-main [--tcp-to-unix <ip>:<port>=<socket>]... [--unix-to-tcp <socket>=<ip>:<port>]...\n`,
  );
  process.exit(2);
}

function split(value: string | undefined, flag: string): [string, string] {
  const i = value?.indexOf('=') ?? -1;
  if (value === undefined || i <= 0 || i === value.length - 1) usage(`${flag} needs <from>=<to>`);
  return [value.slice(0, i), value.slice(i + 1)];
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const starts: (() => Promise<Relay>)[] = [];
  for (let i = 0; i < args.length; i += 2) {
    const flag = args[i];
    const value = args[i + 1];
    try {
      if (flag === '--tcp-to-unix') {
        const [from, to] = split(value, flag);
        const listen = parseHostPort(from);
        const path = checkUnixPath(to);
        starts.push(() => relayTcp(listen, { kind: 'unix', path }));
      } else if (flag === '--unix-to-tcp') {
        const [from, to] = split(value, flag);
        const path = checkUnixPath(from);
        const target = parseHostPort(to);
        starts.push(() => relayUnix(path, { kind: 'tcp', ...target }));
      } else {
        usage(`unknown argument ${JSON.stringify(flag)}`);
      }
    } catch (err) {
      usage(errorMessage(err));
    }
  }
  if (starts.length === 0) usage('nothing to relay');
  const relays: Relay[] = [];
  for (const start of starts) relays.push(await start());
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void Promise.all(relays.map((r) => r.close())).finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdin.on('end', stop);
  process.stdin.on('error', stop);
  process.stdin.resume();
  process.stdout.write('ready\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`relay: ${errorMessage(err)}\n`);
  process.exitCode = 1;
});
