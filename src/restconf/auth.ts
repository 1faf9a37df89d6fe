import { ConfigError, readSecretFile } from '../common/config-file.js';

/** How the client authenticates to ODL. ODL's default is basic `admin`/`admin`. */
export type RestconfAuth =
  { kind: 'basic'; user: string; password: string } | { kind: 'bearer'; token: string };

/** The credentials themselves, for deployments without files (the files win). */
export const ODL_PASSWORD_ENV = 'ODLCOE_ODL_PASSWORD';
export const ODL_TOKEN_ENV = 'ODLCOE_ODL_TOKEN';

export interface LoadRestconfAuthOptions {
  user?: string;
  passwordFile?: string;
  tokenFile?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * Builds the ODL credentials from files (Kubernetes Secret mounts) or the environment:
 * `ODLCOE_ODL_TOKEN` (bearer), `ODLCOE_ODL_USER` + `ODLCOE_ODL_PASSWORD` (basic). A file
 * wins over the environment variable of the same kind. Configuring both a token and a
 * password is an error, as is a password without a user: guessing would hide a typo until
 * ODL answers 401. Returns undefined when nothing is configured (ODL without AAA).
 * Secret values never appear in errors.
 */
export function loadRestconfAuth(opts: LoadRestconfAuthOptions): RestconfAuth | undefined {
  const env = opts.env ?? process.env;
  const token = opts.tokenFile !== undefined ? readSecretFile(opts.tokenFile) : nonEmpty(env[ODL_TOKEN_ENV]);
  const password =
    opts.passwordFile !== undefined ? readSecretFile(opts.passwordFile) : nonEmpty(env[ODL_PASSWORD_ENV]);
  const user = opts.user ?? nonEmpty(env.ODLCOE_ODL_USER);
  const tokenSource = opts.tokenFile ?? ODL_TOKEN_ENV;
  const passwordSource = opts.passwordFile ?? ODL_PASSWORD_ENV;

  if (token !== undefined && password !== undefined) {
    throw new ConfigError(
      `both a bearer token (${tokenSource}) and a password (${passwordSource}) are configured; choose one`,
    );
  }
  if (token !== undefined) {
    const auth: RestconfAuth = { kind: 'bearer', token };
    assertValidAuth(auth, tokenSource);
    return auth;
  }
  if (password !== undefined) {
    if (user === undefined)
      throw new ConfigError(
        `a password is configured (${passwordSource}) but no user (--odl-user or ODLCOE_ODL_USER)`,
      );
    const auth: RestconfAuth = { kind: 'basic', user, password };
    assertValidAuth(auth, passwordSource);
    return auth;
  }
  if (user !== undefined)
    throw new ConfigError(
      `an ODL user "${user}" is configured but no password (password file or ODLCOE_ODL_PASSWORD)`,
    );
  return undefined;
}

/**
 * Rejects credentials that cannot travel in an Authorization header: control characters
 * (a stray CR/LF from a Secret would otherwise fail every request with a Node error) and a
 * `:` in a basic user name (RFC 7617 splits on the first colon).
 */
export function assertValidAuth(auth: RestconfAuth, source = 'auth'): void {
  if (auth.kind === 'bearer') {
    if (auth.token === '') throw new ConfigError(`the bearer token from ${source} is empty`);
    if (hasControlCharacters(auth.token) || /\s/.test(auth.token)) {
      throw new ConfigError(`the bearer token from ${source} contains whitespace or control characters`);
    }
    return;
  }
  if (auth.user === '') throw new ConfigError('the ODL user name is empty');
  if (auth.user.includes(':') || hasControlCharacters(auth.user)) {
    throw new ConfigError('the ODL user name contains ":" or control characters');
  }
  if (auth.password === '') throw new ConfigError(`the password from ${source} is empty`);
  if (hasControlCharacters(auth.password))
    throw new ConfigError(`the password from ${source} contains control characters`);
}

/** The Authorization header value. Callers must never log it. */
export function authorizationHeader(auth: RestconfAuth): string {
  if (auth.kind === 'bearer') return `Bearer ${auth.token}`;
  return `Basic ${Buffer.from(`${auth.user}:${auth.password}`, 'utf8').toString('base64')}`;
}

/** C0 controls and DEL: never valid inside an HTTP header value. */
export function hasControlCharacters(value: string): boolean {
  for (let i = 0; i < value.length; i += 1) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
