/**
 * The CNI spec versions and commands odlcoe serves, and which command each version allows:
 * runtimes of several generations (containerd 1.6 to current) call the same plugin.
 */
import { CNI_ERROR, CniError } from './error.js';

/**
 * The CNI spec versions odlcoe answers in. containerd 1.6 rejects a 1.1.0 result, newer
 * runtimes send 1.1.0, so every version since 0.3.0 (the first with `interfaces`) is served.
 */
export const SUPPORTED_CNI_VERSIONS = ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] as const;
export type CniVersion = (typeof SUPPORTED_CNI_VERSIONS)[number];
export const LATEST_CNI_VERSION: CniVersion = '1.1.0';

export function isSupportedVersion(version: unknown): version is CniVersion {
  return typeof version === 'string' && (SUPPORTED_CNI_VERSIONS as readonly string[]).includes(version);
}

/** Compares two dotted versions numerically ("0.10.0" > "0.4.0"). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

/** The CNI commands and the first spec version that defines each. */
export const COMMAND_SINCE = {
  ADD: '0.3.0',
  DEL: '0.3.0',
  CHECK: '0.4.0',
  VERSION: '0.3.0',
  STATUS: '1.1.0',
  GC: '1.1.0',
} as const satisfies Record<string, CniVersion>;

export type CniCommand = keyof typeof COMMAND_SINCE;

export function isCniCommand(value: unknown): value is CniCommand {
  return typeof value === 'string' && Object.hasOwn(COMMAND_SINCE, value);
}

/** Refuses a version odlcoe cannot answer in, or a command the config's version lacks. */
export function requireVersionFor(command: CniCommand, version: unknown): CniVersion {
  if (typeof version !== 'string' || version === '') {
    throw new CniError(CNI_ERROR.invalidNetworkConfig, 'network config lacks cniVersion');
  }
  if (!isSupportedVersion(version)) {
    throw new CniError(
      CNI_ERROR.incompatibleVersion,
      `incompatible CNI version ${version}`,
      `supported versions: ${SUPPORTED_CNI_VERSIONS.join(', ')}`,
    );
  }
  const since = COMMAND_SINCE[command];
  if (compareVersions(version, since) < 0) {
    throw new CniError(
      CNI_ERROR.incompatibleVersion,
      `config version ${version} does not allow ${command}`,
      `${command} needs cniVersion ${since} or later`,
    );
  }
  return version;
}

/** The VERSION answer (the same for every requested version). */
export function cniVersionInfo(): { cniVersion: CniVersion; supportedVersions: CniVersion[] } {
  return { cniVersion: LATEST_CNI_VERSION, supportedVersions: [...SUPPORTED_CNI_VERSIONS] };
}
