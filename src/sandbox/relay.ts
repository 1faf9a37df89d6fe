/**
 * Byte relays between a TCP address and a unix socket, to cross network namespaces without
 * opening anything beyond loopback. A simulated node runs in its own network namespace, where
 * 127.0.0.1 is not the sandbox's 127.0.0.1; unix sockets live in the file system, which both
 * namespaces share. So the Kubernetes API and ODL, listening on the sandbox's loopback, reach
 * a node's agent as: agent → 127.0.0.1:<same port> in the node (relay) → unix socket →
 * sandbox (relay) → 127.0.0.1:<port>. The agent's metrics go the other way.
 */
import { chmod, rm } from 'node:fs/promises';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface Relay {
  /** The TCP port listened on (tcp-to-unix relays). */
  readonly port: number | undefined;
  close(): Promise<void>;
}

export type RelayTarget = { kind: 'tcp'; host: string; port: number } | { kind: 'unix'; path: string };

/** Longest unix socket path Linux accepts (sun_path is 108 bytes with the terminating NUL). */
export const MAX_UNIX_PATH_BYTES = 107;

export function checkUnixPath(path: string): string {
  if (!path.startsWith('/')) throw new Error(`unix socket path ${JSON.stringify(path)} must be absolute`);
  if (Buffer.byteLength(path) > MAX_UNIX_PATH_BYTES)
    throw new Error(
      `unix socket path ${path} is longer than ${MAX_UNIX_PATH_BYTES} bytes; use a shorter work directory`,
    );
  return path;
}

function pipeBoth(a: Socket, b: Socket): void {
  // Either side failing or ending tears down both: a half-open relay would hang its client.
  const destroy = () => {
    a.destroy();
    b.destroy();
  };
  a.on('error', destroy);
  b.on('error', destroy);
  a.on('close', destroy);
  b.on('close', destroy);
  a.pipe(b);
  b.pipe(a);
}

function dial(target: RelayTarget): Socket {
  return target.kind === 'tcp'
    ? connect({ host: target.host, port: target.port })
    : connect({ path: target.path });
}

function serve(target: RelayTarget): { server: Server; sockets: Set<Socket> } {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = dial(target);
    sockets.add(client);
    sockets.add(upstream);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
    pipeBoth(client, upstream);
  });
  return { server, sockets };
}

function closer(server: Server, sockets: Set<Socket>, after?: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    }).then(() => after?.());
    return closing;
  };
}

/** Listens on host:port (0: a free port) and relays every connection to `target`. */
export async function relayTcp(listen: { host: string; port: number }, target: RelayTarget): Promise<Relay> {
  const { server, sockets } = serve(target);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { port: (server.address() as AddressInfo).port, close: closer(server, sockets) };
}

/**
 * Listens on a unix socket and relays to `target`. The socket is made 0600; what keeps other
 * users out from the start is its directory (the sandbox's work dir is 0700).
 */
export async function relayUnix(path: string, target: RelayTarget): Promise<Relay> {
  checkUnixPath(path);
  await rm(path, { force: true });
  const { server, sockets } = serve(target);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  await chmod(path, 0o600);
  return { port: undefined, close: closer(server, sockets, () => rm(path, { force: true })) };
}

/** `host:port` → parts (IPv4 or a bracketed IPv6 host). */
export function parseHostPort(text: string): { host: string; port: number } {
  const m = /^(\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:]+\]):(\d{1,5})$/.exec(text);
  const port = Number(m?.[2]);
  if (!m || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`${JSON.stringify(text)} is not <ip>:<port> (e.g. 127.0.0.1:6443)`);
  return { host: (m[1] as string).replace(/^\[|\]$/g, ''), port };
}
