/**
 * The pod end of an OVS port's veth: where it is, found from the host end alone, and its TX
 * checksum offload, which the bridge's datapath may need off (datapath.ts). The agent turns
 * offload off during ADD; odlcoectl trace, which knows the OVS port but not the pod's
 * namespace, finds the pod end and reads it back.
 */
import { CommandError, run } from '../common/exec.js';
import { errorMessage } from '../common/log.js';
import { validateIfName, validateNetnsPath, validatePortName } from './names.js';

const ETHTOOL_TIMEOUT_MS = 10_000;

/**
 * Where the other end of a host veth is. The kernel reports the peer's ifindex and the id of
 * its namespace relative to this one; `ip netns list` names the namespaces under /run/netns
 * with those ids (container runtimes put pods' there).
 */
export type VethPeer =
  /** The peer is in this namespace (no pod namespace: a test or a hand-made pair). */
  | { where: 'here'; ifName: string }
  | { where: 'netns'; netns: string; netnsPath: string; ifName: string }
  /** In a namespace without a name under /run/netns (e.g. one known only as /proc/<pid>/ns/net). */
  | { where: 'unnamed'; netnsId: number };

interface IpLink {
  ifindex?: number;
  ifname?: string;
  link?: string;
  link_index?: number;
  link_netnsid?: number;
  linkinfo?: { info_kind?: string };
}

/** The peer of `hostVeth`; undefined when no veth of that name is in this namespace. */
export async function vethPeer(hostVeth: string): Promise<VethPeer | undefined> {
  validatePortName(hostVeth);
  let link: IpLink | undefined;
  try {
    [link] = JSON.parse((await run('ip', ['-j', '-d', 'link', 'show', 'dev', hostVeth])).stdout) as IpLink[];
  } catch (err) {
    if (err instanceof CommandError && /does not exist|Cannot find device/.test(err.stderr)) return undefined;
    throw err;
  }
  if (link?.linkinfo?.info_kind !== 'veth') return undefined;
  if (link.link_netnsid === undefined) {
    if (!link.link) throw new Error(`ip reports no peer for veth ${hostVeth}`);
    return { where: 'here', ifName: link.link };
  }
  const netnsId = link.link_netnsid;
  const namespaces = JSON.parse((await run('ip', ['-j', 'netns', 'list'])).stdout || '[]') as {
    name: string;
    id?: number;
  }[];
  const name = namespaces.find((n) => n.id === netnsId)?.name;
  if (!name) return { where: 'unnamed', netnsId };
  const links = JSON.parse((await run('ip', ['-n', name, '-j', 'link', 'show'])).stdout) as IpLink[];
  const peer = links.find((l) => l.ifindex === link.link_index)?.ifname;
  if (!peer) throw new Error(`no interface with index ${link.link_index} in network namespace ${name}`);
  return { where: 'netns', netns: name, netnsPath: `/run/netns/${name}`, ifName: peer };
}

/** The kernel kept TX checksum offload on although asked to turn it off. */
export class ChecksumOffloadError extends Error {
  override name = 'ChecksumOffloadError';
}

/** The features that make a veth leave TCP and UDP checksums to its peer. */
const TX_CHECKSUM_FEATURE = /^(tx-checksum-(?:ip-generic|ipv4|ipv6)): on \[requested off\]/;

/** From `ethtool -K <if> tx off` output: the TX checksum features the kernel kept on. */
export function txChecksumFeaturesKept(ethtoolOutput: string): string[] {
  return ethtoolOutput
    .split('\n')
    .map((line) => TX_CHECKSUM_FEATURE.exec(line.trim())?.[1])
    .filter((f): f is string => f !== undefined);
}

/** From `ethtool -k <if>` output: `tx-checksumming`, on or off. */
export function parseTxChecksumming(ethtoolOutput: string): 'on' | 'off' {
  const state = /^tx-checksumming: (on|off)\b/m.exec(ethtoolOutput)?.[1];
  if (state !== 'on' && state !== 'off') throw new Error('ethtool -k did not report tx-checksumming');
  return state;
}

/**
 * `ethtool -K <ifName> tx off` inside the namespace at `netns` or, without one, in this
 * process's. ethtool exits 0 even when the kernel refuses a feature change (it prints
 * `on [requested off]`), so its report is read.
 */
export async function turnTxChecksumOffloadOff(netns: string | undefined, ifName: string): Promise<void> {
  const { stdout } = await ethtool(netns, ['-K', validateIfName(ifName), 'tx', 'off']);
  const kept = txChecksumFeaturesKept(stdout);
  if (kept.length > 0)
    throw new ChecksumOffloadError(
      `the kernel kept ${kept.join(', ')} on for ${ifName} (ethtool: requested off)`,
    );
}

/**
 * Whether TX checksum offload (`tx-checksumming`) is on for `ifName`, inside the namespace at
 * `netns` or, without one, in this process's.
 */
export async function txChecksumOffload(netns: string | undefined, ifName: string): Promise<'on' | 'off'> {
  const { stdout } = await ethtool(netns, ['-k', validateIfName(ifName)]);
  return parseTxChecksumming(stdout);
}

/** ethtool inside the namespace at `netns` or, without one, in this process's. */
function ethtool(netns: string | undefined, args: string[]): Promise<{ stdout: string }> {
  return netns
    ? run('nsenter', [`--net=${validateNetnsPath(netns)}`, 'ethtool', ...args], {
        timeoutMs: ETHTOOL_TIMEOUT_MS,
      })
    : run('ethtool', args, { timeoutMs: ETHTOOL_TIMEOUT_MS });
}

/** Whether `ethtool` can be run here: undefined, or why not. */
export function ethtoolProblem(): Promise<string | undefined> {
  return run('ethtool', ['--version'], { timeoutMs: ETHTOOL_TIMEOUT_MS }).then(
    () => undefined,
    (err: unknown) => errorMessage(err),
  );
}
