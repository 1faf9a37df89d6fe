import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { z } from 'zod';
import { ConfigError } from './config-file.js';
import {
  boolean,
  duration,
  list,
  markdownTable,
  number,
  oneOf,
  setting,
  SettingsScheme,
  text,
} from './settings-scheme.js';

/** A throw-away program: each setting is one entry, and everything else follows from it. */
const TREE = {
  name: setting(text(), { flag: '--name <name>', env: 'X_NAME', required: true, doc: 'the name' }),
  mode: setting(oneOf(['fast', 'safe'] as const), {
    flag: '--mode <mode>',
    env: 'X_MODE',
    default: 'safe',
    doc: '`fast` or `safe`',
  }),
  net: {
    peers: setting(list(z.string().regex(/^\d+$/, 'must be a number')), {
      flag: '--peer <n>',
      default: [],
      doc: 'peers',
    }),
    timeout: setting(duration(), { env: 'X_TIMEOUT', default: '5s', doc: 'deadline' }),
    port: setting(number(z.number().int().min(1)), { flag: '--port <port>', doc: 'port' }),
  },
  verbose: setting(boolean(), {
    flag: '--verbose',
    negatedHelp: 'quiet',
    env: 'X_VERBOSE',
    default: false,
    doc: 'talk',
  }),
  format: setting(oneOf(['a', 'b']), { flag: '-f, --format <f>', file: false, default: 'a', doc: 'output' }),
};
const scheme = new SettingsScheme(TREE, {
  title: 'test configuration',
  configFile: { flag: '--config <file>', env: 'X_CONFIG', doc: 'the file' },
});
const problems = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.message;
  }
  assert.fail('no ConfigError');
};

describe('settings scheme', () => {
  it('resolves defaults < file < environment < flags, into the shape of the tree', () => {
    const file = { name: 'file', net: { timeout: '1m', port: 80 } };
    const v = scheme.load({
      flags: { config: 'f.yaml', port: '8080', peer: ['1', '2,3'] },
      env: { X_NAME: 'env', X_TIMEOUT: '' },
      readFile: () => file,
    });
    assert.deepEqual(v, {
      name: 'env',
      mode: 'safe',
      net: { peers: ['1', '2', '3'], timeout: 60_000, port: 8080 },
      verbose: false,
      format: 'a',
    });
  });

  it('names every problem at once, by where the value came from', () => {
    const message = problems(() =>
      scheme.load({
        flags: { port: '0', peer: ['x'], format: 'c', mode: 'slow' },
        env: { X_VERBOSE: 'yes', X_TIMEOUT: 'soon' },
      }),
    );
    assert.equal(
      message,
      [
        'invalid test configuration:',
        '  --name (X_NAME, name) is required',
        '  flag --mode: mode: "slow" is not one of fast, safe',
        '  flag --peer: net.peers.0: must be a number',
        '  environment variable X_TIMEOUT: net.timeout: "soon" is not a duration (like 250ms, 30s, 5m, 1h30m)',
        '  flag --port: net.port: Too small: expected number to be >=1',
        '  environment variable X_VERBOSE: verbose: "yes" is not true or false',
        '  -f/--format "c" is not one of a, b',
      ].join('\n'),
    );
  });

  it('validates the file against the tree: unknown keys are errors', () => {
    assert.match(
      problems(() => scheme.load({ file: 'f.yaml', readFile: () => ({ net: { prot: 1 }, format: 'a' }) })),
      /config file f\.yaml:\n {2}net: Unrecognized key: "prot"\n {2}\(top level\): Unrecognized key: "format"/,
    );
  });

  it('runs the program’s own checks once every value is valid, naming settings by their flag', () => {
    const check = scheme.load.bind(scheme);
    assert.match(
      problems(() =>
        check({ flags: { name: 'n', port: '22' } }, (v, c) => {
          c.check(TREE.net.port, () => {
            if (v.net.port !== undefined && v.net.port < 1024) throw new Error('is privileged');
          });
          c.problem(`${c.label(TREE.net.timeout)} and ${c.label(TREE.format)} are fine`);
        }),
      ),
      /--port: is privileged\n {2}X_TIMEOUT and -f\/--format are fine/,
    );
  });

  it('builds the commander options, and reads back only the flags given', () => {
    const cmd = scheme.addOptions(new Command('x').exitOverride());
    cmd.parse(['--name', 'n', '--no-verbose', '--peer', '1', '--peer', '2', '-f', 'b'], { from: 'user' });
    assert.deepEqual(scheme.flagsFrom(cmd), { name: 'n', verbose: false, peer: ['1', '2'], format: 'b' });
    assert.throws(() => cmd.parse(['--mode', 'slow'], { from: 'user' }), /Allowed choices are fast, safe/);
    assert.match(cmd.helpInformation(), /--mode <mode> +fast or safe \(X_MODE; default safe\)/);
  });

  it('writes the docs table from the declaration', () => {
    const table = scheme.docsTable().split('\n');
    assert.equal(table.length, 2 + 1 + 7);
    assert.match(table[2] ?? '', /^\| – +\| `--config FILE` +\| `X_CONFIG` +\| none +\| the file +\|$/);
    assert.match(table[3] ?? '', /^\| `name` +\| `--name` +\| `X_NAME` +\| \*\*required\*\* +\|/);
    assert.match(table[5] ?? '', /`--peer` \(repeatable or comma-separated\) \| – +\| `\[\]` /);
    assert.match(table[8] ?? '', /`--verbose` \/ `--no-verbose`/);
    assert.match(table[9] ?? '', /^\| – +\| `-f`, `--format` +\| – +\| `a` +\|/);
  });

  it('pads tables as prettier does', () => {
    assert.equal(markdownTable(['a', 'bb'], [['≤ 1', 'x']]), '| a   | bb  |\n| --- | --- |\n| ≤ 1 | x   |');
  });

  it('refuses a default its own type rejects', () => {
    assert.throws(
      () => setting(number(z.number().min(1)), { flag: '--n <n>', default: 0, doc: 'n' }),
      /default 0 of --n <n> is invalid/,
    );
  });
});
