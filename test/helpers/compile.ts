import { writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/common/exec.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Compiles one module that imports only node: built-ins (the CNI shim, the CNI bench's driver)
 * to plain ESM JavaScript in `outDir`, with the project's compiler settings, so that it runs
 * as `node <file>.js`: without the tsx loader, and without depending on the rest of the tree
 * building. Returns the path of the .js file.
 */
export async function compileNodeOnlyModule(entry: string, outDir: string): Promise<string> {
  await run(
    process.execPath,
    [
      join(ROOT, 'node_modules/typescript/bin/tsc'),
      '--outDir',
      outDir,
      '--rootDir',
      dirname(entry),
      '--module',
      'NodeNext',
      '--moduleResolution',
      'NodeNext',
      '--target',
      'ES2022',
      '--strict',
      '--types',
      'node',
      '--skipLibCheck',
      entry,
    ],
    { timeoutMs: 120_000 },
  );
  // The compiled file is ESM; outside the package it needs its own package.json to say so.
  await writeFile(join(outDir, 'package.json'), '{"type":"module"}\n');
  return join(outDir, `${basename(entry, '.ts')}.js`);
}
