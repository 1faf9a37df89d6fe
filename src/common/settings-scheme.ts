/**
 * One declaration of a program's settings, from which everything else about them follows:
 * the command-line flags (commander options with their choices and help), the environment
 * variables, the configuration file's keys and its schema, the defaults, the validation and
 * its error messages, and the table in docs/configuration.md.
 *
 * A program writes its settings as a tree of `setting(type, spec)` entries; the tree's shape
 * is the shape of the configuration file and of the resolved values (`ValuesOf<tree>`).
 * Precedence: defaults < configuration file < environment < flags; an empty environment
 * variable counts as unset. Every value is validated where it comes from, and every problem
 * is reported at once, naming the flag, the environment variable or the file key at fault:
 *
 *   flag --workers: workers: Too small: expected number to be >=1
 *   environment variable ODLCOE_GRACE_PERIOD: gracePeriod: "soon" is not a duration (…)
 *   --cluster-name (ODLCOE_CLUSTER_NAME, clusterName) is required
 *   --timeout "0" must be a whole number of seconds in 1..600      (a flag-only setting)
 *
 * Adding a setting is one entry in its program's tree.
 */
import { Option, type Command } from 'commander';
import { z } from 'zod';
import { ConfigError, parseConfig, readConfigFile } from './config-file.js';

// --- value types ---------------------------------------------------------------------------

/** How a setting's value is validated, and read from text (a flag or an environment variable). */
export interface ValueType<T> {
  /** Validates (and may transform) a value as the configuration file gives it. */
  readonly schema: z.ZodType<T>;
  /** Text to the value the schema checks; what cannot be converted stays text for the schema to report. */
  readonly fromText: (text: string) => unknown;
  /** The allowed values (flag choices, `a|b` in messages). */
  readonly choices?: readonly string[];
  /** A list: a repeatable flag, and comma-separated text. */
  readonly list?: boolean;
}

/** `"value"`, for messages that quote what was given. */
export const quoted = (input: unknown): string => JSON.stringify(String(input));

const asIs = (text: string): unknown => text;

function numberFromText(text: string): unknown {
  return text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text;
}

/** A string; by default it must not be empty. */
export function text(schema: z.ZodType<string> = z.string().min(1, 'must not be empty')): ValueType<string> {
  return { schema, fromText: asIs };
}

/** An http(s) URL; `example` shows one in the error. */
export function httpUrl(example: string): ValueType<string> {
  return text(
    z.string().refine((u) => /^https?:\/\/[^/]/.test(u) && URL.canParse(u), {
      error: (iss) => `${quoted(iss.input)} must be an http(s) URL such as ${example}`,
    }),
  );
}

/** A number (its schema sets the range and whether it is whole). */
export function number<T extends number>(schema: z.ZodType<T>): ValueType<T> {
  return { schema, fromText: numberFromText };
}

/** `true` or `false` (in text, exactly those words). */
export function boolean(): ValueType<boolean> {
  return {
    schema: z.boolean({ error: (iss) => `${quoted(iss.input)} is not true or false` }),
    fromText: (t) => (t === 'true' ? true : t === 'false' ? false : t),
  };
}

/** One of a fixed set of words. */
export function oneOf<const T extends string>(values: readonly T[]): ValueType<T> {
  const schema = z.enum(values as unknown as [T, ...T[]], {
    error: (iss) => `${quoted(iss.input)} is not one of ${values.join(', ')}`,
  });
  return { schema: schema as unknown as z.ZodType<T>, fromText: asIs, choices: values };
}

/** A list of items; text is split at commas, and a repeated flag adds to it. */
export function list<T>(item: z.ZodType<T>): ValueType<T[]> {
  return {
    schema: z.array(item),
    fromText: (t) =>
      t
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean),
    list: true,
  };
}

/** `250ms`, `30s`, `5m`, `1h`, `1m30s`; a bare number is seconds. Returns milliseconds. */
export function parseDuration(value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new Error(`${value} is not a duration`);
    return Math.round(value * 1000);
  }
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let rest = trimmed;
  if (rest === '') throw new Error('empty duration');
  while (rest !== '') {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)/.exec(rest);
    if (!m) throw new Error(`${JSON.stringify(value)} is not a duration (like 250ms, 30s, 5m, 1h30m)`);
    total += Number(m[1]) * (unit[m[2] ?? 's'] ?? 1000);
    rest = rest.slice(m[0].length);
  }
  return Math.round(total);
}

/** A duration (see parseDuration); the value is in milliseconds. */
export function duration(): ValueType<number> {
  const schema = z.union([z.string(), z.number()]).transform((v, ctx) => {
    try {
      return parseDuration(v);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
  });
  return { schema, fromText: asIs };
}

// --- settings ------------------------------------------------------------------------------

/** Whether a setting always has a value once resolved: it is required, or it has a default. */
type Presence = 'required' | 'default' | 'optional';

export interface SettingSpec {
  /** The command-line flag as commander writes it: `--odl-url <url>`, `-o, --output <format>`, `--leader-elect`. */
  flag?: string;
  /** The help of `--no-<flag>`, when a boolean flag also has its negation. */
  negatedHelp?: string;
  /** The environment variable. */
  env?: string;
  /** False: no configuration-file key (a setting of the command line only). */
  file?: false;
  /** What the setting means and what it accepts (docs table; flag help without markup). */
  doc: string;
  /** The docs' default column when the default is worked out elsewhere ("the node's InternalIP"). */
  defaultText?: string;
  /** An environment variable read beside this setting by someone else (a credential), for the docs only. */
  alsoEnv?: { env: string; doc: string };
}

export interface Setting<T = unknown, P extends Presence = Presence> extends SettingSpec {
  readonly type: ValueType<T>;
  readonly presence: P;
  /** The default, validated (and transformed) like any value. */
  readonly default?: T;
  /** The default as written in the declaration (docs). */
  readonly defaultInput?: unknown;
}

export function setting<T>(
  type: ValueType<T>,
  spec: SettingSpec & { required: true },
): Setting<T, 'required'>;
export function setting<T>(
  type: ValueType<T>,
  spec: SettingSpec & { default: unknown },
): Setting<T, 'default'>;
export function setting<T>(type: ValueType<T>, spec: SettingSpec): Setting<T, 'optional'>;
export function setting<T>(
  type: ValueType<T>,
  spec: SettingSpec & { required?: boolean; default?: unknown },
): Setting<T> {
  const { required, default: defaultInput, ...rest } = spec;
  if (defaultInput === undefined)
    return { ...rest, type, presence: required === true ? 'required' : 'optional' };
  const parsed = type.schema.safeParse(defaultInput);
  if (!parsed.success)
    throw new Error(`the default ${JSON.stringify(defaultInput)} of ${spec.flag ?? spec.env} is invalid`);
  return { ...rest, type, presence: 'default', default: parsed.data, defaultInput };
}

/** Settings, grouped as the configuration file groups them. */
export interface SettingsTree {
  readonly [key: string]: Setting<unknown> | SettingsTree;
}

type Always<T> = {
  [K in keyof T as T[K] extends Setting<unknown, 'optional'> ? never : K]: T[K] extends Setting<infer V>
    ? V
    : T[K] extends SettingsTree
      ? ValuesOf<T[K]>
      : never;
};
type Sometimes<T> = {
  [K in keyof T as T[K] extends Setting<unknown, 'optional'> ? K : never]?: T[K] extends Setting<infer V>
    ? V
    : never;
};
type Flatten<T> = { [K in keyof T]: T[K] };

/** The resolved values of a tree: required and defaulted settings are always there. */
export type ValuesOf<T extends SettingsTree> = Flatten<Always<T> & Sometimes<T>>;

function isSetting(node: Setting | SettingsTree): node is Setting {
  return typeof (node as Setting).doc === 'string' && 'presence' in node;
}

// --- the scheme ----------------------------------------------------------------------------

/** One setting with where it sits. */
interface Entry {
  readonly setting: Setting;
  readonly path: readonly string[];
  /** The file key (`odl.url`), which also names the setting in messages. */
  readonly key: string;
  readonly option?: Option;
}

export interface SchemeOptions {
  /** Completes "invalid …:" in error messages, e.g. `watcher configuration`. */
  title: string;
  /** The flag (and environment variable) naming the configuration file. */
  configFile?: { flag: string; env?: string; doc: string };
}

/** Where values come from; only what is given counts. */
export interface SettingsSources {
  /** Flags as commander keys them (`odlUrl`); only flags given on the command line. */
  flags?: Readonly<Record<string, unknown>>;
  env?: NodeJS.ProcessEnv;
  /** The configuration file (else the config flag, else its environment variable). */
  file?: string;
  /** Reads the configuration file (default: readConfigFile); tests pass content. */
  readFile?: (path: string) => unknown;
  /** Values given by the program itself (above every other source). */
  given?: ReadonlyMap<Setting, unknown>;
}

/** What a program's own checks (those that involve several settings) see and report with. */
export interface Checks {
  /** How a message names a setting: its flag, else its environment variable, else its key. */
  label(setting: Setting): string;
  problem(text: string): void;
  /** Runs `fn`; an error becomes the problem `<label>: <message>`. */
  check(setting: Setting, fn: () => void): void;
}

/**
 * How a program that shares another's declaration uses one of its settings: whether it has the
 * flag, and what differs in its docs.
 */
export interface Usage {
  setting: Setting;
  /** Default true; a string is added to the flag cell of the docs, e.g. "(`status` only)". */
  flag?: boolean | string;
  doc?: string;
  defaultText?: string;
}

export class SettingsScheme<T extends SettingsTree> {
  private readonly entries: readonly Entry[];
  private readonly bySetting: ReadonlyMap<Setting, Entry>;
  private readonly configOption: Option | undefined;
  /** The configuration file's schema: the tree, every key optional, unknown keys are errors. */
  readonly fileSchema: z.ZodType;

  constructor(
    readonly tree: T,
    readonly options: SchemeOptions,
  ) {
    const entries: Entry[] = [];
    const walk = (node: SettingsTree, path: string[]) => {
      for (const [name, child] of Object.entries(node)) {
        const at = [...path, name];
        if (!isSetting(child)) walk(child, at);
        else
          entries.push({
            setting: child,
            path: at,
            key: at.join('.'),
            ...(child.flag !== undefined ? { option: new Option(child.flag) } : {}),
          });
      }
    };
    walk(tree, []);
    this.entries = entries;
    this.bySetting = new Map(entries.map((e) => [e.setting, e]));
    this.configOption = options.configFile ? new Option(options.configFile.flag) : undefined;
    this.fileSchema = fileSchemaOf(tree);
  }

  /** This scheme plus more settings (the same entries: checks and labels work on both). */
  with<U extends SettingsTree>(more: U, options: Partial<SchemeOptions> = {}): SettingsScheme<T & U> {
    return new SettingsScheme({ ...this.tree, ...more } as T & U, { ...this.options, ...options });
  }

  private usages(): Usage[] {
    return this.entries.map((e) => ({ setting: e.setting }));
  }

  private entry(s: Setting): Entry {
    const entry = this.bySetting.get(s);
    if (!entry) throw new Error(`setting ${s.flag ?? s.env ?? s.doc} is not in this scheme`);
    return entry;
  }

  /** How messages name a setting: `--odl-url`, `-o/--output`, else its variable or key. */
  label(s: Setting): string {
    const { option, key } = this.entry(s);
    if (option) return option.short && option.long ? `${option.short}/${option.long}` : (option.long ?? key);
    return s.env ?? key;
  }

  /**
   * Adds the flags of `which` (default: every setting that has one) to a command, with help
   * that names the environment variable and the default, and the config file's flag.
   */
  addOptions(cmd: Command, which?: readonly Usage[], withConfigFile = which === undefined): Command {
    if (withConfigFile && this.configOption && this.options.configFile) {
      const { flag, env, doc } = this.options.configFile;
      cmd.addOption(new Option(flag, `${plain(doc)}${env ? ` (${env})` : ''}`));
    }
    for (const usage of which ?? this.usages()) {
      const entry = this.entry(usage.setting);
      const s = { ...entry.setting, ...pick(usage) };
      if (s.flag === undefined || usage.flag === false) continue;
      const option = new Option(s.flag, helpOf(s));
      if (s.type.choices) option.choices(s.type.choices);
      if (s.type.list) option.argParser((value: string, previous: string[] = []) => [...previous, value]);
      cmd.addOption(option);
      if (s.negatedHelp !== undefined && entry.option?.long)
        cmd.addOption(new Option(entry.option.long.replace(/^--/, '--no-'), s.negatedHelp));
    }
    return cmd;
  }

  /** The flags given on the command line (not commander's defaults), with the config file's. */
  flagsFrom(cmd: Command): Record<string, unknown> {
    const given = cmd.optsWithGlobals<Record<string, unknown>>();
    const out: Record<string, unknown> = {};
    for (const option of [this.configOption, ...this.entries.map((e) => e.option)]) {
      if (!option) continue;
      const name = option.attributeName();
      if (cmd.getOptionValueSourceWithGlobals(name) === 'cli') out[name] = given[name];
    }
    return out;
  }

  /**
   * Resolves every setting from the sources; `check` adds the program's own checks (they run
   * once every value is valid). Throws one ConfigError naming every problem.
   */
  load(sources: SettingsSources, check?: (values: ValuesOf<T>, checks: Checks) => void): ValuesOf<T> {
    const flags = sources.flags ?? {};
    const env = sources.env ?? process.env;
    const configEnv = this.options.configFile?.env;
    const configFlag = this.configOption ? flags[this.configOption.attributeName()] : undefined;
    const path =
      sources.file ??
      (typeof configFlag === 'string' ? configFlag : undefined) ??
      (configEnv !== undefined ? nonEmpty(env[configEnv]) : undefined);
    const fromFile: unknown = path
      ? parseConfig(this.fileSchema, (sources.readFile ?? readConfigFile)(path), `config file ${path}`)
      : {};

    const problems: string[] = [];
    const values = skeletonOf(this.tree);
    for (const entry of this.entries) {
      const s = entry.setting;
      let value = s.file === false ? undefined : at(fromFile, entry.path);
      let invalid = false;
      const given: [unknown, string][] = [
        [s.env !== undefined ? nonEmpty(env[s.env]) : undefined, `environment variable ${s.env}`],
        [entry.option ? flags[entry.option.attributeName()] : undefined, `flag ${this.label(s)}`],
        [sources.given?.get(s), 'the program'],
      ];
      for (const [raw, source] of given) {
        if (raw === undefined) continue;
        const result = s.type.schema.safeParse(fromRaw(s.type, raw));
        if (result.success) value = result.data;
        else {
          invalid = true;
          problems.push(this.describe(entry, source, result.error.issues));
        }
      }
      if (value === undefined && s.presence === 'default') value = s.default;
      if (value === undefined && s.presence === 'required' && !invalid)
        problems.push(`${this.requiredLabel(entry)} is required`);
      if (value !== undefined) put(values, entry.path, value);
    }
    if (problems.length === 0 && check) {
      check(values as ValuesOf<T>, {
        label: (s) => this.label(s),
        problem: (p) => problems.push(p),
        check: (s, fn) => {
          try {
            fn();
          } catch (err) {
            problems.push(`${this.label(s)}: ${(err as Error).message}`);
          }
        },
      });
    }
    if (problems.length > 0)
      throw new ConfigError(`invalid ${this.options.title}:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    return values as ValuesOf<T>;
  }

  /** A value's problem: `<source>: <key>: <message>`, or `<flag> <message>` for a flag-only setting. */
  private describe(entry: Entry, source: string, issues: readonly z.core.$ZodIssue[]): string {
    const message = issues.map((i) => i.message).join('; ');
    const s = entry.setting;
    if (s.file === false && s.env === undefined) return `${this.label(s)} ${message}`;
    const inner = issues[0]?.path.length ? `.${issues[0].path.join('.')}` : '';
    return `${source}: ${entry.key}${inner}: ${message}`;
  }

  /** Every way to give a setting: `--profile sodium|aluminium (ODLCOE_PROFILE, odl.profile)`. */
  private requiredLabel(entry: Entry): string {
    const s = entry.setting;
    const name = entry.option?.long ?? s.env ?? entry.key;
    const choices = s.type.choices ? ` ${s.type.choices.join('|')}` : '';
    const others = [s.env, s.file === false ? undefined : entry.key].filter(
      (w) => w !== undefined && w !== name,
    );
    return `${name}${choices}${others.length > 0 ? ` (${others.join(', ')})` : ''}`;
  }

  /**
   * The docs' table (Markdown, formatted as prettier formats it): file key, flag, environment,
   * default, meaning. `rows` picks and orders the settings shown (default: all of them).
   */
  docsTable(rows: readonly Usage[] = this.usages()): string {
    const header = ['file key', 'flag', 'environment', 'default', 'meaning and validation'];
    const body: string[][] = [];
    const configFile = this.options.configFile;
    if (configFile && this.configOption)
      body.push([
        '–',
        `\`${this.configOption.long} FILE\``,
        configFile.env ? `\`${configFile.env}\`` : '–',
        'none',
        configFile.doc,
      ]);
    for (const row of rows) {
      const entry = this.entry(row.setting);
      const s = { ...entry.setting, ...pick(row) };
      const showFlag = row.flag !== false && s.flag !== undefined;
      body.push([
        s.file === false ? '–' : `\`${entry.key}\``,
        showFlag ? flagCell(entry, typeof row.flag === 'string' ? row.flag : undefined) : '–',
        s.env ? `\`${s.env}\`` : '–',
        defaultCell(s),
        s.doc,
      ]);
      if (s.alsoEnv) body.push(['–', '–', `\`${s.alsoEnv.env}\``, 'none', s.alsoEnv.doc]);
    }
    return markdownTable(header, body);
  }
}

/** A usage's overrides of the declaration. */
function pick(usage: Usage): Partial<SettingSpec> {
  return {
    ...(usage.doc !== undefined ? { doc: usage.doc } : {}),
    ...(usage.defaultText !== undefined ? { defaultText: usage.defaultText } : {}),
  };
}

function flagCell(entry: Entry, note: string | undefined): string {
  const { option, setting: s } = entry;
  if (!option?.long) return '–';
  let cell = option.short ? `\`${option.short}\`, \`${option.long}\`` : `\`${option.long}\``;
  if (s.negatedHelp !== undefined) cell += ` / \`${option.long.replace(/^--/, '--no-')}\``;
  if (s.type.list) cell += ' (repeatable or comma-separated)';
  if (note) cell += ` ${note}`;
  return cell;
}

function defaultCell(s: Setting): string {
  if (s.defaultText !== undefined) return s.defaultText;
  if (s.presence === 'required') return '**required**';
  if (s.presence === 'optional') return 'none';
  const d = s.defaultInput;
  return `\`${Array.isArray(d) ? `[${d.join(', ')}]` : String(d)}\``;
}

/** Flag help: the doc without Markdown, the environment variable and the default. */
function helpOf(s: Setting): string {
  const notes = [
    ...(s.env ? [s.env] : []),
    ...(s.presence === 'default' ? [`default ${plain(defaultCell(s))}`] : []),
  ];
  return `${plain(s.doc)}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`;
}

function plain(markdown: string): string {
  return markdown
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\*\*|`/g, '')
    .replace(/\\\|/g, '|');
}

/** A Markdown table with padded columns, as prettier writes it. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const width = (cell: string) => [...cell].length;
  const widths = header.map((h, i) => Math.max(3, width(h), ...rows.map((r) => width(r[i] ?? ''))));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c + ' '.repeat((widths[i] ?? 0) - width(c))).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

function fileSchemaOf(tree: SettingsTree): z.ZodType {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, child] of Object.entries(tree)) {
    if (!isSetting(child)) shape[name] = fileSchemaOf(child);
    else if (child.file !== false) shape[name] = child.type.schema;
  }
  return z.object(shape).partial().strict();
}

/** A flag's or a variable's value as the schema checks it: text converted, a repeated flag's values joined. */
function fromRaw(type: ValueType<unknown>, raw: unknown): unknown {
  if (typeof raw === 'string') return type.fromText(raw);
  if (!Array.isArray(raw)) return raw;
  if (type.list) return raw.flatMap((r) => type.fromText(String(r)) as unknown[]);
  return type.fromText(String(raw[raw.length - 1]));
}

/** An empty object per group of the tree, so that every group is there in the values. */
function skeletonOf(tree: SettingsTree): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, child] of Object.entries(tree)) if (!isSetting(child)) out[name] = skeletonOf(child);
  return out;
}

function at(obj: unknown, path: readonly string[]): unknown {
  let cur = obj;
  for (const p of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

function put(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1] as string] = value;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}
