#!/usr/bin/env node
/**
 * odlcoectl: the operator CLI (`status`, `dump`, `trace`, `subnets`, `gc`). Reports go to
 * stdout (human or `-o json`), diagnostics to stderr; exit codes are in exit-codes.ts.
 */
import { runCli } from './program.js';

const code = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
});
process.exitCode = code;
