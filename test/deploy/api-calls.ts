/**
 * A static inventory of the Kubernetes API calls a component's code makes, for comparing with
 * its RBAC rules. Simple on purpose: it reads the two ways odlcoe talks to the API server,
 *   - `new Informer({ path: '/api/v1/pods' })`  → list + watch on that resource, and
 *   - `kube.request('VERB', <path expression>)` → the verb on the resource of that path,
 * resolving path expressions built from string/template literals and from variables or fields
 * assigned such literals in the same file. A call it cannot resolve fails the test loudly
 * (so new code cannot slip past the RBAC check unnoticed).
 */
import { filesUnder, read } from './repo.js';

export interface ApiCall {
  group: string;
  resource: string;
  verb: string;
  /** Where it was found, for messages. */
  file: string;
}

export const key = (c: { group: string; resource: string }): string => `${c.group || 'core'}/${c.resource}`;

/** `/api/v1/namespaces/${ns}/events/${name}` → group '', resource 'events', named. */
export function parseApiPath(path: string): { group: string; resource: string; named: boolean } | undefined {
  const parts =
    path
      .split('?')[0]
      ?.split('/')
      .filter((p) => p !== '') ?? [];
  let rest: string[];
  let group: string;
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1] ?? '';
    rest = parts.slice(3);
  } else return undefined;
  // namespaces/<ns>/<resource>[/<name>]; but `namespaces` and `namespaces/<name>` are the resource itself.
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  const resource = rest[0];
  if (!resource) return undefined;
  return { group, resource, named: rest.length >= 2 };
}

const VERB: Record<string, { named: string; collection: string }> = {
  GET: { named: 'get', collection: 'list' },
  POST: { named: 'create', collection: 'create' },
  PUT: { named: 'update', collection: 'update' },
  PATCH: { named: 'patch', collection: 'patch' },
  DELETE: { named: 'delete', collection: 'deletecollection' },
};

/** Resolves a TypeScript path expression to a path with `${…}` placeholders, or undefined. */
function resolvePath(expr: string, source: string, depth = 0): string | undefined {
  const e = expr.trim();
  if (depth > 5) return undefined;
  const literal = /^(['`])(.*)\1$/s.exec(e);
  if (literal) {
    const text = literal[2] ?? '';
    // A template that starts with another expression: `${path}/${name}` → resolve `path`.
    const head = /^\$\{([\w.]+)\}(.*)$/s.exec(text);
    if (head && !text.startsWith('/')) {
      const base = resolvePath(head[1] ?? '', source, depth + 1);
      return base === undefined ? undefined : `${base}${head[2] ?? ''}`;
    }
    return text;
  }
  if (/^[\w.]+$/.test(e)) {
    const name = e.replace(/^this\./, '');
    const assign = new RegExp(`(?:const|let|this\\.)\\s*${name}\\s*=\\s*(\`[^\`]*\`|'[^']*')`).exec(source);
    return assign ? resolvePath(assign[1] ?? '', source, depth + 1) : undefined;
  }
  return undefined;
}

/** The calls made by the (non-test) TypeScript files under `dirs` and the extra `files`. */
export function apiCalls(dirs: string[], files: string[] = []): { calls: ApiCall[]; unresolved: string[] } {
  const calls: ApiCall[] = [];
  const unresolved: string[] = [];
  const sources = [...dirs.flatMap((d) => filesUnder(d)), ...files].filter(
    (f) => f.endsWith('.ts') && !f.endsWith('.test.ts'),
  );
  for (const file of sources) {
    const source = read(file);
    if (/new Informer\b/.test(source)) {
      for (const m of source.matchAll(/\bpath:\s*'(\/apis?\/[^']+)'/g)) {
        const p = parseApiPath(m[1] ?? '');
        if (!p) unresolved.push(`${file}: informer path ${m[1]}`);
        else
          for (const verb of ['list', 'watch'])
            calls.push({ group: p.group, resource: p.resource, verb, file });
      }
    }
    for (const m of source.matchAll(
      /\.request(?:<[^>(]*>)?\(\s*'(GET|POST|PUT|PATCH|DELETE)',\s*(`[^`]*`|'[^']*'|[\w.]+)/g,
    )) {
      const method = m[1] as keyof typeof VERB;
      const path = resolvePath(m[2] ?? '', source);
      const p = path === undefined ? undefined : parseApiPath(path);
      if (!p) {
        unresolved.push(`${file}: ${method} ${(m[2] ?? '').trim()}`);
        continue;
      }
      const verb = VERB[method];
      if (verb)
        calls.push({
          group: p.group,
          resource: p.resource,
          verb: p.named ? verb.named : verb.collection,
          file,
        });
    }
  }
  return { calls, unresolved };
}

/** resource key → verbs. */
export function verbsByResource(
  calls: readonly { group: string; resource: string; verb: string }[],
): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const c of calls) {
    const k = key(c);
    if (!out.has(k)) out.set(k, new Set());
    out.get(k)?.add(c.verb);
  }
  return out;
}
