/**
 * How the sandbox starts odlcoe's own programs (the agent, the CNI shim, its relay) as child
 * processes. Built (`dist/src/sandbox/*.js`, what `npm start` runs) it starts their compiled
 * siblings in dist/; from source (the tests run `src/` through tsx) it starts the `.ts` files
 * through tsx, so a test never runs stale compiled code next to fresh source.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ProgramCommand {
  /** The executable (always this Node.js). */
  command: string;
  args: string[];
  /** Where to start it (the tsx loader is resolved from the project root). */
  cwd: string;
}

const HERE = fileURLToPath(import.meta.url);
const FROM_SOURCE = HERE.endsWith('.ts');
/** The project root: src/sandbox/ from source, dist/src/sandbox/ when built. */
export const PROJECT_ROOT = FROM_SOURCE ? join(dirname(HERE), '../..') : join(dirname(HERE), '../../..');

/** Project-relative entry points, without extension (`src/agent/main`). */
export type Program =
  | 'src/agent/main'
  | 'src/sandbox/relay-main'
  | 'src/sandbox/pod-traffic-main'
  | 'cni/odlcoe'
  | 'src/cli/main';

export function programPath(program: Program): string {
  return FROM_SOURCE ? join(PROJECT_ROOT, `${program}.ts`) : join(PROJECT_ROOT, 'dist', `${program}.js`);
}

/** The command line that runs `program` with `args`. Throws when its file is missing. */
export function programCommand(program: Program, args: readonly string[] = []): ProgramCommand {
  const path = programPath(program);
  if (!existsSync(path)) {
    throw new Error(`${path} does not exist${FROM_SOURCE ? '' : ' (run `npm run build` first)'}`);
  }
  return {
    command: process.execPath,
    args: [...(FROM_SOURCE ? ['--import', 'tsx'] : []), path, ...args],
    cwd: PROJECT_ROOT,
  };
}
