import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import type { z } from 'zod';

/** A configuration problem, worded for the operator who has to fix it. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads a YAML or JSON file (JSON is YAML) into a plain value, with the file name in errors. */
export function readConfigFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${path}: ${(err as Error).message}`);
  }
  const doc = YAML.parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      `config file ${path} is not valid YAML/JSON: ${doc.errors.map((e) => e.message).join('; ')}`,
    );
  }
  return doc.toJS() ?? {};
}

/** Validates `value` against `schema`; every problem is listed with its key path. */
export function parseConfig<S extends z.ZodType>(schema: S, value: unknown, source: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const key = issue.path.length > 0 ? issue.path.join('.') : '(top level)';
    return `  ${key}: ${issue.message}`;
  });
  throw new ConfigError(`invalid configuration in ${source}:\n${problems.join('\n')}`);
}

/**
 * Reads a credential from a file (trailing newline dropped, as Kubernetes Secrets mount
 * them). The value is never logged; errors name the file only.
 */
export function readSecretFile(path: string): string {
  try {
    return readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new ConfigError(
      `cannot read secret file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
}
