/**
 * What the deployment tests know about the repository: where things are, which files the
 * TypeScript build turns into which `dist/` paths, how `.dockerignore` filters the build
 * context, and the parsed manifests. Docker cannot run here, so these are the facts a
 * `docker build` and a `kubectl apply -k` would depend on, checked statically.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const DEPLOY_DIR = join(ROOT, 'config', 'deploy');
/** Where the runtime image keeps the app (Dockerfile WORKDIR). */
export const APP_DIR = '/app';

export function read(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

export function exists(path: string): boolean {
  return existsSync(join(ROOT, path));
}

/** Every file under `dir` (repository-relative paths). */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (abs: string): void => {
    for (const entry of readdirSync(abs)) {
      const path = join(abs, entry);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(relative(ROOT, path));
    }
  };
  if (existsSync(join(ROOT, dir))) walk(join(ROOT, dir));
  return out.sort();
}

/** A glob of .dockerignore / tsconfig syntax (`**`, `*`, `?`) as a regular expression. */
export function globRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*' && glob[i + 1] === '*') {
      // `**/` matches zero or more directories, a trailing `**` everything below.
      if (glob[i + 2] === '/') {
        re += '(?:.*/)?';
        i += 2;
      } else {
        re += '.*';
        i += 1;
      }
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/**
 * Whether `.dockerignore` keeps `path` in the build context: Docker's rules, where the last
 * matching pattern wins and `!` re-includes. A pattern also matches everything below a
 * matching directory.
 */
export function inDockerContext(path: string, dockerignore = read('.dockerignore')): boolean {
  let included = true;
  for (const raw of dockerignore.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    const pattern = (negated ? line.slice(1) : line).replace(/^\/+/, '').replace(/\/+$/, '');
    const re = globRegExp(pattern);
    const parts = path.split('/');
    const matches = parts.some((_, i) => re.test(parts.slice(0, i + 1).join('/')));
    if (matches) included = negated;
  }
  return included;
}

/** Files the production build (tsconfig.build.json) compiles, as repository-relative .ts paths. */
export function buildInputs(): string[] {
  const config = JSON.parse(read('tsconfig.build.json')) as { include?: string[]; exclude?: string[] };
  const include = (config.include ?? []).map((d) => (d.includes('*') ? d : `${d}/**/*`)).map(globRegExp);
  const exclude = (config.exclude ?? []).map(globRegExp);
  return (config.include ?? [])
    .flatMap((d) => filesUnder(d.replace(/\/?\*.*$/, '')))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .filter((f) => include.some((re) => re.test(f)) && !exclude.some((re) => re.test(f)));
}

/**
 * The source file a runtime path like `/app/dist/src/agent/main.js` is compiled from, if the
 * build produces it (tsconfig: rootDir `.`, outDir `dist`).
 */
export function sourceOfDistPath(runtimePath: string): string | undefined {
  const prefix = `${APP_DIR}/dist/`;
  if (!runtimePath.startsWith(prefix) || !runtimePath.endsWith('.js')) return undefined;
  const source = `${runtimePath.slice(prefix.length, -'.js'.length)}.ts`;
  return buildInputs().includes(source) ? source : undefined;
}

export interface Manifest {
  file: string;
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

/** The files kustomization.yaml lists, in order. */
export function kustomizationResources(): string[] {
  const k = YAML.parse(read('config/deploy/kustomization.yaml')) as { resources?: string[] };
  return k.resources ?? [];
}

/** Every document of every listed manifest, parsed (a YAML error throws, naming the file). */
export function loadManifests(): Manifest[] {
  return kustomizationResources().flatMap((file) => {
    const docs = YAML.parseAllDocuments(read(`config/deploy/${file}`));
    return docs.map((doc, i): Manifest => {
      if (doc.errors.length > 0)
        throw new Error(`${file} document ${i}: ${doc.errors.map((e) => e.message).join('; ')}`);
      return { ...(doc.toJS() as Manifest), file };
    });
  });
}

export function find(manifests: Manifest[], kind: string, name: string): Manifest {
  const m = manifests.find((x) => x.kind === kind && x.metadata.name === name);
  if (!m) throw new Error(`no ${kind} ${name} in config/deploy`);
  return m;
}
