/**
 * CNI error codes (CNI spec 1.1.0, "Error" section) and the error type the agent's CNI handlers
 * throw. Anything else thrown inside a handler is reported as an internal error (code 999 is
 * not in the spec; we use the plugin range, see `CNI_ERROR.internal`).
 */
export const CNI_ERROR = {
  incompatibleVersion: 1,
  unsupportedField: 2,
  unknownContainer: 3,
  invalidEnvironment: 4,
  io: 5,
  decode: 6,
  invalidNetworkConfig: 7,
  tryAgainLater: 11,
  pluginNotAvailable: 50,
  pluginNotAvailableExistingDegraded: 51,
  /** Plugin-specific codes start at 100. */
  internal: 100,
  ovs: 101,
  ipam: 102,
  podInterface: 103,
  staleRequest: 104,
  /** ODL did not report the pod's interface operational in time (odl.operWait wait-and-fail). */
  odlInterface: 105,
  /**
   * An extra interface (a Multus attachment) cannot be wired as asked: the watcher refused its
   * allocation (the message carries its reason: `ip-taken`, `ip-outside-subnet`,
   * `malformed-mac`, `unknown-network`, ...), or its record is unusable.
   */
  attachment: 106,
} as const;

export type CniErrorCode = (typeof CNI_ERROR)[keyof typeof CNI_ERROR];

/** What the runtime reads on stdout when a plugin exits non-zero. */
export interface CniErrorJson {
  cniVersion: string;
  code: number;
  msg: string;
  details?: string;
}

export class CniError extends Error {
  override name = 'CniError';
  constructor(
    readonly code: number,
    msg: string,
    readonly details?: string,
  ) {
    super(msg);
  }

  toJSON(cniVersion: string): CniErrorJson {
    return {
      cniVersion,
      code: this.code,
      msg: this.message,
      ...(this.details ? { details: this.details } : {}),
    };
  }
}

/** Wraps anything thrown into a CniError, keeping the code of one already classified. */
export function toCniError(err: unknown, fallbackCode: number = CNI_ERROR.internal): CniError {
  if (err instanceof CniError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new CniError(fallbackCode, message);
}
