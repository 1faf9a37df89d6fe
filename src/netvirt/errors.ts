/**
 * Errors raised by the NetVirt model code. Both carry the location of the offending value in
 * JSON terms (`vpn-instance[ns1]/ipv4-family/route-distinguisher[0]`) so that a log line or an
 * event names exactly what is wrong, not just that something is.
 */

/** A value that ODL would reject (400) or that would be accepted but silently do nothing. */
export class ModelValidationError extends Error {
  override readonly name = 'ModelValidationError';
  constructor(
    readonly where: string,
    readonly reason: string,
  ) {
    super(`${where}: ${reason}`);
  }
}

/** ODL answered with JSON that does not have the shape of the model. */
export class OdlParseError extends Error {
  override readonly name = 'OdlParseError';
  constructor(
    readonly where: string,
    readonly reason: string,
  ) {
    super(`cannot parse ODL data at ${where}: ${reason}`);
  }
}
