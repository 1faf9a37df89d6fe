/**
 * A runtime's request as the agent acts on it: the CNI_* environment and the network config,
 * validated once at the edge (in the order the reference plugins validate, so runtimes see the
 * codes they expect), so that nothing past cni/service.ts handles raw text.
 */
import { validateIfName, validateNetnsPath } from '../../ovs/names.js';
import { validateContainerId } from '../names.js';
import { parseCniArgs, type CniArgs } from './args.js';
import { CNI_ERROR, CniError } from './error.js';
import { parsePrevResult, type CniResult } from './result.js';
import { isCniCommand, requireVersionFor, type CniCommand, type CniVersion } from './version.js';

/** The `CNI_*` variables the shim forwards (everything else in its environment stays behind). */
export const CNI_ENV_KEYS = [
  'CNI_COMMAND',
  'CNI_CONTAINERID',
  'CNI_NETNS',
  'CNI_IFNAME',
  'CNI_ARGS',
  'CNI_PATH',
] as const;
export type CniEnv = Partial<Record<(typeof CNI_ENV_KEYS)[number], string>>;

/** One entry of GC's `cni.dev/valid-attachments`. */
export interface CniAttachment {
  containerId: string;
  ifName: string;
}

/** The parts of the network configuration (one plugin of the conflist) odlcoe reads. */
export interface NetworkConfig {
  cniVersion: CniVersion;
  name: string;
  type: string;
  mtu?: number;
  /** The subnet of the first host-local range, when the config carries one. */
  ipamSubnet?: string;
  prevResult?: CniResult;
  validAttachments?: CniAttachment[];
  /**
   * Present when the config is a NetworkAttachmentDefinition's (a Multus delegate for an extra
   * interface): odlcoe's own conflist always carries host-local `ipam`, a NAD's config never
   * does, since the watcher allocates its addresses.
   */
  extra?: ExtraInterfaceConfig;
}

/** What a NAD config's request adds: Multus' `runtimeConfig` capabilities `ips` and `mac`. */
export interface ExtraInterfaceConfig {
  /** The static `ips` of the pod's network selection element (CIDRs or bare IPs). */
  ips?: string[];
  /** The static `mac` of the selection element. */
  mac?: string;
}

export interface CniRequest {
  command: Exclude<CniCommand, 'VERSION'>;
  containerId: string;
  /** Empty on a DEL after the sandbox is gone, and for STATUS/GC. */
  netns: string;
  ifName: string;
  args: CniArgs;
  config: NetworkConfig;
}

/**
 * The network config text (stdin), decoded once at the edge: what every later step reads, and
 * the version an error answer is written in even when the rest of the request is refused.
 */
export interface ConfigDocument {
  /** The request's `cniVersion` when it names one. */
  version: string | undefined;
  /** The decoded object, or the error a command that reads its config fails with. */
  value: Record<string, unknown> | CniError;
}

export function decodeConfig(stdin: string): ConfigDocument {
  let doc: unknown;
  try {
    doc = JSON.parse(stdin);
  } catch (err) {
    return {
      version: undefined,
      value: new CniError(
        CNI_ERROR.decode,
        'network config on stdin is not valid JSON',
        err instanceof Error ? err.message : String(err),
      ),
    };
  }
  const v =
    typeof doc === 'object' && doc !== null ? (doc as { cniVersion?: unknown }).cniVersion : undefined;
  const version = typeof v === 'string' && v !== '' ? v : undefined;
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    return {
      version,
      value: new CniError(CNI_ERROR.decode, 'network config on stdin must be a JSON object'),
    };
  }
  return { version, value: doc as Record<string, unknown> };
}

function env(e: CniEnv, key: (typeof CNI_ENV_KEYS)[number], command: string): string {
  const value = e[key];
  if (value === undefined || value === '') {
    throw new CniError(
      CNI_ERROR.invalidEnvironment,
      `required environment variable ${key} is missing`,
      `${command} needs ${key}`,
    );
  }
  return value;
}

function checkName<T>(validate: (value: string) => T, value: string, what: string): void {
  try {
    validate(value);
  } catch (err) {
    throw new CniError(
      CNI_ERROR.invalidEnvironment,
      `invalid ${what}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

export function parseCommand(e: CniEnv): CniCommand {
  const command = e.CNI_COMMAND;
  if (command === undefined || command === '') {
    throw new CniError(CNI_ERROR.invalidEnvironment, 'required environment variable CNI_COMMAND is missing');
  }
  if (!isCniCommand(command)) {
    throw new CniError(
      CNI_ERROR.invalidEnvironment,
      `unknown CNI_COMMAND ${command}`,
      'expected ADD, DEL, CHECK, STATUS, GC or VERSION',
    );
  }
  return command;
}

function invalidConfig(msg: string): never {
  throw new CniError(CNI_ERROR.invalidNetworkConfig, `invalid network config: ${msg}`);
}

function parseAttachments(value: unknown): CniAttachment[] {
  if (!Array.isArray(value)) invalidConfig('cni.dev/valid-attachments must be a list');
  return value.map((v: unknown, i) => {
    const o = (typeof v === 'object' && v !== null ? v : {}) as Record<string, unknown>;
    if (
      typeof o.containerID !== 'string' ||
      typeof o.ifname !== 'string' ||
      o.containerID === '' ||
      o.ifname === ''
    ) {
      invalidConfig(`cni.dev/valid-attachments[${i}] needs containerID and ifname`);
    }
    return { containerId: o.containerID, ifName: o.ifname };
  });
}

function parseIpamSubnet(ipam: unknown): string | undefined {
  if (ipam === undefined) return undefined;
  if (typeof ipam !== 'object' || ipam === null) invalidConfig('ipam must be an object');
  const ranges = (ipam as { ranges?: unknown }).ranges;
  if (ranges === undefined) {
    const subnet = (ipam as { subnet?: unknown }).subnet;
    return typeof subnet === 'string' ? subnet : undefined;
  }
  const first =
    Array.isArray(ranges) && Array.isArray(ranges[0])
      ? (ranges[0][0] as { subnet?: unknown } | undefined)
      : undefined;
  if (!first || typeof first.subnet !== 'string') invalidConfig('ipam.ranges[0][0].subnet is missing');
  return first.subnet;
}

/** `runtimeConfig` as Multus fills it for the capabilities the NAD config declares. */
function parseExtraInterface(runtimeConfig: unknown): ExtraInterfaceConfig {
  if (runtimeConfig === undefined || runtimeConfig === null) return {};
  if (typeof runtimeConfig !== 'object' || Array.isArray(runtimeConfig))
    invalidConfig('runtimeConfig must be an object');
  const { ips, mac } = runtimeConfig as { ips?: unknown; mac?: unknown };
  const out: ExtraInterfaceConfig = {};
  if (ips !== undefined && ips !== null) {
    if (!Array.isArray(ips) || !ips.every((ip) => typeof ip === 'string' && ip !== ''))
      invalidConfig('runtimeConfig.ips must be a list of addresses');
    if (ips.length > 0) out.ips = ips as string[];
  }
  if (mac !== undefined && mac !== null && mac !== '') {
    if (typeof mac !== 'string') invalidConfig('runtimeConfig.mac must be a string');
    out.mac = mac;
  }
  return out;
}

function parseNetworkConfig(command: CniCommand, doc: ConfigDocument): NetworkConfig {
  const raw = doc.value;
  if (raw instanceof CniError) throw raw;
  const cniVersion = requireVersionFor(command, raw.cniVersion);
  if (typeof raw.name !== 'string' || raw.name === '') invalidConfig('name is missing');
  if (typeof raw.type !== 'string' || raw.type === '') invalidConfig('type is missing');
  const config: NetworkConfig = { cniVersion, name: raw.name, type: raw.type };
  if (raw.mtu !== undefined) {
    if (typeof raw.mtu !== 'number' || !Number.isInteger(raw.mtu) || raw.mtu < 576 || raw.mtu > 65535) {
      invalidConfig('mtu must be an integer between 576 and 65535');
    }
    config.mtu = raw.mtu;
  }
  const ipamSubnet = parseIpamSubnet(raw.ipam);
  if (ipamSubnet !== undefined) config.ipamSubnet = ipamSubnet;
  if (raw.prevResult !== undefined && raw.prevResult !== null)
    config.prevResult = parsePrevResult(raw.prevResult);
  if (command === 'GC') config.validAttachments = parseAttachments(raw['cni.dev/valid-attachments'] ?? []);
  if (raw.ipam === undefined) config.extra = parseExtraInterface(raw.runtimeConfig);
  return config;
}

/** The whole request from the environment and the config text (for callers holding both as text). */
export function parseCniRequest(e: CniEnv, stdin: string): CniRequest {
  const command = parseCommand(e);
  if (command === 'VERSION') throw new Error('VERSION is answered without a request');
  return cniRequestOf(command, e, decodeConfig(stdin));
}

/**
 * Validates the environment and the network config of a runtime request whose command was
 * read already, in the order the reference `skel` library does (command, config version, then
 * per-command variables), so the codes match what runtimes see from other plugins.
 */
export function cniRequestOf(
  command: Exclude<CniCommand, 'VERSION'>,
  e: CniEnv,
  doc: ConfigDocument,
): CniRequest {
  const config = parseNetworkConfig(command, doc);
  const args = parseCniArgs(e.CNI_ARGS);
  if (command === 'STATUS' || command === 'GC') {
    return { command, containerId: '', netns: '', ifName: '', args, config };
  }
  const containerId = env(e, 'CNI_CONTAINERID', command);
  checkName(validateContainerId, containerId, 'CNI_CONTAINERID');
  const ifName = env(e, 'CNI_IFNAME', command);
  checkName(validateIfName, ifName, 'CNI_IFNAME');
  const netns = command === 'DEL' ? (e.CNI_NETNS ?? '') : env(e, 'CNI_NETNS', command);
  if (netns !== '') checkName(validateNetnsPath, netns, 'CNI_NETNS');
  return { command, containerId, netns, ifName, args, config };
}
