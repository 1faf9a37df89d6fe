/**
 * Address management by exec'ing the reference `host-local` IPAM plugin (Debian's
 * containernetworking-plugins 1.1.1), exactly as a CNI main plugin would.
 *
 * It is always called with cniVersion 1.0.0, whatever the runtime asked of odlcoe: 1.1.1
 * supports up to 1.0.0 (no GC/STATUS), and the CNI layer converts results to the requested
 * version itself. host-local keeps one file per lease, `<dataDir>/<network>/<ip>`, holding
 * "<container id>\r\n<ifname>", under a file lock, so concurrent ADDs are safe.
 *
 * host-local refuses a second ADD for the same container id and ifname while the first
 * lease exists (code 999, "duplicate allocation"); a retried ADD must DEL first.
 */
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import ipaddr from 'ipaddr.js';
import { CommandError, run } from '../common/exec.js';
import { errorMessage } from '../common/log.js';
import { validateIfName, validateNetnsPath } from '../ovs/names.js';
import { validateContainerId, validateNetworkName } from './names.js';

export const HOST_LOCAL_PATH = '/usr/lib/cni/host-local';
export const HOST_LOCAL_CNI_VERSION = '1.0.0';
const TIMEOUT_MS = 30_000;

export interface IpamRange {
  /** Network address and prefix, e.g. '10.11.1.0/24'. */
  subnet: string;
  gateway: string;
  rangeStart?: string;
  rangeEnd?: string;
}

export interface IpamResult {
  ips: { address: string; gateway?: string }[];
  routes: { dst: string; gw?: string }[];
  dns?: unknown;
}

export interface IpamLease {
  ip: string;
  containerId: string;
  ifName: string;
}

export interface HostLocalIpamOptions {
  pluginPath?: string;
  /** Absolute directory; leases go to `<dataDir>/<networkName>/`. */
  dataDir: string;
  networkName: string;
  range: IpamRange;
  routes?: { dst: string; gw?: string }[];
}

/** host-local failed. `code` and `msg` are its CNI error when it printed one. */
export class IpamError extends Error {
  override name = 'IpamError';
  constructor(
    message: string,
    readonly code: number | undefined,
    readonly details: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** Every address of the range is leased. */
  get exhausted(): boolean {
    return /no IP addresses available/i.test(this.message);
  }
}

/** A configuration host-local would reject, caught before any pod depends on it. */
export class IpamConfigError extends Error {
  override name = 'IpamConfigError';
}

export class HostLocalIpam {
  private readonly pluginPath: string;
  private readonly dataDir: string;
  private readonly networkName: string;
  private readonly range: Required<IpamRange>;
  private readonly routes: { dst: string; gw?: string }[];
  private readonly family: 'ipv4' | 'ipv6';

  constructor(opts: HostLocalIpamOptions) {
    this.pluginPath = opts.pluginPath ?? HOST_LOCAL_PATH;
    if (!this.pluginPath.startsWith('/'))
      throw new IpamConfigError(`IPAM plugin path must be absolute: ${this.pluginPath}`);
    if (!opts.dataDir.startsWith('/'))
      throw new IpamConfigError(`IPAM data directory must be absolute: ${opts.dataDir}`);
    this.dataDir = opts.dataDir;
    this.networkName = validateNetworkName(opts.networkName);
    const checked = checkRange(opts.range);
    this.range = checked.range;
    this.family = checked.family;
    this.routes = (opts.routes ?? []).map((r) => checkRoute(r, this.family));
  }

  /** Leases an address for the attachment. */
  async add(req: { containerId: string; ifName: string; netns: string }): Promise<IpamResult> {
    validateContainerId(req.containerId);
    validateIfName(req.ifName);
    validateNetnsPath(req.netns);
    const stdout = await this.exec('ADD', req.containerId, req.ifName, req.netns);
    return parseResult(stdout);
  }

  /** Releases the attachment's lease; succeeds when there is none. */
  async del(req: { containerId: string; ifName: string; netns?: string }): Promise<void> {
    validateContainerId(req.containerId);
    validateIfName(req.ifName);
    if (req.netns) validateNetnsPath(req.netns);
    await this.exec('DEL', req.containerId, req.ifName, req.netns ?? '');
  }

  /** The current leases, read from host-local's files (see readLeases). */
  leases(): Promise<IpamLease[]> {
    return readLeases(this.dataDir, this.networkName);
  }

  /** Addresses host-local can still hand out (range size minus leases in the range). */
  async available(): Promise<number> {
    const start = toBigInt(this.range.rangeStart);
    const end = toBigInt(this.range.rangeEnd);
    const gw = toBigInt(this.range.gateway);
    const size = end - start + 1n - (gw >= start && gw <= end ? 1n : 0n);
    const leased = (await this.leases()).filter((l) => {
      const ip = toBigInt(l.ip);
      return ip >= start && ip <= end;
    }).length;
    const free = size - BigInt(leased);
    return free > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(free < 0n ? 0n : free);
  }

  /** The network configuration host-local reads on stdin (it only looks at `ipam`). */
  networkConfig(): object {
    return {
      cniVersion: HOST_LOCAL_CNI_VERSION,
      name: this.networkName,
      type: 'odlcoe',
      ipam: {
        type: 'host-local',
        dataDir: this.dataDir,
        ranges: [[{ ...this.range }]],
        routes: this.routes,
      },
    };
  }

  private exec(command: 'ADD' | 'DEL', containerId: string, ifName: string, netns: string): Promise<string> {
    return execHostLocal(this.pluginPath, this.networkConfig(), command, containerId, ifName, netns);
  }
}

/**
 * Releases leases while the node's pod subnet is unknown (the agent started without its
 * conflist and ODL has not answered yet): a DEL must not leave the lease of a deleted pod
 * behind. host-local releases by owner (ReleaseByID: container id and ifname, every file of
 * the network's directory) whatever the range, but refuses to run without a valid one; the
 * range given is therefore built from the owner's own lease (its /30 or /126), which host-local
 * accepts, and nothing is exec'd when the owner has no lease.
 */
export class HostLocalLeaseStore {
  private readonly pluginPath: string;
  private readonly dataDir: string;
  private readonly networkName: string;

  constructor(opts: { pluginPath?: string; dataDir: string; networkName: string }) {
    this.pluginPath = opts.pluginPath ?? HOST_LOCAL_PATH;
    if (!this.pluginPath.startsWith('/'))
      throw new IpamConfigError(`IPAM plugin path must be absolute: ${this.pluginPath}`);
    if (!opts.dataDir.startsWith('/'))
      throw new IpamConfigError(`IPAM data directory must be absolute: ${opts.dataDir}`);
    this.dataDir = opts.dataDir;
    this.networkName = validateNetworkName(opts.networkName);
  }

  leases(): Promise<IpamLease[]> {
    return readLeases(this.dataDir, this.networkName);
  }

  /** Releases every lease of (container id, ifname); succeeds when there is none. */
  async release(req: { containerId: string; ifName: string; netns?: string }): Promise<void> {
    validateContainerId(req.containerId);
    validateIfName(req.ifName);
    if (req.netns) validateNetnsPath(req.netns);
    const owned = (await this.leases()).find(
      (l) => l.containerId === req.containerId && l.ifName === req.ifName,
    );
    if (!owned) return;
    const ip = ipaddr.parse(owned.ip);
    const prefix = ip.kind() === 'ipv4' ? 30 : 126;
    const network = `${maskedAddress(owned.ip, prefix)}/${prefix}`;
    const config = {
      cniVersion: HOST_LOCAL_CNI_VERSION,
      name: this.networkName,
      type: 'odlcoe',
      ipam: { type: 'host-local', dataDir: this.dataDir, ranges: [[{ subnet: network }]] },
    };
    await execHostLocal(this.pluginPath, config, 'DEL', req.containerId, req.ifName, req.netns ?? '');
  }
}

/**
 * The leases of a host-local network, read from its files. A file that is still empty
 * (host-local creates it, then writes the owner) is skipped rather than reported without an
 * owner.
 */
async function readLeases(dataDir: string, networkName: string): Promise<IpamLease[]> {
  const dir = join(dataDir, networkName);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const leases: IpamLease[] = [];
  for (const name of names.filter((n) => ipaddr.isValid(n))) {
    let content: string;
    try {
      content = await readFile(join(dir, name), 'utf8');
    } catch (err) {
      // Released between readdir and read.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    const [containerId = '', ifName = ''] = content.split(/\r?\n/).map((s) => s.trim());
    if (containerId === '') continue;
    leases.push({ ip: ipaddr.parse(name).toString(), containerId, ifName });
  }
  return leases.sort((a, b) => compareIps(a.ip, b.ip));
}

async function execHostLocal(
  pluginPath: string,
  networkConfig: object,
  command: 'ADD' | 'DEL',
  containerId: string,
  ifName: string,
  netns: string,
): Promise<string> {
  const env: NodeJS.ProcessEnv = {
    CNI_COMMAND: command,
    CNI_CONTAINERID: containerId,
    CNI_NETNS: netns,
    CNI_IFNAME: ifName,
    // Required by host-local's skeleton; it delegates to nothing.
    CNI_PATH: dirname(pluginPath),
    // No K8S_* arguments: host-local rejects keys it does not know.
    CNI_ARGS: '',
    PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
  };
  try {
    const { stdout } = await run(pluginPath, [], {
      input: JSON.stringify(networkConfig),
      env,
      timeoutMs: TIMEOUT_MS,
    });
    return stdout;
  } catch (err) {
    throw toIpamError(command, containerId, ifName, err);
  }
}

function toIpamError(command: string, containerId: string, ifName: string, err: unknown): Error {
  if (!(err instanceof CommandError)) return err instanceof Error ? err : new Error(String(err));
  const what = `host-local ${command} for ${containerId}/${ifName}`;
  // A CNI plugin reports errors as JSON on stdout.
  try {
    const parsed = JSON.parse(err.stdout) as { code?: unknown; msg?: unknown; details?: unknown };
    if (typeof parsed.msg === 'string') {
      return new IpamError(
        `${what} failed: ${parsed.msg}`,
        typeof parsed.code === 'number' ? parsed.code : undefined,
        typeof parsed.details === 'string' && parsed.details !== '' ? parsed.details : undefined,
        { cause: err },
      );
    }
  } catch {
    // Not a CNI error object: fall through to the process failure.
  }
  return new IpamError(`${what} failed: ${errorMessage(err)}`, undefined, undefined, { cause: err });
}

function parseResult(stdout: string): IpamResult {
  let parsed: { ips?: unknown; routes?: unknown; dns?: unknown };
  try {
    parsed = JSON.parse(stdout) as typeof parsed;
  } catch (err) {
    throw new IpamError(`host-local printed an invalid result: ${errorMessage(err)}`, undefined, undefined);
  }
  if (!Array.isArray(parsed.ips) || parsed.ips.length === 0) {
    throw new IpamError('host-local returned no IP address', undefined, undefined);
  }
  const ips = (parsed.ips as { address?: unknown; gateway?: unknown }[]).map((ip) => {
    if (typeof ip.address !== 'string' || !ipaddr.isValidCIDR(ip.address)) {
      throw new IpamError(
        `host-local returned an invalid address ${JSON.stringify(ip.address)}`,
        undefined,
        undefined,
      );
    }
    return { address: ip.address, ...(typeof ip.gateway === 'string' ? { gateway: ip.gateway } : {}) };
  });
  const routes = (Array.isArray(parsed.routes) ? (parsed.routes as { dst?: unknown; gw?: unknown }[]) : [])
    .filter((r): r is { dst: string; gw?: unknown } => typeof r.dst === 'string')
    .map((r) => ({ dst: r.dst, ...(typeof r.gw === 'string' ? { gw: r.gw } : {}) }));
  const dns =
    parsed.dns && typeof parsed.dns === 'object' && Object.keys(parsed.dns).length > 0
      ? parsed.dns
      : undefined;
  return { ips, routes, ...(dns ? { dns } : {}) };
}

function checkRange(range: IpamRange): { range: Required<IpamRange>; family: 'ipv4' | 'ipv6' } {
  if (!ipaddr.isValidCIDR(range.subnet))
    throw new IpamConfigError(`IPAM subnet ${JSON.stringify(range.subnet)} is not a CIDR`);
  const [net, prefix] = ipaddr.parseCIDR(range.subnet);
  const family = net.kind();
  const bits = family === 'ipv4' ? 32 : 128;
  const first = toBigInt(net.toString());
  const size = 1n << BigInt(bits - prefix);
  if (first % size !== 0n) {
    throw new IpamConfigError(`IPAM subnet ${range.subnet} has host bits set`);
  }
  // IPv4 reserves the network and broadcast addresses; host-local does the same.
  const lowest = family === 'ipv4' && size > 2n ? first + 1n : first;
  const highest = family === 'ipv4' && size > 2n ? first + size - 2n : first + size - 1n;
  const inside = (field: string, value: string): bigint => {
    if (!ipaddr.isValid(value) || ipaddr.parse(value).kind() !== family) {
      throw new IpamConfigError(`IPAM ${field} ${JSON.stringify(value)} is not an ${family} address`);
    }
    const n = toBigInt(value);
    if (n < lowest || n > highest)
      throw new IpamConfigError(`IPAM ${field} ${value} is not a usable address of ${range.subnet}`);
    return n;
  };
  inside('gateway', range.gateway);
  const start = range.rangeStart === undefined ? lowest : inside('rangeStart', range.rangeStart);
  const end = range.rangeEnd === undefined ? highest : inside('rangeEnd', range.rangeEnd);
  if (start > end)
    throw new IpamConfigError(`IPAM rangeStart ${range.rangeStart} is after rangeEnd ${range.rangeEnd}`);
  return {
    range: {
      subnet: `${net.toString()}/${prefix}`,
      gateway: ipaddr.parse(range.gateway).toString(),
      rangeStart: fromBigInt(start, family),
      rangeEnd: fromBigInt(end, family),
    },
    family,
  };
}

function checkRoute(
  route: { dst: string; gw?: string },
  family: 'ipv4' | 'ipv6',
): { dst: string; gw?: string } {
  if (!ipaddr.isValidCIDR(route.dst) || ipaddr.parseCIDR(route.dst)[0].kind() !== family) {
    throw new IpamConfigError(`IPAM route destination ${JSON.stringify(route.dst)} is not an ${family} CIDR`);
  }
  if (route.gw !== undefined && (!ipaddr.isValid(route.gw) || ipaddr.parse(route.gw).kind() !== family)) {
    throw new IpamConfigError(`IPAM route gateway ${JSON.stringify(route.gw)} is not an ${family} address`);
  }
  return { dst: route.dst, ...(route.gw !== undefined ? { gw: route.gw } : {}) };
}

function toBigInt(ip: string): bigint {
  return ipaddr
    .parse(ip)
    .toByteArray()
    .reduce((acc, byte) => (acc << 8n) | BigInt(byte), 0n);
}

function fromBigInt(n: bigint, family: 'ipv4' | 'ipv6'): string {
  const length = family === 'ipv4' ? 4 : 16;
  const bytes: number[] = [];
  for (let i = 0; i < length; i++) bytes.unshift(Number((n >> BigInt(8 * i)) & 0xffn));
  return ipaddr.fromByteArray(bytes).toString();
}

function compareIps(a: string, b: string): number {
  const x = toBigInt(a);
  const y = toBigInt(b);
  const bySize = a.includes(':') === b.includes(':') ? 0 : a.includes(':') ? 1 : -1;
  return bySize !== 0 ? bySize : x < y ? -1 : x > y ? 1 : 0;
}

/** `ip` with its host bits (beyond `prefix`) cleared. */
function maskedAddress(ip: string, prefix: number): string {
  const family = ipaddr.parse(ip).kind();
  const bits = family === 'ipv4' ? 32 : 128;
  const hostBits = BigInt(bits - prefix);
  return fromBigInt((toBigInt(ip) >> hostBits) << hostBits, family);
}
