/**
 * How every odlcoe program reaches ODL: the settings (one declaration, the `odl` group of the
 * watcher's, the agent's and odlcoectl's configuration) and the one function that turns them
 * into RESTCONF client options, credentials included.
 */
import { z } from 'zod';
import {
  boolean,
  httpUrl,
  duration,
  number,
  oneOf,
  setting,
  text,
  type ValueType,
  type ValuesOf,
} from '../common/settings-scheme.js';
import { loadRestconfAuth, ODL_PASSWORD_ENV, ODL_TOKEN_ENV, type RestconfAuth } from './auth.js';
import type { RestconfClientOptions } from './client.js';
import { DIALECTS } from './path.js';

/** How long a batch stays open after its first edit, when the setting is absent. */
const DEFAULT_BATCH_WINDOW_MS = 5;

const odlUrl = httpUrl('http://odl:8181');

/**
 * The `odl` settings. `path` validates file names (the agent wants absolute ones), `pathRule`
 * says so in the docs.
 */
export function odlConnectionSettings(path: ValueType<string> = text(), pathRule = '') {
  return {
    url: setting(odlUrl, {
      flag: '--odl-url <url>',
      env: 'ODLCOE_ODL_URL',
      required: true,
      doc: 'ODL RESTCONF base URL, `http(s)://host:port[/prefix]`; no credentials, query or fragment in it',
    }),
    dialect: setting(oneOf(DIALECTS), {
      flag: '--dialect <dialect>',
      env: 'ODLCOE_DIALECT',
      default: 'rfc8040',
      doc: '`rfc8040` (`/rests/data`) or `bierman02` (`/restconf/config`)',
    }),
    user: setting(text(), {
      flag: '--odl-user <name>',
      env: 'ODLCOE_ODL_USER',
      doc: 'basic-auth user; no `:` or control characters',
    }),
    passwordFile: setting(path, {
      flag: '--odl-password-file <file>',
      env: 'ODLCOE_ODL_PASSWORD_FILE',
      doc: `file holding the password (one trailing newline dropped; never logged)${pathRule}; excludes \`odl.tokenFile\``,
      alsoEnv: {
        env: ODL_PASSWORD_ENV,
        doc: 'the password itself; used only when no password file is configured',
      },
    }),
    tokenFile: setting(path, {
      flag: '--odl-token-file <file>',
      env: 'ODLCOE_ODL_TOKEN_FILE',
      doc: `file holding a bearer token${pathRule}`,
      alsoEnv: {
        env: ODL_TOKEN_ENV,
        doc: 'the token itself, when no token file is configured. A token and a password together, a password without a user, or a user without a password are errors',
      },
    }),
    timeout: setting(duration(), {
      flag: '--odl-timeout <duration>',
      env: 'ODLCOE_ODL_TIMEOUT',
      defaultText: "`45s` (the client's)",
      doc: 'per-request timeout; keep it above 30 s (ODL may hold a request that long during a shard-leader election)',
    }),
    caFile: setting(path, {
      flag: '--odl-ca-file <file>',
      env: 'ODLCOE_ODL_CA_FILE',
      defaultText: 'system CAs',
      doc: `PEM bundle for ODL's certificate${pathRule}`,
    }),
    insecureSkipVerify: setting(boolean(), {
      flag: '--odl-insecure-skip-verify',
      env: 'ODLCOE_ODL_INSECURE_SKIP_VERIFY',
      default: false,
      doc: "skip verification of ODL's certificate (logged as a warning); `true` or `odl.caFile` with an `http://` URL is a configuration error",
    }),
    batchMaxEdits: setting(number(z.number().int().min(1).max(10_000)), {
      flag: '--odl-batch-max-edits <n>',
      env: 'ODLCOE_ODL_BATCH_MAX_EDITS',
      default: 1,
      doc: 'batched writes: concurrent writes go to ODL as YANG-Patch requests of up to this many edits (one transaction each); `1` sends every write on its own. ODL refusing YANG Patch (415) falls back to single writes. See [restconf-client.md](restconf-client.md#batched-writes)',
    }),
    batchWindow: setting(duration(), {
      flag: '--odl-batch-window <duration>',
      env: 'ODLCOE_ODL_BATCH_WINDOW',
      default: `${DEFAULT_BATCH_WINDOW_MS}ms`,
      doc: 'batched writes: a batch is sent at most this long after its first edit arrived',
    }),
  };
}

/** The resolved `odl` settings (any program's). */
export type OdlConnection = ValuesOf<ReturnType<typeof odlConnectionSettings>>;

/** What a program adds to the connection: retries, concurrency, logging; `auth` replaces the configured credentials. */
export type RestconfClientExtras = Omit<Partial<RestconfClientOptions>, 'baseUrl' | 'dialect'> & {
  /** Where ODLCOE_ODL_PASSWORD and friends are read (default process.env). */
  env?: NodeJS.ProcessEnv;
};

/**
 * The RESTCONF client options for these settings: URL, dialect, credentials (files, else the
 * environment), timeout and TLS. TLS options are passed only when they change something:
 * `insecureSkipVerify: false` is the default and must not turn a plain-http URL into an error.
 */
export function restconfClientOptions(
  odl: Omit<OdlConnection, 'timeout' | 'batchMaxEdits' | 'batchWindow'> & {
    timeout?: number;
    batchMaxEdits?: number;
    batchWindow?: number;
  },
  extras: RestconfClientExtras = {},
): RestconfClientOptions {
  const { env, auth: given, ...rest } = extras;
  const auth: RestconfAuth | undefined =
    given ??
    loadRestconfAuth({
      ...(odl.user !== undefined ? { user: odl.user } : {}),
      ...(odl.passwordFile !== undefined ? { passwordFile: odl.passwordFile } : {}),
      ...(odl.tokenFile !== undefined ? { tokenFile: odl.tokenFile } : {}),
      ...(env ? { env } : {}),
    });
  return {
    baseUrl: odl.url,
    dialect: odl.dialect,
    ...(auth ? { auth } : {}),
    ...(odl.timeout !== undefined ? { timeoutMs: odl.timeout } : {}),
    ...(odl.batchMaxEdits !== undefined && odl.batchMaxEdits > 1
      ? { batch: { maxEdits: odl.batchMaxEdits, windowMs: odl.batchWindow ?? DEFAULT_BATCH_WINDOW_MS } }
      : {}),
    ...(odl.caFile !== undefined || odl.insecureSkipVerify
      ? {
          tls: {
            ...(odl.caFile !== undefined ? { caFile: odl.caFile } : {}),
            ...(odl.insecureSkipVerify ? { insecureSkipVerify: true } : {}),
          },
        }
      : {}),
    ...rest,
  };
}
