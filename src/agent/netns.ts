/**
 * Pod interfaces: a veth pair whose host end stays in the agent's namespace (to be added to
 * OVS) and whose other end is the pod's interface.
 *
 * Node.js cannot enter a namespace, so commands run as `ip ...` in the host namespace and as
 * `nsenter --net=<path> ip ...` in the pod's. Reads use `ip -j` (JSON), never /sys: under
 * nsenter, /sys still describes the host's devices.
 *
 * The veth is created with its pod end directly in the pod namespace, already named, with its
 * MTU (`ip link add HOST up ... type veth peer name IF mtu N netns PATH`; `ip` 6.1 accepts a
 * netns path there, while `ip -n` only takes names under /run/netns). Nothing is ever moved
 * between namespaces. That takes two processes, one per namespace: a single request cannot
 * bring the peer up (the kernel answers ENOTCONN: the peer is configured before the pair is
 * linked), and the pod end's addresses need its namespace. Measured here (iproute2 6.1, 2 cores, 30 runs each):
 * peer created in the pod netns 4.8 ms; create in host then `ip link set netns` 28 ms;
 * create in the pod netns then move the host end out (the reference plugins' way) 30 ms. The
 * move costs an RCU grace period under RTNL, which is what serialises bursts of pod starts.
 * It also means the pod never sees a temporary name and no rename can collide.
 *
 * The host end carries its owner, the container id, as its link alias (`ifalias`). Its name is
 * only 32 bits of a hash, so a name alone does not say whose a veth is; a DEL that finds no
 * OVS port to prove ownership deletes the veth only when the alias names its own container.
 * The kernel ignores IFLA_IFALIAS in a link creation request (`ip link add ... alias X`
 * succeeds and sets nothing, iproute2 6.1 / Linux 6.x), so the alias is a second command of
 * the same `ip -batch` process: no extra process on the ADD path.
 */
import { createHash } from 'node:crypto';
import { statfs } from 'node:fs/promises';
import ipaddr from 'ipaddr.js';
import { CommandError, run } from '../common/exec.js';
import { errorMessage } from '../common/log.js';
import { validateIfName, validateNetnsPath, validatePortName } from '../ovs/names.js';
import { validateContainerId, validateMac, validateMtu } from './names.js';

export interface PodInterfaceSpec {
  /** Path of the pod's network namespace (CNI_NETNS). */
  netns: string;
  /** Interface name inside the pod (CNI_IFNAME). */
  ifName: string;
  /** Host end name, see hostVethName(). */
  hostVeth: string;
  /**
   * The container id the host end belongs to, recorded as its alias (see vethOwnerTag). The
   * agent always passes it; without it the veth is untagged, like one made by an older agent,
   * and a DEL that finds no OVS port keeps it.
   */
  owner?: string;
  mac: string;
  mtu: number;
  /** CIDR with the host bits, e.g. '10.11.1.5/24'. */
  addresses: { cidr: string; gateway?: string }[];
  /** e.g. { dst: '0.0.0.0/0', gw: '10.11.1.1' } */
  routes: { dst: string; gw?: string }[];
}

export interface PodInterfaceState {
  mac: string;
  mtu: number;
  /** Global-scope addresses as CIDRs with host bits ('10.11.1.5/24'). */
  addresses: string[];
  /** Routes through the interface that were not added by the kernel itself; default is 0.0.0.0/0 or ::/0. */
  routes: { dst: string; gw?: string }[];
}

/** A device of that name already exists: the pod's, or (hash collision) another pod's host veth. */
export class LinkExistsError extends Error {
  override name = 'LinkExistsError';
  constructor(
    readonly link: string,
    readonly where: 'host' | 'pod',
    netns?: string,
  ) {
    super(
      where === 'host'
        ? `host interface ${link} already exists (a leftover of this attachment, or another container whose name hashes the same)`
        : `interface ${link} already exists in network namespace ${netns}`,
    );
  }
}

/** The netns path does not exist or is not a network namespace. */
export class NetnsError extends Error {
  override name = 'NetnsError';
}

const NSFS_MAGIC = 0x6e736673;

/**
 * Creates the pair, configures the pod end (MAC, MTU, addresses, routes, up) and brings the
 * host end up. On any failure deletes the pair (deleting the host end removes both) and throws.
 */
export async function createPodInterface(
  spec: PodInterfaceSpec,
): Promise<{ hostMac: string; podMac: string }> {
  // Everything checked before anything is created.
  const mac = validatePodAddressing(spec);
  const { hostMac } = await createVethPair(spec);
  try {
    await configurePodInterface(spec);
    return { hostMac, podMac: mac };
  } catch (err) {
    await deleteHostVeth(spec.hostVeth).catch((cleanupErr: unknown) => {
      if (err instanceof Error)
        err.message += `; removing ${spec.hostVeth} again also failed: ${errorMessage(cleanupErr)}`;
    });
    throw err;
  }
}

/**
 * Checks what configurePodInterface would give the pod end (MAC, `address/prefix` list, routes
 * with host-bit-free destinations and same-family gateways), so a caller can refuse bad values
 * before it creates anything. Returns the MAC; throws a NameError or an Error naming the value.
 */
export function validatePodAddressing(spec: {
  mac: string;
  addresses: { cidr: string }[];
  routes: { dst: string; gw?: string }[];
}): string {
  const mac = validateMac(spec.mac);
  spec.addresses.forEach((a) => parseInterfaceCidr(a.cidr));
  spec.routes.forEach(parseRoute);
  return mac;
}

/**
 * The first half of createPodInterface, which needs no address yet (so an ADD runs it while
 * IPAM allocates): the pair, its host end up and tagged with its owner, its pod end named
 * `ifName` in the pod namespace with the MTU, still down. One `ip` process (two when a name or
 * path cannot pass ip's batch parser). Throws LinkExistsError, creating nothing, when either
 * name is taken; deletes the pair again when tagging it fails.
 */
export async function createVethPair(spec: {
  netns: string;
  ifName: string;
  hostVeth: string;
  mtu: number;
  /** The container id, recorded as the host end's alias; see PodInterfaceSpec.owner. */
  owner?: string;
}): Promise<{ hostMac: string }> {
  const netns = validateNetnsPath(spec.netns);
  const ifName = validateIfName(spec.ifName);
  const hostVeth = validatePortName(spec.hostVeth);
  const mtu = validateMtu(spec.mtu);
  const tag = spec.owner === undefined ? undefined : vethOwnerTag(spec.owner);
  const state = await netnsState(netns);
  if (state !== 'ok') throw new NetnsError(`network namespace ${netns} ${state}`);

  const add = [
    'link',
    'add',
    'name',
    hostVeth,
    'up',
    'mtu',
    String(mtu),
    'type',
    'veth',
    'peer',
    'name',
    ifName,
    'mtu',
    String(mtu),
    'netns',
    netns,
  ];
  const setAlias = tag === undefined ? undefined : ['link', 'set', 'dev', hostVeth, 'alias', tag];
  const batched = setAlias !== undefined && [add, setAlias].every(batchSafe);
  let created: string;
  try {
    ({ stdout: created } = batched
      ? await run('ip', ['-j', '-echo', '-batch', '-'], {
          input: `${add.join(' ')}
${setAlias.join(' ')}
`,
        })
      : await run('ip', ['-j', '-echo', ...add]));
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    // ip -batch stops at the first failing line and names it: past line 1 the pair exists.
    if (batched && /Command failed -:2/.test(err.stderr)) {
      await deleteHostVeth(hostVeth).catch(() => undefined);
      throw err;
    }
    if (/File exists/.test(err.stderr)) {
      throw (await linkExists(hostVeth))
        ? new LinkExistsError(hostVeth, 'host')
        : new LinkExistsError(ifName, 'pod', netns);
    }
    throw err;
  }
  try {
    if (setAlias && !batched) await run('ip', setAlias);
    return { hostMac: echoedMac(created, hostVeth) ?? (await hostLinkMac(hostVeth)) };
  } catch (err) {
    await deleteHostVeth(hostVeth).catch(() => undefined);
    throw err;
  }
}

/**
 * The alias that marks a host veth as a container's: the container id itself, readable in
 * `ip link`. The kernel limits an alias to 255 bytes and a container id may have 256
 * characters; such an id is recorded as `sha256:<hex>` (":" never occurs in a container id,
 * so the two forms cannot be confused).
 */
export function vethOwnerTag(containerId: string): string {
  validateContainerId(containerId);
  return containerId.length <= MAX_IFALIAS_BYTES
    ? containerId
    : `sha256:${createHash('sha256').update(containerId, 'utf8').digest('hex')}`;
}

/**
 * The host veth's owner tag: undefined when no device has that name, '' when it has no
 * alias (made by an agent before owner tags, or not by the agent).
 */
export async function hostVethOwner(hostVeth: string): Promise<string | undefined> {
  validatePortName(hostVeth);
  let stdout: string;
  try {
    ({ stdout } = await run('ip', ['-j', 'link', 'show', 'dev', hostVeth]));
  } catch (err) {
    if (err instanceof CommandError && /does not exist/.test(err.stderr)) return undefined;
    throw err;
  }
  const link = parseJson<IpLink[]>(stdout)[0];
  if (!link) return undefined;
  return link.ifalias ?? '';
}

/**
 * Deletes the host veth of that name only if it is `containerId`'s by its owner tag, for a DEL
 * that has no OVS port proving ownership. Another container's veth (a name collision) and an
 * untagged one are kept: in doubt, keep. An untagged leftover costs little, since the kernel
 * removes a veth pair with its pod's namespace; deleting a running pod's veth cuts it off.
 * Not atomic: in the few milliseconds between the check and the deletion, the owner's veth
 * would have to be removed by someone else and a colliding container's created in its place.
 */
export async function deleteHostVethIfOwned(
  hostVeth: string,
  containerId: string,
): Promise<'deleted' | 'absent' | 'not-owned' | 'untagged'> {
  const tag = vethOwnerTag(containerId);
  const owner = await hostVethOwner(hostVeth);
  if (owner === undefined) return 'absent';
  if (owner === '') return 'untagged';
  if (owner !== tag) return 'not-owned';
  await deleteHostVeth(hostVeth);
  return 'deleted';
}

/**
 * The second half: the pod end's MAC, addresses and routes, and up, in one `nsenter ... ip
 * -batch` process. Leaves the pair in place when it fails (the caller deletes it).
 */
export async function configurePodInterface(spec: {
  netns: string;
  ifName: string;
  mac: string;
  addresses: { cidr: string }[];
  routes: { dst: string; gw?: string }[];
}): Promise<void> {
  const netns = validateNetnsPath(spec.netns);
  const ifName = validateIfName(spec.ifName);
  const mac = validateMac(spec.mac);
  const addresses = spec.addresses.map((a) => parseInterfaceCidr(a.cidr));
  const routes = spec.routes.map(parseRoute);
  // The MAC while the interface is still down: the pod never sends from another one.
  const commands: string[][] = [
    ['link', 'set', 'dev', ifName, 'address', mac],
    ['link', 'set', 'dev', ifName, 'up'],
  ];
  for (const a of addresses) {
    // DAD would keep an IPv6 address tentative (unusable) for a second or more; IPAM already
    // guarantees uniqueness.
    commands.push(['addr', 'add', a.cidr, 'dev', ifName, ...(a.family === 'ipv6' ? ['nodad'] : [])]);
  }
  for (const r of routes) {
    commands.push(['route', 'add', r.dst, ...(r.gw ? ['via', r.gw] : []), 'dev', ifName]);
  }
  await ipInNetns(netns, commands);
}

/** Deletes the host end (and so the pair); succeeds when it does not exist. */
export async function deleteHostVeth(hostVeth: string): Promise<void> {
  validatePortName(hostVeth);
  try {
    await run('ip', ['link', 'del', 'dev', hostVeth]);
  } catch (err) {
    if (err instanceof CommandError && /Cannot find device/.test(err.stderr)) return;
    throw err;
  }
}

/** Deletes the pod's interface; succeeds when it, or the whole namespace, is already gone. */
export async function deletePodInterface(netns: string, ifName: string): Promise<void> {
  validateNetnsPath(netns);
  validateIfName(ifName);
  if ((await netnsState(netns)) !== 'ok') return;
  try {
    await run('nsenter', [`--net=${netns}`, 'ip', 'link', 'del', 'dev', ifName]);
  } catch (err) {
    // The namespace can disappear between the check and nsenter.
    if (
      err instanceof CommandError &&
      /Cannot find device|No such file or directory|reassociate/.test(err.stderr)
    )
      return;
    throw err;
  }
}

/** The pod interface as the kernel sees it, or undefined when it (or the namespace) is gone. */
export async function inspectPodInterface(
  netns: string,
  ifName: string,
): Promise<PodInterfaceState | undefined> {
  validateNetnsPath(netns);
  validateIfName(ifName);
  if ((await netnsState(netns)) !== 'ok') return undefined;
  const inNetns = (args: string[]) => run('nsenter', [`--net=${netns}`, 'ip', '-j', ...args]);
  let links: IpLink[];
  let v4Routes: IpRoute[];
  try {
    const [addrOut, routeOut] = await Promise.all([
      inNetns(['addr', 'show', 'dev', ifName]),
      inNetns(['-4', 'route', 'show', 'dev', ifName]),
    ]);
    links = parseJson<IpLink[]>(addrOut.stdout);
    v4Routes = parseJson<IpRoute[]>(routeOut.stdout);
  } catch (err) {
    if (
      err instanceof CommandError &&
      /does not exist|Cannot find device|No such file or directory|reassociate/.test(err.stderr)
    ) {
      return undefined;
    }
    throw err;
  }
  const link = links[0];
  if (!link) return undefined;
  const addrs = (link.addr_info ?? []).filter(
    (a) => a.scope === 'global' && (a.family === 'inet' || a.family === 'inet6'),
  );
  // IPv6 routes only when the pod has IPv6: one more process otherwise wasted on every CHECK.
  const v6Routes = addrs.some((a) => a.family === 'inet6')
    ? parseJson<IpRoute[]>((await inNetns(['-6', 'route', 'show', 'dev', ifName])).stdout)
    : [];
  return {
    mac: link.address ?? '',
    mtu: link.mtu ?? 0,
    addresses: addrs.map((a) => `${a.local}/${a.prefixlen}`),
    routes: [...toRoutes(v4Routes, 'ipv4'), ...toRoutes(v6Routes, 'ipv6')],
  };
}

/** Whether a network device of that name exists in the agent's namespace. */
export async function linkExists(name: string): Promise<boolean> {
  validatePortName(name);
  try {
    await run('ip', ['-j', 'link', 'show', 'dev', name]);
    return true;
  } catch (err) {
    if (err instanceof CommandError && /does not exist/.test(err.stderr)) return false;
    throw err;
  }
}

// ---- helpers ---------------------------------------------------------------------------------

/** IFALIASZ - 1: the kernel refuses longer aliases. */
const MAX_IFALIAS_BYTES = 255;

interface IpLink {
  ifname?: string;
  ifalias?: string;
  address?: string;
  mtu?: number;
  addr_info?: { family?: string; local?: string; prefixlen?: number; scope?: string }[];
}

interface IpRoute {
  dst?: string;
  gateway?: string;
  protocol?: string;
}

/** Without a spawn: 'ok', or why the path is no network namespace. */
async function netnsState(path: string): Promise<'ok' | 'does not exist' | 'is not a network namespace'> {
  try {
    const fs = await statfs(path);
    return fs.type === NSFS_MAGIC ? 'ok' : 'is not a network namespace';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'does not exist';
    // e.g. EACCES on another process's /proc/<pid>/ns/net: let nsenter decide.
    return 'ok';
  }
}

/**
 * Runs `ip` commands in the namespace. One `ip -batch` process when every token survives ip's
 * batch parser (which splits on whitespace, strips from "#" to the end of a line and treats a
 * leading quote specially); otherwise, for interface names using those characters, which the
 * CNI spec allows, one process per command.
 */
async function ipInNetns(netns: string, commands: string[][]): Promise<void> {
  if (commands.every(batchSafe)) {
    await run('nsenter', [`--net=${netns}`, 'ip', '-batch', '-'], {
      input: commands.map((c) => c.join(' ')).join('\n') + '\n',
    });
    return;
  }
  for (const c of commands) await run('nsenter', [`--net=${netns}`, 'ip', ...c]);
}

/** Whether ip's batch parser reads every token of the command back unchanged. */
function batchSafe(command: string[]): boolean {
  return command.every((token) => /^[^\s#"'\\]+$/.test(token));
}

function parseJson<T>(text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new Error(`ip printed invalid JSON: ${errorMessage(err)}`);
  }
}

/** The MAC from `ip -j -echo` output: one JSON array per line, one line per batch command. */
function echoedMac(echo: string, name: string): string | undefined {
  for (const line of echo.split('\n')) {
    if (!line.trim()) continue;
    const mac = parseJson<IpLink[]>(line).find((l) => l.ifname === name)?.address;
    if (mac) return mac;
  }
  return undefined;
}

async function hostLinkMac(name: string): Promise<string> {
  const links = parseJson<IpLink[]>((await run('ip', ['-j', 'link', 'show', 'dev', name])).stdout);
  const mac = links[0]?.address;
  if (!mac) throw new Error(`ip printed no MAC address for ${name}`);
  return mac;
}

function parseInterfaceCidr(cidr: string): { cidr: string; family: 'ipv4' | 'ipv6' } {
  if (typeof cidr !== 'string' || !ipaddr.isValidCIDR(cidr))
    throw new Error(`invalid interface address ${JSON.stringify(cidr)}`);
  const [addr, prefix] = ipaddr.parseCIDR(cidr);
  return { cidr: `${addr.toString()}/${prefix}`, family: addr.kind() };
}

function parseRoute(route: { dst: string; gw?: string }): { dst: string; gw?: string } {
  if (typeof route.dst !== 'string' || !ipaddr.isValidCIDR(route.dst)) {
    throw new Error(`invalid route destination ${JSON.stringify(route.dst)} (a CIDR such as 0.0.0.0/0)`);
  }
  const [net, prefix] = ipaddr.parseCIDR(route.dst);
  const network = networkAddress(route.dst);
  if (network !== net.toString()) {
    throw new Error(`route destination ${route.dst} has host bits set (the network is ${network}/${prefix})`);
  }
  let gw: string | undefined;
  if (route.gw !== undefined) {
    if (!ipaddr.isValid(route.gw)) throw new Error(`invalid route gateway ${JSON.stringify(route.gw)}`);
    const parsedGw = ipaddr.parse(route.gw);
    if (parsedGw.kind() !== net.kind())
      throw new Error(`route ${route.dst} via ${route.gw} mixes IPv4 and IPv6`);
    gw = parsedGw.toString();
  }
  return { dst: `${net.toString()}/${prefix}`, ...(gw ? { gw } : {}) };
}

function networkAddress(cidr: string): string {
  return cidr.includes(':')
    ? ipaddr.IPv6.networkAddressFromCIDR(cidr).toString()
    : ipaddr.IPv4.networkAddressFromCIDR(cidr).toString();
}

function toRoutes(routes: IpRoute[], family: 'ipv4' | 'ipv6'): { dst: string; gw?: string }[] {
  return routes
    .filter((r) => r.protocol !== 'kernel' && r.dst)
    .map((r) => {
      let dst = r.dst ?? '';
      if (dst === 'default') dst = family === 'ipv4' ? '0.0.0.0/0' : '::/0';
      else if (!dst.includes('/')) dst = `${dst}/${family === 'ipv4' ? 32 : 128}`;
      return { dst, ...(r.gateway ? { gw: r.gateway } : {}) };
    });
}
