// Runs every test file (unit tests beside the code in src/ and cni/, integration and
// end-to-end tests in test/) with node:test through tsx. Arguments narrow the run to files
// whose path contains one of them: `npm test -- src/queue test/agent`.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const filters = process.argv.slice(2);

function collect(dir, out) {
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'dist' || entry.startsWith('.')) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) collect(path, out);
    else if (entry.endsWith('.test.ts')) out.push(relative(root, path));
  }
  return out;
}

const files = ['src', 'cni', 'test']
  .flatMap((dir) => collect(join(root, dir), []))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}

const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2', ...files],
  { cwd: root, stdio: 'inherit', env: { ODLCOE_LOG_LEVEL: 'silent', ...process.env } },
);
child.on('exit', (code, signal) => process.exit(signal ? 1 : (code ?? 1)));
