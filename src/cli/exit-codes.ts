/**
 * odlcoectl exit codes, one meaning each, so scripts can branch without parsing output
 * (documented in docs/cli.md).
 */
export const EXIT = {
  /** Everything checked agrees (or, for trace, the pod is off the pod network by design). */
  ok: 0,
  /** Something is missing or disagrees (trace, status), or a gc deletion failed. */
  problem: 1,
  /** Bad flags, environment or configuration file; nothing was contacted. */
  usage: 2,
  /** A source (ODL, Kubernetes) could not be read completely: the answer would be a guess. */
  unavailable: 3,
  /** gc without --dry-run or --yes: refused, nothing deleted. */
  refused: 4,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error that ends the command with a given exit code and a message for the operator. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
  }
}
